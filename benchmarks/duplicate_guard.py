"""The duplicate guard of `kavi propose`, measured on material the project did not write: the HumanEval and MBPP
problems (benchmarks/datasets.py) as trusted skills (their reference solutions) and as proposals.

Every problem's proposal is judged as `kavi propose` judges it (kavi.search: the proposal as the query; a trusted
skill scoring at or above KAVI_SEARCH_DUPLICATE_SCORE is a candidate), twice:
- as an absent task: against the corpus without its own skill (excluded from the results, as a proposal's own
  name is), so every refusal refuses an honest proposal citing a skill that does something else;
- as a renamed copy: under another name against the whole corpus, where the guard should refuse it citing the
  original.
Side by side: the refusals by the score alone (the guard before kavi.search.same_task) and with the evidence the
guard now asks for (the same class and fields, the candidate answering the proposal's examples and holdouts in the
gate sandbox, and the same description in its content words). Every dataset proposal has the same fields (`args`,
`result`). The datasets hold some tasks twice under two numbers: an absent task refused citing its twin
(benchmarks/same_task_pairs.json, read by a person) is right, any other refusal cites the wrong skill. No model
endpoint is configured here: descriptions in other words are warnings, as offline.

Run: python benchmarks/duplicate_guard.py [--data DIR (a datasets.py --dataset both output)] [--limit N]
Last line: `guard: absent tasks refused X -> Y (Z citing the wrong skill) of N; renamed copies refused A -> B of N`.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from kavi.home import KaviHome
from kavi.proposals.model import Proposal, parse_proposal
from kavi.search.documents import Doc, Hit, spec_query
from kavi.search.index import SearchConfig, SearchIndex, open_index
from kavi.search.same_task import TrustedSource, same_task

HERE = Path(__file__).resolve().parent


def same_task_pairs() -> set[frozenset[str]]:
    """The pairs of problems that ask for the same task (benchmarks/same_task_pairs.json)."""
    doc = json.loads((HERE / "same_task_pairs.json").read_text(encoding="utf-8"))
    return {frozenset(pair) for pair in doc["pairs"]}


def load(data: Path, limit: int) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """The proposals (in name order, at most `limit`) and each one's reference skill source."""
    specs, sources = [], {}
    for path in sorted((data / "proposals").glob("*.json"))[:limit]:
        spec = json.loads(path.read_text(encoding="utf-8"))
        cassette = yaml.safe_load((data / "cassettes" / f"{spec['name']}.yaml").read_text(encoding="utf-8"))
        build = next(i for i in cassette["interactions"] if i["kind"] == "build")
        sources[spec["name"]] = build["files"][f"skills/{spec['name']}.py"].encode("utf-8")
        specs.append(spec)
    return specs, sources


def judge(proposal: Proposal, hits: list[Hit], threshold: float,
          sources: dict[str, bytes]) -> tuple[Hit | None, Hit | None]:
    """(the candidate the score alone refuses with, the candidate the evidence refuses with), None for none."""
    candidates = [h for h in hits if h.score >= threshold]
    by_score = candidates[0] if candidates else None
    for h in candidates:
        skill = TrustedSource(h.name, h.side_effect_class, (), h.inputs, h.outputs, sources.get(h.name), h.description)
        if same_task(proposal, skill).same:
            return by_score, h
    return by_score, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--verbose", action="store_true", help="print every refusal")
    args = parser.parse_args()
    data = args.data
    if data is None:
        data = Path(tempfile.mkdtemp(prefix="kavi-guard-data-"))
        subprocess.run([sys.executable, str(HERE / "datasets.py"), "--out", str(data), "--dataset", "both",
                        "--limit", "1000"], check=True, stdout=subprocess.DEVNULL)
    specs, sources = load(data, args.limit)
    config = SearchConfig.from_env()
    with tempfile.TemporaryDirectory() as tmp:
        home = KaviHome(Path(tmp) / "home").ensure()
        index: SearchIndex = open_index(home, None, config)  # type: ignore[arg-type]  # never reads a ledger here
        index.build([Doc.from_spec("skill", spec, 1) for spec in specs], "benchmark")
        t0 = time.perf_counter()
        absent = [0, 0]  # refusals by the score alone, with the evidence
        twins = same_task_pairs()
        wrong = [0, 0]  # refusals citing a skill that does another task: by the score alone, with the evidence
        copies = [0, 0]
        by_name = {spec["name"]: spec for spec in specs}
        for spec in specs:
            proposal = parse_proposal(spec)
            hits = index.query(spec_query(proposal), limit=3, exclude=(proposal.name,))
            old, new = judge(proposal, hits, config.duplicate_score, sources)
            absent[0] += old is not None
            absent[1] += new is not None
            wrong[0] += old is not None and frozenset((proposal.name, old.name)) not in twins
            wrong[1] += new is not None and frozenset((proposal.name, new.name)) not in twins
            if args.verbose and old is not None:
                mutual = new is not None and same_task(parse_proposal(by_name[new.name]), TrustedSource(
                    proposal.name, proposal.side_effect_class.value, (),
                    tuple((f.name, f.type) for f in proposal.inputs), tuple((f.name, f.type) for f in proposal.outputs),
                    sources.get(proposal.name), proposal.description)).same
                cited = "no refusal" if new is None else new.name + (" (both ways)" if mutual else " (one way)") + (
                    "" if frozenset((proposal.name, new.name)) in twins else ", the wrong skill")
                print(f"absent {proposal.name}: score alone cites {old.name} ({old.score:.2f}); with evidence "
                      f"{cited}")
            copy = parse_proposal({**spec, "name": f"copy_of_{spec['name']}"})
            hits = index.query(spec_query(copy), limit=3, exclude=(copy.name,))
            old, new = judge(copy, hits, config.duplicate_score, sources)
            copies[0] += old is not None and old.name == spec["name"]
            copies[1] += new is not None and new.name == spec["name"]
            if args.verbose and (new is None or new.name != spec["name"]):
                print(f"copy of {spec['name']}: not refused citing it (score alone: "
                      f"{old.name if old else 'none'}; evidence: {new.name if new else 'none'})")
        took = time.perf_counter() - t0
    n = len(specs)
    print(f"{n} proposals (HumanEval and MBPP, as datasets.py writes them), KAVI_SEARCH_DUPLICATE_SCORE "
          f"{config.duplicate_score:.2f}, search {index.mode}; {took:.0f} s")
    print(f"  absent tasks refused (each citing another problem's skill): score alone {absent[0]} ({wrong[0]} citing "
          f"the wrong skill), with the evidence {absent[1]} ({absent[1] - wrong[1]} citing the same task under another "
          f"number, {wrong[1]} the wrong skill)")
    print(f"  renamed copies refused citing the original: score alone {copies[0]}, with the evidence {copies[1]}")
    print(f"guard: absent tasks refused {absent[0]} -> {absent[1]} ({wrong[1]} citing the wrong skill) of {n}; "
          f"renamed copies refused {copies[0]} -> {copies[1]} of {n}")


if __name__ == "__main__":
    main()
