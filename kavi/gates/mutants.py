"""Mutants of a skill: one small change each, to a function of the module, the kind a plausible wrong skill differs
by (a comparison flipped, a constant or a bound one off, a branch or a call dropped, operands swapped, an operator
or a loop exit changed).

The forge plans the mutants (what each changes, where) and the sandboxed runner compiles the same plan from the
same source: a mutant is a function's new code object, compiled from the mutated syntax tree with the original line
numbers, installed in place of the function for the calls it is tried on and removed again. Only functions of the
module and methods of its classes are mutated; a function the mutation cannot be moved out of its class for
(zero-argument `super()`, `__class__`, a mangled `__name`) and a decorated one (other than staticmethod and
classmethod) are left alone.
"""

import ast
import copy
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
# Each arithmetic operator, and what it may be replaced by.
_ARITH: dict[type[ast.operator], tuple[type[ast.operator], ...]] = {
    ast.Add: (ast.Sub, ast.Mult), ast.Sub: (ast.Add, ast.Mult), ast.Mult: (ast.Add, ast.Pow, ast.FloorDiv),
    ast.Div: (ast.Mult, ast.FloorDiv), ast.FloorDiv: (ast.Div, ast.Mod, ast.Mult), ast.Mod: (ast.FloorDiv,),
    ast.Pow: (ast.Mult,),
}
_NOT_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_SWAPPED_CALLS = {"min": "max", "max": "min", "any": "all", "all": "any", "lower": "upper", "upper": "lower",
                  "startswith": "endswith", "endswith": "startswith", "isupper": "islower", "islower": "isupper",
                  "lstrip": "rstrip", "rstrip": "lstrip", "find": "rfind", "rfind": "find", "index": "rindex",
                  "rindex": "index", "sorted": "reversed", "reversed": "sorted"}
_PLAIN_DECORATORS = {"staticmethod", "classmethod"}


@dataclass(frozen=True)
class Mutant:
    """One planned mutant: its index in the plan, the function it changes (`Class.method` or `function`), the
    operator, and where and what it changes."""

    index: int
    function: str
    operator: str
    line: int
    change: str

    def describe(self) -> str:
        return f"line {self.line} ({self.function}): {self.change}"

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "function": self.function, "operator": self.operator, "line": self.line,
                "change": self.change}


# --- where mutants may go ---


def _movable(fn: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> bool:
    """A function whose code may be compiled outside its class body and installed in its place."""
    for dec in fn.decorator_list:
        if not (isinstance(dec, ast.Name) and dec.id in _PLAIN_DECORATORS):
            return False
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in ("super", "__class__"):
            return False
        if in_class and isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name.startswith("__") and not name.endswith("__"):
                return False
    return True


_FunctionPath = tuple[int, ...]  # where a function sits: its index in the module's body, then in its class's


def _function_paths(tree: ast.Module) -> Iterator[tuple[str, _FunctionPath, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _movable(node, False):
            yield node.name, (i,), node
        elif isinstance(node, ast.ClassDef):
            for j, item in enumerate(node.body):
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _movable(item, True):
                    yield f"{node.name}.{item.name}", (i, j), item


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for qualname, _path, fn in _function_paths(tree):
        yield qualname, fn


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes a mutation may touch, in one fixed order: no docstring, annotation or decorator."""
    yield node
    for field_name, value in ast.iter_fields(node):
        if field_name in ("annotation", "returns", "decorator_list", "type_comment"):
            continue
        children = value if isinstance(value, list) else [value]
        for i, child in enumerate(children):
            if not isinstance(child, ast.AST):
                continue
            if field_name == "body" and i == 0 and _is_docstring(child):
                continue
            yield from _walk(child)


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


# --- the operators ---

# Each operator: (name, sites) where sites(node) lists (change, apply) pairs; apply(node) mutates the node in place
# and returns it, or returns the node that replaces it.
_Apply = Callable[[Any], ast.AST]


def _int_const(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _plus(expr: ast.expr, delta: int) -> ast.expr:
    op: ast.operator = ast.Add() if delta > 0 else ast.Sub()
    return ast.copy_location(ast.BinOp(copy.deepcopy(expr), op, ast.Constant(abs(delta))), expr)


def _sites(node: ast.AST, parent_is_slice: bool) -> list[tuple[str, str, _Apply]]:
    out: list[tuple[str, str, _Apply]] = []
    if isinstance(node, ast.Compare):
        for k, op in enumerate(node.ops):
            if type(op) in _FLIP:
                new = _FLIP[type(op)]

                def flip(n: ast.Compare, k: int = k, new: type[ast.cmpop] = new) -> ast.AST:
                    n.ops[k] = new()
                    return n

                out.append(("comparison", f"{_sym(op)} → {_sym(new())}", flip))
        if len(node.ops) == 1 and not isinstance(node.ops[0], ast.In | ast.NotIn | ast.Is | ast.IsNot):
            def swap_cmp(n: ast.Compare) -> ast.AST:
                n.left, n.comparators[0] = n.comparators[0], n.left
                return n

            out.append(("operands", "comparison operands swapped", swap_cmp))
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        value = node.value
        for new in (value + 1, value - 1, *((0,) if value not in (-1, 0, 1) else ())):
            def shift(n: ast.Constant, new: int = new) -> ast.AST:
                n.value = new
                return n

            out.append(("constant", f"{value} → {new}", shift))
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        flipped = not node.value

        def flip_bool(n: ast.Constant, flipped: bool = flipped) -> ast.AST:
            return _set(n, "value", flipped)

        out.append(("constant", f"{node.value} → {flipped}", flip_bool))
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value and not parent_is_slice:
        def empty(n: ast.Constant) -> ast.AST:
            n.value = ""
            return n

        out.append(("constant", f"{_short(node.value)} → ''", empty))
    elif isinstance(node, ast.BinOp):
        for new_op in _ARITH.get(type(node.op), ()):
            def arith(n: ast.BinOp, new_op: type[ast.operator] = new_op) -> ast.AST:
                n.op = new_op()
                return n

            out.append(("operator", f"{_sym(node.op)} → {_sym(new_op())}", arith))
        out.append(("operand", f"x {_sym(node.op)} y → x", lambda n: n.left))
        out.append(("operand", f"x {_sym(node.op)} y → y", lambda n: n.right))
        if isinstance(node.op, _NOT_COMMUTATIVE):
            def swap(n: ast.BinOp) -> ast.AST:
                n.left, n.right = n.right, n.left
                return n

            out.append(("operands", f"operands of {_sym(node.op)} swapped", swap))
    elif isinstance(node, ast.AugAssign):
        for aug in _ARITH.get(type(node.op), ())[:1]:
            def aug_op(n: ast.AugAssign, aug: type[ast.operator] = aug) -> ast.AST:
                n.op = aug()
                return n

            out.append(("operator", f"{_sym(node.op)}= → {_sym(aug())}=", aug_op))
    elif isinstance(node, ast.BoolOp):
        def boolop(n: ast.BoolOp) -> ast.AST:
            n.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()
            return n

        out.append(("operator", "and → or" if isinstance(node.op, ast.And) else "or → and", boolop))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        out.append(("operator", f"{'not' if isinstance(node.op, ast.Not) else 'unary -'} dropped",
                    lambda n: n.operand))
    elif isinstance(node, ast.While):
        out.append(("branch", "loop condition negated", lambda n: _set(n, "test", _negated(n.test))))
    elif isinstance(node, ast.If):
        out.append(("branch", "if condition negated", lambda n: _set(n, "test", _negated(n.test))))
        if node.orelse:
            out.append(("branch", "else branch dropped", lambda n: _set(n, "orelse", [])))
            out.append(("branch", "if branch dropped (only the else runs)",
                        lambda n: _set(n, "test", ast.copy_location(ast.Constant(False), n.test))))
        else:
            out.append(("branch", "if branch dropped",
                        lambda n: _set(n, "test", ast.copy_location(ast.Constant(False), n.test))))
        out.append(("branch", "if condition always true",
                    lambda n: _set(n, "test", ast.copy_location(ast.Constant(True), n.test))))
    elif isinstance(node, ast.IfExp):
        out.append(("branch", "conditional expression: condition negated",
                    lambda n: _set(n, "test", _negated(n.test))))
        out.append(("branch", "conditional expression: always the first value", lambda n: n.body))
        out.append(("branch", "conditional expression: always the second value", lambda n: n.orelse))
    elif isinstance(node, ast.comprehension) and node.ifs:
        out.append(("branch", "comprehension filter dropped", lambda n: _set(n, "ifs", [])))
        out.append(("branch", "comprehension filter negated",
                    lambda n: _set(n, "ifs", [_negated(t) for t in n.ifs])))
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        out.append(("call", f"call {_short(ast.unparse(node.value.func))}(...) dropped",
                    lambda n: ast.copy_location(ast.Pass(), n)))
    elif isinstance(node, ast.Break):
        out.append(("loop", "break → continue", lambda n: ast.copy_location(ast.Continue(), n)))
    elif isinstance(node, ast.Continue):
        out.append(("loop", "continue → break", lambda n: ast.copy_location(ast.Break(), n)))
    if isinstance(node, ast.Call):
        fn = node.func
        name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
        if name in _SWAPPED_CALLS:
            other = _SWAPPED_CALLS[name]

            def rename(n: ast.Call, other: str = other) -> ast.AST:
                if isinstance(n.func, ast.Name):
                    n.func.id = other
                elif isinstance(n.func, ast.Attribute):
                    n.func.attr = other
                return n

            out.append(("call", f"{name}() → {other}()", rename))
        if isinstance(fn, ast.Name) and fn.id == "range" and node.args:
            last = len(node.args) - 1 if len(node.args) < 3 else 1
            if not _int_const(node.args[last]):
                for delta in (1, -1):
                    def bound(n: ast.Call, delta: int = delta, last: int = last) -> ast.AST:
                        n.args[last] = _plus(n.args[last], delta)
                        return n

                    out.append(("bound", f"range bound {'+' if delta > 0 else '-'} 1", bound))
    if isinstance(node, ast.Slice):
        for part in ("lower", "upper"):
            value = getattr(node, part)
            if value is None or _int_const(value):
                continue
            for delta in (1, -1):
                def slice_bound(n: ast.Slice, part: str = part, delta: int = delta) -> ast.AST:
                    setattr(n, part, _plus(getattr(n, part), delta))
                    return n

                out.append(("bound", f"slice {part} bound {'+' if delta > 0 else '-'} 1", slice_bound))
    return out


def _negated(test: ast.expr) -> ast.expr:
    """`not test`, or `test` itself when it was `not test`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return ast.copy_location(ast.UnaryOp(ast.Not(), test), test)


def _set(node: ast.AST, name: str, value: Any) -> ast.AST:
    setattr(node, name, value)
    return node


def _short(text: str, limit: int = 30) -> str:
    shown = repr(text) if not text.isidentifier() and "(" not in text and "." not in text else text
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


_SYMBOLS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
            ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
            ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def _sym(op: ast.AST) -> str:
    return _SYMBOLS.get(type(op), type(op).__name__)


# --- the plan, and one mutant's code ---


def _sites_of(fn: ast.AST) -> list[tuple[int, str, str, _Apply, int]]:
    """(node position, operator, change, apply, line) for every site of `fn`, in the order of `_walk`."""
    found = []
    slices = {id(n.slice) for n in ast.walk(fn) if isinstance(n, ast.Subscript)}
    for pos, node in enumerate(_walk(fn)):
        if pos == 0:
            continue  # the def itself
        for operator, change, apply in _sites(node, id(node) in slices):
            found.append((pos, operator, change, apply, int(getattr(node, "lineno", getattr(fn, "lineno", 0)))))
    return found


def plan_mutants(source: str) -> list[Mutant]:
    """Every single mutant of `source`, in one fixed order (the same source, the same plan)."""
    tree = ast.parse(source)
    plan: list[Mutant] = []
    for qualname, fn in _functions(tree):
        for _pos, operator, change, _apply, line in _sites_of(fn):
            plan.append(Mutant(len(plan), qualname, operator, line, change))
    return plan


class MutantMaker:
    """The mutants of one source: its sites found once; each mutant's code made from a fresh parse of the source
    (parsing is cheaper than copying the tree, and leaves no mutation behind for the next mutant)."""

    def __init__(self, source: str, filename: str) -> None:
        self.source, self.filename = source, filename
        self._sites: list[tuple[_FunctionPath, str, int, _Apply]] = []  # (function's path, qualname, position, apply)
        for qualname, path, fn in _function_paths(ast.parse(source)):
            self._sites.extend((path, qualname, pos, apply) for pos, _operator, _change, apply, _line in _sites_of(fn))

    def __len__(self) -> int:
        return len(self._sites)

    def code(self, index: int) -> tuple[str, Any]:
        """(function qualname, code object) of mutant `index`: the mutated function's definition alone, compiled with
        its original line numbers under the filename (executing it defines the mutated function)."""
        if not 0 <= index < len(self._sites):
            raise IndexError(f"no mutant {index} in this source")
        path, qualname, pos, apply = self._sites[index]
        fn: ast.AST = ast.parse(self.source)
        for i in path:
            fn = fn.body[i]  # type: ignore[attr-defined]
        target = next(itertools.islice(_walk(fn), pos, None))
        replacement = apply(target)
        if replacement is not target:
            fn = _Replace(target, replacement).visit(fn)
        module = ast.Module(body=[fn], type_ignores=[])  # type: ignore[list-item]
        ast.fix_missing_locations(module)
        return qualname, compile(module, self.filename, "exec", dont_inherit=True)


def mutant_code(source: str, index: int, filename: str) -> tuple[str, Any]:
    """Mutant `index` of `source` (see MutantMaker.code); for many mutants of one source, make one MutantMaker."""
    return MutantMaker(source, filename).code(index)


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> Any:
        if node is self.target:
            return self.replacement
        return self.generic_visit(node)


def choose(plan: list[Mutant], limit: int) -> list[Mutant]:
    """At most `limit` mutants, spread over the plan's operators and lines: each operator in turn (the plan's order
    within it), so a long function's many constants do not crowd out its comparisons and branches."""
    if len(plan) <= limit:
        return list(plan)
    by_operator: dict[str, list[Mutant]] = {}
    for m in plan:
        by_operator.setdefault(m.operator, []).append(m)
    queues = [list(q) for q in by_operator.values()]
    chosen: list[Mutant] = []
    while len(chosen) < limit:
        for q in queues:
            if q and len(chosen) < limit:
                chosen.append(q.pop(0))
    return sorted(chosen, key=lambda m: m.index)


def source_constants(source: str) -> tuple[list[int], list[str]]:
    """The int and string constants the module's functions hold (not docstrings): where a mutant's behaviour
    parts from the candidate's, an input often sits on or next to one of them."""
    ints: list[int] = []
    strs: list[str] = []
    for _qualname, fn in _functions(ast.parse(source)):
        for node in _walk(fn):
            if isinstance(node, ast.Constant):
                if type(node.value) is int and node.value not in ints:
                    ints.append(node.value)
                elif isinstance(node.value, str) and node.value and len(node.value) <= 40 and node.value not in strs:
                    strs.append(node.value)
    return ints[:24], strs[:24]
