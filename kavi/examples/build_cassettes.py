"""Write the recorded-model cassettes from the answer sources under kavi/examples/answers/.

No model endpoint is reachable where this project is built, so these answers were written by hand, in the shape
a model returns them, and are replayed by the recorded model. Run `python kavi/examples/build_cassettes.py` after
editing an answer. Each interaction names its attempt and model ("*" matches any).
"""

import json
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ANSWERS = HERE / "answers"
OUT = HERE.parent / "llm" / "cassettes"
MODELS = ["recorded-coder-a", "recorded-coder-b"]

NOT_JSON = (
    "I'm sorry, but I can't produce the files directly. Here is an outline instead: parse the text with a "
    "regular expression for number-unit pairs, multiply each by its unit, and add them up."
)

# skill -> interactions: (attempt, model, source) where source is an answer dir, ("raw", text) or a dict of
# extra files added to an answer dir.
PLAN: dict[str, list[dict[str, Any]]] = {
    "word_count": [
        {"attempt": 1, "model": "recorded-coder-b", "dir": "word_count/1b", "latency_ms": 1400,
         "notes": "counts newline characters as lines"},
        {"attempt": "*", "model": "*", "dir": "word_count/1", "latency_ms": 900},
    ],
    "slugify_title": [
        {"attempt": 1, "model": "*", "dir": "slugify_title/1", "latency_ms": 1100},
        {"attempt": "*", "model": "*", "dir": "slugify_title/2", "latency_ms": 1000,
         "notes": "removed the unused import and sorted the imports"},
    ],
    "parse_duration": [
        {"attempt": 1, "model": "*", "raw": NOT_JSON, "latency_ms": 700},
        # Its regular expression is tried from every position of a run of digits: quadratic, so the resource gate
        # fails it; the next answer reads the text once from left to right.
        {"attempt": 2, "model": "*", "dir": "parse_duration/2", "latency_ms": 1200},
        {"attempt": "*", "model": "*", "dir": "parse_duration/3", "latency_ms": 1200,
         "notes": "one left-to-right pass, each part matched where the previous one ended: linear time"},
    ],
    "extract_emails": [
        {"attempt": "*", "model": "*", "dir": "extract_emails/1", "latency_ms": 900,
         "extra": {"../../escape.py": "print('written outside the sandbox')\n"}},
    ],    # The skills the project ships: forged by the main job like any other proposal.
    "write_note": [{"attempt": "*", "model": "*", "dir": "write_note/1", "latency_ms": 1300}],
    "read_notes_by_tag": [
        # Passes every deterministic gate, but one test asserts nothing: the coach asks for changes.
        {"attempt": 1, "model": "*", "dir": "read_notes_by_tag/coach-1", "latency_ms": 1500},
        {"attempt": "*", "model": "*", "dir": "read_notes_by_tag/1", "latency_ms": 1500},
    ],
    "create_daily_note": [{"attempt": "*", "model": "*", "dir": "create_daily_note/1", "latency_ms": 1100}],
    "search_notes": [{"attempt": "*", "model": "*", "dir": "search_notes/1", "latency_ms": 1900}],
    "summarize_note": [{"attempt": "*", "model": "*", "dir": "summarize_note/1", "latency_ms": 1600}],
    "http_get_json": [{"attempt": "*", "model": "*", "dir": "http_get_json/1", "latency_ms": 1000}],
    # Decomposition: the builder answers prose on every attempt (REPEATED_FAILURE), the forge asks for a
    # decomposition (kind "decompose"), and the two children it proposes are built like any other proposal.
    "email_domain_report": [
        {"attempt": "*", "model": "*", "raw": (ANSWERS / "email_domain_report" / "prose.txt").read_text(),
         "latency_ms": 600},
        {"kind": "decompose", "attempt": "*", "model": "*", "latency_ms": 900,
         "raw": (ANSWERS / "email_domain_report" / "decomposition.json").read_text()},
    ],
    "find_addresses": [
        # Its pattern scans the rest of a long run of address characters from every position: quadratic, so the
        # resource gate fails it; the next answer starts a match only where such a run starts.
        {"attempt": 1, "model": "*", "dir": "find_addresses/1", "latency_ms": 900},
        {"attempt": "*", "model": "*", "dir": "find_addresses/2", "latency_ms": 900,
         "notes": "a match starts only where a run of address characters starts: linear time"},
    ],
    "domains_of_addresses": [{"attempt": "*", "model": "*", "dir": "domains_of_addresses/1", "latency_ms": 900}],
}


# Independent implementations: the same skills written separately from the builder's view of each spec,
# in different code, answered for a request of kind "independent" by whichever model is not the build's.
INDEPENDENT: dict[str, str] = {
    name: f"{name}/independent"
    for name in ("word_count", "slugify_title", "parse_duration", "create_daily_note", "http_get_json",
                 "read_notes_by_tag", "search_notes", "summarize_note", "write_note")
}


# The coach's reviews, answered for a request of kind "coach" by whichever model did not build the attempt:
# skill -> (attempt, answer file under kavi/examples/answers/). Every skill's reviewer approves (the coach runs from
# ceremony standard up, or when a person raises the level), but read_notes_by_tag's first attempt.
COACH_APPROVE = "coach_approve.json"
COACH: dict[str, list[tuple[int | str, str]]] = {name: [("*", COACH_APPROVE)] for name in PLAN}
COACH["read_notes_by_tag"] = [(1, "read_notes_by_tag/coach-1/coach.json"), ("*", COACH_APPROVE)]


class _Literal(str):
    pass


def _literal(dumper: yaml.SafeDumper, data: _Literal) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|")


yaml.SafeDumper.add_representer(_Literal, _literal)


def files_of(name: str, rel: str) -> dict[str, str]:
    d = ANSWERS / rel
    return {
        f"skills/{name}.py": _Literal((d / "skill.py").read_text(encoding="utf-8")),
        f"tests/test_skill_{name}.py": _Literal((d / "test.py").read_text(encoding="utf-8")),
    }


def build(name: str, plan: list[dict[str, Any]]) -> dict[str, Any]:
    interactions = []
    for step in plan:
        it: dict[str, Any] = {"kind": step.get("kind", "build"), "attempt": step["attempt"], "model": step["model"],
                              "latency_ms": step.get("latency_ms", 800)}
        if "raw" in step:
            it["raw"] = step["raw"]
        else:
            files = files_of(name, step["dir"])
            files.update({k: _Literal(v) for k, v in step.get("extra", {}).items()})
            it["files"] = files
            if step.get("notes"):
                it["notes"] = step["notes"]
        interactions.append(it)
    if name in INDEPENDENT:
        source = (ANSWERS / INDEPENDENT[name] / "skill.py").read_text(encoding="utf-8")
        interactions.append({"kind": "independent", "attempt": "*", "model": "*", "latency_ms": 1000,
                             "files": {f"skills/{name}.py": _Literal(source)},
                             "notes": "written from the spec alone, separately from the build"})
    for attempt, answer in COACH.get(name, []):
        review = json.loads((ANSWERS / answer).read_text(encoding="utf-8"))  # stored as the model sends it
        interactions.append({"kind": "coach", "attempt": attempt, "model": "*", "latency_ms": 900,
                             "raw": json.dumps(review)})
    return {"skill": name, "models": MODELS, "interactions": interactions}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, plan in PLAN.items():
        text = ("# Recorded model cassette: replayed completions, not a live model.\n"
                "# Generated by kavi/examples/build_cassettes.py from kavi/examples/answers/; "
                "edit those, not this file.\n")
        text += yaml.safe_dump(build(name, plan), sort_keys=False, allow_unicode=True, width=120)
        (OUT / f"{name}.yaml").write_text(text, encoding="utf-8")
        print(f"wrote {OUT / f'{name}.yaml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
