"""Beta posteriors of each model's success per task type, learned from attempt outcomes."""

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kavi_assets.routing.beta import beta_pdf, beta_ppf


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


def plot_posteriors(posteriors: Sequence[Posterior], path: Path) -> Path:
    """A PNG of each posterior density, one panel per task type."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
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
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
