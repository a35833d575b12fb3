"""Imports: which modules a skill may import, and which attributes of them it may reach.

Both are decided by the capability map (capability_map.yaml): a module is importable when the map calls it pure or
mixed (and the policy's import list names it); every attribute reached from an importable module — by
`from m import name`, `m.name`, or a longer dotted path through modules it imports in turn (`typing.sys.modules`)
— is checked against the entry of the module it really belongs to. A refused attribute is reported where it is
used and at the import that brought the module in, with the allowed way.
"""

import ast
from types import ModuleType
from typing import Any

from kavi.policy.capabilities import attribute_refusal, module_refusal
from kavi.policy.families.base import ScannerBase, is_dunder


class ImportRules(ScannerBase):
    def _deny_import(self, node: ast.AST, module: str, *, use: bool = False) -> None:
        refusal = module_refusal(self.policy, module, self.side_effect.value)
        what = f"use of {module!r}" if use else f"import of {module!r}"
        why = f"{what} is not allowed for {self.side_effect.value} skills ({refusal.reason})"
        self.report(node, refusal.rule, why, refusal.reason, refusal.instead)

    def _check_module_path(self, node: ast.AST, full: str, via: str | None = None) -> None:
        """Follow `full` from the importable module it starts at: each attribute must be in the pure part of the
        module it is read from, every module passed through must be importable too, and no private name of a
        module may be used. `via` is the name the path starts from, whose imports share a refusal."""
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
            found = self.policy.module_entry(obj.__name__)
            explicit = found is not None and name in found[1].refuse
            if name.startswith("_") and not is_dunder(name) and not explicit:
                self.report(node, "POL-ESCAPE", f"{shown} is a private name of module {obj.__name__!r}",
                            "private module internals", f"the public names of {obj.__name__}")
                return
            value = None if explicit else self._attribute(obj, name)
            if isinstance(value, ModuleType):
                # A module reached as an attribute (os.path, typing.sys, logging.handlers) is decided as itself.
                if self._import_allowed(value.__name__):
                    obj = value
                    continue
                self._refuse_module(node, value.__name__, shown, parts[i + 1] if i + 1 < len(parts) else None)
                return
            refusal = found[1].refusal(name) if found is not None else None
            if refusal is not None:
                self.report(node, refusal.rule, f"{shown}: {refusal.reason}", refusal.reason, refusal.instead)
                for site in self.import_sites.get(via or "", []) if via is not None else []:
                    self.report(site, refusal.rule, f"the import of {self.aliases.get(via or '', via)!r} is used "
                                f"for {shown} ({refusal.reason})", refusal.reason, refusal.instead)
                return
            if value is not None:
                self._check_class_path(node, obj.__name__, parts[i:], ".".join(parts[:i]))
            return

    def _attribute(self, module: ModuleType, name: str) -> Any:
        """`module.name` as the skill would see it at run time (None when it has no such attribute). A submodule
        the scanner's process has not imported yet is still an attribute at run time when anything imported it
        there: it is returned as the module it is, imported here when the map allows it."""
        try:
            return getattr(module, name)
        except Exception:
            sub = f"{module.__name__}.{name}"
            if self._import_allowed(sub):
                return self._module(sub)
            if self.policy.module_entry(sub) is not None:
                return ModuleType(sub)  # a refused submodule: only its name is needed to refuse it
            return None

    def _refuse_module(self, node: ast.AST, module: str, shown: str, next_name: str | None) -> None:
        """A module the skill may not use, reached as an attribute; the refusal of the attribute read from it,
        when its entry names one (logging.config.listen is a socket, logging.config.fileConfig a file)."""
        refusal = module_refusal(self.policy, module, self.side_effect.value)
        found = self.policy.module_entry(module)
        specific = found[1].refuse.get(next_name) if found is not None and next_name is not None else None
        if specific is not None:
            refusal = specific.model_copy(update={"rule": specific.rule or refusal.rule,
                                                  "instead": specific.instead or refusal.instead})
            shown = f"{shown}.{next_name}"
        self.report(node, refusal.rule, f"{shown} is the module {module!r}, which {self.side_effect.value} skills "
                    f"may not use ({refusal.reason})", refusal.reason, refusal.instead)

    def _check_class_path(self, node: ast.AST, module: str, rest: list[str], shown: str) -> None:
        """Attributes of a class a module exports that its entry refuses by a dotted key (`ZoneInfo.from_file`)."""
        found = self.policy.module_entry(module)
        if found is None:
            return
        entry = found[1]
        for j in range(2, len(rest) + 1):
            refusal = entry.refuse.get(".".join(rest[:j]))
            if refusal is not None:
                self.report(node, refusal.rule or entry.rule, f"{shown}.{'.'.join(rest[:j])}: {refusal.reason}",
                            refusal.reason, refusal.instead or entry.instead)
                return

    # -- imports -------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not self._import_allowed(alias.name):
                self._deny_import(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.report(node, "POL-IMPORT", "relative imports are not allowed in a skill module",
                        instead="an absolute import of a module the policy allows")
            return
        if any(a.name == "*" for a in node.names):
            self.report(node, "POL-IMPORT", f"star import from {module!r} hides what the skill uses",
                        instead=f"from {module} import <the names you use>")
        allowed = self._import_allowed(module)
        if not allowed:
            self._deny_import(node, module)
        for alias in node.names:
            if alias.name == "*":
                continue
            if alias.name in self.policy.denied_names:
                self.report(node, self.policy.denied_names[alias.name], f"import of {alias.name!r} from {module!r}",
                            instead=self.policy.alternative(alias.name))
            if alias.name in self.policy.denied_attributes:
                refusal = attribute_refusal(self.policy, alias.name)
                self.report(node, refusal.rule, f"import of {alias.name!r} from {module!r} ({refusal.reason})",
                            refusal.reason, refusal.instead)
            if allowed:
                self._check_module_path(node, f"{module}.{alias.name}")
