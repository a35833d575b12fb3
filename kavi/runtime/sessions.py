"""Sessions: the execution tree of one session (chains, replays) and the tail of the log, as text or JSON."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kavi.runtime.records import AmbiguousPrefix, ExecutionRecord

if TYPE_CHECKING:
    from rich.tree import Tree

__all__ = [
    "SessionNode",
    "SessionNotFound",
    "SessionTree",
    "format_duration",
    "node_label",
    "records_to_json",
    "render_text",
    "render_tree",
    "session_tree",
    "tail",
    "tree_to_json",
]

_ERROR_SHOWN = 200


class SessionNotFound(LookupError):
    """No session matches the id or prefix, or the log has no records at all."""


@dataclass(frozen=True)
class SessionNode:
    record: ExecutionRecord
    children: tuple["SessionNode", ...] = ()


@dataclass(frozen=True)
class SessionTree:
    session_id: str
    roots: tuple[SessionNode, ...]

    def walk(self) -> list[ExecutionRecord]:
        """Every record of the tree, depth first."""
        out: list[ExecutionRecord] = []
        stack = list(reversed(self.roots))
        while stack:
            node = stack.pop()
            out.append(node.record)
            stack.extend(reversed(node.children))
        return out


def _moment(record: ExecutionRecord) -> datetime:
    return datetime.fromisoformat(record.finished_at)


def _pick_session(records: Sequence[ExecutionRecord], session_id: str | None, latest: bool) -> str:
    if not records:
        raise SessionNotFound("the execution log has no records yet")
    if session_id is None:
        if not latest:
            raise ValueError("give a session id, or latest=True for the most recent session")
        # Latest by finish time; on a tie, the one written last.
        newest = max(enumerate(records), key=lambda pair: (_moment(pair[1]), pair[0]))[1]
        return newest.session_id
    ids = dict.fromkeys(r.session_id for r in records)
    if session_id in ids:
        return session_id
    matches = [s for s in ids if s.startswith(session_id)]
    if not matches:
        raise SessionNotFound(f"no session matches {session_id!r}")
    if len(matches) > 1:
        raise AmbiguousPrefix(f"session prefix {session_id!r} is ambiguous: {', '.join(sorted(matches)[:10])}")
    return matches[0]


def session_tree(
    records: Iterable[ExecutionRecord], *, session_id: str | None = None, latest: bool = True
) -> SessionTree:
    """The records of one session arranged by `parent_execution_id`; the latest session by default.

    A record whose parent is outside the session (or missing) is a root; records caught in a parent cycle
    (only possible in a hand-edited log) are shown as roots rather than dropped."""
    ordered = list(records)
    chosen = _pick_session(ordered, session_id, latest)
    members = [(i, r) for i, r in enumerate(ordered) if r.session_id == chosen]
    by_id = {r.execution_id: r for _, r in members}
    position = {r.execution_id: i for i, r in members}
    children: dict[str, list[ExecutionRecord]] = {}
    roots: list[ExecutionRecord] = []
    for _, record in members:
        parent = record.parent_execution_id
        if parent is None or parent not in by_id or parent == record.execution_id:
            roots.append(record)
        else:
            children.setdefault(parent, []).append(record)

    def order(items: list[ExecutionRecord]) -> list[ExecutionRecord]:
        return sorted(items, key=lambda r: (r.started_at, position[r.execution_id]))

    visited: set[str] = set()

    def build(record: ExecutionRecord) -> SessionNode:
        visited.add(record.execution_id)
        kids = [c for c in order(children.get(record.execution_id, [])) if c.execution_id not in visited]
        return SessionNode(record, tuple(build(c) for c in kids))

    nodes = [build(r) for r in order(roots)]
    for _, record in members:
        if record.execution_id not in visited:
            nodes.append(build(record))
    return SessionTree(session_id=chosen, roots=tuple(nodes))


def format_duration(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def _short_error(error: str | None) -> str:
    if not error:
        return ""
    flat = " ".join(error.split())
    return flat if len(flat) <= _ERROR_SHOWN else flat[: _ERROR_SHOWN - 3] + "..."


def node_label(record: ExecutionRecord) -> str:
    """`ok 1a2b3c4d word_count 1.2 ms`, plus the replayed id and the error when there is one."""
    parts = [f"{record.status:<4}", record.short_id, record.skill_name, format_duration(record.duration_ms)]
    if record.replay_of:
        parts.append(f"(replay of {record.replay_of[:8]})")
    label = " ".join(parts)
    error = _short_error(record.error)
    return f"{label} - {error}" if error else label


def render_text(tree: SessionTree) -> str:
    """The tree as plain text with box-drawing branches, for logs and non-terminals."""
    lines = [f"session {tree.session_id}"]

    def add(node: SessionNode, prefix: str, last: bool) -> None:
        lines.append(f"{prefix}{'└── ' if last else '├── '}{node_label(node.record)}")
        deeper = prefix + ("    " if last else "│   ")
        for i, child in enumerate(node.children):
            add(child, deeper, i == len(node.children) - 1)

    for i, root in enumerate(tree.roots):
        add(root, "", i == len(tree.roots) - 1)
    return "\n".join(lines)


def render_tree(tree: SessionTree) -> "Tree":
    """The tree as a rich Tree: green ok, red FAIL."""
    from rich.markup import escape
    from rich.tree import Tree

    def label(record: ExecutionRecord) -> str:
        status = "[green]ok  [/green]" if record.success else "[bold red]FAIL[/bold red]"
        text = f"{status} [cyan]{record.short_id}[/cyan] {escape(record.skill_name)} "
        text += f"[dim]{format_duration(record.duration_ms)}[/dim]"
        if record.replay_of:
            text += f" [magenta](replay of {record.replay_of[:8]})[/magenta]"
        error = _short_error(record.error)
        if error:
            text += f" [red]- {escape(error)}[/red]"
        return text

    root = Tree(f"session [bold]{escape(tree.session_id)}[/bold]")

    def add(parent: Tree, node: SessionNode) -> None:
        branch = parent.add(label(node.record))
        for child in node.children:
            add(branch, child)

    for node in tree.roots:
        add(root, node)
    return root


def _node_json(node: SessionNode) -> dict[str, Any]:
    r = node.record
    return {
        "execution_id": r.execution_id,
        "short_id": r.short_id,
        "skill": r.skill_name,
        "status": r.status,
        "success": r.success,
        "duration_ms": r.duration_ms,
        "error": r.error,
        "replay_of": r.replay_of,
        "parent_execution_id": r.parent_execution_id,
        "started_at": r.started_at,
        "children": [_node_json(c) for c in node.children],
    }


def tree_to_json(tree: SessionTree) -> dict[str, Any]:
    return {"session_id": tree.session_id, "roots": [_node_json(n) for n in tree.roots]}


def tail(
    records: Iterable[ExecutionRecord], n: int = 20, *, failures_only: bool = False, skill: str | None = None
) -> list[ExecutionRecord]:
    """The last `n` records in log order, optionally only failures and only one skill's."""
    if n <= 0:
        return []
    chosen = [r for r in records if (not failures_only or not r.success) and (skill is None or r.skill_name == skill)]
    return chosen[-n:]


def records_to_json(records: Iterable[ExecutionRecord]) -> list[dict[str, Any]]:
    return [r.summary() for r in records]
