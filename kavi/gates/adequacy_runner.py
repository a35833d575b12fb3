"""Runs inside the gate sandbox, after the acceptance cases: the mutation analysis of the evidence.

Each planned mutant of the skill (kavi.gates.mutants) is installed in place of its function and run on the examples
and holdouts, then on the pool of inputs nobody vouched for (the generated inputs and the adequacy probes). A mutant
is killed when its pinned outputs part from the candidate's on an example or holdout (the candidate passed them: the
forge judges that outside), or when it fails (raises, refuses, runs out of time) where the candidate answers. A
survivor that returns another valid output than the candidate's on a pool input marks a question the evidence does
not decide; the runner shrinks that input (smaller strings, lists and numbers, while the two still differ) and
reports it with both outputs. The forge decides outside what each finding means (kavi.gates.adequacy). No expected
output reaches this process except the shown examples' (the builder saw them): the analysis is skipped when the
candidate fails one.
"""

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from kavi.gates.values import equal

MAX_SHRINK_CALLS = 60
MAX_DISTINGUISHING = 3
MAX_CRASHES = 10
MAX_SLOW = 2
MAX_COUNTED = 12


def _pinned(output: Any, pinned: list[str]) -> Any:
    if isinstance(output, dict) and pinned:
        return {k: output.get(k) for k in pinned if k in output}
    return output


# How the runner calls the skill on a case within a time cap: the acceptance runner's (kavi.gates.acceptance_runner).
Call = Callable[[dict[str, Any], float], dict[str, Any]]


class _Installed:
    """A mutant's function, put in place of the original (`install`) and taken out again (`remove`)."""

    def __init__(self, namespace: dict[str, Any], qualname: str, code: Any) -> None:
        local: dict[str, Any] = {}
        exec(code, namespace, local)  # defines the mutated function, with the module's globals
        (self.new,) = local.values()
        self.namespace = namespace
        owner_name, _, self.attr = qualname.rpartition(".")
        self.owner: Any = namespace[owner_name] if owner_name else None
        self.saved: Any = self.owner.__dict__[self.attr] if self.owner is not None else namespace[self.attr]

    def install(self) -> None:
        if self.owner is not None:
            setattr(self.owner, self.attr, self.new)
        else:
            self.namespace[self.attr] = self.new

    def remove(self) -> None:
        if self.owner is not None:
            setattr(self.owner, self.attr, self.saved)
        else:
            self.namespace[self.attr] = self.saved


def _simpler(value: Any, depth: int = 0) -> Iterator[Any]:
    """Values simpler than `value`, the simplest first."""
    if isinstance(value, bool) or value is None:
        if value:
            yield False
        return
    if isinstance(value, int):
        if value != 0:
            yield 0
            if abs(value) > 2:
                yield value // 2
            yield value - 1 if value > 0 else value + 1
        return
    if isinstance(value, float):
        if value != 0.0:
            yield 0.0
            if value != round(value):
                yield float(round(value))
            yield value / 2
        return
    if isinstance(value, str):
        if value:
            yield ""
            half = len(value) // 2
            if half:
                yield value[:half]
                yield value[half:]
            yield value[1:]
            yield value[:-1]
        return
    if isinstance(value, list):
        if value:
            yield []
            half = len(value) // 2
            if half:
                yield value[:half]
                yield value[half:]
            for i in range(min(len(value), 8)):
                yield value[:i] + value[i + 1:]
            if depth < 3:
                for i in range(min(len(value), 4)):
                    for simpler in _simpler(value[i], depth + 1):
                        yield [*value[:i], simpler, *value[i + 1:]]
        return
    if isinstance(value, dict) and depth < 3:
        for key in value:
            for simpler in _simpler(value[key], depth + 1):
                yield {**value, key: simpler}


def _size(value: Any) -> tuple[int, float]:
    text = json.dumps(value, sort_keys=True, default=str)
    numbers = sum(abs(float(v)) for v in _leaves(value) if isinstance(v, int | float) and not isinstance(v, bool))
    return len(text), numbers


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value


def run_adequacy(call: Call, namespace: dict[str, Any], source: str, filename: str, job: dict[str, Any],
                 candidate: dict[int, dict[str, Any]], emit: Callable[[dict[str, Any]], None]) -> None:
    """The analysis, within the section's time budget; one line per mutant tried, then one saying it ended."""
    from kavi.gates.mutants import MutantMaker

    section = job["adequacy"]
    pinned = [str(k) for k in section.get("pinned") or []]
    cases = job["cases"]
    judged = int(section["judged"])  # examples and holdouts: the cases the candidate passed
    shown = section.get("shown_expected") or []
    for i, expected in enumerate(shown):
        got = candidate.get(i, {})
        out = got.get("output") if got.get("ran") else None
        if not isinstance(out, dict) or any(k not in out or not equal(out[k], v) for k, v in expected.items()):
            emit({"adequacy_done": {"tried": 0, "skipped": "the candidate fails a shown example"}})
            return
    started_at = time.monotonic()
    deadline = started_at + float(section.get("budget_s") or 1.0)
    cap = float(section.get("call_cap_s") or 0.25)
    # The pool: each generated input once (the cases after the judged ones come in pairs), then the probes.
    pool: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for g, pos in enumerate(range(judged, len(cases), 2)):
        if pos in candidate:
            pool.append((f"g{g}", cases[pos], candidate[pos]))
    # With an independent implementation to compare times with, a probe the candidate runs out of time on is tried
    # once more with `slow_cap_s`: one it cannot finish even then is reported (the forge judges it too slow where the
    # independent answered fast).
    longer = float(section.get("slow_cap_s") or 0.0)
    slow: list[dict[str, Any]] = []
    for p, probe in enumerate(section.get("probes") or []):
        if time.monotonic() > deadline:
            break
        entry = call(probe, cap)
        if entry.get("error_kind") == "timeout" and longer > cap and len(slow) < MAX_SLOW \
                and time.monotonic() + longer <= deadline:
            entry = call(probe, longer)
            if entry.get("error_kind") == "timeout":
                slow.append({"key": f"p{p}", "s": longer})
        pool.append((f"p{p}", probe, entry))
    usable = [(key, case, entry) for key, case, entry in pool if entry.get("ran")]
    # A probe keeps a shown example's shape: where the candidate raises there an exception it did not declare, the
    # evidence leaves open whether that input is outside the skill's domain or a bug.
    crashes = [{"key": key, "error": str(entry.get("error") or "")[:200]} for key, _case, entry in pool
               if key.startswith("p") and entry.get("error_kind") == "raised"][:MAX_CRASHES]
    one_answer = _one_answer(candidate, judged, usable, pinned)

    def differs(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return not equal(_pinned(a.get("output"), pinned), _pinned(b.get("output"), pinned))

    tried = 0
    cut = ""
    maker = MutantMaker(source, filename)
    for index in section.get("mutants") or []:
        if time.monotonic() > deadline:
            cut = "time budget"
            break
        tried += 1
        report: dict[str, Any] = {"mutant": index}
        started = time.monotonic()
        try:
            qualname, code = maker.code(int(index))
            installed = _Installed(namespace, qualname, code)
            installed.install()
        except Exception as err:
            report.update(status="not_applicable", why=f"{type(err).__name__}: {str(err)[:200]}")
            emit({"mutant": report})
            continue
        try:
            report.update(_judge_mutant(call, cases, judged, candidate, usable, cap, deadline, differs, installed))
        finally:
            installed.remove()
        report["ms"] = round((time.monotonic() - started) * 1000, 2)
        emit({"mutant": report})
    emit({"adequacy_done": {"tried": tried, "cut": cut, "s": round(time.monotonic() - started_at, 3),
                            "crashes": crashes, **({"one_answer": one_answer} if one_answer else {}),
                            **({"slow": slow} if slow else {})}})


def _one_answer(candidate: dict[int, dict[str, Any]], judged: int,
                usable: list[tuple[str, dict[str, Any], dict[str, Any]]], pinned: list[str]) -> dict[str, Any] | None:
    """When the examples and holdouts all show one answer (the candidate passed them, so its own answers there are
    theirs): that answer, how many inputs the candidate gave it to, whether it gave it to every pool input too, and
    the first pool input (the probes, nearest the examples, before the generated ones) where it answered otherwise."""
    shown = [_pinned(candidate[i].get("output"), pinned) for i in range(judged) if candidate.get(i, {}).get("ran")]
    if not shown or len(shown) < judged or any(not equal(a, shown[0]) for a in shown[1:]):
        return None
    same = len(shown)
    other: dict[str, Any] | None = None
    for key, _case, entry in sorted(usable, key=lambda u: not u[0].startswith("p")):
        answer = _pinned(entry.get("output"), pinned)
        if equal(answer, shown[0]):
            same += 1
        elif other is None:
            other = {"key": key, "output": entry.get("output")}
    return {"answer": shown[0], "inputs": same, "judged": judged, "constant": other is None,
            **({"other": other} if other is not None else {})}


def _judge_mutant(call: Call, cases: list[dict[str, Any]], judged: int,
                  candidate: dict[int, dict[str, Any]], usable: list[tuple[str, dict[str, Any], dict[str, Any]]],
                  cap: float, deadline: float, differs: Callable[[dict[str, Any], dict[str, Any]], bool],
                  installed: _Installed) -> dict[str, Any]:
    for i in range(judged):
        mine = call(cases[i], cap)
        theirs = candidate.get(i, {})
        if not mine.get("ran"):
            return {"status": "killed", "by": "case", "case": i, "why": str(mine.get("error_kind") or "raised")}
        if differs(mine, theirs):
            return {"status": "killed", "by": "case", "case": i, "why": "output"}
    found: list[dict[str, Any]] = []
    count = 0  # the pool inputs it differs on, up to MAX_COUNTED: how subtle a variant it is
    for key, case, theirs in usable:
        if time.monotonic() > deadline:
            if not found:
                return {"status": "cut"}
            break
        mine = call(case, cap)
        if mine.get("error_kind") == "timeout":
            return {"status": "killed", "by": "pool", "key": key, "why": "timeout"}
        if not mine.get("ran"):
            # No oracle says the input is inside the spec's domain: an exception here decides nothing.
            continue
        if differs(mine, theirs):
            count += 1
            if len(found) < MAX_DISTINGUISHING:
                found.append({"key": key, "candidate": theirs.get("output"), "mutant": mine.get("output")})
            if count >= MAX_COUNTED:
                break
    if not found:
        return {"status": "equivalent"}
    first_key = found[0]["key"]
    case = next(c for k, c, _e in usable if k == first_key)
    shrunk = _shrink(call, case, found[0], cap, deadline, differs, installed)
    return {"status": "distinguished", "distinguishing": found, "differs_on": count, "shrunk": shrunk}


def _shrink(call: Call, case: dict[str, Any], first: dict[str, Any], cap: float,
            deadline: float, differs: Callable[[dict[str, Any], dict[str, Any]], bool], installed: _Installed
            ) -> dict[str, Any]:
    """The smallest input found (greedily) on which the mutant and the candidate still both answer and differ."""
    best = {"input": case.get("input"), "candidate": first["candidate"], "mutant": first["mutant"]}
    calls = 0
    improved = True
    while improved and calls < MAX_SHRINK_CALLS and time.monotonic() < deadline:
        improved = False
        for simpler in _simpler(best["input"]):
            if calls >= MAX_SHRINK_CALLS or time.monotonic() > deadline:
                break
            if _size(simpler) >= _size(best["input"]):
                continue
            trial = {**case, "input": simpler}
            calls += 1
            mine = call(trial, cap)
            if not mine.get("ran"):
                continue
            installed.remove()
            try:
                theirs = call(trial, cap)
            finally:
                installed.install()
            calls += 1
            if theirs.get("ran") and differs(mine, theirs):
                best = {"input": simpler, "candidate": theirs.get("output"), "mutant": mine.get("output")}
                improved = True
                break
    return best
