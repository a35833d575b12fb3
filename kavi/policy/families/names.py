"""Names, attributes, calls and assignments: builtins that escape, reflection (getattr and its relatives),
pydantic options that read attributes by name, and writes into shared objects."""

import ast
from collections.abc import Sequence

from kavi.policy.capabilities import attribute_refusal
from kavi.policy.families.base import (
    ALIAS_KEYWORDS,
    ATTRIBUTE_READERS,
    FORMAT_METHODS,
    VALIDATE_METHODS,
    dotted_name,
    is_dunder,
    root_of,
    str_const,
)
from kavi.policy.families.handles import HandleRules


class NameRules(HandleRules):
    # -- names and attributes ------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        rule = self.policy.denied_names.get(node.id)
        # Binding a name that shadows a builtin (a field called `input` or `open`) is harmless; using it is not,
        # unless it is a parameter of the function it is used in (`def reverse(input, k)`): a parameter is local to
        # its whole function, and the builtin can only reach it through a call that names the builtin, refused there.
        if rule is not None and node.id not in ("type", "object") and isinstance(node.ctx, ast.Load) \
                and not self._parameter(node):
            self.report(node, rule, f"use of {node.id!r} reaches around the handles or runs dynamic code",
                        instead=self.policy.alternative(node.id))
        if is_dunder(node.id) and node.id not in self.policy.allowed_dunders and node.id not in ("__all__",):
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

    def _parameter(self, node: ast.Name) -> bool:
        """`node` names a parameter of the function (or lambda) it is used in, which nothing declares global."""
        scope = self.b.enclosing_scope(node)
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return False
        # Defaults and annotations are evaluated outside the function, where the name may be the builtin.
        body = [scope.body] if isinstance(scope, ast.Lambda) else scope.body
        if not any(self.b.within(node, stmt) for stmt in body):
            return False
        args = scope.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        declared = any(isinstance(s, ast.Global | ast.Nonlocal) for s in self.b.sites.get(node.id, []))
        return not declared and any(a is not None and a.arg == node.id for a in params)

    def _check_sink_use(self, node: ast.Name | ast.Attribute) -> None:
        sink = self._sink(node)
        if sink is None:
            return
        parent = self.b.parent(node)
        if not (isinstance(parent, ast.Call) and parent.func is node):
            self.report(node, "POL-ESCAPE", f"{sink} may only be called directly, so its arguments can be checked")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if is_dunder(attr) and attr not in self.policy.allowed_dunders:
            self.report(node, "POL-INTROSPECTION", f"access to dunder attribute {attr!r} is an introspection escape")
        if attr in self.policy.denied_attributes:
            refusal = attribute_refusal(self.policy, attr)
            self.report(node, refusal.rule, f"use of {attr!r} ({refusal.reason})", refusal.reason, refusal.instead)
        carried = self.object_refusals.get(attr)
        if carried is not None:
            self.report(node, carried.rule, f".{attr}: {carried.reason}", carried.reason, carried.instead)
        root = root_of(node)
        if root is not None and root in self.aliases and isinstance(node.value, ast.Name | ast.Attribute):
            dotted = dotted_name(node)
            if dotted is not None:
                self._check_resolved(node, self.aliases[root] + dotted[len(root):], via=root)
        self._check_handle_attribute(node)
        if attr in FORMAT_METHODS:
            self._check_format_receiver(node)
        if isinstance(node.ctx, ast.Load):
            self._check_sink_use(node)
        self.generic_visit(node)

    def _check_resolved(self, node: ast.AST, resolved: str, via: str | None = None) -> None:
        lowered = resolved.lower()
        if "environ" in lowered or resolved.endswith(("getenv", "putenv")):
            self.report(node, "POL-ENV", f"{resolved} reads the process environment")
        self._check_module_path(node, resolved, via=via)

    def _check_format_receiver(self, node: ast.Attribute) -> None:
        """str.format walks attributes named in its template: the template must be a literal the scan checked."""
        recv = node.value
        if str_const(recv) is not None:
            return
        if isinstance(recv, ast.Name) and self._strings_of(recv) is not None:
            return
        self.report(node, "POL-ESCAPE", f".{node.attr}() on a template that is not a string literal or a module "
                    "constant: its fields could walk attributes by name")

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
        if splat and ((isinstance(func, ast.Attribute) and func.attr in VALIDATE_METHODS) or config_dict):
            self.report(node, "POL-ESCAPE", "a ** splat into pydantic validation or configuration hides whether "
                        "from_attributes (reading attributes by name) is switched on")
        for kw in node.keywords:
            if kw.arg in ATTRIBUTE_READERS:
                self.report(kw.value, "POL-ESCAPE", f"{kw.arg} reads an object's attributes by name (like getattr)")
            elif kw.arg is not None and kw.arg.startswith("_"):
                self.report(kw.value, "POL-ESCAPE", f"private keyword argument {kw.arg!r}")
            elif kw.arg == "config":
                self._check_config_value(kw.value)
            elif kw.arg in ALIAS_KEYWORDS:
                alias = str_const(kw.value)
                why = self._bad_attribute(alias) if alias is not None else None
                if why is not None:
                    self.report(kw.value, "POL-ESCAPE", f"a field alias that names {why}")

    def _check_config_value(self, value: ast.expr) -> None:
        """pydantic configuration must be spelled out: ConfigDict(...) or a dict display with literal keys."""
        if isinstance(value, ast.Call) and self._lookup(self._resolve(value.func) or "") is self._lookup(
                "pydantic.ConfigDict") and all(kw.arg is not None for kw in value.keywords) and not value.args:
            return
        if isinstance(value, ast.Dict) and all(str_const(k) is not None for k in value.keys):
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
        if isinstance(target, ast.Name) and (target.id in self.aliases or is_dunder(target.id)):
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
                        rule = "POL-INTROSPECTION" if is_dunder(part) else "POL-ESCAPE"
                        self.report(node, rule, f"{label} of {n!r} reaches {why}")

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
        root = root_of(target)
        if root is not None and root in self.aliases:
            self.report(stmt, "POL-TAMPER", f"assignment into {self.aliases[root]!r}, which other code shares")
        elif root is not None and self.b.class_name(root, target):
            self.report(stmt, "POL-TAMPER", f"assignment into class {root} after it is defined")
        elif not isinstance(self.b.enclosing_scope(stmt), ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self.report(stmt, "POL-TAMPER", "assignment into an object at import time")
