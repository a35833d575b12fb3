"""The skill contract around a third party's function, written by the forge, and the function's shape checked first.

The third party writes a top-level, type-annotated function named like the proposal, taking the proposal's inputs
as parameters (an optional input typed `T | None = None`) and returning a mapping of its outputs. The forge keeps
those bytes as they are and adds only code of its own: the contract's imports (after the module's docstring and
`__future__` imports, in an import block of their own) and, after the function, the input and output models and
the BaseSkill subclass whose `execute` calls the function. Every gate then judges the whole file, third-party
code and wrapper alike, exactly as it will run.
"""

import ast
import json
from collections.abc import Sequence

from kavi.proposals.model import FieldSpec, Proposal
from kavi.proposals.values import parse_type
from kavi.vet.source import VetSource

WRAPPER_NAMES = ("KaviMapping", "KaviAny", "KaviBaseModel", "KaviConfigDict", "KaviSideEffectClass", "BaseSkill")
_BANNER = "# Written by Kavi Forge, not by the third party:"


def _python_type(spec: FieldSpec) -> str:
    ftype = parse_type(spec.type)
    prim = {"str": "str", "int": "int", "float": "float", "bool": "bool", "json": "KaviAny"}
    if ftype.base == "list":
        text = f"list[{prim[ftype.item or 'json']}]"
    elif ftype.base == "dict":
        text = f"dict[str, {prim[ftype.item or 'json']}]"
    else:
        text = prim[ftype.base]
    optional = ftype.optional or not spec.required
    return f"{text} | None" if optional and ftype.base != "json" else text


def _optional(spec: FieldSpec) -> bool:
    return parse_type(spec.type).optional or not spec.required


def _annotation_text(node: ast.expr | None) -> str:
    return ast.unparse(node) if node is not None else ""


def contract_problems(source: VetSource, proposal: Proposal) -> list[str]:
    """Why the function does not have the proposal's shape (empty when it does), before any gate runs."""
    where = source.code_path
    if source.skill_name != proposal.name:
        return [f"{where}: the source is the skill {source.skill_name!r} but the proposal is {proposal.name!r}"]
    try:
        tree = ast.parse(source.code, filename=where)
    except SyntaxError as err:
        return [f"{where}:{err.lineno}: not Python ({err.msg})"]
    problems: list[str] = []
    defined: dict[str, int] = {}
    for node in tree.body:
        targets: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            targets = [node.name]
        elif isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            targets = [(a.asname or a.name).split(".")[0] for a in node.names]
        for t in targets:
            defined.setdefault(t, node.lineno)
    reserved = {*WRAPPER_NAMES, proposal.class_name, f"{proposal.class_name}Input", f"{proposal.class_name}Output"}
    for name in sorted(reserved & defined.keys()):
        problems.append(f"{where}:{defined[name]}: defines {name}, a name the forge's contract code uses")
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == proposal.name]
    if not funcs:
        return [*problems, f"{where}: no top-level function named {proposal.name!r}"]
    fn = funcs[-1]
    if isinstance(fn, ast.AsyncFunctionDef):
        return [*problems, f"{where}:{fn.lineno}: {fn.name} is async; the contract calls a plain function"]
    args = fn.args
    if args.vararg or args.kwarg or args.posonlyargs:
        problems.append(f"{where}:{fn.lineno}: {fn.name} takes *args, **kwargs or positional-only parameters; "
                        "it must take exactly the proposal's inputs by name")
    params = [*args.args, *args.kwonlyargs]
    defaults: dict[str, ast.expr] = {}
    for a, d in zip(reversed(args.args), reversed(args.defaults), strict=False):
        defaults[a.arg] = d
    for a, kd in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if kd is not None:
            defaults[a.arg] = kd
    wanted = {f.name: f for f in proposal.inputs}
    names = [p.arg for p in params]
    missing = [n for n in wanted if n not in names]
    extra = [n for n in names if n not in wanted]
    if missing:
        problems.append(f"{where}:{fn.lineno}: {fn.name} has no parameter for the input(s) {', '.join(missing)}")
    if extra:
        problems.append(f"{where}:{fn.lineno}: {fn.name} takes {', '.join(extra)}, which the proposal does not "
                        "declare as inputs")
    for p in params:
        if p.annotation is None:
            problems.append(f"{where}:{p.lineno}: parameter {p.arg} has no type annotation")
        spec = wanted.get(p.arg)
        if spec is not None and _optional(spec):
            default = defaults.get(p.arg)
            if not (isinstance(default, ast.Constant) and default.value is None) or "None" not in _annotation_text(
                    p.annotation):
                problems.append(f"{where}:{p.lineno}: the optional input {p.arg} must be typed `T | None = None`")
    if fn.returns is None:
        problems.append(f"{where}:{fn.lineno}: {fn.name} has no return annotation (a mapping of the outputs)")
    return problems


def _insertion_line(tree: ast.Module) -> int:
    """The line after the module docstring and the `from __future__` imports: the contract's imports go there."""
    after = 0
    body = tree.body
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        after = body[0].end_lineno or body[0].lineno
        i = 1
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":  # type: ignore[attr-defined]
        after = body[i].end_lineno or body[i].lineno
        i += 1
    return after


def _model(class_name: str, fields: Sequence[FieldSpec], *, defaults: bool) -> list[str]:
    lines = [f"class {class_name}(KaviBaseModel):", '    model_config = KaviConfigDict(extra="forbid")', ""]
    for f in fields:
        lines.append(f"    {f.name}: {_python_type(f)}" + (" = None" if defaults and _optional(f) else ""))
    return lines


def _string_lines(text: str, indent: str) -> list[str]:
    """A string as adjacent literals of at most ~90 characters each (the gates' ruff checks line length)."""
    chunks: list[str] = []
    current = ""
    for ch in text:
        if len(repr(current + ch)) > 90 and current:
            chunks.append(current)
            current = ""
        current += ch
    chunks.append(current)
    return [f"{indent}{c!r}" for c in chunks]


def _split_call(head: str, items: Sequence[str], tail: str, indent: str) -> list[str]:
    """`head(a, b)tail` on one line when it fits, else one item per line."""
    one = f"{indent}{head}{', '.join(items)}{tail}"
    if len(one) <= LINE:
        return [one]
    return [f"{indent}{head}", *(f"{indent}    {i}," for i in items), f"{indent}{tail.lstrip(',')}"]


LINE = 100


def _import_line(module: str, names: Sequence[str]) -> list[str]:
    one = f"from {module} import {', '.join(names)}"
    return [one] if len(one) <= LINE else [f"from {module} import (", *(f"    {n}," for n in names), ")"]


def wrap(source: VetSource, proposal: Proposal) -> str:
    """The skill module: the third party's code as it is, with the forge's contract imports and classes added."""
    code = source.code if source.code.endswith("\n") else source.code + "\n"
    lines = code.splitlines(keepends=True)
    at = _insertion_line(ast.parse(code))
    uses_any = any(parse_type(f.type).base == "json" or parse_type(f.type).item == "json"
                   for f in (*proposal.inputs, *proposal.outputs))
    imports = (
        "\n# isort: split\n"
        f"{_BANNER} the imports of the skill contract.\n"
        "from collections.abc import Mapping as KaviMapping\n"
        + ("from typing import Any as KaviAny\n" if uses_any else "")
        + "\n"
        "from pydantic import BaseModel as KaviBaseModel\n"
        "from pydantic import ConfigDict as KaviConfigDict\n"
        "\n"
        "from kavi_assets.skills.base import BaseSkill\n"
        "from kavi_assets.skills.base import SideEffectClass as KaviSideEffectClass\n"
        "\n"
        "# isort: split\n"
    )
    cls = proposal.class_name
    first_line = proposal.description.strip().splitlines()[0][:300]
    tail = [
        "", "",
        f"{_BANNER} the skill contract around {proposal.name}.",
        *_model(f"{cls}Input", proposal.inputs, defaults=True),
        "",
        "",
        *_model(f"{cls}Output", proposal.outputs, defaults=False),
        "",
        "",
        *_split_call(f"class {cls}(BaseSkill[", [f"{cls}Input", f"{cls}Output"], "]):", ""),
        f"    name = {json.dumps(proposal.name)}",
        "    description = (",
        *_string_lines(first_line, "        "),
        "    )",
        f"    input_model = {cls}Input",
        f"    output_model = {cls}Output",
        f"    side_effect_class = KaviSideEffectClass.{proposal.side_effect_class.value}",
        "",
        *_split_call("def execute(", ["self", f"input_data: {cls}Input"], f") -> {cls}Output:", "    "),
        *_split_call(f"result = {proposal.name}(", [f"{f.name}=input_data.{f.name}" for f in proposal.inputs],
                     ")", "        "),
        "        if not isinstance(result, KaviMapping):",
        '            raise TypeError("the vetted function did not return a mapping of its outputs")',
        f"        return {cls}Output.model_validate(dict(result))",
        "",
    ]
    return "".join(lines[:at]) + imports + "".join(lines[at:]) + "\n".join(tail)


def tests_from_examples(proposal: Proposal) -> str:
    """The builder's tests when the third party shipped none: each visible example through the skill's class."""
    cls = proposal.class_name
    examples = json.dumps([{"input": ex.input, "expected": ex.expected} for ex in proposal.examples],
                          sort_keys=True, ensure_ascii=False)
    lines = [f'"""{_BANNER[2:]} the proposal\'s examples as tests."""', "", "import json", "",
             *_import_line(f"skills.{proposal.name}", [cls, f"{cls}Input"]), "",
             f"SKILL = {cls}", f"INPUT = {cls}Input",
             "EXAMPLES = json.loads(", *_string_lines(examples, "    "), ")", "", "",
             "def _check(i: int) -> None:",
             "    example = EXAMPLES[i]",
             '    out = SKILL().execute(INPUT.model_validate(example["input"]))',
             '    got = out.model_dump(mode="json")',
             '    assert {k: got[k] for k in example["expected"]} == example["expected"]']
    for i in range(len(proposal.examples)):
        lines += ["", "", f"def test_example_{i + 1}() -> None:", f"    _check({i})"]
    return "\n".join(lines) + "\n"


def shipped_tests(source: VetSource, proposal: Proposal) -> str | None:
    """The third party's test file, importing the skill where the sandbox has it (`skills.<name>` for
    `scripts.<name>`, the only change), or None when none was shipped."""
    if not source.tests:
        return None
    (_rel, text), = source.tests.items()
    lines = text.splitlines(keepends=True)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module == f"scripts.{proposal.name}":
            row = node.lineno - 1
            lines[row] = lines[row].replace(f"scripts.{proposal.name}", f"skills.{proposal.name}", 1)
    return "".join(lines)
