"""AST invariants of the skill contract: one BaseSkill subclass, its attributes, its name and declared class."""

import ast

from kavi.skills.base import SideEffectClass
from kavi.verdicts import Violation

REQUIRED_ATTRIBUTES = ("name", "description", "input_model", "output_model", "side_effect_class")


def _line(lines: list[str], n: int) -> str:
    return lines[n - 1] if 0 < n <= len(lines) else ""


def _base_name(base: ast.expr) -> str | None:
    node = base.value if isinstance(base, ast.Subscript) else base
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _imported_names(tree: ast.Module, module: str, name: str) -> set[str]:
    """The module-level names `module.name` is bound to by `from module import name [as x]`."""
    return {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == module
            and not n.level for a in n.names if a.name == name}


def _pydantic_models(tree: ast.Module) -> set[str]:
    """Module-level classes that derive from pydantic's BaseModel, directly or through other such classes."""
    roots = _imported_names(tree, "pydantic", "BaseModel")
    modules = {a.asname or a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names
               if a.name == "pydantic"}
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    models: set[str] = set()
    changed = True
    while changed:
        changed = False
        for c in classes:
            if c.name in models:
                continue
            for b in c.bases:
                direct = isinstance(b, ast.Name) and (b.id in roots or b.id in models)
                dotted = (isinstance(b, ast.Attribute) and b.attr == "BaseModel" and isinstance(b.value, ast.Name)
                          and b.value.id in modules)
                if direct or dotted:
                    models.add(c.name)
                    changed = True
                    break
    return models


def check_invariants(
    source: str, *, expected_class: SideEffectClass, expected_name: str | None = None
) -> list[Violation]:
    tree = ast.parse(source)
    lines = source.splitlines()
    found: list[Violation] = []

    def bad(node: ast.AST | None, rule: str, why: str) -> None:
        n = getattr(node, "lineno", 0) if node is not None else 0
        found.append(Violation(rule, n, getattr(node, "col_offset", 0), _line(lines, n), why, "contract"))

    imported_base = any(
        isinstance(n, ast.ImportFrom) and n.module == "kavi_assets.skills.base"
        and any(a.name == "BaseSkill" and a.asname in (None, "BaseSkill") for a in n.names)
        for n in tree.body
    )
    models = _pydantic_models(tree)
    side_effect_names = _imported_names(tree, "kavi_assets.skills.base", "SideEffectClass")
    skills = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and any(_base_name(b) == "BaseSkill"
                                                                               for b in n.bases)]
    if not imported_base:
        bad(None, "INV-IMPORT", "BaseSkill must be imported as `from kavi_assets.skills.base import BaseSkill`")
    if len(skills) != 1:
        bad(skills[1] if len(skills) > 1 else None, "INV-ONE-SKILL",
            f"a skill module defines exactly one BaseSkill subclass (found {len(skills)})")
        if not skills:
            return found
    skill = skills[0]
    if skill not in tree.body:
        bad(skill, "INV-ONE-SKILL", "the BaseSkill subclass must be defined at module level")
    assigned: dict[str, ast.expr] = {}
    methods: set[str] = set()
    for stmt in skill.body:
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    assigned[t.id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            assigned[stmt.target.id] = stmt.value
        elif isinstance(stmt, ast.FunctionDef):
            methods.add(stmt.name)
    for attr in REQUIRED_ATTRIBUTES:
        if attr not in assigned:
            bad(skill, "INV-ATTRIBUTE", f"class {skill.name} must set `{attr}`")
    if "execute" not in methods:
        bad(skill, "INV-EXECUTE", f"class {skill.name} must define `execute(self, input_data)`")
    name = assigned.get("name")
    if name is not None:
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            bad(name, "INV-NAME", "`name` must be a string literal")
        elif expected_name is not None and name.value != expected_name:
            bad(name, "INV-NAME", f"`name` is {name.value!r} but the proposal is {expected_name!r}")
    sec = assigned.get("side_effect_class")
    if sec is not None:
        declared = sec.attr if isinstance(sec, ast.Attribute) and isinstance(sec.value, ast.Name) \
            and sec.value.id in side_effect_names else None
        if declared is None or declared not in SideEffectClass.__members__:
            bad(sec, "INV-CLASS", "`side_effect_class` must be `SideEffectClass.<CLASS>`")
        elif declared != expected_class.value:
            bad(sec, "INV-CLASS", f"declares {declared} but the proposal declares {expected_class.value}")
    for attr in ("input_model", "output_model"):
        val = assigned.get(attr)
        if val is not None and not (isinstance(val, ast.Name) and val.id in models):
            bad(val, "INV-MODEL", f"`{attr}` must name a pydantic BaseModel subclass defined in this module "
                "(deriving from pydantic's BaseModel directly or through other such classes)")
    return found
