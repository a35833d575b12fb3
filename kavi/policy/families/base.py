"""Shared state of the scanner: the module's bindings, name resolution to real objects, and reporting.

Every family of rules (imports, strings, type positions, handles, names, import time) is a subclass of the one
before it in a single chain, so each family sees the helpers of those below it and mypy can check every call.
"""

import ast
import builtins
import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from kavi.policy.bindings import Bindings
from kavi.policy.capabilities import attribute_refusal
from kavi.policy.policy import Policy
from kavi.skills.base import SideEffectClass
from kavi.verdicts import Violation

HANDLE_ROOTS = ("vault", "http", "secrets", "llm")
FORMAT_METHODS = ("format", "format_map", "vformat")
# pydantic options that read an object's attributes by (field or alias) name, like getattr with a string.
ATTRIBUTE_READERS = ("from_attributes", "orm_mode")
# Calls whose keyword options could switch that on if the options are not spelled out.
VALIDATE_METHODS = frozenset({"model_validate", "model_validate_json", "model_validate_strings", "validate_python",
                               "validate_json", "validate_strings"})
ALIAS_KEYWORDS = ("alias", "validation_alias", "serialization_alias")
PROPERTY_PARTS = ("setter", "getter", "deleter")
BUILTIN_GENERICS = frozenset({"list", "dict", "set", "frozenset", "tuple", "type"})
TYPING_MODULES = frozenset({"typing", "typing_extensions", "types", "collections.abc", "_collections_abc", "abc"})
MAX_BITS = 4096  # largest integer import-time arithmetic may produce
MAX_REPEAT = 1_000_000  # largest sequence repetition at import time
MAX_STRING_DEPTH = 4  # strings inside string annotations inside ...



def dotted_name(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def root_of(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def str_const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None



class ScannerBase(ast.NodeVisitor):
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
        self._importable: dict[str, bool] = {}
        # The import statements that bind each name: a refused use of a mixed module is reported there too.
        self.import_sites: dict[str, list[ast.stmt]] = {}
        imported_modules: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.import_sites.setdefault(alias.asname or alias.name.split(".")[0], []).append(node)
                    imported_modules.add(alias.name)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported_modules.add(node.module)
                for alias in node.names:
                    self.import_sites.setdefault(alias.asname or alias.name, []).append(node)
                    imported_modules.add(f"{node.module}.{alias.name}")
        # Attribute names refused because a module the skill imports returns values that carry them.
        self.object_refusals = policy.object_refusals({m for m in imported_modules if policy.module_entry(m)})
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
    def report(self, node: ast.AST, rule: str, why: str, capability: str = "", instead: str = "") -> None:
        """One finding. Its message names the allowed way: `instead`, or the policy's alternative for the rule."""
        instead = instead or self.policy.alternative(rule)
        if instead:
            why = f"{why}; instead: {instead}"
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
        """The capability map calls `module` pure or mixed and the policy's imports name it (or its package)."""
        if module not in self._importable:
            self._importable[module] = self.policy.importable(module, self.side_effect.value)
        return self._importable[module]

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


    def _resolve(self, expr: ast.AST) -> str | None:
        """The dotted name `expr` is bound to, when that is certain: an import nothing re-binds, or a builtin."""
        dotted = dotted_name(expr)
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
        dotted = dotted_name(node)
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

    def _bad_attribute(self, name: str) -> str | None:
        """Why reading attribute `name` by name (getattr, attrgetter, a format field, a match pattern) escapes."""
        if is_dunder(name):
            return f"dunder attribute {name!r}"
        if name.startswith("_"):
            return f"private attribute {name!r}"
        if name in HANDLE_ROOTS:
            return f"the {name} handle, which must be used as self.{name}.<method>(...)"
        if name in self.policy.denied_attributes:
            return f"{name!r} ({attribute_refusal(self.policy, name).reason})"
        if name in FORMAT_METHODS:
            return f"{name!r}, whose template could not be checked"
        return None
