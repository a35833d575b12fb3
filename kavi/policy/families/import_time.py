"""Import time: what runs when the module is imported (module level, class bodies, decorators, defaults).

Import-time code is dangerous only when it reaches a capability, or runs unbounded: the runtime hashes a skill's
bytes before it imports them, and every function body is scanned for capabilities wherever it runs. What stays
refused is what the scan cannot bound or check: calls to anything but the policy's `import_time_calls` (pure
constructors and functions), methods other than `import_time_methods` on plain values, calls to functions and
classes the module defines (their bodies may loop forever, and `kavi run` / `kavi list` import a trusted skill in
the forge's own process without a time limit), decorators that run code, metaclasses and class hooks, and
arithmetic, repetition, ranges and comprehensions whose size is not bounded by constants.
"""

import ast
import builtins
import math

from kavi.policy.families.base import MAX_BITS, MAX_REPEAT, PROPERTY_PARTS, dotted_name, root_of
from kavi.policy.families.names import NameRules


class Huge(ArithmeticError):
    """Import-time arithmetic whose result would be enormous."""



def bounded(expr: ast.AST) -> int | None:
    """The value of small constant integer arithmetic; None when it is not constant; Huge when enormous."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd | ast.Invert):
        inner = bounded(expr.operand)
        if inner is None:
            return None
        return -inner if isinstance(expr.op, ast.USub) else ~inner if isinstance(expr.op, ast.Invert) else inner
    if not isinstance(expr, ast.BinOp):
        return None
    left, right = bounded(expr.left), bounded(expr.right)
    if left is None or right is None:
        return None
    op = expr.op
    if isinstance(op, ast.Pow):
        if right < 0:
            return None
        if right > MAX_BITS or abs(left).bit_length() * right > MAX_BITS:
            raise Huge
        result = int(left**right)
    elif isinstance(op, ast.LShift):
        if right > MAX_BITS:
            raise Huge
        result = left << right if right >= 0 else 0
    elif isinstance(op, ast.Mult):
        result = left * right
    elif isinstance(op, ast.Add):
        result = left + right
    elif isinstance(op, ast.Sub):
        result = left - right
    elif isinstance(op, ast.FloorDiv | ast.Mod) and right:
        result = left // right if isinstance(op, ast.FloorDiv) else left % right
    else:
        return None
    if result.bit_length() > MAX_BITS:
        raise Huge
    return result


# Calls whose result has as many items as their first argument, and calls that consume a whole iterable.
_SAME_SIZE = frozenset({"sorted", "list", "tuple", "set", "frozenset", "reversed", "enumerate", "dict",
                        "dict.fromkeys", "str.maketrans"})
_MATERIALIZING = frozenset({"sorted", "list", "tuple", "set", "frozenset", "dict", "sum", "min", "max", "any", "all",
                            "dict.fromkeys", "collections.Counter", "collections.OrderedDict", "collections.deque"})
_FACTORIES = frozenset({"list", "dict", "set", "tuple", "frozenset", "str", "int", "float", "bool"})


class ImportTimeRules(NameRules):
    _methods: frozenset[str] | None = None
    _constructing: set[str]

    def check_module_body(self, tree: ast.Module) -> None:
        self._constructing = set()
        self._plain_constants: dict[str, bool] = {}
        self._constant_sizes: dict[str, int | None] = {}
        self._check_module_body(tree)

    # -- import-time side effects --------------------------------------------------------------
    def _constructible(self, name: str, at: ast.AST) -> bool:
        """A class of the module whose construction runs none of its code: `X = namedtuple(...)`, or a @dataclass /
        NamedTuple class statement defining no function at all (no __post_init__, no dunder the construction or a
        later comparison could call, no property) whose bases are such classes too."""
        if name in self._constructing:
            return False
        self._constructing.add(name)
        try:
            values = self.b.module_assignments(name)
            if values is not None:
                return len(values) == 1 and isinstance(values[0], ast.Call) and self._resolve(values[0].func) in (
                    "collections.namedtuple", "typing.NamedTuple") and not values[0].keywords
            sites = self.b.sites.get(name, [])
            if len(sites) != 1 or not isinstance(sites[0], ast.ClassDef) or self.b.imported.get(name):
                return False
            cls = sites[0]
            if cls.keywords or any(isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                                   for s in cls.body):
                return False
            dataclass = any(self._resolve(d.func if isinstance(d, ast.Call) else d) == "dataclasses.dataclass"
                            for d in cls.decorator_list)
            bases_ok = all(self._resolve(b) == "typing.NamedTuple" or (isinstance(b, ast.Name)
                                                                        and self._constructible(b.id, at))
                           for b in cls.bases)
            named_tuple = any(self._resolve(b) == "typing.NamedTuple" for b in cls.bases)
            if not bases_ok or not (dataclass or named_tuple) or len(cls.decorator_list) > int(dataclass):
                return False
            # default factories run at construction: only the builtins import time allows
            for call in (n for n in ast.walk(cls) if isinstance(n, ast.Call)):
                for kw in call.keywords:
                    if kw.arg == "default_factory" and not (isinstance(kw.value, ast.Name)
                                                            and kw.value.id in _FACTORIES
                                                            and self.b.unbound(kw.value.id, kw.value)):
                        return False
            return True
        finally:
            self._constructing.discard(name)

    def _import_time_call_ok(self, call: ast.Call) -> bool:
        full = self._resolve(call.func)
        if full is None and isinstance(call.func, ast.Name):
            return self._constructible(call.func.id, call)
        if full is None:
            func = call.func
            return (isinstance(func, ast.Attribute) and func.attr in self.policy.import_time_methods
                    and self._plain(func.value, frozenset()))
        entries = self.policy.import_time_calls
        if "." not in full:
            # Builtins call the dunder methods of their arguments (__lt__, __str__, __hash__ ...): only plain ones.
            return full in entries and self.b.unbound(full, call) and all(
                self._plain(a.value if isinstance(a, ast.Starred) else a, frozenset())
                for a in [*call.args, *(k.value for k in call.keywords)])
        if full in entries:
            return True
        module, _, last = full.rpartition(".")
        return last in entries and self._import_allowed(module)

    def _plain(self, expr: ast.AST, seen: frozenset[str]) -> bool:
        """A value built only from literals and pure calls, so its methods are those of builtin types (never a
        method the module defines, which an enum member or an instance could carry)."""
        if isinstance(expr, ast.Constant | ast.JoinedStr):
            return True
        if isinstance(expr, ast.List | ast.Tuple | ast.Set):
            return all(self._plain(e, seen) for e in expr.elts)
        if isinstance(expr, ast.Dict):
            return all(k is not None and self._plain(k, seen) for k in expr.keys) \
                and all(self._plain(v, seen) for v in expr.values)
        if isinstance(expr, ast.Call):
            return self._import_time_call_ok(expr) and all(
                self._plain(a.value if isinstance(a, ast.Starred) else a, seen)
                for a in [*expr.args, *(k.value for k in expr.keywords)])
        if isinstance(expr, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return self._plain(expr.elt, seen | self._plain_targets(expr.generators, seen))
        if isinstance(expr, ast.DictComp):
            inner = seen | self._plain_targets(expr.generators, seen)
            return self._plain(expr.key, inner) and self._plain(expr.value, inner)
        if isinstance(expr, ast.BinOp):
            return self._plain(expr.left, seen) and self._plain(expr.right, seen)
        if isinstance(expr, ast.UnaryOp):
            return self._plain(expr.operand, seen)
        if isinstance(expr, ast.Subscript):
            return self._plain(expr.value, seen) and self._plain(expr.slice, seen)
        if isinstance(expr, ast.Attribute):
            root = root_of(expr)
            if root is not None and root in self.aliases and root in self.module_names:
                return True
            if expr.attr in self._method_names:
                return False  # a method or property the module defines would run its code
            if isinstance(expr.value, ast.Name) and (f"{expr.value.id}." in seen or (
                    (gen := self._generator_of(expr.value)) is not None and self._enum_iter(gen))):
                return expr.attr in ("name", "value")  # an enum member's name or value
            return self._plain(expr.value, seen)
        if isinstance(expr, ast.Name):
            if expr.id in seen:
                return True
            if self.b.unbound(expr.id, expr) and isinstance(getattr(builtins, expr.id, None), type):
                return True  # a builtin type (isinstance(v, str))
            gen = self._generator_of(expr)
            if gen is not None:
                return not self._enum_iter(gen) and self._plain(gen.iter, seen | {expr.id})
            # A module constant is decided once (a chain of constants each built from the next twice would
            # otherwise take exponential time); one being decided counts as not plain.
            if expr.id not in self._plain_constants:
                self._plain_constants[expr.id] = False
                values = self.b.module_assignments(expr.id)
                self._plain_constants[expr.id] = values is not None and all(
                    self._plain(v, seen | {expr.id}) for v in values)
            return self._plain_constants[expr.id]
        return False

    def _generator_of(self, name: ast.Name) -> ast.comprehension | None:
        """The comprehension clause that binds `name` where it is used, if any."""
        cur = self.b.parent(name)
        while cur is not None:
            if isinstance(cur, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
                for gen in cur.generators:
                    if any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(gen.target)):
                        return gen
            cur = self.b.parent(cur)
        return None

    def _enum_iter(self, gen: ast.comprehension) -> bool:
        return isinstance(gen.iter, ast.Name) and self._enum_class(gen.iter.id, frozenset())

    def _plain_targets(self, generators: list[ast.comprehension], seen: frozenset[str]) -> frozenset[str]:
        """The comprehension variables that iterate over plain values (plain themselves), and those that iterate
        over an enum class of the module (marked `name.`: only their name and value are plain)."""
        names: set[str] = set()
        for gen in generators:
            targets = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
            if isinstance(gen.iter, ast.Name) and self._enum_class(gen.iter.id, frozenset()):
                names |= {f"{t}." for t in targets}
            elif self._plain(gen.iter, seen | names):
                names |= targets
        return frozenset(names)

    @property
    def _method_names(self) -> frozenset[str]:
        """Names of every function a class of the module defines (methods and properties)."""
        if self._methods is None:
            self._methods = frozenset(f.name for c in ast.walk(self.tree) if isinstance(c, ast.ClassDef)
                                      for f in c.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef))
        return self._methods

    def _size(self, expr: ast.AST, seen: frozenset[str]) -> int | None:
        """How many items iterating `expr` at import time yields, when the source bounds it; None otherwise."""
        try:
            if isinstance(expr, ast.Constant) and isinstance(expr.value, str | bytes):
                return len(expr.value)
            if isinstance(expr, ast.List | ast.Tuple | ast.Set):
                return len(expr.elts)
            if isinstance(expr, ast.Dict):
                return len(expr.keys)
            if isinstance(expr, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
                total = 1
                for gen in expr.generators:
                    n = self._size(gen.iter, seen)
                    if n is None:
                        return None
                    total *= n
                return total
            if isinstance(expr, ast.Name) and self._enum_class(expr.id, frozenset()):
                return sum(len(st.targets) for c in self.b.sites[expr.id] if isinstance(c, ast.ClassDef)
                           for st in c.body if isinstance(st, ast.Assign))
            if isinstance(expr, ast.Name) and expr.id not in seen:
                if expr.id not in self._constant_sizes:  # decided once, like _plain's constants
                    self._constant_sizes[expr.id] = None
                    values = self.b.module_assignments(expr.id)
                    sizes = [self._size(v, seen | {expr.id}) for v in values] if values is not None else [None]
                    self._constant_sizes[expr.id] = None if any(n is None for n in sizes) else max(
                        n for n in sizes if n is not None)
                return self._constant_sizes[expr.id]
            if isinstance(expr, ast.Attribute):
                obj = self._lookup(self._resolve(expr) or "")
                return len(obj) if isinstance(obj, str | bytes | tuple | frozenset) else None
            if isinstance(expr, ast.Call):
                return self._call_size(expr, seen)
        except Huge:
            return None
        return None

    def _call_size(self, call: ast.Call, seen: frozenset[str]) -> int | None:
        full = self._resolve(call.func)
        if full == "range":
            bounds = [self._int_bound(a) for a in call.args[:2]]
            if not bounds or any(b is None for b in bounds):
                return None
            return sum(b for b in bounds if b is not None)  # |stop - start| / |step|, with |step| >= 1
        if full in _SAME_SIZE and call.args:
            return self._size(call.args[0], seen)
        if full in ("zip", "itertools.chain", "itertools.product") and call.args:
            sizes = [self._size(a, seen) for a in call.args]
            if any(n is None for n in sizes):
                return None
            known = [n for n in sizes if n is not None]
            if full == "zip":
                return min(known)
            if full == "itertools.chain":
                return sum(known)
            repeat = next((self._int_bound(k.value) for k in call.keywords if k.arg == "repeat"), 1)
            return None if repeat is None or repeat > MAX_REPEAT else math.prod(known) ** repeat
        if full in ("itertools.permutations", "itertools.combinations", "itertools.pairwise") and call.args:
            n = self._size(call.args[0], seen)
            r = self._int_bound(call.args[1]) if len(call.args) > 1 else n
            if n is None or r is None or n > MAX_REPEAT or r > MAX_REPEAT:
                return None
            return n if full == "itertools.pairwise" else (math.perm(n, r) if full.endswith("permutations")
                                                           else math.comb(n, r))
        func = call.func
        if full is None and isinstance(func, ast.Attribute) and func.attr in ("items", "keys", "values", "split",
                                                                                "splitlines"):
            n = self._size(func.value, seen)
            return None if n is None else n + 1
        return None

    def _int_bound(self, expr: ast.AST) -> int | None:
        """An upper bound of |value| of an integer expression at import time, when the source gives one: constants,
        len() of sized values, comprehension variables over constant ranges or literals, and + - * of those."""
        try:
            value = bounded(expr)
        except Huge:
            return None
        if value is not None:
            return abs(value)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
            return self._int_bound(expr.operand)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub | ast.Mult):
            left, right = self._int_bound(expr.left), self._int_bound(expr.right)
            if left is None or right is None:
                return None
            return left * right if isinstance(expr.op, ast.Mult) else left + right
        if isinstance(expr, ast.Call) and self._resolve(expr.func) == "len" and len(expr.args) == 1:
            return self._size(expr.args[0], frozenset())
        if isinstance(expr, ast.Name):
            return self._loop_bound(expr)
        return None

    def _loop_bound(self, name: ast.Name) -> int | None:
        """The largest |value| a comprehension variable takes, when it iterates over a constant range or literal."""
        cur = self.b.parent(name)
        while cur is not None:
            if isinstance(cur, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
                for gen in cur.generators:
                    if isinstance(gen.target, ast.Name) and gen.target.id == name.id:
                        it = gen.iter
                        if isinstance(it, ast.Tuple | ast.List | ast.Set):
                            bounds = [self._int_bound(e) for e in it.elts]
                            return None if not bounds or None in bounds else max(b for b in bounds if b is not None)
                        if isinstance(it, ast.Call) and self._resolve(it.func) == "range":
                            bounds = [self._int_bound(a) for a in it.args[:2]]
                            return None if not bounds or None in bounds else max(b for b in bounds if b is not None)
                        return None
            cur = self.b.parent(cur)
        return None

    def _import_time_size(self, node: ast.AST, where: str) -> None:
        """Comprehensions and ranges at import time must be bounded by constants: their size, multiplied over
        nested loops, at most MAX_REPEAT."""
        if isinstance(node, ast.Call) and self._resolve(node.func) == "range":
            n = self._call_size(node, frozenset())
            if n is None or n > MAX_REPEAT:
                self.report(node, "POL-IMPORT-TIME", f"a range not bounded by constants at import time ({where})",
                            instead=f"constant bounds of at most {MAX_REPEAT:,} items, or build it inside execute()")
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            n = self._size(node, frozenset())
            if n is None or n > MAX_REPEAT:
                self.report(node, "POL-IMPORT-TIME", f"a comprehension whose size is not bounded by constants at "
                            f"import time ({where})", instead="iterate over literals, module constants or "
                            f"constant ranges (at most {MAX_REPEAT:,} items in all), or build it inside execute()")

    def _import_time_expr(self, expr: ast.AST | None, where: str) -> None:
        if expr is None:
            return
        for sub in ast.walk(expr):
            self._import_time_size(sub, where)
            if isinstance(sub, ast.Call) and self._resolve(sub.func) in _MATERIALIZING and len(sub.args) == 1 \
                    and not isinstance(sub.args[0], ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
                n = self._size(sub.args[0], frozenset())
                if n is None or n > MAX_REPEAT:
                    self.report(sub, "POL-IMPORT-TIME", f"{ast.unparse(sub.func)}() of an iterable whose size is not "
                                f"bounded by constants at import time ({where})", instead="literals, module "
                                f"constants, constant ranges and comprehensions over them (at most {MAX_REPEAT:,} "
                                "items), or build it inside execute()")
            if isinstance(sub, ast.Call):
                if not self._import_time_call_ok(sub):
                    self.report(sub, "POL-IMPORT-TIME", f"a call runs at import time ({where}): "
                                f"{(dotted_name(sub.func) or ast.unparse(sub.func))[:60]!r} is not a pure call the "
                                "policy allows there", instead="literals, comprehensions and the pure calls of "
                                "`kavi policy show` at module level (sorted, dict(zip(...)), re.compile, ...); "
                                "call the module's own functions inside execute()")
            elif isinstance(sub, ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom):
                self.report(sub, "POL-IMPORT-TIME", f"code runs or is smuggled at import time ({where})")
            elif isinstance(sub, ast.BinOp):
                self._import_time_arithmetic(sub, where)

    def _import_time_arithmetic(self, node: ast.BinOp, where: str) -> None:
        try:
            if isinstance(node.op, ast.Pow | ast.LShift):
                base, exponent = self._int_bound(node.left), self._int_bound(node.right)
                if bounded(node) is None and (base is None or exponent is None
                                              or max(base, 2).bit_length() * exponent > MAX_BITS):
                    self.report(node, "POL-IMPORT-TIME",
                                f"power or shift of non-constant numbers at import time ({where})")
            elif isinstance(node.op, ast.Mult):
                seq = (ast.List, ast.Tuple, ast.JoinedStr)
                for a, b in ((node.left, node.right), (node.right, node.left)):
                    if isinstance(a, seq) or (isinstance(a, ast.Constant) and isinstance(a.value, str | bytes)):
                        n = bounded(b)
                        if n is None or n > MAX_REPEAT:
                            self.report(node, "POL-IMPORT-TIME", f"unbounded repetition at import time ({where})")
                bounded(node)
        except Huge:
            self.report(node, "POL-IMPORT-TIME", f"arithmetic with an enormous result at import time ({where})")

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
                    owner: ast.ClassDef | None) -> None:
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if not self._decorator_ok(target, owner):
                self.report(dec, "POL-IMPORT-TIME",
                            f"decorator {dotted_name(target) or '<expression>'!r} runs code at import time",
                            instead="the decorators of `kavi policy show` (property, dataclass, functools.cache, "
                            "contextlib.contextmanager, ...), or call the function explicitly inside execute()")
            if isinstance(dec, ast.Call):
                for arg in [*dec.args, *(k.value for k in dec.keywords)]:
                    if not isinstance(arg, ast.Constant):
                        self._import_time_expr(arg, "decorator argument")

    def _single_dispatch(self, name: str, owner: ast.ClassDef | None) -> bool:
        """`@f.register` for a function `f` defined once (in the same class body, or at module level) under
        functools.singledispatch(method): registering only adds to f's own table."""
        body = owner.body if owner is not None else self.tree.body
        defs = [s for s in body if isinstance(s, ast.FunctionDef) and s.name == name]
        others = [s for s in self.b.sites.get(name, []) if not isinstance(s, ast.FunctionDef)]
        if len(defs) != 1 or others:
            return False
        return any(self._resolve(d.func if isinstance(d, ast.Call) else d) in (
            "functools.singledispatch", "functools.singledispatchmethod") for d in defs[0].decorator_list)

    def _decorator_ok(self, target: ast.expr, owner: ast.ClassDef | None) -> bool:
        full = self._resolve(target)
        if full is not None:
            module, _, last = full.rpartition(".")
            if last not in self.policy.allowed_decorators:
                return False
            return self._import_allowed(module) if module else self.b.unbound(last, target)
        if isinstance(target, ast.Attribute) and target.attr == "register" and isinstance(target.value, ast.Name):
            return self._single_dispatch(target.value.id, owner)
        # `@value.setter` for a property `value` defined in the same class body
        if owner is None or not (isinstance(target, ast.Attribute) and target.attr in PROPERTY_PARTS
                                 and isinstance(target.value, ast.Name)):
            return False
        name = target.value.id
        binds = [s for s in owner.body if isinstance(s, ast.FunctionDef) and s.name == name]
        others = [s for s in owner.body if not isinstance(s, ast.FunctionDef)
                  and any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                          for n in ast.walk(s))]
        return bool(binds) and not others and any(
            isinstance(d, ast.Name) and d.id == "property" and self._resolve(d) == "property"
            for d in binds[0].decorator_list)

    def _function_header(self, node: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None) -> None:
        self._decorators(node, owner)
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self._import_time_expr(default, f"default argument of {node.name}")
        # Annotations of module- and class-level functions are evaluated when the def runs.
        args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]
        for a in args:
            if a is not None:
                self._import_time_expr(a.annotation, f"annotation in {node.name}")
        self._import_time_expr(node.returns, f"return annotation of {node.name}")

    def _type_checking_block(self, stmt: ast.stmt) -> bool:
        """`if TYPE_CHECKING:` holding only imports (which are still checked) never runs."""
        return (isinstance(stmt, ast.If) and not stmt.orelse and self._resolve(stmt.test) == "typing.TYPE_CHECKING"
                and all(isinstance(s, ast.Import | ast.ImportFrom) for s in stmt.body))

    def _check_module_body(self, tree: ast.Module) -> None:
        for i, stmt in enumerate(tree.body):
            if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # docstring
            if isinstance(stmt, ast.Import | ast.ImportFrom) or self._type_checking_block(stmt):
                continue
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function_header(stmt, None)
            elif isinstance(stmt, ast.ClassDef):
                self._class_header(stmt)
            elif isinstance(stmt, ast.Assign):
                self._import_time_expr(stmt.value, "module level")
            elif isinstance(stmt, ast.AnnAssign):
                self._import_time_expr(stmt.annotation, "module-level annotation")
                self._import_time_expr(stmt.value, "module level")
            else:
                self.report(stmt, "POL-IMPORT-TIME",
                            f"module-level {type(stmt).__name__} statement runs at import time")

    def _class_header(self, node: ast.ClassDef) -> None:
        self._decorators(node, None)
        for kw in node.keywords:
            self.report(kw.value if kw.value else node, "POL-IMPORT-TIME",
                        f"class keyword {kw.arg!r} (metaclasses and class hooks run code at import time)")
        for base in node.bases:
            self._import_time_expr(base, f"base of {node.name}")
        for i, stmt in enumerate(node.body):
            if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function_header(stmt, node)
            elif isinstance(stmt, ast.ClassDef):
                self._class_header(stmt)
            elif isinstance(stmt, ast.Assign):
                self._import_time_expr(stmt.value, f"class body of {node.name}")
            elif isinstance(stmt, ast.AnnAssign):
                self._import_time_expr(stmt.annotation, f"annotation in the body of class {node.name}")
                self._import_time_expr(stmt.value, f"class body of {node.name}")
            elif isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
                continue
            else:
                self.report(stmt, "POL-IMPORT-TIME", f"statement in the body of class {node.name} runs at import time")
