"""HumanEval and MBPP problems as READ_ONLY skill proposals, with recorded-model cassettes answering with
(a) the reference solution wrapped as a skill and (b) a mutated, wrong solution that passes its own small test.

The dataset's own test calls become examples (shown to the builder) and holdout examples (run by the acceptance
gate only); their expected outputs are computed by running the reference solution once, in a subprocess.

Run: python benchmarks/datasets.py --out DIR [--dataset humaneval|mbpp|both] [--limit N]
It writes DIR/proposals/*.json, DIR/cassettes/*.yaml (reference answers) and DIR/mutant-cassettes/*.yaml.
"""

import argparse
import ast
import copy
import gzip
import json
import re
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
MODEL = "recorded-coder-a"


@dataclass
class Problem:
    source: str  # humaneval | mbpp
    task_id: str
    name: str
    description: str
    entry_point: str
    solution: str  # module source defining entry_point (imports + functions)
    calls: list[list[Any]] = field(default_factory=list)  # literal argument lists from the dataset's tests


def _snake(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return re.sub(r"_+", "_", s)


def _literal_calls(test_src: str, func: str) -> list[list[Any]]:
    calls: list[list[Any]] = []
    try:
        tree = ast.parse(test_src)
    except SyntaxError:
        return calls
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == func \
                and not node.keywords:
            try:
                args = [ast.literal_eval(a) for a in node.args]
            except (ValueError, SyntaxError, TypeError):
                continue
            try:
                json.dumps(args)
            except (TypeError, ValueError):
                args = json.loads(json.dumps(args, default=list))  # tuples/sets → lists
            if args not in calls:
                calls.append(args)
    return calls


def load_humaneval() -> list[Problem]:
    out = []
    with gzip.open(DATASETS / "HumanEval.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            idx = row["task_id"].split("/")[1]
            doc = ast.get_docstring(ast.parse(row["prompt"] + "    pass\n").body[-1]) or row["entry_point"]  # type: ignore[arg-type]
            desc = " ".join(doc.split(">>>")[0].split())[:900] or f"Implement {row['entry_point']}."
            out.append(Problem("humaneval", row["task_id"], _snake(f"he_{idx}_{row['entry_point']}")[:64],
                               desc if len(desc) >= 10 else f"Implement {row['entry_point']}: {desc}",
                               row["entry_point"], row["prompt"] + row["canonical_solution"],
                               _literal_calls(row["test"], "candidate")))
    return out


def load_mbpp() -> list[Problem]:
    out = []
    for row in json.loads((DATASETS / "sanitized-mbpp.json").read_text(encoding="utf-8")):
        tests = "\n".join(row["test_list"])
        first = next((n for n in ast.walk(ast.parse(tests)) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Name)), None)
        if first is None or not isinstance(first.func, ast.Name):
            continue
        entry = first.func.id
        out.append(Problem("mbpp", str(row["task_id"]), _snake(f"mbpp_{row['task_id']}_{entry}")[:64],
                           row["prompt"].strip(), entry,
                           "\n".join(row["test_imports"]) + "\n" + row["code"], _literal_calls(tests, entry)))
    return out


# -- wrapping a solution as a skill --------------------------------------------------------------

_BARE_GENERICS = {"list", "dict", "tuple", "set", "List", "Dict", "Tuple", "Set"}


def _complete(annotation: ast.expr | None) -> ast.expr:
    """`list` alone fails mypy --strict (type-arg); `list[Any]` says the same thing precisely."""
    if annotation is None:
        return ast.Name("Any")
    if isinstance(annotation, ast.Name) and annotation.id in _BARE_GENERICS:
        return ast.Subscript(ast.Name(annotation.id.lower()), ast.Name("Any"))
    return annotation


def _annotate(tree: ast.Module) -> ast.Module:
    """Type the untyped boundary of dataset functions as Any, as a model wrapping them for mypy --strict would."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                a.annotation = _complete(a.annotation)
            for a in (node.args.vararg, node.args.kwarg):
                if a is not None and a.annotation is None:
                    a.annotation = ast.Name("Any")
            node.returns = _complete(node.returns)
    return tree


def class_name(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def wrap_skill(p: Problem, solution: str | None = None) -> str:
    tree = _annotate(ast.parse(solution or p.solution))
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    defs = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom)
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    cls = class_name(p.name)
    header = "\n".join(ast.unparse(i) for i in imports)
    body = "\n\n\n".join(ast.unparse(d) for d in defs)
    summary = p.description.split(".")[0][:90].replace('"', "'").replace("\\", "/")
    return f'''"""{summary}."""

from typing import Any

{header}

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


{body}


class {cls}Input(BaseModel):
    args: list[Any]


class {cls}Output(BaseModel):
    result: Any


class {cls}(BaseSkill[{cls}Input, {cls}Output]):
    name = "{p.name}"
    description = "{summary}."
    input_model = {cls}Input
    output_model = {cls}Output
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: {cls}Input) -> {cls}Output:
        return {cls}Output(result={p.entry_point}(*input_data.args))
'''


def wrap_test(p: Problem, cases: list[tuple[list[Any], Any]]) -> str:
    cls = class_name(p.name)
    lines = [f"from skills.{p.name} import {cls}, {cls}Input", "", ""]
    for i, (args, expected) in enumerate(cases):
        lines += [f"def test_example_{i}() -> None:",
                  f"    expected = {expected!r}",
                  f"    out = {cls}().execute({cls}Input(args={args!r}))",
                  "    assert out.model_dump(mode=\"json\")[\"result\"] == expected", "", ""]
    return "\n".join(lines).rstrip() + "\n"


def _tidy(source: str, tmp: Path) -> str:
    """ruff --fix and format, as a careful model (or its tooling) would before answering."""
    f = tmp / "wrap.py"
    f.write_text(source)
    subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--fix", "-q", "--select", "I,UP,F401",
                    "--config", "lint.isort.known-first-party=['skills', 'kavi_assets']", str(f)],
                   capture_output=True, check=False)
    subprocess.run([sys.executable, "-m", "ruff", "format", "--isolated", "-q", "--line-length", "110", str(f)],
                   capture_output=True, check=False)
    return f.read_text()


_RUNNER = textwrap.dedent('''
    import importlib.util, json, sys
    spec = importlib.util.spec_from_file_location("wrapped", sys.argv[1])
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    cls = [v for v in vars(mod).values() if isinstance(v, type) and getattr(v, "__module__", "") == "wrapped"
           and hasattr(v, "side_effect_class")][0]
    out = []
    for args in json.loads(sys.stdin.read()):
        try:
            r = cls().execute(cls.input_model(args=args))
            out.append({"ok": True, "value": r.model_dump(mode="json")["result"]})
        except Exception as e:
            out.append({"ok": False, "error": type(e).__name__})
    print(json.dumps(out))
''')


def run_wrapped(source: str, calls: list[list[Any]], tmp: Path) -> list[dict[str, Any]] | None:
    f = tmp / "run_wrapped.py"
    f.write_text(source)
    try:
        proc = subprocess.run([sys.executable, "-c", _RUNNER, str(f)], input=json.dumps(calls), capture_output=True,
                              text=True, timeout=30, env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"},
                              check=False)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        return None
    try:
        result: list[dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return None
    return result


# -- mutants ---------------------------------------------------------------------------------------

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}


def mutants(solution: str) -> list[tuple[str, str]]:
    """(kind, source) for each single mutation: flipped comparison, off-by-one, wrong constant, dropped branch."""
    tree = ast.parse(solution)
    out: list[tuple[str, str]] = []
    targets = [n for n in ast.walk(tree)]
    for i, node in enumerate(targets):
        kinds: list[str] = []
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIP:
            kinds.append("flipped comparison")
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            kinds += ["off-by-one", "wrong constant"]
        if isinstance(node, ast.If) and node.orelse:
            kinds.append("dropped branch")
        for kind in kinds:
            t2 = copy.deepcopy(tree)
            n2 = list(ast.walk(t2))[i]
            if kind == "flipped comparison" and isinstance(n2, ast.Compare):
                n2.ops[0] = _FLIP[type(n2.ops[0])]()
            elif kind == "off-by-one" and isinstance(n2, ast.Constant):
                n2.value = int(n2.value) + 1
            elif kind == "wrong constant" and isinstance(n2, ast.Constant):
                n2.value = 0 if n2.value else 7
            elif kind == "dropped branch" and isinstance(n2, ast.If):
                n2.orelse = []
            out.append((kind, ast.unparse(t2)))
    return out


# -- building everything ---------------------------------------------------------------------------

def _literal(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _cassette(name: str, skill: str, test: str) -> str:
    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _literal)
    doc = {"skill": name, "models": [MODEL], "interactions": [{
        "kind": "build", "attempt": "*", "model": "*", "latency_ms": 0,
        "files": {f"skills/{name}.py": skill, f"tests/test_skill_{name}.py": test}}]}
    return "# Recorded model cassette: replayed completions, not a live model (generated from a dataset).\n" + \
        yaml.dump(doc, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=120)


@dataclass
class Built:
    problem: Problem
    proposal: dict[str, Any]
    reference: str
    mutant_kind: str | None


def build_problem(p: Problem, out: Path, tmp: Path) -> tuple[Built | None, str]:
    if len(p.calls) < 2:
        return None, "fewer than two literal test calls to turn into examples"
    try:
        ref_skill = _tidy(wrap_skill(p), tmp)
    except SyntaxError as err:
        return None, f"solution does not parse: {err}"
    results = run_wrapped(ref_skill, p.calls, tmp)
    if results is None:
        return None, "the reference solution could not be run on its own test inputs"
    cases = [(args, r["value"]) for args, r in zip(p.calls, results, strict=True) if r["ok"]]
    if len(cases) < 2:
        return None, "the reference solution raised on its test inputs"
    # About half the dataset's cases are shown (the builder's tests cover them); the rest are holdouts.
    cut = max(1, len(cases) // 2)
    shown, hidden = cases[:cut], cases[cut:]
    proposal = {
        "name": p.name,
        "description": p.description if len(p.description) >= 10 else f"Implement {p.entry_point}.",
        "inputs": [{"name": "args", "type": "list[json]", "description": f"positional arguments of {p.entry_point}"}],
        "outputs": [{"name": "result", "type": "json"}],
        "side_effect_class": "READ_ONLY",
        "examples": [{"input": {"args": a}, "expected": {"result": e}} for a, e in shown],
        "holdout_examples": [{"input": {"args": a}, "expected": {"result": e}} for a, e in hidden],
    }
    (out / "proposals").mkdir(parents=True, exist_ok=True)
    (out / "proposals" / f"{p.name}.json").write_text(json.dumps(proposal, indent=1))
    (out / "cassettes").mkdir(exist_ok=True)
    (out / "cassettes" / f"{p.name}.yaml").write_text(
        _cassette(p.name, ref_skill, _tidy(wrap_test(p, shown), tmp)))
    mutant_kind = None
    for kind, mutated in mutants(p.solution)[:25]:
        try:
            m_skill = wrap_skill(p, mutated)
        except SyntaxError:
            continue
        m_res = run_wrapped(m_skill, [a for a, _ in cases], tmp)
        if m_res is None:
            continue
        agree = [(a, e) for (a, e), r in zip(cases, m_res, strict=True) if r["ok"] and r["value"] == e]
        if len(agree) == len(cases):
            continue  # equivalent on every test input: not a useful mutant
        own = [c for c in agree if c in shown] or agree[:1]
        if not own:
            continue
        m_skill = _tidy(m_skill, tmp)
        (out / "mutant-cassettes").mkdir(exist_ok=True)
        (out / "mutant-cassettes" / f"{p.name}.yaml").write_text(
            _cassette(p.name, m_skill, _tidy(wrap_test(p, own), tmp)))
        mutant_kind = kind
        break
    return Built(p, proposal, ref_skill, mutant_kind), ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dataset", choices=["humaneval", "mbpp", "both"], default="humaneval")
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    problems = []
    if args.dataset in ("humaneval", "both"):
        problems += load_humaneval()
    if args.dataset in ("mbpp", "both"):
        problems += load_mbpp()
    problems = problems[: args.limit] if args.limit else problems
    skipped: dict[str, str] = {}
    built = 0
    mutants_made = 0
    with tempfile.TemporaryDirectory() as tmp:
        for p in problems:
            b, why = build_problem(p, args.out, Path(tmp))
            if b is None:
                skipped[p.task_id] = why
                continue
            built += 1
            mutants_made += b.mutant_kind is not None
    print(f"{built} proposals, {mutants_made} mutants written to {args.out}; {len(skipped)} problems skipped")
    for tid, why in skipped.items():
        print(f"  skipped {tid}: {why}")


if __name__ == "__main__":
    main()
