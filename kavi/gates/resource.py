"""The resource gate: how a skill's time grows with its input, judged before it is trusted.

The acceptance sandbox runs the probes after its cases (kavi.gates.resource_probe: the same isolation, no second
interpreter to start): for each string or list input field and each shape (kavi.gates.resource_shapes), calls at
sizes growing fourfold up to the input bound, each timed in CPU seconds. Out here, for each shape:

- the growth: the excess of each call over the fixed cost of a call, fitted on a log-log scale over the largest
  sizes whose excess was measurable; an exponent above MAX_GROWTH fails the gate (linear time is 1, sorting about
  1.1, a regular expression backtracking from every start position 2) when its last steps all grow that fast and
  it costs something at the bound;
- the time at the bound: measured when the shape got there, else extrapolated from its largest call at the fitted
  growth (at least linear); past the deadline a trusted skill would run under, it fails the gate;
- a call that did not finish within its CPU cap, or that was running when the sandbox's limit ended the job, fails.

The failure says which field and shape, the sizes and times and the fitted growth, so the next attempt can be asked
for a linear-time algorithm.
"""

import itertools
import math
from dataclasses import dataclass
from typing import Any

from kavi.gates.resource_probe import stops_before_next
from kavi.gates.resource_shapes import shape_label
from kavi.lifecycle import Verdict
from kavi.settings import RESOURCE_BUDGET_S, RESOURCE_DEADLINE_S
from kavi.verdicts import GATE_RESOURCE, GateResult

# Linear time fits at about 1, sorting a little above it, and a regular expression backtracking from every start
# position at about 2: halfway leaves room for noise on either side (README: figures behind design choices).
MAX_GROWTH = 1.5
# The fit takes the largest FIT_POINTS sizes whose excess over the fixed cost is past FLOOR_S and past 1/FLOOR_SHARE
# of the largest excess (smaller ones are timer, cache and allocator noise, not growth); the largest must reach
# MIN_SIGNAL_S for a fit at all: calls that stay that cheap up to the bound cost nothing, whatever their exponent.
FLOOR_S = 0.0005
FLOOR_SHARE = 50
MIN_SIGNAL_S = 0.005
FIT_POINTS = 3
# A growth steeper than MAX_GROWTH fails only where it costs something: when the time at the bound (measured or
# extrapolated) reaches this share of the deadline (a linear skill's last step to a megabyte can look steep, at a
# few milliseconds).
GROWTH_MATTERS_SHARE = 0.01
# And only when the last STEEP_STEPS steps between sizes are each steeper than MAX_GROWTH (counting calls past
# STEP_FLOOR_S: the short ones are the fastest of three runs): on a busy machine one call of an honest skill can make
# a single steep step, an algorithm makes every step steep. A steep growth one step alone shows extrapolates at
# MAX_GROWTH at most, and the time at the bound judges it.
STEEP_STEPS = 2
STEP_FLOOR_S = 0.00005
CALL_BUDGET_S = 0.005  # a shape stops growing once a call took this long (or the next would take 20 times it)
CALL_CAP_S = 1.0  # a call still running after this much CPU is stopped
MAX_MESSAGES = 6


@dataclass(frozen=True)
class ResourceConfig:
    """The gate's settings: the deadline a call at the input bound must meet, and the CPU budget of the probes (0:
    the gate is omitted, with `skipped_reason`)."""

    deadline_s: float = RESOURCE_DEADLINE_S
    budget_s: float = RESOURCE_BUDGET_S
    skipped_reason: str = "the resource gate is switched off (KAVI_RESOURCE_BUDGET_S=0)"

    @property
    def enabled(self) -> bool:
        return self.budget_s > 0

    def job_section(self, probes: list[dict[str, Any]]) -> dict[str, Any]:
        """What the sandboxed runner needs: the probes without their labels, the budgets."""
        return {"probes": [{k: v for k, v in p.items() if k not in ("unit",)} for p in probes],
                "budget_s": self.budget_s, "call_budget_s": CALL_BUDGET_S, "call_cap_s": CALL_CAP_S}

    @property
    def wall_margin_s(self) -> float:
        """How much longer the acceptance sandbox may run to make room for the probes."""
        return self.budget_s + CALL_CAP_S if self.enabled else 0.0


@dataclass
class ShapeVerdict:
    probe: dict[str, Any]
    points: list[tuple[int, float, str]]
    growth: float | None = None
    at_bound_s: float | None = None
    problem: str = ""
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"shape": shape_label(self.probe), "field": self.probe.get("field"),
                "sizes": [n for n, _, _ in self.points], "ms": [round(s * 1000, 3) for _, s, _ in self.points],
                "outcomes": sorted({o for _, _, o in self.points}), "growth": self.growth,
                "at_bound_s": None if self.at_bound_s is None else round(self.at_bound_s, 3),
                "bound": self.probe.get("bound"), "problem": self.problem, "note": self.note}


def fixed_cost(points: list[tuple[int, float]]) -> float:
    """What a call costs whatever its size: the first call's time, less the share of it that the second call's growth
    shows to be (at least linear) work on the input."""
    if len(points) < 2:
        return points[0][1] if points else 0.0
    (n0, t0), (n1, t1) = points[0], points[1]
    return min(t0, max(0.0, t0 - max(0.0, t1 - t0) / (n1 / n0 - 1))) if n1 > n0 else t0


def _past_fixed_cost(points: list[tuple[int, float]], floor_s: float = FLOOR_S) -> list[tuple[int, float]]:
    """(size, excess over the fixed cost) of the largest FIT_POINTS sizes whose excess is measurable."""
    base = fixed_cost(points)
    top = max(t - base for _, t in points)
    return [(n, t - base) for n, t in points if t - base >= max(floor_s, top / FLOOR_SHARE)][-FIT_POINTS:]


def steep_steps(points: list[tuple[int, float]]) -> int:
    """How many of the last steps between sizes past the fixed cost, counted back from the largest, grow faster than
    MAX_GROWTH: one noisy call makes one steep step, an algorithm makes every step steep. Smaller calls count here
    than in the fit (STEP_FLOOR_S: calls under a few milliseconds are the fastest of three runs)."""
    usable = _past_fixed_cost(points, STEP_FLOOR_S) if len(points) >= 2 else []
    count = 0
    for (n0, e0), (n1, e1) in reversed(list(itertools.pairwise(usable))):
        if math.log(e1 / e0) / math.log(n1 / n0) <= MAX_GROWTH:
            break
        count += 1
    return count


def fit_growth(points: list[tuple[int, float]]) -> float | None:
    """The exponent k of time ~ size^k over the points past the fixed cost, or None when too few of them took
    measurable time."""
    if len(points) < 2:
        return None
    usable = _past_fixed_cost(points)
    if len(usable) < 2:
        # One size past the fixed cost (a steep growth stops a shape early): the last two calls' own ratio, which
        # counts the fixed cost as growth and so errs low. It counts when the last call took a measurable time, or
        # when this step is the one the runner stopped the shape on (its next size would have taken too long):
        # otherwise a call just short of MIN_SIGNAL_S would leave an explosive growth unjudged.
        (n0, t0), (n1, t1) = points[-2], points[-1]
        if not (t0 > 0 and n1 > n0) or not (t1 >= MIN_SIGNAL_S or stops_before_next(t0, t1, CALL_BUDGET_S)):
            return None
        return math.log(t1 / t0) / math.log(n1 / n0)
    if max(e for _, e in usable) < MIN_SIGNAL_S:
        return None
    xs = [math.log(n) for n, _ in usable]
    ys = [math.log(e) for _, e in usable]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return None if den <= 0 else sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den


def _sizes(points: list[tuple[int, float, str]], unit: str) -> str:
    return ", ".join(f"{_ms(s)} at {n:,}" for n, s, _ in points) + f" {unit}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _judge_shape(probe: dict[str, Any], points: list[tuple[int, float, str]], running: int | None,
                 deadline_s: float) -> ShapeVerdict:
    v = ShapeVerdict(probe, points)
    unit = str(probe.get("unit") or "")
    bound = int(probe.get("bound") or 0)
    label = shape_label(probe)
    stopped = next(((n, s) for n, s, o in points if o == "stopped"), None)
    if stopped is not None:
        v.problem = (f"{label}: a call on {stopped[0]:,} {unit} did not finish within {stopped[1]:.1f} s of CPU "
                     f"({_sizes(points[:-1], unit) if len(points) > 1 else 'no smaller size measured'})")
        return v
    if running is not None:
        v.problem = (f"{label}: the call on {running:,} {unit} was still running when the sandbox's time limit "
                     f"ended the run" + (f" ({_sizes(points, unit)})" if points else ""))
        return v
    timed = [(n, s) for n, s, o in points if o in ("ok", "error")]
    if not timed:
        v.note = "not measured"
        return v
    v.growth = fit_growth(timed)
    last_n, last_s = timed[-1]
    base = fixed_cost(timed)
    confirmed = steep_steps(timed) >= STEEP_STEPS
    # Extrapolated at the fitted growth, at least linear; a steep growth one step alone shows, at MAX_GROWTH at most.
    exponent = max(1.0, v.growth if v.growth is not None else 1.0)
    exponent = exponent if confirmed else min(exponent, MAX_GROWTH)
    v.at_bound_s = last_s if last_n >= bound else base + max(0.0, last_s - base) * (bound / last_n) ** exponent
    # Under a bound the proposal declares (max_size, enforced by the runtime) no input grows past it: only the time
    # there matters, however the time grows on the way (a quadratic pass over a few thousand items is fine).
    declared = bool(probe.get("declared"))
    steep = (not declared and v.growth is not None and v.growth > MAX_GROWTH and confirmed
             and v.at_bound_s >= GROWTH_MATTERS_SHARE * deadline_s)
    if steep or v.at_bound_s > deadline_s:
        grows = f"time grows as n^{v.growth:.1f}" if v.growth is not None else "time"
        where = "its declared max_size" if declared else "the input bound"
        v.problem = (f"{label}: {grows} ({_sizes(points, unit)}); at {where} of {bound:,} {unit} that is "
                     f"{'' if last_n >= bound else 'about '}{_duration(v.at_bound_s)}"
                     + (f", past the {deadline_s:g} s deadline" if v.at_bound_s > deadline_s else ""))
    if any(o == "budget" for _, _, o in points):
        v.note = "the probes' budget ended this shape"
    return v


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.2f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.0f} hours"


def resource_gate(probes: list[dict[str, Any]], config: ResourceConfig, lines: list[dict[str, Any]] | None,
                  ended: bool, duration_s: float = 0.0, not_run: str = "") -> GateResult:
    """The verdict on the probes' measurements (`lines`: the runner's resource lines in order; `ended`: the runner
    said it finished them, rather than the sandbox's limit ending the job)."""
    details: dict[str, Any] = {"deadline_s": config.deadline_s, "max_growth": MAX_GROWTH, "shapes": [],
                               "budget_s": config.budget_s}
    if not config.enabled:
        return GateResult(GATE_RESOURCE, Verdict.OMITTED, config.skipped_reason, 0.0, [], details)
    if not probes:
        return GateResult(GATE_RESOURCE, Verdict.OMITTED, "no string or list input to grow", 0.0, [], details)
    if not_run or lines is None:
        return GateResult(GATE_RESOURCE, Verdict.OMITTED,
                          not_run or "not measured: the skill did not run its examples (see the acceptance gate)",
                          duration_s, [], details)
    points: dict[int, list[tuple[int, float, str]]] = {}
    started: dict[int, int] = {}
    budget_spent_at: int | None = None
    for line in lines:
        if "budget_spent" in line:
            budget_spent_at = int(line["budget_spent"])
            continue
        index, size = line.get("probe"), line.get("size")
        if not isinstance(index, int) or not isinstance(size, int) or not 0 <= index < len(probes):
            continue
        if "s" in line:
            started.pop(index, None)
            points.setdefault(index, []).append((size, float(line["s"]), str(line.get("outcome"))))
        else:
            started[index] = size
    if not ended and not points and not started:
        # The runner always reaches the probes once the cases are done (they have budgets of their own): a run that
        # ended before them ended under the skill.
        return GateResult(GATE_RESOURCE, Verdict.FAILED, "the run ended before the resource probes started: nothing "
                          "was measured", duration_s, [], details)
    last = max([*points, *started], default=-1)
    running = None if ended else started.get(last)
    verdicts = [_judge_shape(probes[i], points.get(i, []), running if i == last else None, config.deadline_s)
                for i in range(len(probes)) if i in points or i in started]
    details["shapes"] = [v.to_dict() for v in verdicts]
    details["measured"] = len(verdicts)
    failing = [v for v in verdicts if v.problem]
    unmeasured = len(probes) - len(verdicts)
    if budget_spent_at is not None or (unmeasured and not failing):
        details["budget_exhausted"] = True
    if failing:
        messages = [v.problem for v in failing[:MAX_MESSAGES]]
        if len(failing) > MAX_MESSAGES:
            messages.append(f"… {len(failing) - MAX_MESSAGES} more input shape(s)")
        messages.append("use an algorithm whose time grows linearly with the input: no regular expression that "
                        "backtracks from every start position, no nested loop over the input")
        undeclared = sorted({str(v.probe.get("field")) for v in failing if not v.probe.get("declared")})
        if undeclared:
            # For a person (the builder cannot change the spec): honest code may be super-linear by nature.
            messages.append(f"(for the person: if callers never send large values, declare max_size on "
                            f"{', '.join(undeclared)} in the proposal; the runtime then refuses larger ones and "
                            "this gate judges the time at that size)")
        return GateResult(GATE_RESOURCE, Verdict.FAILED,
                          f"super-linear time or past the {config.deadline_s:g} s deadline on {len(failing)} of "
                          f"{len(probes)} input shape(s): {failing[0].problem}", duration_s, messages, details)
    growths = [v.growth for v in verdicts if v.growth is not None]
    at_bound = [v.at_bound_s for v in verdicts if v.at_bound_s is not None]
    summary = (f"{len(verdicts)} of {len(probes)} input shape(s) measured"
               + (f"; steepest growth n^{max(growths):.1f}" if growths else "; no measurable growth")
               + (f"; at most {_duration(max(at_bound))} at the bound" if at_bound else ""))
    if unmeasured:
        summary += f"; the probes' budget ended before {unmeasured} shape(s)"
    return GateResult(GATE_RESOURCE, Verdict.PASSED, summary, duration_s, [], details)
