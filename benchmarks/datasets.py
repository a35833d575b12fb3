"""HumanEval and MBPP problems as READ_ONLY skill proposals, with recorded-model cassettes answering with
(a) the reference solution wrapped as a skill and (b) a mutated, wrong solution that passes its own small test.

The dataset's own test calls become examples (shown to the builder) and holdout examples (run by the acceptance
gate only); their expected outputs are computed by running the reference solution once, in a subprocess.

Mutants are the plausible wrong solutions the literal holdouts do not catch: each is right on some of the
dataset's test calls and wrong on others, and its proposal (DIR/mutant-proposals/) holds as examples and holdouts
only the calls it gets right; the calls it gets wrong stay with the dataset, the judge of "wrong".

Every cassette also answers the forge's request for an independent implementation (kind `independent`, from a
model that is not the builder) with the reference solution: the dataset's authors as the honest second model.

Run: python benchmarks/datasets.py --out DIR [--dataset humaneval|mbpp|both] [--limit N]
It writes DIR/proposals/*.json, DIR/cassettes/*.yaml (reference answers), DIR/mutant-proposals/*.json and
DIR/mutant-cassettes/*.yaml.
"""

import argparse
import ast
import copy
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# The shared datasets beside the project's checkout, or wherever KAVI_DATASETS points.
DATASETS = Path(os.environ.get("KAVI_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets")
# The recorded models the cassettes name: either may build; the other then answers for the independent
# implementation.
MODELS = ["recorded-coder-a", "recorded-coder-b"]
COACH_APPROVE = json.dumps({"verdict": "approve", "findings": []})


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
            # The arguments as a proposal carries them: JSON (tuples and sets become lists, keys become strings)
            # in the canonical key order the ledger stores specs in. The reference runs on exactly these, and the
            # builder's tests are written from them, so every gate sees the same inputs.
            try:
                args = json.loads(json.dumps(json.loads(json.dumps(args, default=list)), sort_keys=True))
            except (TypeError, ValueError):
                continue  # not expressible in JSON (complex numbers, ...): not an example
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
        called = [n.func.id for n in ast.walk(ast.parse(tests)) if isinstance(n, ast.Call)
                  and isinstance(n.func, ast.Name)]
        try:
            defined = {n.name for n in ast.parse(row["code"]).body if isinstance(n, ast.FunctionDef)}
        except SyntaxError:
            defined = set()
        # The function under test is one the solution defines (`set(f(x)) == ...` tests f, not set).
        entry = next((c for c in called if c in defined), called[0] if called else None)
        if entry is None:
            continue
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


_AMBIGUOUS = {"l": "lst", "O": "o_value", "I": "i_value"}  # E741: names a careful model would not write


def _rename_ambiguous(tree: ast.Module) -> ast.Module:
    """Rename `l`, `O` and `I` (ruff E741) everywhere they are bound or read: what they compute is unchanged."""
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    mapping: dict[str, str] = {}
    for old, new in _AMBIGUOUS.items():
        if old in taken:
            candidate, i = new, 2
            while candidate in taken:
                candidate, i = f"{new}{i}", i + 1
            mapping[old] = candidate
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
        elif isinstance(node, ast.arg) and node.arg in mapping:
            node.arg = mapping[node.arg]
    return tree


def _reflow_docstrings(tree: ast.Module, width: int = 100) -> ast.Module:
    """Wrap docstring lines longer than the line limit (ruff E501); only the documentation changes."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Module) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            lines = []
            for line in first.value.value.splitlines():
                indent = line[: len(line) - len(line.lstrip())]
                lines += textwrap.wrap(line, width=width, subsequent_indent=indent, break_long_words=False,
                                       break_on_hyphens=False) or [line] if len(line) > width else [line]
            first.value.value = "\n".join(lines)
    return tree


def wrap_skill(p: Problem, solution: str | None = None, set_result: bool = False) -> str:
    tree = _reflow_docstrings(_rename_ambiguous(_annotate(ast.parse(solution or p.solution))))
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
        return {cls}Output(result={_result_expr(p.entry_point, set_result)})
'''


def _result_expr(entry: str, set_result: bool) -> str:
    """A set has no order in JSON: a model returning one gives it as a sorted list (one line: one statement)."""
    if not set_result:
        return f"{entry}(*input_data.args)"
    return (f"sorted(r, key=repr) if isinstance(r := {entry}(*input_data.args), set | frozenset) else r")


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
    """ruff --fix and format, as a careful model (or its tooling) would before answering. The fixes change how the
    code reads, never what it computes: imports, `zip(..., strict=False)` (zip's default made explicit, B905),
    `_name` for a loop variable the body never reads (B007) and `x not in y` for `not x in y` (E713, E714)."""
    f = tmp / "wrap.py"
    f.write_text(source)
    subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--fix", "--unsafe-fixes", "-q",
                    "--select", "I,UP,F401,B905,B007,E713,E714",
                    "--config", "lint.isort.known-first-party=['skills', 'kavi_assets']", str(f)],
                   capture_output=True, check=False)
    subprocess.run([sys.executable, "-m", "ruff", "format", "--isolated", "-q", "--line-length", "110", str(f)],
                   capture_output=True, check=False)
    return f.read_text()


_RUNNER = textwrap.dedent('''
    import importlib.util, json, signal, sys

    def _alarm(*_):
        raise TimeoutError("took too long")

    signal.signal(signal.SIGALRM, _alarm)
    calls = json.loads(sys.stdin.read())
    per_call = float(sys.argv[1])
    for i, path in enumerate(sys.argv[2:]):
        out = []
        try:
            spec = importlib.util.spec_from_file_location(f"wrapped{i}", path)
            mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
            cls = [v for v in vars(mod).values() if isinstance(v, type)
                   and getattr(v, "__module__", "") == f"wrapped{i}" and hasattr(v, "side_effect_class")][0]
        except Exception as e:
            print(json.dumps(None)); sys.stdout.flush(); continue
        for args in calls:
            signal.setitimer(signal.ITIMER_REAL, per_call)
            try:
                r = cls().execute(cls.input_model(args=args))
                out.append({"ok": True, "value": r.model_dump(mode="json")["result"],
                            "is_set": isinstance(r.result, (set, frozenset))})
            except Exception as e:
                out.append({"ok": False, "error": type(e).__name__})
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        print(json.dumps(out)); sys.stdout.flush()
''')


def run_wrapped_many(sources: list[str], calls: list[list[Any]], tmp: Path, per_call_s: float = 0.5
                     ) -> list[list[dict[str, Any]] | None]:
    """Each source's results on `calls` (None where it could not be loaded or run), in one Python process; a call
    taking longer than `per_call_s` counts as raising (a mutant may loop for ever)."""
    files = []
    batch = uuid.uuid4().hex[:12]
    for i, source in enumerate(sources):
        # A fresh name per run and no bytecode cache: a rewritten file of the same size within the same second
        # would otherwise be run from the stale .pyc of another problem.
        f = tmp / f"run_wrapped_{batch}_{i}.py"
        f.write_text(source)
        files.append(str(f))
    try:
        proc = subprocess.run([sys.executable, "-c", _RUNNER, str(per_call_s), *files], input=json.dumps(calls),
                              capture_output=True, text=True, timeout=30 + len(sources) * len(calls) * per_call_s,
                              env={"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
                              check=False)
        lines = proc.stdout.strip().splitlines()
    except subprocess.TimeoutExpired as err:
        lines = (err.stdout.decode() if isinstance(err.stdout, bytes) else err.stdout or "").strip().splitlines()
    results: list[list[dict[str, Any]] | None] = []
    for i in range(len(sources)):
        try:
            results.append(json.loads(lines[i]))
        except (json.JSONDecodeError, IndexError):
            results.append(None)
    return results


def run_wrapped(source: str, calls: list[list[Any]], tmp: Path) -> list[dict[str, Any]] | None:
    """The reference's results: it gets ten seconds a call, however loaded the machine."""
    return run_wrapped_many([source], calls, tmp, per_call_s=10.0)[0]


# -- mutants ---------------------------------------------------------------------------------------

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
         ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
          ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult}
_BOOL = {ast.And: ast.Or, ast.Or: ast.And}
_CALLS = {"max": "min", "min": "max", "any": "all", "all": "any", "lower": "upper", "upper": "lower",
          "startswith": "endswith", "endswith": "startswith", "sorted": "reversed", "isupper": "islower",
          "islower": "isupper", "append": "remove"}


def _mutation_kinds(node: ast.AST) -> list[str]:
    kinds: list[str] = []
    if isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIP:
        kinds.append("flipped comparison")
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        kinds += ["off-by-one", "wrong constant"]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        kinds.append("wrong constant")
    if (isinstance(node, ast.If) and node.orelse) or (isinstance(node, ast.comprehension) and node.ifs):
        kinds.append("dropped branch")
    if isinstance(node, ast.Return) and node.value is not None:
        kinds.append("doubled result")
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        kinds.append("swapped operator")
    if isinstance(node, ast.BoolOp) and type(node.op) in _BOOL:
        kinds.append("swapped operator")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        kinds.append("dropped negation")
    if isinstance(node, ast.Call):
        fn = node.func
        name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
        if name in _CALLS:
            kinds.append("swapped call")
    return kinds


def _apply(kind: str, node: ast.AST) -> ast.AST | None:
    """Mutate `node` in place (or return its replacement); None when the mutation does not apply."""
    if kind == "flipped comparison" and isinstance(node, ast.Compare):
        node.ops[0] = _FLIP[type(node.ops[0])]()
    elif kind == "off-by-one" and isinstance(node, ast.Constant) and isinstance(node.value, int):
        node.value = int(node.value) + 1
    elif kind == "wrong constant" and isinstance(node, ast.Constant) and isinstance(node.value, str):
        node.value = node.value + "x"
    elif kind == "wrong constant" and isinstance(node, ast.Constant) and isinstance(node.value, int):
        node.value = 0 if node.value else 7
    elif kind == "dropped branch" and isinstance(node, ast.If):
        node.orelse = []
    elif kind == "dropped branch" and isinstance(node, ast.comprehension):
        node.ifs = []
    elif kind == "doubled result" and isinstance(node, ast.Return) and node.value is not None:
        node.value = ast.BinOp(copy.deepcopy(node.value), ast.Add(), copy.deepcopy(node.value))
    elif kind == "swapped operator" and isinstance(node, ast.BinOp):
        node.op = _ARITH[type(node.op)]()
    elif kind == "swapped operator" and isinstance(node, ast.BoolOp):
        node.op = _BOOL[type(node.op)]()
    elif kind == "dropped negation" and isinstance(node, ast.UnaryOp):
        return node.operand
    elif kind == "swapped call" and isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            node.func.id = _CALLS[node.func.id]
        elif isinstance(node.func, ast.Attribute):
            node.func.attr = _CALLS[node.func.attr]
    else:
        return None
    return node


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        return super().visit(node)


def mutants(solution: str) -> list[tuple[str, str]]:
    """(kind, source) for each single mutation: flipped comparison, off-by-one, wrong constant, dropped branch (or
    comprehension filter), swapped operator, dropped negation, swapped call (min/max, any/all, lower/upper, ...),
    doubled result (`return x` → `return x + x`)."""
    tree = ast.parse(solution)
    out: list[tuple[str, str]] = []
    # Mutate inside functions only: a mutated docstring or import is not a wrong solution.
    targets = list(ast.walk(tree))
    for i, node in enumerate(targets):
        for kind in _mutation_kinds(node):
            t2 = copy.deepcopy(tree)
            n2 = list(ast.walk(t2))[i]
            if _is_docstring(t2, n2):
                continue
            replaced = _apply(kind, n2)
            if replaced is None:
                continue
            if replaced is not n2:
                t2 = _Replace(n2, replaced).visit(t2)
            try:
                out.append((kind, ast.unparse(t2)))
            except (ValueError, AttributeError):
                continue
    return out


def _is_docstring(tree: ast.AST, node: ast.AST) -> bool:
    for parent in ast.walk(tree):
        body = getattr(parent, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and body[0].value is node:
            return True
    return False


# -- building everything ---------------------------------------------------------------------------

def _literal(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _cassette(name: str, skill: str, test: str, independent: str) -> str:
    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _literal)
    doc = {"skill": name, "models": MODELS, "interactions": [
        {"kind": "build", "attempt": "*", "model": "*", "latency_ms": 0,
         "files": {f"skills/{name}.py": skill, f"tests/test_skill_{name}.py": test}},
        {"kind": "independent", "attempt": "*", "model": "*", "latency_ms": 0,
         "files": {f"skills/{name}.py": independent}},
        # The coach at ceremony standard and strict: a recorded approval, so the benchmark's verdicts
        # stay those of the deterministic gates (it measures them, not a reviewer).
        {"kind": "coach", "attempt": "*", "model": "*", "latency_ms": 0, "raw": COACH_APPROVE},
    ]}
    return "# Recorded model cassette: replayed completions, not a live model (generated from a dataset).\n" + \
        yaml.dump(doc, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=120)


@dataclass
class Built:
    problem: Problem
    proposal: dict[str, Any]
    reference: str
    mutant_kind: str | None


def build_problem(p: Problem, out: Path, tmp: Path) -> tuple[Built | None, str]:
    if not p.calls:
        return None, "the dataset's test has no literal calls to turn into examples (its inputs are generated)"
    try:
        ref_skill = _tidy(wrap_skill(p), tmp)
    except SyntaxError as err:
        return None, f"solution does not parse: {err}"
    results = run_wrapped(ref_skill, p.calls, tmp)
    if results is None:
        return None, "the reference solution could not be run on its own test inputs"
    set_result = any(r.get("is_set") for r in results)
    if set_result:
        ref_skill = _tidy(wrap_skill(p, set_result=True), tmp)
        results = run_wrapped(ref_skill, p.calls, tmp)
        if results is None:
            return None, "the reference solution could not be run on its own test inputs"
    cases = [(args, r["value"]) for args, r in zip(p.calls, results, strict=True) if r["ok"]]
    if not cases:
        return None, "the reference solution raised on its test inputs as JSON carries them (tuples become lists)"
    # Half the dataset's cases, rounded up, are shown (the builder's tests cover them); the rest are holdouts.
    cut = (len(cases) + 1) // 2
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
        _cassette(p.name, ref_skill, _tidy(wrap_test(p, shown), tmp), ref_skill))
    mutant_kind = None
    candidates: list[tuple[str, str]] = []
    for kind, mutated in mutants(p.solution)[:60]:
        try:
            candidates.append((kind, wrap_skill(p, mutated, set_result)))
        except SyntaxError:
            continue

    def right_on(m_res: list[dict[str, Any]]) -> list[tuple[list[Any], Any]]:
        return [(a, e) for (a, e), r in zip(cases, m_res, strict=True) if r["ok"] and r["value"] == e]

    # A useful mutant is right on some of the dataset's calls and wrong on others. Among those, the most
    # plausible is right on the most calls (the smallest visible fault).
    chosen: tuple[str, str, list[tuple[list[Any], Any]]] | None = None
    for i in range(0, len(candidates), 12):  # in batches: most problems find a subtle mutant in the first
        batch = candidates[i:i + 12]
        for (kind, m_skill), m_res in zip(batch, run_wrapped_many([m for _, m in batch], [a for a, _ in cases], tmp),
                                          strict=True):
            if m_res is None:
                continue
            right = right_on(m_res)
            if 0 < len(right) < len(cases) and (chosen is None or len(right) > len(chosen[2])):
                chosen = (kind, m_skill, right)
        if chosen is not None and len(chosen[2]) == len(cases) - 1:
            break
    if chosen is not None:
        kind, m_skill, right = chosen
        m_skill = _tidy(m_skill, tmp)
        # The mutant's proposal: its examples and holdouts are the calls it gets right (so no literal holdout
        # catches it); the builder's tests cover the examples, as a wrong model's own tests would.
        m_cut = (len(right) + 1) // 2
        m_shown, m_hidden = right[:m_cut], right[m_cut:]
        m_proposal = {**proposal,
                      "examples": [{"input": {"args": a}, "expected": {"result": e}} for a, e in m_shown],
                      "holdout_examples": [{"input": {"args": a}, "expected": {"result": e}} for a, e in m_hidden]}
        (out / "mutant-proposals").mkdir(exist_ok=True)
        (out / "mutant-proposals" / f"{p.name}.json").write_text(json.dumps(m_proposal, indent=1))
        (out / "mutant-cassettes").mkdir(exist_ok=True)
        (out / "mutant-cassettes" / f"{p.name}.yaml").write_text(
            _cassette(p.name, m_skill, _tidy(wrap_test(p, m_shown), tmp), ref_skill))
        mutant_kind = kind
    return Built(p, proposal, ref_skill, mutant_kind), ""


def converted(data: Path | None, dataset: str, limit: int) -> Path:
    """`data` when given (a folder this script wrote before), else a fresh folder this script writes now, in a
    process of its own, with `dataset`'s first `limit` problems; exits with its status when the conversion fails."""
    if data is not None:
        return data
    data = Path(tempfile.mkdtemp(prefix="kavi-datasets-"))
    print(f"converting {dataset} (limit {limit}) into proposals and cassettes in {data} ...", flush=True)
    conv = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--out", str(data), "--dataset", dataset,
                           "--limit", str(limit)], check=False, stdout=subprocess.DEVNULL)
    if conv.returncode != 0:
        raise SystemExit(conv.returncode)  # this script said why on stderr
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dataset", choices=["humaneval", "mbpp", "both"], default="humaneval")
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    wanted = {"humaneval": ["HumanEval.jsonl.gz"], "mbpp": ["sanitized-mbpp.json"],
              "both": ["HumanEval.jsonl.gz", "sanitized-mbpp.json"]}[args.dataset]
    missing = [name for name in wanted if not (DATASETS / name).is_file()]
    if missing:
        raise SystemExit(f"datasets: {', '.join(missing)} not found in {DATASETS}; set KAVI_DATASETS to the folder "
                         "holding the shared datasets")
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
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "skipped.json").write_text(json.dumps(skipped, indent=1))


if __name__ == "__main__":
    main()
