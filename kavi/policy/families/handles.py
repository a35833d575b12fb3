"""Handles: the vault, HTTP client, secrets and model endpoint, used only as self.<handle>.<method>(...)."""

import ast

from kavi.policy.families.base import HANDLE_ROOTS, str_const
from kavi.policy.families.type_positions import TypeRules
from kavi.skills.base import SideEffectClass


class HandleRules(TypeRules):
    # -- handles -------------------------------------------------------------------------------
    def _check_handle_attribute(self, node: ast.Attribute) -> None:
        """`self.vault` / `self.http` / `self.secrets` may only be used as `self.<handle>.<method>(...)`."""
        if node.attr == "_context":
            self.report(node, "POL-HANDLE", "reaching into the skill's context bypasses the handles")
            return
        if node.attr not in HANDLE_ROOTS or id(node) in self._handle_ok:
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
        if not (isinstance(inner.value, ast.Name) and inner.value.id == "self" and inner.attr in HANDLE_ROOTS):
            return
        self._handle_ok.add(id(inner))
        methods = self.policy.handles.get(inner.attr, {})
        needed = methods.get(func.attr)
        if needed is None:
            self.report(call, "POL-HANDLE", f"self.{inner.attr} has no method {func.attr!r}")
            return
        need = SideEffectClass(needed)
        if inner.attr == "vault":
            path = str_const(call.args[0]) if call.args else None
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
                arg = str_const(call.args[0]) if call.args else None
                if arg is None:
                    self.report(call, "POL-SECRET", "secret names must be string literals so the scan can check them")
                elif arg not in self.secrets:
                    self.report(call, "POL-SECRET", f"secret {arg!r} is not declared by the proposal")
