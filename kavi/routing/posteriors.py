"""Beta posteriors of each model's success per task type, learned from attempt outcomes."""

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kavi.routing.beta import beta_pdf, beta_ppf


@dataclass(frozen=True)
class Outcome:
    model: str
    task_type: str
    success: bool
    latency_ms: float = 0.0
    tokens: int = 0
    cost_usd: float | None = None


@dataclass(frozen=True)
class Posterior:
    model: str
    task_type: str
    alpha: float
    beta: float
    successes: int
    failures: int
    mean: float
    ci_low: float
    ci_high: float
    mean_latency_ms: float | None
    mean_cost_usd: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def prior_params(prior_weight: float = 2.0, p0: float = 0.5) -> tuple[float, float]:
    """α0 = w·p0 and β0 = w·(1−p0): the prior counts as `prior_weight` pseudo-attempts at rate p0."""
    if not prior_weight > 0.0:
        raise ValueError(f"prior_weight must be positive (pseudo-attempts), got {prior_weight}")
    if not 0.0 < p0 < 1.0:
        raise ValueError(f"the prior success rate p0 must lie strictly between 0 and 1, got {p0}")
    return prior_weight * p0, prior_weight * (1.0 - p0)


@dataclass(frozen=True)
class OutcomeCounts:
    """The outcomes of one (model, task type), summed: what a posterior needs, however many attempts there were."""

    model: str
    task_type: str
    successes: int
    failures: int
    latency_sum_ms: float = 0.0  # over the outcomes with a (non-zero) latency
    latency_n: int = 0
    cost_sum_usd: float = 0.0  # over the outcomes with a cost
    cost_n: int = 0


def count_outcomes(outcomes: Iterable[Outcome]) -> list[OutcomeCounts]:
    """Sum outcomes per (model, task type), in order of first appearance."""
    acc: dict[tuple[str, str], list[float]] = {}
    for o in outcomes:
        a = acc.setdefault((o.model, o.task_type), [0, 0, 0.0, 0, 0.0, 0])
        a[0 if o.success else 1] += 1
        if o.latency_ms:
            a[2] += o.latency_ms
            a[3] += 1
        if o.cost_usd is not None:
            a[4] += o.cost_usd
            a[5] += 1
    return [OutcomeCounts(m, t, int(a[0]), int(a[1]), a[2], int(a[3]), a[4], int(a[5])) for (m, t), a in acc.items()]


def compute_posteriors(
    outcomes: Iterable[Outcome],
    *,
    models: Sequence[str],
    task_types: Sequence[str] = (),
    prior_weight: float = 2.0,
    p0: float = 0.5,
) -> list[Posterior]:
    """Beta(α0 + successes, β0 + failures) for every (model, task type) seen or asked for."""
    return posteriors_from_counts(count_outcomes(outcomes), models=models, task_types=task_types,
                                  prior_weight=prior_weight, p0=p0)


def posteriors_from_counts(
    counts: Iterable[OutcomeCounts],
    *,
    models: Sequence[str],
    task_types: Sequence[str] = (),
    prior_weight: float = 2.0,
    p0: float = 0.5,
) -> list[Posterior]:
    """The posteriors of `compute_posteriors`, from outcomes already summed (by the ledger, in SQL)."""
    a0, b0 = prior_params(prior_weight, p0)
    by_key: dict[tuple[str, str], OutcomeCounts] = {}
    seen_types: set[str] = set(task_types)
    all_models: list[str] = list(dict.fromkeys(models))
    for c in counts:
        by_key[(c.model, c.task_type)] = c
        seen_types.add(c.task_type)
        if c.model not in all_models:
            all_models.append(c.model)
    out: list[Posterior] = []
    for ttype in sorted(seen_types):
        for model in all_models:
            c = by_key.get((model, ttype)) or OutcomeCounts(model, ttype, 0, 0)
            s, f = c.successes, c.failures
            a, b = a0 + s, b0 + f
            out.append(Posterior(
                model=model, task_type=ttype, alpha=a, beta=b, successes=s, failures=f, mean=a / (a + b),
                ci_low=beta_ppf(0.025, a, b), ci_high=beta_ppf(0.975, a, b),
                mean_latency_ms=c.latency_sum_ms / c.latency_n if c.latency_n else None,
                mean_cost_usd=c.cost_sum_usd / c.cost_n if c.cost_n else None, n=s + f,
            ))
    return out


def posteriors_markdown(posteriors: Sequence[Posterior]) -> str:
    lines = [
        "| model | task type | successes | failures | α | β | mean | 95% CI | mean latency | mean cost |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
    ]
    for p in posteriors:
        lat = f"{p.mean_latency_ms:.0f} ms" if p.mean_latency_ms is not None else "–"
        cost = f"${p.mean_cost_usd:.4f}" if p.mean_cost_usd is not None else "–"
        lines.append(f"| {p.model} | {p.task_type} | {p.successes} | {p.failures} | {p.alpha:.1f} | {p.beta:.1f} | "
                     f"{p.mean:.3f} | [{p.ci_low:.3f}, {p.ci_high:.3f}] | {lat} | {cost} |")
    return "\n".join(lines)


# The Dagster UI (1.13) renders a markdown metadata entry inline only when it is shorter than this; a longer one is
# a "[Show Markdown]" button. Each task type's curves are drawn as a small SVG image that fits under it.
UI_INLINE_MARKDOWN = 1000
SVG_COLOURS = ("blue", "red", "green", "orange", "purple", "teal", "brown", "black")
_SVG_W, _SVG_H = 100, 30


def _svg_path(p: Posterior, xs: Sequence[float], top: float) -> str:
    """`M x,y,x,y…` (the pairs after M are line segments) in whole units, without the flat stretches at the
    baseline on either side: a narrow posterior costs few characters."""
    base = _SVG_H - 1
    pts = [(round(x * _SVG_W), round(base - (_SVG_H - 3) * min(beta_pdf(x, p.alpha, p.beta), top) / top)) for x in xs]
    raised = [i for i, (_, y) in enumerate(pts) if y < base]
    if raised:
        pts = pts[max(raised[0] - 1, 0): raised[-1] + 2]
    return "M" + ",".join(f"{x},{y}" for x, y in pts)


def posterior_curves_markdown(posteriors: Sequence[Posterior], task_type: str) -> str:
    """The posterior densities of one task type as a markdown image (an SVG data URI) with a one-line legend,
    short enough for the Dagster UI to show inline on the asset page; fewer sample points when many models
    would make it too long (beyond eight models the image is left to the PNG)."""
    from urllib.parse import quote

    group = [p for p in posteriors if p.task_type == task_type][: len(SVG_COLOURS)]
    legend = " · ".join(f"{c}: {p.model} (mean {p.mean:.2f}, n={p.n})"
                        for c, p in zip(SVG_COLOURS, group, strict=False))
    text = ""
    for k in (49, 33, 25, 19, 15, 11):
        xs = [(i + 0.5) / k for i in range(k)]
        top = max((beta_pdf(x, p.alpha, p.beta) for p in group for x in xs), default=1.0) or 1.0
        # The first curve is drawn wider, underneath: two models with the same counts stay two visible lines.
        wide = " stroke-width='2'"
        curves = "".join(f"<path stroke='{c}'{wide if i == 0 else ''} d='{_svg_path(p, xs, top)}'/>"
                         for i, (c, p) in enumerate(zip(SVG_COLOURS, group, strict=False)))
        # The width alone sizes it (the height follows the view box); the baseline is the image's lower edge.
        svg = (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {_SVG_W} {_SVG_H}' width='360'>"
               f"<g fill='none' stroke-width='.6'>{curves}</g></svg>")
        text = f"![{task_type}](data:image/svg+xml,{quote(svg, safe=chr(39) + '=:/,.')})\n\n{legend}"
        if len(text) < UI_INLINE_MARKDOWN:
            break
    return text


def posteriors_table_rows(posteriors: Sequence[Posterior]) -> list[dict[str, Any]]:
    """One row per (model, task type) in four columns, narrow enough for the asset page's metadata panel (a wider
    table is clipped on the right there); latency and cost stay in the JSON entry beside it."""
    # A zero-width space after the task type's "/" lets its cell wrap there instead of widening the table.
    return [{
        "model": p.model, "task type": p.task_type.replace("/", "/\u200b"), "won/lost": f"{p.successes}/{p.failures}",
        "mean (95% CI)": f"{p.mean:.2f} ({p.ci_low:.2f}–{p.ci_high:.2f})",
    } for p in posteriors]


def posteriors_png(posteriors: Sequence[Posterior]) -> bytes:
    """A PNG of each posterior density, one panel per task type (the same picture for the same posteriors)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    types = sorted({p.task_type for p in posteriors}) or ["(no outcomes yet)"]
    fig, axes = plt.subplots(len(types), 1, figsize=(7, 2.6 * len(types)), squeeze=False)
    xs = [i / 400 for i in range(1, 400)]
    for ax, ttype in zip(axes[:, 0], types, strict=True):
        for p in (q for q in posteriors if q.task_type == ttype):
            ax.plot(xs, [beta_pdf(x, p.alpha, p.beta) for x in xs],
                    label=f"{p.model} (n={p.n}, mean {p.mean:.2f})")
        ax.set_title(ttype, fontsize=10)
        ax.set_xlabel("success rate")
        ax.set_yticks([])
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    # No "Software"/date chunks: identical posteriors give identical bytes, hence one file per content hash.
    fig.savefig(buf, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def plot_posteriors(posteriors: Sequence[Posterior], folder: Path, keep: int = 20) -> Path:
    """Write the plot once per content (`model_posteriors_<sha256[:16]>.png`) and keep the newest `keep` plots:
    a materialization that learned nothing new adds no file, and the folder never grows without bound."""
    import hashlib
    import os

    data = posteriors_png(posteriors)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"model_posteriors_{hashlib.sha256(data).hexdigest()[:16]}.png"
    if path.exists():
        os.utime(path)  # the newest again: pruning keeps what is being shown
    else:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    plots = sorted(folder.glob("model_posteriors_*.png"), key=lambda f: f.stat().st_mtime, reverse=True)
    for old in plots[max(keep, 1):]:
        if old != path:
            old.unlink(missing_ok=True)
    return path
