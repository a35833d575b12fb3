"""How often the static gates refuse honest skills, and how often they let a hostile one through.

Run: python benchmarks/policy_verdicts.py [--corpus tests/corpus] [--datasets DIR | --no-datasets] [--limit N]
                                          [--raw] [--json]

Every sample is checked as `kavi check` checks a file: the capability policy scan and the AST invariants, with the
side-effect class (and secrets) the sample declares. Three sets:

- the benign corpus (tests/corpus/benign): ordinary skills written to the skill contract, grouped by the family
  of the standard library they use (`# family:` in their header; older files without one are "earlier");
- the HumanEval and MBPP reference solutions, wrapped as READ_ONLY skills at run time with benchmarks/datasets.py
  (its loaders and `wrap_skill`, then the same ruff tidy-up a model's answer gets there, unless --raw). The
  datasets are read from KAVI_DATASETS or the shared folder beside the checkout; if they are absent the benchmark
  says so in one line and goes on with the corpus. No dataset code is ever written into the repository;
- the hostile corpus (tests/corpus/hostile), grouped by the category its file name starts with.

A benign sample with any finding is a false reject (every finding is printed); a hostile sample with none is a
miss. The last line is exactly `policy: false-rejects F/N benign, caught M/T hostile`.
"""

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from kavi.policy.invariants import check_invariants
from kavi.policy.policy import Policy, load_policy
from kavi.policy.scanner import scan_source
from kavi.skills.base import SideEffectClass
from kavi.verdicts import Violation

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATASET_FILES = {"humaneval": "HumanEval.jsonl.gz", "mbpp": "sanitized-mbpp.json"}

# Dataset references that do what the skill contract forbids for every skill, whatever its class: they are not
# benign skills, so they are not counted as benign. Each must be refused by the rule named here (any other outcome
# is printed as a problem); the report lists them with the reason.
OUTSIDE_CONTRACT: dict[str, tuple[str, str]] = {
    "he_160_do_algebra": ("POL-DYNAMIC-CODE", "evaluates an expression string built from its input with eval()"),
    "mbpp_264_dog_age": ("POL-TAMPER", "calls exit() on a negative age: it would end the host process"),
    "mbpp_390_add_string": ("POL-ESCAPE", "calls .format() on a template the caller passes in, whose fields can "
                            "read attributes by name ('{0.__class__}')"),
}


@dataclass(frozen=True)
class Sample:
    name: str  # the skill's name: the file stem, or the wrapped problem's name
    kind: str  # benign | hostile
    group: str  # benign: family or dataset; hostile: category
    side_effect: SideEffectClass
    source: str
    secrets: tuple[str, ...] = ()
    expect: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    sample: Sample
    findings: tuple[Violation, ...]
    seconds: float

    @property
    def refused(self) -> bool:
        return bool(self.findings)

    @property
    def rules(self) -> list[str]:
        return sorted({v.rule_id for v in self.findings})


@dataclass
class Tally:
    benign: int = 0
    false_rejects: int = 0
    hostile: int = 0
    caught: int = 0
    by_group: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (kind, group) -> [files, refused]

    def line(self) -> str:
        return (f"policy: false-rejects {self.false_rejects}/{self.benign} benign, "
                f"caught {self.caught}/{self.hostile} hostile")


# -- samples -------------------------------------------------------------------------------------------------
def _header(source: str) -> dict[str, str]:
    header: dict[str, str] = {}
    for line in source.splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(":")
        header[key.strip()] = value.strip()
    return header


def load_corpus(corpus: Path) -> list[Sample]:
    """The committed corpus, benign then hostile, each file with the class and secrets its header declares."""
    out = []
    for kind in ("benign", "hostile"):
        for path in sorted((corpus / kind).glob("*.py")):
            source = path.read_text(encoding="utf-8")
            header = _header(source)
            group = (header.get("family") or "earlier") if kind == "benign" else path.stem.split("_")[0]
            out.append(Sample(path.stem, kind, group, SideEffectClass(header["side_effect"]), source,
                              tuple(header.get("secrets", "").split()), tuple(header.get("expect", "").split())))
    return out


def load_datasets_module(folder: Path | None) -> ModuleType:
    """benchmarks/datasets.py as a module; `folder` overrides where it looks for the data files."""
    spec = importlib.util.spec_from_file_location("kavi_bench_datasets", HERE / "datasets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    if folder is not None:
        vars(module)["DATASETS"] = folder
    return module


def _tidy_many(sources: list[str]) -> list[str]:
    """The ruff fix-and-format pass benchmarks/datasets.py gives a wrapped answer (its `_tidy`), run once over a
    folder instead of twice per file: hundreds of files would otherwise cost hundreds of interpreter starts."""
    with tempfile.TemporaryDirectory(prefix="kavi-policy-verdicts-") as tmp:
        files = [Path(tmp) / f"wrap_{i}.py" for i in range(len(sources))]
        for f, source in zip(files, sources, strict=True):
            f.write_text(source, encoding="utf-8")
        subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--fix", "--unsafe-fixes", "-q",
                        "--select", "I,UP,F401,B905,B007,E713,E714",
                        "--config", "lint.isort.known-first-party=['skills', 'kavi_assets']", tmp],
                       capture_output=True, check=False)
        subprocess.run([sys.executable, "-m", "ruff", "format", "--isolated", "-q", "--line-length", "110", tmp],
                       capture_output=True, check=False)
        return [f.read_text(encoding="utf-8") for f in files]


def dataset_samples(folder: Path | None, limit: int = 0, tidy: bool = True) -> tuple[list[Sample], list[str]]:
    """The datasets' reference solutions wrapped as skills, and one line for each dataset that is absent or a
    problem that could not be wrapped (in memory only; nothing is written beside the corpus)."""
    ds = load_datasets_module(folder)
    notes: list[str] = []
    problems: list[Any] = []
    for which, filename in DATASET_FILES.items():
        if not (Path(ds.DATASETS) / filename).is_file():
            notes.append(f"datasets: {filename} not found in {ds.DATASETS} (set KAVI_DATASETS); {which} skipped")
            continue
        loaded = ds.load_humaneval() if which == "humaneval" else ds.load_mbpp()
        problems += loaded[:limit] if limit else loaded
    wrapped: list[tuple[Any, str]] = []
    for p in problems:
        try:
            wrapped.append((p, ds.wrap_skill(p)))
        except SyntaxError as err:
            notes.append(f"datasets: {p.task_id} not wrapped: the solution does not parse ({err.msg})")
    sources = [s for _, s in wrapped]
    if tidy and sources:
        sources = _tidy_many(sources)
    return [Sample(p.name, "outside" if p.name in OUTSIDE_CONTRACT else "benign", p.source, SideEffectClass.READ_ONLY,
                   s) for (p, _), s in zip(wrapped, sources, strict=True)], notes


# -- verdicts ------------------------------------------------------------------------------------------------
def judge(sample: Sample, policy: Policy) -> Verdict:
    """The static gates, as `kavi check` runs them, on one sample."""
    start = time.perf_counter()
    found = scan_source(sample.source, sample.side_effect, declared_secrets=sample.secrets, policy=policy)
    found += check_invariants(sample.source, expected_class=sample.side_effect, expected_name=sample.name)
    return Verdict(sample, tuple(found), time.perf_counter() - start)


def tally(verdicts: Iterable[Verdict]) -> Tally:
    t = Tally()
    for v in verdicts:
        counts = t.by_group.setdefault((v.sample.kind, v.sample.group), [0, 0])
        counts[0] += 1
        counts[1] += v.refused
        if v.sample.kind == "outside":
            continue
        if v.sample.kind == "benign":
            t.benign += 1
            t.false_rejects += v.refused
        else:
            t.hostile += 1
            t.caught += v.refused
    return t


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def figures(verdicts: list[Verdict], notes: list[str]) -> dict[str, Any]:
    t = tally(verdicts)
    times = [v.seconds * 1000 for v in verdicts]
    return {
        "benign": t.benign, "false_rejects": t.false_rejects, "hostile": t.hostile, "caught": t.caught,
        "groups": [{"kind": kind, "group": group, "files": n, "refused": r}
                   for (kind, group), (n, r) in sorted(t.by_group.items())],
        "false_reject_files": [{"name": v.sample.name, "group": v.sample.group, "class": v.sample.side_effect.value,
                                "rules": v.rules, "messages": [f.render() for f in v.findings]}
                               for v in verdicts if v.sample.kind == "benign" and v.refused],
        "missed_hostile": [{"name": v.sample.name, "group": v.sample.group, "expect": list(v.sample.expect)}
                           for v in verdicts if v.sample.kind == "hostile" and not v.refused],
        # Caught, but by none of the rules the file says should report it: worth a look, still counted as caught.
        "caught_by_other_rule": [{"name": v.sample.name, "rules": v.rules, "expect": list(v.sample.expect)}
                                 for v in verdicts if v.sample.kind == "hostile" and v.refused and v.sample.expect
                                 and not set(v.rules) & set(v.sample.expect)],
        "outside_contract": [{"name": v.sample.name, "rule": OUTSIDE_CONTRACT[v.sample.name][0],
                               "why": OUTSIDE_CONTRACT[v.sample.name][1], "rules": v.rules,
                               "as_expected": OUTSIDE_CONTRACT[v.sample.name][0] in v.rules}
                              for v in verdicts if v.sample.kind == "outside"],
        "ms_per_file": {"median": round(statistics.median(times), 3) if times else 0.0,
                        "p95": round(_percentile(times, 0.95), 3), "max": round(max(times, default=0.0), 3),
                        "total": round(sum(times), 1)},
        "notes": notes,
        "line": t.line(),
    }


def report(fig: dict[str, Any]) -> str:
    out: list[str] = [*fig["notes"]]
    for kind in ("benign", "hostile"):
        rows = [g for g in fig["groups"] if g["kind"] == kind]
        title = "refused" if kind == "benign" else "caught"
        out += ["", f"{kind} by {'family' if kind == 'benign' else 'category'}:",
                f"  {'group':<18} {'files':>6} {title:>8}"]
        out += [f"  {g['group']:<18} {g['files']:>6} {g['refused']:>8}" for g in rows]
    out += ["", f"false rejects ({len(fig['false_reject_files'])}):"]
    for f in fig["false_reject_files"]:
        out.append(f"  {f['name']} [{f['group']}, {f['class']}]")
        out += [f"      {m}" for m in f["messages"]]
    out += ["", f"missed hostile ({len(fig['missed_hostile'])}):"]
    out += [f"  {m['name']} [{m['group']}], expected {' '.join(m['expect'])}" for m in fig["missed_hostile"]]
    if fig["caught_by_other_rule"]:
        out += ["", "hostile caught by a rule other than the expected ones:"]
        out += [f"  {c['name']}: {' '.join(c['rules'])} (expected {' '.join(c['expect'])})"
                for c in fig["caught_by_other_rule"]]
    if fig["outside_contract"]:
        out += ["", "dataset references outside the skill contract (not counted as benign; each must be refused by "
                    "the rule named):"]
        out += [f"  {o['name']}: {o['why']} -- refused by {o['rule']}: "
                f"{'yes' if o['as_expected'] else 'NO, ' + (' '.join(o['rules']) or 'accepted')}"
                for o in fig["outside_contract"]]
    ms = fig["ms_per_file"]
    out += ["", f"time per file (static gates, in process): median {ms['median']} ms, p95 {ms['p95']} ms, "
                f"max {ms['max']} ms, total {ms['total']} ms", fig["line"]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpus")
    parser.add_argument("--datasets", type=Path, default=None, help="folder holding the shared datasets")
    parser.add_argument("--no-datasets", action="store_true", help="the committed corpus only")
    parser.add_argument("--limit", type=int, default=0, help="at most N problems per dataset (0: all)")
    parser.add_argument("--raw", action="store_true", help="wrapped references without the ruff tidy-up")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a report")
    args = parser.parse_args(argv)
    policy = load_policy(None)
    samples = load_corpus(args.corpus)
    notes: list[str] = []
    if not args.no_datasets:
        wrapped, notes = dataset_samples(args.datasets, args.limit, tidy=not args.raw)
        benign = [s for s in samples if s.kind == "benign"]
        samples = benign + wrapped + [s for s in samples if s.kind == "hostile"]
    for s in samples[:3]:
        judge(s, policy)  # warm-up: the first scan pays for imports and caches, not for the file
    fig = figures([judge(s, policy) for s in samples], notes)
    print(json.dumps(fig, indent=2) if args.json else report(fig))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
