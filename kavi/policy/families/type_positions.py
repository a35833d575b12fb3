"""Type positions: what pydantic and typing evaluate as code must be a plain type expression."""

import ast
import builtins

from kavi.policy.families.base import (
    BUILTIN_GENERICS,
    MAX_STRING_DEPTH,
    TYPING_MODULES,
    dotted_name,
    is_dunder,
    root_of,
)
from kavi.policy.families.strings import StringRules


class TypeRules(StringRules):
    # -- type positions ------------------------------------------------------------------------
    # pydantic and typing evaluate strings in type positions with eval(): a string annotation, a module
    # constant used inside `list[...]`, the argument of TypeAdapter. So every type position must be a plain type
    # expression: classes, imports, builtins, type aliases, subscripts and `|` of those, and strings that parse
    # as such.
    def _check_type_position(self, expr: ast.expr, where: str) -> None:
        self._string_anchor = expr
        problem = self._type_problem(expr, in_string=False, depth=0, seen=frozenset())
        if problem is not None:
            self.report(expr, "POL-DYNAMIC-CODE", f"{where} is evaluated as code by pydantic/typing, and {problem}",
                        "dynamic code")

    def _type_problem(self, expr: ast.AST, *, in_string: bool, depth: int, seen: frozenset[str]) -> str | None:
        if isinstance(expr, ast.Constant):
            if not isinstance(expr.value, str):
                return None
            if depth >= MAX_STRING_DEPTH:
                return "it nests strings too deep"
            try:
                parsed = ast.parse(expr.value, mode="eval")
            except (SyntaxError, ValueError):
                return None  # cannot compile, so it can never be evaluated to anything
            return self._type_problem(parsed.body, in_string=True, depth=depth + 1, seen=seen)
        if isinstance(expr, ast.Name):
            return self._type_name_problem(expr.id, expr, in_string=in_string, depth=depth, seen=seen)
        if isinstance(expr, ast.Attribute):
            dotted = dotted_name(expr)
            if dotted is None:
                return f"{ast.unparse(expr)!r} is not a plain type"
            parts = dotted.split(".")
            bad = next((p for p in parts[1:] if p.startswith("_")), None)
            if bad is not None:
                return f"{dotted!r} reads the private or dunder attribute {bad!r}"
            if parts[0] in self.aliases:
                if in_string:
                    self._check_module_path(self._string_anchor, self.aliases[parts[0]] + dotted[len(parts[0]):])
                return None
            if self.b.class_name(parts[0], expr):
                return None
            return f"{dotted!r} is not a class, an import or a type alias"
        if isinstance(expr, ast.Subscript):
            if not isinstance(expr.value, ast.Name | ast.Attribute):
                return f"{ast.unparse(expr.value)!r} is not a plain type"
            problem = self._type_problem(expr.value, in_string=in_string, depth=depth, seen=seen)
            if problem is not None:
                return problem
            head = self._resolve(expr.value) or ""
            elts = list(expr.slice.elts) if isinstance(expr.slice, ast.Tuple) else [expr.slice]
            if head in ("typing.Literal", "typing_extensions.Literal"):
                for e in elts:
                    constant = isinstance(e, ast.Constant) or (isinstance(e, ast.UnaryOp)
                                                               and isinstance(e.operand, ast.Constant))
                    member = isinstance(e, ast.Attribute) and self._type_problem(
                        e, in_string=in_string, depth=depth, seen=seen) is None
                    if not (constant or member):
                        return "Literal[...] may hold only constants"
                return None
            if head in ("typing.Annotated", "typing_extensions.Annotated") and elts:
                if in_string and not all(isinstance(m, ast.Constant) for m in elts[1:]):
                    return "metadata inside a string annotation would run as code"
                return self._type_problem(elts[0], in_string=in_string, depth=depth, seen=seen)
            for e in elts:
                problem = self._type_problem(e, in_string=in_string, depth=depth, seen=seen)
                if problem is not None:
                    return problem
            return None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            return (self._type_problem(expr.left, in_string=in_string, depth=depth, seen=seen)
                    or self._type_problem(expr.right, in_string=in_string, depth=depth, seen=seen))
        if isinstance(expr, ast.Tuple | ast.List):
            for e in expr.elts:
                problem = self._type_problem(e, in_string=in_string, depth=depth, seen=seen)
                if problem is not None:
                    return problem
            return None
        return f"{type(expr).__name__} {ast.unparse(expr)[:60]!r} is not a type expression"

    def _type_name_problem(self, name: str, at: ast.AST, *, in_string: bool, depth: int,
                           seen: frozenset[str]) -> str | None:
        if is_dunder(name) or (name in self.policy.denied_names and name not in ("type", "object")):
            return f"it names {name!r}"
        if name in seen:
            return None
        if self.b.imported.get(name):
            return f"{name!r} is imported and re-bound" if self.b.visible_sites(name, at) else None
        if self.b.unbound(name, at):
            return None if hasattr(builtins, name) else f"{name!r} is not defined in the module"
        if self.b.class_name(name, at):
            return None
        values = self.b.module_assignments(name)
        if values is None:
            return f"{name!r} is bound at run time, so its value cannot be checked"
        typing_mod = self._module("typing")
        for value in values:
            if isinstance(value, ast.Call):
                full = self._resolve(value.func)
                obj = self._lookup(full) if full else None
                if typing_mod is not None and obj in (typing_mod.TypeVar, typing_mod.NewType, typing_mod.ParamSpec):
                    continue  # their own arguments are checked where the call is visited
                return f"{name!r} is bound to a call"
            problem = self._type_problem(value, in_string=in_string, depth=depth, seen=seen | {name})
            if problem is not None:
                return f"{name!r} is bound to a value that is not a type: {problem}"
        return None

    def _is_type_subscript(self, node: ast.Subscript) -> bool:
        """`list[...]`, `Optional[...]`, `Model[...]`: a subscript that builds a type, not one that indexes."""
        value = node.value
        if isinstance(value, ast.Name) and self.b.class_name(value.id, value):
            return not self._enum_class(value.id, frozenset())
        full = self._resolve(value)
        if full is None:
            root = root_of(value)
            return root is not None and root in self.aliases and isinstance(value, ast.Name | ast.Attribute)
        if "." not in full and full not in BUILTIN_GENERICS and not self.b.imported.get(full):
            return False
        obj = self._lookup(full)
        return obj is not None and (isinstance(obj, type) or type(obj).__module__ in TYPING_MODULES)

    def _enum_class(self, name: str, seen: frozenset[str]) -> bool:
        """A class of the module deriving from enum.Enum: `Color[name]` looks a member up by name among the
        class's own members; it builds no type and evaluates nothing."""
        enum_mod = self._module("enum")
        for site in self.b.sites.get(name, []):
            if not isinstance(site, ast.ClassDef):
                return False
            for base in site.bases:
                if isinstance(base, ast.Name) and base.id not in seen and self.b.class_name(base.id, base):
                    if self._enum_class(base.id, seen | {name}):
                        return True
                    continue
                obj = self._lookup(self._resolve(base) or "")
                if enum_mod is not None and isinstance(obj, type) and issubclass(obj, enum_mod.Enum):
                    return True
        return False

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self._is_type_subscript(node):
            self._check_type_position(node, "a type built by subscription")
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        if node.annotation is not None:
            self._check_type_position(node.annotation, f"the annotation of {node.arg!r}")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.returns is not None:
            self._check_type_position(node.returns, f"the return annotation of {node.name}")
        if is_dunder(node.name) and node.name not in self.policy.allowed_dunder_methods:
            self.report(node, "POL-IMPORT-TIME", f"{node.name} runs implicitly (class creation, attribute lookup, "
                        "pickling or pydantic schema hooks), not when the skill calls it")
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if self._resolve(base) == "type":
                self.report(base, "POL-IMPORT-TIME", f"class {node.name} subclasses type: a metaclass runs code "
                            "when classes are created")
        self.generic_visit(node)
