"""A version's capability surface, and what a new version adds to it (no silent widening).

The surface is what a version may reach, read from what it declares and from its code: its side-effect class, the
secrets it declares, the modules it imports, the hosts its code or its examples name, and whether it writes to the
vault. A version whose surface is wider than the trusted one (forged, vetted or re-forged) needs a person's
approval that names the difference: no auto-approve policy covers it, and an approval of another build never
transfers (approvals are per build).
"""

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kavi.proposals.model import Proposal

_URL = re.compile(r"https?://[^\s\"'<>]+")
_VAULT_WRITES = {"write", "write_text", "write_bytes", "append", "create", "delete", "remove", "move", "rename",
                 "mkdir"}
# The contract's own imports, in every skill: not part of what a version adds.
_CONTRACT = {"kavi_assets", "pydantic", "__future__", "typing", "collections"}


@dataclass(frozen=True)
class Surface:
    side_effect_class: str
    secrets: tuple[str, ...]
    imports: tuple[str, ...]
    hosts: tuple[str, ...]
    writes_vault: bool

    def to_json(self) -> dict[str, Any]:
        return {"side_effect_class": self.side_effect_class, "secrets": list(self.secrets),
                "imports": list(self.imports), "hosts": list(self.hosts), "writes_vault": self.writes_vault}


def _hosts(texts: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        for url in _URL.findall(text):
            host = urlsplit(url).hostname
            if host:
                found.add(host)
    return found


def surface_of(source: bytes, proposal: Proposal, side_effect_class: str | None = None) -> Surface:
    """The surface of a version: `source` (its skill module) and the proposal it was built from."""
    text = source.decode("utf-8", "replace")
    imports: set[str] = set()
    strings: list[str] = []
    writes = False
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imports.add(node.module.split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VAULT_WRITES:
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and owner.attr == "vault":
                writes = True
    fixtures = [u for ex in (*proposal.examples, *proposal.holdout_examples) for u in ex.http_responses]
    return Surface(side_effect_class or proposal.side_effect_class.value, tuple(sorted(proposal.required_secrets)),
                   tuple(sorted(imports - _CONTRACT)), tuple(sorted(_hosts([*strings, *fixtures]))), writes)


def observed(surface: Surface, effects: Iterable[dict[str, Any]]) -> Surface:
    """The surface with what the runtime saw the version do (its execution records' effects) added: hosts it
    fetched, secrets it read, whether it wrote to the vault."""
    hosts, secrets, writes = set(surface.hosts), set(surface.secrets), surface.writes_vault
    for e in effects:
        kind = str(e.get("effect") or "")
        if kind == "http.get":
            hosts |= _hosts([str(e.get("url") or "")])
        elif kind == "secret.read" and e.get("name"):
            secrets.add(str(e["name"]))
        elif kind == "vault.write":
            writes = True
    return Surface(surface.side_effect_class, tuple(sorted(secrets)), surface.imports, tuple(sorted(hosts)), writes)


def widening(old: Surface, new: Surface) -> list[str]:
    """What `new` reaches that `old` did not, one line each (empty: not wider)."""
    out: list[str] = []
    if new.side_effect_class != old.side_effect_class:
        out.append(f"side-effect class {old.side_effect_class} → {new.side_effect_class}")
    for label, before, after in (("secrets", old.secrets, new.secrets), ("imports", old.imports, new.imports),
                                 ("hosts", old.hosts, new.hosts)):
        added = sorted(set(after) - set(before))
        if added:
            out.append(f"{label}: + {', '.join(added)}")
    if new.writes_vault and not old.writes_vault:
        out.append("writes to the vault (it did not)")
    return out


def narrowing(old: Surface, new: Surface) -> list[str]:
    """What `old` reached that `new` no longer does, one line each (for `kavi diff`)."""
    out: list[str] = []
    for label, before, after in (("secrets", old.secrets, new.secrets), ("imports", old.imports, new.imports),
                                 ("hosts", old.hosts, new.hosts)):
        removed = sorted(set(before) - set(after))
        if removed:
            out.append(f"{label}: - {', '.join(removed)}")
    if old.writes_vault and not new.writes_vault:
        out.append("no longer writes to the vault")
    return out
