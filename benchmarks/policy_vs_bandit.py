"""Our static gates beside Bandit on the same corpus of hostile and benign-but-tricky skills.

Run: python benchmarks/policy_vs_bandit.py [--corpus tests/corpus] [--runs 3] [--no-cli-check] [--json]

"Ours" is what `kavi check` runs: the capability policy scan and the AST invariants, with the file's declared
side-effect class (and declared secrets) from its header. Bandit is run through its API on each file; a file is
"flagged" when Bandit reports at least one issue at or above a severity threshold. Two thresholds are shown:
any severity (LOW and up, all confidences) and MEDIUM and up (all confidences). A cross-check runs
`python -m bandit -r -f json -q` once per corpus folder and compares its verdicts with the API's.

Figures: hostile files flagged / total (detection, higher is better), benign files flagged / total (false
positives, lower is better), detection per hostile category, and the time each tool spends per file
(median of --runs passes, in process, after one warm-up pass).
"""

import argparse
import json
import logging
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kavi.policy.invariants import check_invariants
from kavi.policy.policy import load_policy
from kavi.policy.scanner import scan_source
from kavi.skills.base import SideEffectClass

ROOT = Path(__file__).resolve().parents[1]
SEVERITIES = ("LOW", "MEDIUM", "HIGH")


@dataclass(frozen=True)
class Sample:
    path: Path
    kind: str  # hostile | benign
    category: str
    side_effect: SideEffectClass
    secrets: tuple[str, ...]
    source: str


def load_corpus(corpus: Path) -> list[Sample]:
    out = []
    for kind in ("hostile", "benign"):
        for path in sorted((corpus / kind).glob("*.py")):
            source = path.read_text(encoding="utf-8")
            header: dict[str, str] = {}
            for line in source.splitlines():
                if not line.startswith("# "):
                    break
                key, _, value = line[2:].partition(":")
                header[key.strip()] = value.strip()
            out.append(Sample(path, kind, path.stem.split("_")[0] if kind == "hostile" else "benign",
                              SideEffectClass(header["side_effect"]), tuple(header.get("secrets", "").split()),
                              source))
    return out


# -- the two tools -------------------------------------------------------------------------------------------
def ours(sample: Sample) -> list[str]:
    policy = load_policy(None)
    found = scan_source(sample.source, sample.side_effect, declared_secrets=sample.secrets, policy=policy)
    found += check_invariants(sample.source, expected_class=sample.side_effect, expected_name=sample.path.stem)
    return sorted({v.rule_id for v in found})


def bandit_issues(sample: Sample) -> list[tuple[str, str]]:
    """(test id, severity) of every issue Bandit reports on the file, any severity and confidence."""
    from bandit.core import config, manager  # type: ignore[import-untyped]

    mgr = manager.BanditManager(config.BanditConfig(), "file", quiet=True)
    mgr.discover_files([str(sample.path)])
    mgr.run_tests()
    return [(i.test_id, i.severity) for i in mgr.get_issue_list(sev_level="LOW", conf_level="LOW")]


def at_least(issues: list[tuple[str, str]], severity: str) -> list[str]:
    floor = SEVERITIES.index(severity)
    return sorted({test for test, sev in issues if sev in SEVERITIES and SEVERITIES.index(sev) >= floor})


def timed(fn: Callable[[Sample], Any], samples: list[Sample], runs: int) -> tuple[dict[Path, Any], float]:
    """Results of `fn` on every sample, and the median seconds per file over `runs` passes (after a warm-up)."""
    results = {s.path: fn(s) for s in samples}
    per_pass = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for s in samples:
            fn(s)
        per_pass.append((time.perf_counter() - t0) / len(samples))
    return results, statistics.median(per_pass)


def bandit_cli(corpus: Path) -> dict[str, list[str]]:
    """Test ids per file from one `python -m bandit -r -f json -q` run per corpus folder."""
    out: dict[str, list[str]] = {}
    for kind in ("hostile", "benign"):
        proc = subprocess.run([sys.executable, "-m", "bandit", "-r", "-f", "json", "-q", str(corpus / kind)],
                              capture_output=True, text=True, check=False)
        data = json.loads(proc.stdout)
        for err in data.get("errors", []):
            print(f"bandit could not scan {err.get('filename')}: {err.get('reason')}", file=sys.stderr)
        for path in sorted((corpus / kind).glob("*.py")):
            out[str(path.resolve())] = []
        for issue in data["results"]:
            out.setdefault(str(Path(issue["filename"]).resolve()), []).append(issue["test_id"])
    return out


# -- report --------------------------------------------------------------------------------------------------
def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.1f}%)" if d else "0/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpus")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-cli-check", action="store_true", help="skip the bandit command-line cross-check")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    args = parser.parse_args()
    logging.getLogger("bandit").setLevel(logging.ERROR)

    samples = load_corpus(args.corpus)
    hostile = [s for s in samples if s.kind == "hostile"]
    benign = [s for s in samples if s.kind == "benign"]
    our_rules, our_time = timed(ours, samples, args.runs)
    bandit_raw, bandit_time = timed(bandit_issues, samples, args.runs)
    columns: dict[str, dict[Path, list[str]]] = {
        "ours": our_rules,
        "bandit any": {p: at_least(i, "LOW") for p, i in bandit_raw.items()},
        "bandit medium+": {p: at_least(i, "MEDIUM") for p, i in bandit_raw.items()},
    }
    categories = sorted({s.category for s in hostile})

    figures: dict[str, Any] = {"corpus": {"hostile": len(hostile), "benign": len(benign)}, "tools": {}}
    for name, flags in columns.items():
        figures["tools"][name] = {
            "hostile_flagged": sum(bool(flags[s.path]) for s in hostile),
            "benign_flagged": sum(bool(flags[s.path]) for s in benign),
            "per_category": {c: [sum(bool(flags[s.path]) for s in hostile if s.category == c),
                                 sum(s.category == c for s in hostile)] for c in categories},
            "ms_per_file": round(1000 * (our_time if name == "ours" else bandit_time), 3),
        }
    figures["missed_by_ours"] = [s.path.stem for s in hostile if not our_rules[s.path]]
    figures["false_positives_ours"] = [s.path.stem for s in benign if our_rules[s.path]]
    figures["false_positives_bandit_any"] = {s.path.stem: columns["bandit any"][s.path] for s in benign
                                             if columns["bandit any"][s.path]}
    figures["bandit_tests_fired"] = {}
    for s in samples:
        for test, _sev in bandit_raw[s.path]:
            figures["bandit_tests_fired"][test] = figures["bandit_tests_fired"].get(test, 0) + 1

    if not args.no_cli_check:
        cli = bandit_cli(args.corpus)
        disagree = [s.path.stem for s in samples
                    if bool(cli.get(str(s.path.resolve()))) != bool(columns["bandit any"][s.path])]
        figures["bandit_cli_check"] = {"files": len(samples), "disagreements": disagree}

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    names = list(columns)
    width = 22
    print(f"corpus: {len(hostile)} hostile, {len(benign)} benign-but-tricky skill files ({args.corpus})")
    print("bandit thresholds: 'any' = an issue of any severity (LOW+), 'medium+' = an issue of severity "
          "MEDIUM or HIGH; every confidence level counts\n")
    print(f"{'':30}" + "".join(f"{n:>{width}}" for n in names))
    t = figures["tools"]
    print(f"{'hostile flagged (detection)':30}" + "".join(
        f"{pct(t[n]['hostile_flagged'], len(hostile)):>{width}}" for n in names))
    print(f"{'benign flagged (false pos.)':30}" + "".join(
        f"{pct(t[n]['benign_flagged'], len(benign)):>{width}}" for n in names))
    print("\nhostile detection per category")
    for c in categories:
        print(f"  {c:28}" + "".join(f"{'/'.join(map(str, t[n]['per_category'][c])):>{width}}" for n in names))
    print(f"\n{'time per file (ms, in process)':30}" + "".join(f"{t[n]['ms_per_file']:>{width}.3f}" for n in names))
    print(f"{'time for the corpus (s)':30}" + "".join(
        f"{t[n]['ms_per_file'] * len(samples) / 1000:>{width}.2f}" for n in names))
    print(f"\nmissed by ours: {figures['missed_by_ours'] or 'none'}")
    print(f"false positives of ours: {figures['false_positives_ours'] or 'none'}")
    fp = figures["false_positives_bandit_any"]
    print(f"false positives of bandit (any): {', '.join(f'{k} {v}' for k, v in fp.items()) or 'none'}")
    fired = sorted(figures["bandit_tests_fired"].items(), key=lambda kv: -kv[1])
    print("bandit tests that fired (files): " + ", ".join(f"{k} {v}" for k, v in fired))
    if "bandit_cli_check" in figures:
        d = figures["bandit_cli_check"]["disagreements"]
        print(f"bandit command line vs API: {'agree on all files' if not d else f'disagree on {d}'}")


if __name__ == "__main__":
    main()
