"""Imports: which modules a skill may import, and which attributes of them it may reach."""

import ast
from types import ModuleType

from kavi_assets.policy.capabilities import attribute_capability, capability_of
from kavi_assets.policy.families.base import ScannerBase, is_dunder


class ImportRules(ScannerBase):
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
            if name.startswith("_") and not is_dunder(name):
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
