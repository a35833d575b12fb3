"""Where every name of a skill module is bound, so the scanner can tell an import from a re-bound name."""

import ast
from collections import defaultdict

_IMPORTS = (ast.Import, ast.ImportFrom)


def _sites(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """The names `node` binds other than by an import, each with the node that binds it."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        return [(node.id, node)]
    if isinstance(node, ast.arg):
        return [(node.arg, node)]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [(node.name, node)]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [(node.name, node)]
    if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        return [(node.name, node)]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [(node.rest, node)]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return [(n, node) for n in node.names]
    return []


class Bindings:
    """Parents of every node, import aliases, and every other binding site of every name in one module."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[int, ast.AST] = {}
        self.sites: dict[str, list[ast.AST]] = defaultdict(list)
        # name -> the dotted names it is imported as (one name may be imported more than once)
        self.imported: dict[str, set[str]] = defaultdict(set)
        self.module_names: set[str] = set()  # names bound by `import x` / `import x as y`
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
            for name, site in _sites(parent):
                self.sites[name].append(site)
            if isinstance(parent, ast.Import):
                for alias in parent.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    self.imported[bound].add(alias.name if alias.asname else bound)
                    self.module_names.add(bound)
            elif isinstance(parent, ast.ImportFrom) and not parent.level:
                for alias in parent.names:
                    if alias.name != "*":
                        self.imported[alias.asname or alias.name].add(f"{parent.module or ''}.{alias.name}")

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def is_module_level(self, stmt: ast.AST) -> bool:
        return self.parent(stmt) is self.tree

    def enclosing_scope(self, node: ast.AST) -> ast.AST:
        """The innermost function or lambda around `node`, or the module."""
        cur = self.parent(node)
        while cur is not None and not isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            cur = self.parent(cur)
        return cur if cur is not None else self.tree

    def within(self, node: ast.AST, scope: ast.AST) -> bool:
        cur: ast.AST | None = node
        while cur is not None:
            if cur is scope:
                return True
            cur = self.parent(cur)
        return False

    def visible_sites(self, name: str, at: ast.AST) -> list[ast.AST]:
        """The non-import bindings of `name` that can affect what it means at `at`: those in the scopes
        enclosing `at` (function, enclosing functions, module; class bodies count as module level). A binding in
        an unrelated function does not count, unless some function declares the name global."""
        sites = self.sites.get(name, [])
        if any(isinstance(s, ast.Global) for s in sites):
            return list(sites)
        chain: list[ast.AST] = []
        scope = self.enclosing_scope(at) if at is not self.tree else self.tree
        while True:
            chain.append(scope)
            if scope is self.tree:
                break
            scope = self.enclosing_scope(scope)
        return [s for s in sites if any(self._scope_of_site(s) is c for c in chain)]

    def _scope_of_site(self, site: ast.AST) -> ast.AST:
        # A def or class statement binds its name in the scope around it; an argument in its own function.
        return self.enclosing_scope(site)

    def trusted_import(self, name: str, at: ast.AST) -> str | None:
        """The one dotted name `name` is imported as, when nothing else visible at `at` binds it."""
        targets = self.imported.get(name)
        if not targets or len(targets) != 1 or self.visible_sites(name, at):
            return None
        return next(iter(targets))

    def unbound(self, name: str, at: ast.AST) -> bool:
        """Neither imported nor bound where `at` can see it: a builtin, if it exists."""
        return not self.imported.get(name) and not self.visible_sites(name, at)

    def class_name(self, name: str, at: ast.AST) -> bool:
        """Bound (where `at` can see it) only by class statements."""
        sites = self.visible_sites(name, at)
        return bool(sites) and not self.imported.get(name) and all(isinstance(s, ast.ClassDef) for s in sites)

    def module_assignments(self, name: str) -> list[ast.expr] | None:
        """The values of `name` when it is bound only by plain module-level assignments, else None."""
        sites = self.visible_sites(name, self.tree)
        if not sites or self.imported.get(name):
            return None
        values: list[ast.expr] = []
        for site in sites:
            stmt = self.parent(site)
            plain = isinstance(stmt, ast.Assign) and stmt.targets == [site]
            annotated = isinstance(stmt, ast.AnnAssign) and stmt.target is site
            if not (plain or annotated) or stmt is None or not self.is_module_level(stmt):
                return None
            value = getattr(stmt, "value", None)
            if not isinstance(value, ast.expr):
                return None
            values.append(value)
        return values
