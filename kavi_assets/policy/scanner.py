"""The capability-aware policy scanner: every import, name, attribute, call and import-time statement of a
skill module is checked against the policy and the skill's declared side-effect class."""

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kavi_assets.gates.types import Violation
from kavi_assets.policy.capabilities import capability_of
from kavi_assets.policy.policy import Policy, default_policy
from kavi_assets.skills.base import SideEffectClass

_RANK = {SideEffectClass.READ_ONLY: 0, SideEffectClass.FILE_WRITE: 1, SideEffectClass.NETWORK: 2,
         SideEffectClass.SECRET_READ: 3}
# A format string that walks attributes or items of its arguments ("{0.__class__}", "{x[0]}") can reach dunders.
_FORMAT_WALK = re.compile(r"\{[^{}]*(\.__|\.f_|\.gi_|\.tb_|\[)[^{}]*\}")
_HANDLE_ROOTS = ("vault", "http", "secrets")


@dataclass
class _Scope:
    """Names bound to modules or dangerous objects, and loop variables over constant string lists."""

    aliases: dict[str, str] = field(default_factory=dict)
    constant_strings: dict[str, tuple[str, ...]] = field(default_factory=dict)


class _Scanner(ast.NodeVisitor):
    def __init__(self, source: str, side_effect: SideEffectClass, secrets: Sequence[str], policy: Policy) -> None:
        self.lines = source.splitlines()
        self.side_effect = side_effect
        self.secrets = set(secrets)
        self.policy = policy
        self.allowed_imports = policy.allowed_imports(side_effect.value)
        self.found: list[Violation] = []
        self.scope = _Scope()
        self._seen: set[tuple[str, int, int]] = set()
        self._handle_ok: set[int] = set()  # ids of `self.<handle>` nodes already checked as direct method calls

    # -- reporting -----------------------------------------------------------------------------
    def report(self, node: ast.AST, rule: str, why: str, capability: str = "") -> None:
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", 0)
        key = (rule, line, col)
        if key in self._seen:
            return
        self._seen.add(key)
        src = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        self.found.append(Violation(rule, line, col, src, why, capability or rule))

    # -- imports -------------------------------------------------------------------------------
    def _import_allowed(self, module: str) -> bool:
        if module in self.allowed_imports:
            return True
        # `collections.abc` is listed on its own; `os.path` is not allowed because `os` is not.
        parts = module.split(".")
        return any(".".join(parts[:i]) in self.allowed_imports and ".".join(parts[:i]) in ("pydantic",)
                   for i in range(1, len(parts)))

    def _deny_import(self, node: ast.AST, module: str) -> None:
        rule, capability = capability_of(module)
        self.report(node, rule if rule != "POL-IMPORT" else "POL-IMPORT",
                    f"import of {module!r} is not allowed for {self.side_effect.value} skills ({capability})",
                    capability)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not self._import_allowed(alias.name):
                self._deny_import(node, alias.name)
            bound = alias.asname or alias.name.split(".")[0]
            self.scope.aliases[bound] = alias.name if alias.asname else alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.report(node, "POL-IMPORT", "relative imports are not allowed in a skill module")
            return
        if any(a.name == "*" for a in node.names):
            self.report(node, "POL-IMPORT", f"star import from {module!r} hides what the skill uses")
        if not self._import_allowed(module):
            self._deny_import(node, module)
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{module}.{alias.name}"
            if alias.name in self.policy.denied_names:
                self.report(node, self.policy.denied_names[alias.name], f"import of {alias.name!r} from {module!r}")
            self.scope.aliases[alias.asname or alias.name] = full

    # -- names and attributes ------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        rule = self.policy.denied_names.get(node.id)
        if rule is not None and node.id not in ("type", "object"):
            self.report(node, rule, f"use of {node.id!r} reaches around the handles or runs dynamic code")
        elif node.id == "object" and isinstance(node.ctx, ast.Load):
            # `object` is fine as a base or annotation; walking from it is caught at the attribute.
            pass
        if node.id.startswith("__") and node.id.endswith("__") and node.id not in self.policy.allowed_dunders \
                and node.id not in ("__name__", "__doc__", "__all__"):
            self.report(node, "POL-INTROSPECTION", f"access to {node.id!r}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if attr.startswith("__") and attr.endswith("__") and attr not in self.policy.allowed_dunders:
            self.report(node, "POL-INTROSPECTION", f"access to dunder attribute {attr!r} is an introspection escape")
        if attr in self.policy.denied_attributes:
            self.report(node, "POL-INTROSPECTION", f"access to frame or code internals ({attr!r})")
        root = self._root_name(node)
        if root is not None and root in self.scope.aliases:
            full = self.scope.aliases[root]
            dotted = self._dotted(node)
            if dotted is not None:
                resolved = full + dotted[len(root):]
                self._check_resolved(node, resolved)
        self._check_handle_attribute(node)
        self.generic_visit(node)

    def _check_resolved(self, node: ast.AST, resolved: str) -> None:
        lowered = resolved.lower()
        if "environ" in lowered or resolved.endswith(("getenv", "putenv")):
            self.report(node, "POL-ENV", f"{resolved} reads the environment; use declared secrets")
        top = resolved.split(".")[0]
        if not self._import_allowed(top) and top not in ("kavi_assets",):
            self._deny_import(node, resolved)

    @staticmethod
    def _root_name(node: ast.AST) -> str | None:
        while isinstance(node, ast.Attribute):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    @staticmethod
    def _dotted(node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(node.id)
        return ".".join(reversed(parts))

    # -- handles -------------------------------------------------------------------------------
    def _check_handle_attribute(self, node: ast.Attribute) -> None:
        """`self.vault` / `self.http` / `self.secrets` may only be used as `self.<handle>.<method>(...)`."""
        if node.attr == "_context" and isinstance(node.value, ast.Name) and node.value.id == "self":
            self.report(node, "POL-HANDLE", "reaching into the skill's context bypasses the handles")
            return
        if not (isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in _HANDLE_ROOTS):
            return
        if id(node) in self._handle_ok:
            return
        self.report(node, "POL-HANDLE",
                    f"the {node.attr} handle must be used directly as self.{node.attr}.<method>(...) so its use "
                    "can be checked")

    def _check_handle_call(self, call: ast.Call) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)):
            return
        inner = func.value
        if not (isinstance(inner.value, ast.Name) and inner.value.id == "self" and inner.attr in _HANDLE_ROOTS):
            return
        self._handle_ok.add(id(inner))
        methods = self.policy.handles.get(inner.attr, {})
        needed = methods.get(func.attr)
        if needed is None:
            self.report(call, "POL-HANDLE", f"self.{inner.attr} has no method {func.attr!r}")
            return
        need = SideEffectClass(needed)
        if inner.attr == "vault" and need is SideEffectClass.FILE_WRITE \
                and self.side_effect is not SideEffectClass.FILE_WRITE:
            self.report(call, "POL-FS-WRITE", f"a {self.side_effect.value} skill may not write to the vault",
                        "filesystem write")
        elif inner.attr == "http" and self.side_effect is not SideEffectClass.NETWORK:
            self.report(call, "POL-NETWORK", f"a {self.side_effect.value} skill may not use the HTTP client",
                        "network")
        elif inner.attr == "secrets":
            if self.side_effect is not SideEffectClass.SECRET_READ:
                self.report(call, "POL-SECRET", f"a {self.side_effect.value} skill may not read secrets",
                            "secret read")
            else:
                arg = call.args[0] if call.args else None
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    self.report(call, "POL-SECRET", "secret names must be string literals so the scan can check them")
                elif arg.value not in self.secrets:
                    self.report(call, "POL-SECRET", f"secret {arg.value!r} is not declared by the proposal")

    # -- calls ---------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self._check_handle_call(node)
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in ("getattr", "hasattr"):
                self._check_getattr(node)
            elif func.id == "type" and len(node.args) != 1:
                self.report(node, "POL-DYNAMIC-CODE", "three-argument type() creates classes at run time")
        if isinstance(func, ast.Attribute) and func.attr in ("format", "format_map"):
            base = func.value
            if isinstance(base, ast.Constant) and isinstance(base.value, str) and _FORMAT_WALK.search(base.value):
                self.report(node, "POL-INTROSPECTION", "a format string that walks attributes of its arguments")
        self.generic_visit(node)

    def _check_getattr(self, node: ast.Call) -> None:
        name = node.func.id if isinstance(node.func, ast.Name) else "getattr"
        if len(node.args) < 2:
            self.report(node, "POL-ESCAPE", f"{name} without a literal attribute name")
            return
        target, attr = node.args[0], node.args[1]
        if isinstance(target, ast.Name) and (target.id in self.scope.aliases or target.id.startswith("__")):
            self.report(node, "POL-ESCAPE", f"{name} on a module or builtins")
            return
        names: tuple[str, ...]
        if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            names = (attr.value,)
        elif isinstance(attr, ast.Name) and attr.id in self.scope.constant_strings:
            names = self.scope.constant_strings[attr.id]
        else:
            self.report(node, "POL-ESCAPE", f"{name} with a computed attribute name")
            return
        for n in names:
            if n.startswith("_") or n in _HANDLE_ROOTS or n in self.policy.denied_attributes:
                self.report(node, "POL-ESCAPE", f"{name} of {n!r} reaches a private attribute or a handle")

    def visit_For(self, node: ast.For) -> None:
        # `for name in ("a", "b"): getattr(self, name)` is decidable: record the constant strings.
        if isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Tuple | ast.List) and node.iter.elts \
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.iter.elts):
            self.scope.constant_strings[node.target.id] = tuple(
                e.value for e in node.iter.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        if isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Tuple | ast.List) and node.iter.elts \
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.iter.elts):
            self.scope.constant_strings[node.target.id] = tuple(
                e.value for e in node.iter.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # Rebinding a module alias (`o = os`) keeps the alias; rebinding a name to a denied builtin is caught
        # at the builtin's Name node.
        if isinstance(node.value, ast.Name) and node.value.id in self.scope.aliases:
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.scope.aliases[t.id] = self.scope.aliases[node.value.id]
        for t in node.targets:
            if isinstance(t, ast.Subscript | ast.Attribute):
                root = self._root_name(t)
                if root in self.scope.aliases:
                    self.report(node, "POL-TAMPER", f"assignment into module {self.scope.aliases[root]!r}")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bytes) and len(node.value) > 64 and node.value[:1] in (b"\xe3", b"c", b"\x80"):
            self.report(node, "POL-DYNAMIC-CODE", "a large bytes literal that looks like serialised code")

    # -- import-time side effects --------------------------------------------------------------
    def _call_name(self, node: ast.Call) -> str | None:
        dotted = self._dotted(node.func)
        if dotted is None:
            return None
        root = dotted.split(".")[0]
        if root in self.scope.aliases:
            alias = self.scope.aliases[root]
            full = alias + dotted[len(root):]
            short = full.split(".")[-1]
            return full if full in self.policy.import_time_calls else short if "." not in dotted else full
        return dotted

    def _import_time_expr(self, expr: ast.AST | None, where: str) -> None:
        if expr is None:
            return
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Call):
                name = self._call_name(sub)
                if name is None or (name not in self.policy.import_time_calls
                                    and name.split(".")[-1] not in self.policy.import_time_calls):
                    self.report(sub, "POL-IMPORT-TIME", f"a call runs at import time ({where})")
            elif isinstance(sub, ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom):
                self.report(sub, "POL-IMPORT-TIME", f"code runs or is smuggled at import time ({where})")

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            dotted = self._dotted(target)
            short = dotted.split(".")[-1] if dotted else None
            if short not in self.policy.allowed_decorators:
                self.report(dec, "POL-IMPORT-TIME", f"decorator {dotted or '<expression>'!r} runs code at import time")
            if isinstance(dec, ast.Call):
                for arg in [*dec.args, *(k.value for k in dec.keywords)]:
                    if not isinstance(arg, ast.Constant):
                        self._import_time_expr(arg, "decorator argument")

    def _function_header(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._decorators(node)
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self._import_time_expr(default, f"default argument of {node.name}")
        if node.name in ("__init_subclass__", "__class_getitem__", "__set_name__", "__getattr__", "__del__",
                         "__reduce__", "__reduce_ex__"):
            self.report(node, "POL-IMPORT-TIME", f"{node.name} runs code implicitly")

    def check_module_body(self, tree: ast.Module) -> None:
        for i, stmt in enumerate(tree.body):
            if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # docstring
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                continue
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function_header(stmt)
            elif isinstance(stmt, ast.ClassDef):
                self._class_header(stmt)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                self._import_time_expr(stmt.value, "module level")
            else:
                self.report(stmt, "POL-IMPORT-TIME",
                            f"module-level {type(stmt).__name__} statement runs at import time")

    def _class_header(self, node: ast.ClassDef) -> None:
        self._decorators(node)
        for kw in node.keywords:
            self.report(kw.value if kw.value else node, "POL-IMPORT-TIME",
                        f"class keyword {kw.arg!r} (metaclasses and class hooks run code at import time)")
        for base in node.bases:
            self._import_time_expr(base, f"base of {node.name}")
        for i, stmt in enumerate(node.body):
            if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function_header(stmt)
            elif isinstance(stmt, ast.ClassDef):
                self._class_header(stmt)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                self._import_time_expr(stmt.value, f"class body of {node.name}")
            elif isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
                continue
            else:
                self.report(stmt, "POL-IMPORT-TIME", f"statement in the body of class {node.name} runs at import time")


def scan_source(
    source: str,
    side_effect: SideEffectClass,
    *,
    declared_secrets: Sequence[str] = (),
    policy: Policy | None = None,
) -> list[Violation]:
    """Every capability the module uses beyond its declared class. Raises SyntaxError on unparsable source."""
    tree = ast.parse(source)
    scanner = _Scanner(source, side_effect, declared_secrets, policy or default_policy())
    scanner.check_module_body(tree)
    # Collect module aliases first so uses before the import statement (in functions) still resolve.
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            scanner.visit(node)
    # Handle calls are marked before attribute checks see `self.<handle>`.
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            scanner._check_handle_call(node)
    scanner.visit(tree)
    return sorted(scanner.found, key=lambda v: (v.line, v.col, v.rule_id))
