"""Import time: what runs when the module is imported (module level, class bodies, decorators, defaults)."""

import ast

from kavi_assets.policy.families.base import MAX_BITS, MAX_REPEAT, PROPERTY_PARTS, dotted_name
from kavi_assets.policy.families.names import NameRules


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



class ImportTimeRules(NameRules):
    # -- import-time side effects --------------------------------------------------------------
    def _import_time_call_ok(self, call: ast.Call) -> bool:
        full = self._resolve(call.func)
        if full is None:
            return False
        entries = self.policy.import_time_calls
        if "." not in full:
            return full in entries and self.b.unbound(full, call)
        if full in entries:
            return True
        module, _, last = full.rpartition(".")
        return last in entries and self._import_allowed(module)

    def _import_time_expr(self, expr: ast.AST | None, where: str) -> None:
        if expr is None:
            return
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Call):
                if not self._import_time_call_ok(sub):
                    self.report(sub, "POL-IMPORT-TIME", f"a call runs at import time ({where})")
            elif isinstance(sub, ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom):
                self.report(sub, "POL-IMPORT-TIME", f"code runs or is smuggled at import time ({where})")
            elif isinstance(sub, ast.BinOp):
                self._import_time_arithmetic(sub, where)

    def _import_time_arithmetic(self, node: ast.BinOp, where: str) -> None:
        try:
            if isinstance(node.op, ast.Pow | ast.LShift):
                if bounded(node) is None:
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
                            f"decorator {dotted_name(target) or '<expression>'!r} runs code at import time")
            if isinstance(dec, ast.Call):
                for arg in [*dec.args, *(k.value for k in dec.keywords)]:
                    if not isinstance(arg, ast.Constant):
                        self._import_time_expr(arg, "decorator argument")

    def _decorator_ok(self, target: ast.expr, owner: ast.ClassDef | None) -> bool:
        full = self._resolve(target)
        if full is not None:
            module, _, last = full.rpartition(".")
            if last not in self.policy.allowed_decorators:
                return False
            return self._import_allowed(module) if module else self.b.unbound(last, target)
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

    def check_module_body(self, tree: ast.Module) -> None:
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
