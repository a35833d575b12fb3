"""Strings: names bound to constant strings, format templates and class patterns that read attributes by name."""

import ast
import re
import string

from kavi.policy.families.base import ATTRIBUTE_READERS, is_dunder, str_const
from kavi.policy.families.imports import ImportRules


class StringRules(ImportRules):
    # -- names bound to constant strings -------------------------------------------------------
    def _strings(self, expr: ast.AST) -> tuple[str, ...] | None:
        """The strings `expr` can be, when that is decidable from the source; None when it is computed."""
        value = str_const(expr)
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
            value = str_const(parent.value)
            return (value,) if value is not None else None
        return None

    def _constant_collection(self, expr: ast.AST) -> tuple[str, ...] | None:
        """A literal tuple/list/set of strings, or a module-level tuple of strings bound once. (A class-level tuple
        read through `self` is not trusted: a subclass, or any object passed as `self`, can shadow it.)"""
        if isinstance(expr, ast.Tuple | ast.List | ast.Set):
            values = [str_const(e) for e in expr.elts]
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
            if node.value in ATTRIBUTE_READERS:
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
                rule = "POL-INTROSPECTION" if is_dunder(attr) else "POL-ESCAPE"
                self.report(node, rule, f"a class pattern reads {why}")
        self.generic_visit(node)
