"""The capability-aware policy scanner: every import, name, attribute, call and import-time statement of a
skill module is checked against the policy and the skill's declared side-effect class.

Names are resolved, not matched: an alias or a re-bound name is followed to what it is bound to, an attribute
of an allowed module is followed to the object it really is (so `typing.sys` is `sys`), and a name that is
bound in more than one way is never trusted to be the builtin or the import it looks like.
"""

import ast
import builtins
import importlib
import re
import string
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from kavi_assets.gates.types import Violation
from kavi_assets.policy.bindings import Bindings
from kavi_assets.policy.capabilities import attribute_capability, capability_of
from kavi_assets.policy.policy import Policy, default_policy
from kavi_assets.skills.base import SideEffectClass

_HANDLE_ROOTS = ("vault", "http", "secrets", "llm")
_FORMAT_METHODS = ("format", "format_map", "vformat")
# pydantic options that read an object's attributes by (field or alias) name, like getattr with a string.
_ATTRIBUTE_READERS = ("from_attributes", "orm_mode")
# Calls whose keyword options could switch that on if the options are not spelled out.
_VALIDATE_METHODS = frozenset({"model_validate", "model_validate_json", "model_validate_strings", "validate_python",
                               "validate_json", "validate_strings"})
_ALIAS_KEYWORDS = ("alias", "validation_alias", "serialization_alias")
_PROPERTY_PARTS = ("setter", "getter", "deleter")
_BUILTIN_GENERICS = frozenset({"list", "dict", "set", "frozenset", "tuple", "type"})
_TYPING_MODULES = frozenset({"typing", "typing_extensions", "types", "collections.abc", "_collections_abc", "abc"})
_BLOCKED_PYDANTIC = ("v1", "deprecated")
_MAX_BITS = 4096  # largest integer import-time arithmetic may produce
_MAX_REPEAT = 1_000_000  # largest sequence repetition at import time
_MAX_STRING_DEPTH = 4  # strings inside string annotations inside ...


class _Huge(ArithmeticError):
    """Import-time arithmetic whose result would be enormous."""


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _str_const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _bounded(expr: ast.AST) -> int | None:
    """The value of small constant integer arithmetic; None when it is not constant; _Huge when enormous."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd | ast.Invert):
        inner = _bounded(expr.operand)
        if inner is None:
            return None
        return -inner if isinstance(expr.op, ast.USub) else ~inner if isinstance(expr.op, ast.Invert) else inner
    if not isinstance(expr, ast.BinOp):
        return None
    left, right = _bounded(expr.left), _bounded(expr.right)
    if left is None or right is None:
        return None
    op = expr.op
    if isinstance(op, ast.Pow):
        if right < 0:
            return None
        if right > _MAX_BITS or abs(left).bit_length() * right > _MAX_BITS:
            raise _Huge
        result = int(left**right)
    elif isinstance(op, ast.LShift):
        if right > _MAX_BITS:
            raise _Huge
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
    if result.bit_length() > _MAX_BITS:
        raise _Huge
    return result


class _Scanner(ast.NodeVisitor):
    def __init__(self, source: str, tree: ast.Module, side_effect: SideEffectClass, secrets: Sequence[str],
                 policy: Policy) -> None:
        self.lines = source.splitlines()
        self.tree = tree
        self.b = Bindings(tree)
        self.side_effect = side_effect
        self.secrets = set(secrets)
        self.policy = policy
        self.allowed_imports = policy.allowed_imports(side_effect.value)
        self.found: list[Violation] = []
        self._seen: set[tuple[str, int, int]] = set()
        self._handle_ok: set[int] = set()  # ids of `self.<handle>` nodes already checked as direct method calls
        self._modules: dict[str, ModuleType | None] = {}
        self._string_anchor: ast.AST = tree  # where a finding inside a string annotation is reported
        # Names bound to a module (or a name something else imports), including plain copies (`t = typing`).
        self.aliases: dict[str, str] = {}
        for name, targets in self.b.imported.items():
            self.aliases[name] = sorted(targets)[0]
        self.module_names = set(self.b.module_names)
        for name in list(self.aliases):
            if name not in self.module_names and isinstance(self._lookup(self.aliases[name]), ModuleType):
                self.module_names.add(name)
        self._follow_copies()
        self._sinks = {id(obj): label for label, obj in (
            ("getattr", getattr), ("hasattr", hasattr),
            ("operator.attrgetter", self._lookup("operator.attrgetter")),
            ("operator.methodcaller", self._lookup("operator.methodcaller")),
            ("pydantic.TypeAdapter", self._lookup("pydantic.TypeAdapter")),
        ) if obj is not None}

    def _follow_copies(self) -> None:
        """`x = os` makes `x` another name for `os` (and a module name, if `os` is one)."""
        changed = True
        while changed:
            changed = False
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) \
                        and node.value.id in self.aliases:
                    for t in node.targets:
                        if isinstance(t, ast.Name) and t.id not in self.aliases:
                            self.aliases[t.id] = self.aliases[node.value.id]
                            if node.value.id in self.module_names:
                                self.module_names.add(t.id)
                            changed = True

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

    # -- modules -------------------------------------------------------------------------------
    def _import_allowed(self, module: str) -> bool:
        if module in self.allowed_imports:
            return True
        # `collections.abc` is listed on its own; `os.path` is not allowed because `os` is not. pydantic's public
        # submodules come with pydantic, but not its v1 compatibility layer (BaseSettings reads the environment,
        # parse_file reads paths) nor private modules.
        parts = module.split(".")
        return (len(parts) > 1 and parts[0] == "pydantic" and "pydantic" in self.allowed_imports
                and parts[1] not in _BLOCKED_PYDANTIC and not any(p.startswith("_") for p in parts))

    def _module(self, name: str) -> ModuleType | None:
        """An allowed module, imported in the scanner's process (allowed modules are safe to import)."""
        if name not in self._modules:
            try:
                self._modules[name] = importlib.import_module(name) if self._import_allowed(name) else None
            except ImportError:
                self._modules[name] = None
        return self._modules[name]

    def _lookup(self, full: str) -> Any:
        """The object a dotted name reached from an allowed module (or a builtin) really is, or None."""
        parts = full.split(".")
        obj: Any = None
        start = 0
        for i in range(1, len(parts) + 1):
            if self._import_allowed(".".join(parts[:i])):
                obj, start = self._module(".".join(parts[:i])), i
                break
        else:
            if len(parts) == 1 or hasattr(builtins, parts[0]):
                obj, start = getattr(builtins, parts[0], None), 1
        if obj is None:
            return None
        for name in parts[start:]:
            try:
                obj = getattr(obj, name)
            except Exception:
                return None
        return obj

    def _deny_import(self, node: ast.AST, module: str, *, use: bool = False) -> None:
        rule, capability = capability_of(module)
        what = f"use of {module!r}" if use else f"import of {module!r}"
        why = f"{what} is not allowed for {self.side_effect.value} skills ({capability})"
        self.report(node, rule, why, capability)

    def _check_module_path(self, node: ast.AST, full: str) -> None:
        """Follow `full` from the allowed module it starts at: every module it passes through must be allowed
        too, and no private name of a module may be used."""
        parts = full.split(".")
        start = next((i for i in range(1, len(parts) + 1) if self._import_allowed(".".join(parts[:i]))), None)
        if start is None:
            self._deny_import(node, full, use=not isinstance(node, ast.Import | ast.ImportFrom))
            return
        obj = self._module(".".join(parts[:start]))
        for i in range(start, len(parts)):
            if obj is None:
                return
            name, shown = parts[i], ".".join(parts[: i + 1])
            if name.startswith("_") and not _is_dunder(name):
                self.report(node, "POL-ESCAPE", f"{shown} is a private name of module {obj.__name__!r}",
                            "private module internals")
                return
            try:
                value = getattr(obj, name)
            except Exception:
                return
            if not isinstance(value, ModuleType):
                return
            if not self._import_allowed(value.__name__):
                rule, capability = capability_of(value.__name__)
                self.report(node, rule, f"{shown} is the module {value.__name__!r}, which {self.side_effect.value} "
                            f"skills may not use ({capability})", capability)
                return
            obj = value

    def _resolve(self, expr: ast.AST) -> str | None:
        """The dotted name `expr` is bound to, when that is certain: an import nothing re-binds, or a builtin."""
        dotted = _dotted(expr)
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        target = self.b.trusted_import(root, expr)
        if target is not None:
            return f"{target}.{rest}" if rest else target
        if self.b.unbound(root, expr) and hasattr(builtins, root):
            return dotted
        return None

    def _sink(self, node: ast.AST) -> str | None:
        """getattr, hasattr, operator.attrgetter/methodcaller or pydantic.TypeAdapter, however spelled."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        if root in self.aliases:
            full = self.aliases[root] + (f".{rest}" if rest else "")
        elif root in ("getattr", "hasattr") and not rest:
            return root
        else:
            return None
        obj = self._lookup(full)
        return self._sinks.get(id(obj)) if obj is not None else None

    # -- imports -------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not self._import_allowed(alias.name):
                self._deny_import(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.report(node, "POL-IMPORT", "relative imports are not allowed in a skill module")
            return
        if any(a.name == "*" for a in node.names):
            self.report(node, "POL-IMPORT", f"star import from {module!r} hides what the skill uses")
        allowed = self._import_allowed(module)
        if not allowed:
            self._deny_import(node, module)
        for alias in node.names:
            if alias.name == "*":
                continue
            if alias.name in self.policy.denied_names:
                self.report(node, self.policy.denied_names[alias.name], f"import of {alias.name!r} from {module!r}")
            if alias.name in self.policy.denied_attributes:
                rule, capability = attribute_capability(alias.name)
                self.report(node, rule, f"import of {alias.name!r} from {module!r} ({capability})", capability)
            if allowed:
                self._check_module_path(node, f"{module}.{alias.name}")

    # -- names and attributes ------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        rule = self.policy.denied_names.get(node.id)
        # Binding a name that shadows a builtin (a field called `input` or `open`) is harmless; using it is not.
        if rule is not None and node.id not in ("type", "object") and isinstance(node.ctx, ast.Load):
            self.report(node, rule, f"use of {node.id!r} reaches around the handles or runs dynamic code")
        if _is_dunder(node.id) and node.id not in self.policy.allowed_dunders and node.id not in ("__all__",):
            self.report(node, "POL-INTROSPECTION", f"access to {node.id!r}")
        if isinstance(node.ctx, ast.Load):
            parent = self.b.parent(node)
            attribute_base = isinstance(parent, ast.Attribute) and parent.value is node
            if node.id in self.module_names and not attribute_base and not (
                    isinstance(parent, ast.Assign) and parent.value is node
                    and all(isinstance(t, ast.Name) for t in parent.targets)):
                self.report(node, "POL-ESCAPE", f"the module {self.aliases.get(node.id, node.id)!r} is used as a "
                            "value, so what is reached through it cannot be checked")
            self._check_sink_use(node)

    def _check_sink_use(self, node: ast.Name | ast.Attribute) -> None:
        sink = self._sink(node)
        if sink is None:
            return
        parent = self.b.parent(node)
        if not (isinstance(parent, ast.Call) and parent.func is node):
            self.report(node, "POL-ESCAPE", f"{sink} may only be called directly, so its arguments can be checked")

    def _bad_attribute(self, name: str) -> str | None:
        """Why reading attribute `name` by name (getattr, attrgetter, a format field, a match pattern) escapes."""
        if _is_dunder(name):
            return f"dunder attribute {name!r}"
        if name.startswith("_"):
            return f"private attribute {name!r}"
        if name in _HANDLE_ROOTS:
            return f"the {name} handle, which must be used as self.{name}.<method>(...)"
        if name in self.policy.denied_attributes:
            return f"{name!r} ({attribute_capability(name)[1]})"
        if name in _FORMAT_METHODS:
            return f"{name!r}, whose template could not be checked"
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if _is_dunder(attr) and attr not in self.policy.allowed_dunders:
            self.report(node, "POL-INTROSPECTION", f"access to dunder attribute {attr!r} is an introspection escape")
        if attr in self.policy.denied_attributes:
            rule, capability = attribute_capability(attr)
            self.report(node, rule, f"use of {attr!r} ({capability})", capability)
        root = _root(node)
        if root is not None and root in self.aliases and isinstance(node.value, ast.Name | ast.Attribute):
            dotted = _dotted(node)
            if dotted is not None:
                self._check_resolved(node, self.aliases[root] + dotted[len(root):])
        self._check_handle_attribute(node)
        if attr in _FORMAT_METHODS:
            self._check_format_receiver(node)
        if isinstance(node.ctx, ast.Load):
            self._check_sink_use(node)
        self.generic_visit(node)

    def _check_resolved(self, node: ast.AST, resolved: str) -> None:
        lowered = resolved.lower()
        if "environ" in lowered or resolved.endswith(("getenv", "putenv")):
            self.report(node, "POL-ENV", f"{resolved} reads the environment; use declared secrets")
        self._check_module_path(node, resolved)

    def _check_format_receiver(self, node: ast.Attribute) -> None:
        """str.format walks attributes named in its template: the template must be a literal the scan checked."""
        recv = node.value
        if _str_const(recv) is not None:
            return
        if isinstance(recv, ast.Name) and self._strings_of(recv) is not None:
            return
        self.report(node, "POL-ESCAPE", f".{node.attr}() on a template that is not a string literal or a module "
                    "constant: its fields could walk attributes by name")

    # -- handles -------------------------------------------------------------------------------
    def _check_handle_attribute(self, node: ast.Attribute) -> None:
        """`self.vault` / `self.http` / `self.secrets` may only be used as `self.<handle>.<method>(...)`."""
        if node.attr == "_context":
            self.report(node, "POL-HANDLE", "reaching into the skill's context bypasses the handles")
            return
        if node.attr not in _HANDLE_ROOTS or id(node) in self._handle_ok:
            return
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            self.report(node, "POL-HANDLE", f"the {node.attr} handle must be used directly as "
                        f"self.{node.attr}.<method>(...) so its use can be checked")
        else:
            self.report(node, "POL-HANDLE", f"the {node.attr} handle is reached through something other than self; "
                        f"use self.{node.attr}.<method>(...)")

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
        if inner.attr == "vault":
            path = _str_const(call.args[0]) if call.args else None
            if path is not None and (path.startswith(("/", "~")) or "\\" in path or "\x00" in path
                                     or ".." in path.split("/")):
                self.report(call, "POL-FS", f"vault path {path!r} leaves the vault",
                            "filesystem read outside the vault")
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
                arg = _str_const(call.args[0]) if call.args else None
                if arg is None:
                    self.report(call, "POL-SECRET", "secret names must be string literals so the scan can check them")
                elif arg not in self.secrets:
                    self.report(call, "POL-SECRET", f"secret {arg!r} is not declared by the proposal")

    # -- calls ---------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self._check_handle_call(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr"):
            self._check_getattr(node, func.id)
        elif isinstance(func, ast.Name) and func.id == "type" and len(node.args) != 1:
            self.report(node, "POL-DYNAMIC-CODE", "three-argument type() creates classes at run time")
        sink = self._sink(func)
        if sink == "operator.attrgetter":
            self._check_name_args(node, sink, node.args, dotted=True)
        elif sink == "operator.methodcaller":
            self._check_name_args(node, sink, node.args[:1], dotted=False)
        elif sink == "pydantic.TypeAdapter":
            tp = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "type"), None)
            if tp is not None:
                self._check_type_position(tp, "the type given to TypeAdapter")
        self._check_typing_call(node)
        self._check_options(node)
        self.generic_visit(node)

    def _check_options(self, node: ast.Call) -> None:
        """Keyword options that read attributes by name, or that hide which options are set."""
        func = node.func
        splat = any(kw.arg is None for kw in node.keywords)
        config_dict = self._lookup(self._resolve(func) or "") is self._lookup("pydantic.ConfigDict")
        if splat and ((isinstance(func, ast.Attribute) and func.attr in _VALIDATE_METHODS) or config_dict):
            self.report(node, "POL-ESCAPE", "a ** splat into pydantic validation or configuration hides whether "
                        "from_attributes (reading attributes by name) is switched on")
        for kw in node.keywords:
            if kw.arg in _ATTRIBUTE_READERS:
                self.report(kw.value, "POL-ESCAPE", f"{kw.arg} reads an object's attributes by name (like getattr)")
            elif kw.arg is not None and kw.arg.startswith("_"):
                self.report(kw.value, "POL-ESCAPE", f"private keyword argument {kw.arg!r}")
            elif kw.arg == "config":
                self._check_config_value(kw.value)
            elif kw.arg in _ALIAS_KEYWORDS:
                alias = _str_const(kw.value)
                why = self._bad_attribute(alias) if alias is not None else None
                if why is not None:
                    self.report(kw.value, "POL-ESCAPE", f"a field alias that names {why}")

    def _check_config_value(self, value: ast.expr) -> None:
        """pydantic configuration must be spelled out: ConfigDict(...) or a dict display with literal keys."""
        if isinstance(value, ast.Call) and self._lookup(self._resolve(value.func) or "") is self._lookup(
                "pydantic.ConfigDict") and all(kw.arg is not None for kw in value.keywords) and not value.args:
            return
        if isinstance(value, ast.Dict) and all(_str_const(k) is not None for k in value.keys):
            return
        self.report(value, "POL-ESCAPE", "pydantic configuration that is not spelled out as ConfigDict(...) or a "
                    "dict with literal keys could switch on from_attributes")

    def _check_typing_call(self, node: ast.Call) -> None:
        full = self._resolve(node.func)
        obj = self._lookup(full) if full else None
        if obj is None:
            return
        typing_mod = self._module("typing")
        if typing_mod is None:
            return
        if obj is typing_mod.TypeVar:
            for arg in [*node.args[1:], *(k.value for k in node.keywords if k.arg == "bound")]:
                self._check_type_position(arg, "a TypeVar bound or constraint")
        elif obj is typing_mod.NewType and len(node.args) > 1:
            self._check_type_position(node.args[1], "the type of a NewType")
        elif (obj is typing_mod.NamedTuple or obj is typing_mod.TypedDict) and (node.args or node.keywords):
            self.report(node, "POL-DYNAMIC-CODE", f"the call form of {full} takes field types as values; "
                        "use the class form so the scan can check them")

    def _check_getattr(self, node: ast.Call, name: str) -> None:
        if len(node.args) < 2:
            self.report(node, "POL-ESCAPE", f"{name} without a literal attribute name")
            return
        target = node.args[0]
        if isinstance(target, ast.Name) and (target.id in self.aliases or _is_dunder(target.id)):
            self.report(node, "POL-ESCAPE", f"{name} on a module or builtins")
            return
        self._check_name_args(node, name, node.args[1:2], dotted=False)

    def _check_name_args(self, node: ast.Call, label: str, args: Sequence[ast.expr], *, dotted: bool) -> None:
        if not args:
            self.report(node, "POL-ESCAPE", f"{label} without a literal attribute name")
        for arg in args:
            names = self._strings(arg)
            if names is None:
                self.report(node, "POL-ESCAPE", f"{label} with a computed attribute name")
                continue
            for n in names:
                for part in n.split(".") if dotted else [n]:
                    why = self._bad_attribute(part)
                    if why is not None:
                        rule = "POL-INTROSPECTION" if _is_dunder(part) else "POL-ESCAPE"
                        self.report(node, rule, f"{label} of {n!r} reaches {why}")

    # -- names bound to constant strings -------------------------------------------------------
    def _strings(self, expr: ast.AST) -> tuple[str, ...] | None:
        """The strings `expr` can be, when that is decidable from the source; None when it is computed."""
        value = _str_const(expr)
        if value is not None:
            return (value,)
        if isinstance(expr, ast.Name):
            return self._strings_of(expr)
        return None

    def _strings_of(self, node: ast.Name) -> tuple[str, ...] | None:
        """A name bound only by loops over constant strings, or once at module level to a string literal.

        Every binding of the name in the scope that binds it counts (including nested functions and every
        `for` clause of a comprehension), so a later `name = computed` makes it computed."""
        name = node.id
        if self.b.imported.get(name):
            return None
        scope = self.b.enclosing_scope(node)
        while True:
            sites = [s for s in self.b.sites.get(name, []) if self.b.within(s, scope)]
            if sites or scope is self.tree:
                break
            scope = self.b.enclosing_scope(scope)
        if not sites:
            return None
        values: list[str] = []
        for site in sites:
            got = self._site_strings(site)
            if got is None:
                return None
            values.extend(got)
        return tuple(values)

    def _site_strings(self, site: ast.AST) -> tuple[str, ...] | None:
        parent = self.b.parent(site)
        if isinstance(parent, ast.For | ast.comprehension) and parent.target is site:
            return self._constant_collection(parent.iter)
        if isinstance(parent, ast.Assign) and parent.targets == [site] and self.b.is_module_level(parent):
            value = _str_const(parent.value)
            return (value,) if value is not None else None
        return None

    def _constant_collection(self, expr: ast.AST) -> tuple[str, ...] | None:
        """A literal tuple/list/set of strings, or a module-level tuple of strings bound once. (A class-level tuple
        read through `self` is not trusted: a subclass, or any object passed as `self`, can shadow it.)"""
        if isinstance(expr, ast.Tuple | ast.List | ast.Set):
            values = [_str_const(e) for e in expr.elts]
            return tuple(v for v in values if v is not None) if expr.elts and None not in values else None
        if isinstance(expr, ast.Name):
            assigned = self.b.module_assignments(expr.id)
            if assigned is not None and len(assigned) == 1 and isinstance(assigned[0], ast.Tuple):
                return self._constant_collection(assigned[0])
            return None
        return None

    # -- strings -------------------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bytes) and len(node.value) > 64 and node.value[:1] in (b"\xe3", b"c", b"\x80"):
            self.report(node, "POL-DYNAMIC-CODE", "a large bytes literal that looks like serialised code")
        if isinstance(node.value, str):
            if node.value in _ATTRIBUTE_READERS:
                self.report(node, "POL-ESCAPE", f"{node.value} reads an object's attributes by name (like getattr)")
            walk = self._format_walk(node.value, 0)
            if walk is not None:
                self.report(node, "POL-INTROSPECTION", f"format field {{{walk}}} reaches attributes by name")

    def _format_walk(self, text: str, depth: int) -> str | None:
        """A replacement field of `text`, as a str.format template, that reads a forbidden attribute."""
        if "{" not in text or depth > 2:
            return None
        try:
            fields = list(string.Formatter().parse(text))
        except ValueError:
            return None
        for _literal, field, spec, _conversion in fields:
            if field:
                plain = re.sub(r"\[[^\]]*\]", "", field)
                if any(self._bad_attribute(part) is not None for part in plain.split(".")[1:]):
                    return field
            if spec:
                inner = self._format_walk(spec, depth + 1)
                if inner is not None:
                    return inner
        return None

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # `case C(attr=pattern)` reads `attr` from the subject by name.
        for attr in node.kwd_attrs:
            why = self._bad_attribute(attr)
            if why is not None:
                rule = "POL-INTROSPECTION" if _is_dunder(attr) else "POL-ESCAPE"
                self.report(node, rule, f"a class pattern reads {why}")
        self.generic_visit(node)

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
            if depth >= _MAX_STRING_DEPTH:
                return "it nests strings too deep"
            try:
                parsed = ast.parse(expr.value, mode="eval")
            except (SyntaxError, ValueError):
                return None  # cannot compile, so it can never be evaluated to anything
            return self._type_problem(parsed.body, in_string=True, depth=depth + 1, seen=seen)
        if isinstance(expr, ast.Name):
            return self._type_name_problem(expr.id, expr, in_string=in_string, depth=depth, seen=seen)
        if isinstance(expr, ast.Attribute):
            dotted = _dotted(expr)
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
        if _is_dunder(name) or (name in self.policy.denied_names and name not in ("type", "object")):
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
            return True
        full = self._resolve(value)
        if full is None:
            root = _root(value)
            return root is not None and root in self.aliases and isinstance(value, ast.Name | ast.Attribute)
        if "." not in full and full not in _BUILTIN_GENERICS and not self.b.imported.get(full):
            return False
        obj = self._lookup(full)
        return obj is not None and (isinstance(obj, type) or type(obj).__module__ in _TYPING_MODULES)

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
        if _is_dunder(node.name) and node.name not in self.policy.allowed_dunder_methods:
            self.report(node, "POL-IMPORT-TIME", f"{node.name} runs implicitly (class creation, attribute lookup, "
                        "pickling or pydantic schema hooks), not when the skill calls it")
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if self._resolve(base) == "type":
                self.report(base, "POL-IMPORT-TIME", f"class {node.name} subclasses type: a metaclass runs code "
                            "when classes are created")
        self.generic_visit(node)

    # -- assignments ---------------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._check_target(t, node)
        if isinstance(self.b.parent(node), ast.ClassDef) and any(
                isinstance(t, ast.Name) and t.id == "model_config" for t in node.targets):
            self._check_config_value(node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_target(node.target, node)
        if isinstance(self.b.parent(node), ast.ClassDef) and isinstance(node.target, ast.Name) \
                and node.target.id == "model_config" and node.value is not None:
            self._check_config_value(node.value)
        self._check_type_position(node.annotation, "an annotation")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    def _check_target(self, target: ast.AST, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for e in target.elts:
                self._check_target(e, stmt)
            return
        if isinstance(target, ast.Starred):
            self._check_target(target.value, stmt)
            return
        if not isinstance(target, ast.Attribute | ast.Subscript):
            return
        root = _root(target)
        if root is not None and root in self.aliases:
            self.report(stmt, "POL-TAMPER", f"assignment into {self.aliases[root]!r}, which other code shares")
        elif root is not None and self.b.class_name(root, target):
            self.report(stmt, "POL-TAMPER", f"assignment into class {root} after it is defined")
        elif not isinstance(self.b.enclosing_scope(stmt), ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self.report(stmt, "POL-TAMPER", "assignment into an object at import time")

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
                if _bounded(node) is None:
                    self.report(node, "POL-IMPORT-TIME",
                                f"power or shift of non-constant numbers at import time ({where})")
            elif isinstance(node.op, ast.Mult):
                seq = (ast.List, ast.Tuple, ast.JoinedStr)
                for a, b in ((node.left, node.right), (node.right, node.left)):
                    if isinstance(a, seq) or (isinstance(a, ast.Constant) and isinstance(a.value, str | bytes)):
                        n = _bounded(b)
                        if n is None or n > _MAX_REPEAT:
                            self.report(node, "POL-IMPORT-TIME", f"unbounded repetition at import time ({where})")
                _bounded(node)
        except _Huge:
            self.report(node, "POL-IMPORT-TIME", f"arithmetic with an enormous result at import time ({where})")

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
                    owner: ast.ClassDef | None) -> None:
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if not self._decorator_ok(target, owner):
                self.report(dec, "POL-IMPORT-TIME",
                            f"decorator {_dotted(target) or '<expression>'!r} runs code at import time")
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
        if owner is None or not (isinstance(target, ast.Attribute) and target.attr in _PROPERTY_PARTS
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


def scan_source(
    source: str,
    side_effect: SideEffectClass,
    *,
    declared_secrets: Sequence[str] = (),
    policy: Policy | None = None,
) -> list[Violation]:
    """Every capability the module uses beyond its declared class. Raises SyntaxError on unparsable source."""
    tree = ast.parse(source)
    scanner = _Scanner(source, tree, side_effect, declared_secrets, policy or default_policy())
    scanner.check_module_body(tree)
    # Handle calls are marked before attribute checks see `self.<handle>`.
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            scanner._check_handle_call(node)
    scanner.visit(tree)
    return sorted(scanner.found, key=lambda v: (v.line, v.col, v.rule_id))
