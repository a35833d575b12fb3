"""A person sees the learner's posterior curves on the asset page, and plots/ does not grow with
every materialization."""

import os
import re
import time
from pathlib import Path
from urllib.parse import unquote

from kavi.routing.posteriors import (
    UI_INLINE_MARKDOWN,
    OutcomeCounts,
    plot_posteriors,
    posterior_curves_markdown,
    posteriors_from_counts,
    posteriors_table_rows,
)

MODELS = ["recorded-coder-a", "recorded-coder-b", "recorded-coder-c"]


def _posteriors(extra_success: int = 0) -> list:  # type: ignore[type-arg]
    counts = [OutcomeCounts("recorded-coder-a", "READ_ONLY:simple", 3 + extra_success, 1),
              OutcomeCounts("recorded-coder-b", "READ_ONLY:simple", 6, 2),
              OutcomeCounts("recorded-coder-b", "FILE_WRITE:simple", 2, 0)]
    return posteriors_from_counts(counts, models=MODELS)


def test_curves_are_an_inline_svg_image_with_one_line_per_model() -> None:
    md = posterior_curves_markdown(_posteriors(), "READ_ONLY:simple")
    # Short enough for the pinned UI to render it on the asset page rather than behind "[Show Markdown]".
    assert len(md) < UI_INLINE_MARKDOWN
    m = re.match(r"!\[READ_ONLY:simple\]\(data:image/svg\+xml,([^)\s]+)\)\n\n(.+)$", md, re.S)
    assert m, md[:200]
    svg = unquote(m.group(1))
    assert svg.startswith("<svg xmlns='http://www.w3.org/2000/svg'") and svg.endswith("</svg>")
    assert svg.count("<path stroke='") == len(MODELS)  # a curve per model
    for model in MODELS:
        assert model in m.group(2)  # the legend names every model with its colour
    assert "recorded-coder-b (mean 0.70, n=8)" in m.group(2)
    # The curve peaks where the posterior's mode is: Beta(7, 3) has its mode at 0.75 (x = 75 of 100).
    pts = re.search(r"stroke='red' d='M([^']+)'", svg)
    assert pts
    nums = [int(v) for v in pts.group(1).split(",")]
    xs, ys = nums[0::2], nums[1::2]
    assert 65 <= xs[ys.index(min(ys))] <= 82


def test_many_models_still_fit_inline() -> None:
    models = [f"model-{i}" for i in range(6)]
    counts = [OutcomeCounts(m, "NETWORK:complex", i, 6 - i) for i, m in enumerate(models)]
    md = posterior_curves_markdown(posteriors_from_counts(counts, models=models), "NETWORK:complex")
    assert len(md) < UI_INLINE_MARKDOWN
    assert unquote(md).count("<path stroke='") == 6


def test_table_rows_are_narrow() -> None:
    rows = posteriors_table_rows(_posteriors())
    assert len(rows) == 6 and list(rows[0]) == ["model", "task type", "won/lost", "mean (95% CI)"]
    row = next(r for r in rows if r["model"] == "recorded-coder-b" and r["task type"] == "READ_ONLY:simple")
    assert row["won/lost"] == "6/2" and re.fullmatch(r"0\.70 \(0\.\d\d–0\.\d\d\)", row["mean (95% CI)"])


def test_one_png_per_content_and_the_folder_is_bounded(tmp_path: Path) -> None:
    folder = tmp_path / "plots"
    first = plot_posteriors(_posteriors(), folder, keep=3)
    again = plot_posteriors(_posteriors(), folder, keep=3)
    assert first == again and len(list(folder.iterdir())) == 1  # the same posteriors: no new file
    assert re.fullmatch(r"model_posteriors_[0-9a-f]{16}\.png", first.name)
    assert first.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    made = [first]
    base = time.time() - 100
    os.utime(first, (base, base))
    for extra in range(1, 5):
        made.append(plot_posteriors(_posteriors(extra), folder, keep=3))
        os.utime(made[-1], (base + extra, base + extra))  # one after the other, whatever the clock's resolution
    left = sorted(folder.iterdir())
    assert len(set(made)) == 5 and len(left) == 3
    assert set(left) == set(made[-3:])  # the newest ones stay, the latest among them
