"""What `kavi status` shows of each proposal: its ledger row, the ceremony level it is verified at, and its place in
a decomposition (the parent it was split from, the children it was split into)."""

from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from kavi.decompose.records import DecompositionRecords
from kavi.forge.ceremony import ceremony_of_score, effective_ceremony
from kavi.forge.levels import setting_of
from kavi.ledger.coach_records import latest_levels
from kavi.ledger.records import ForgeRecords

NAME_WIDTH = 32  # names up to this long are shown whole at 100 columns


def status_rows(records: ForgeRecords, name: str | None = None) -> list[dict[str, Any]]:
    """One row per proposal (or only NAME's), each with `ceremony`, `parent` and `children` added: three reads."""
    rows = records.list_status(name)
    settings = latest_levels(records)
    children: dict[str, list[str]] = {}
    parents: dict[str, str] = {}
    for decomposition in DecompositionRecords(records).all_active():
        children[decomposition.parent_name] = list(decomposition.children)
        for child in decomposition.children:
            parents.setdefault(child, decomposition.parent_name)
    for row in rows:
        found = settings.get(row["name"])
        setting = setting_of(found) if found is not None else None
        row["ceremony"] = effective_ceremony(ceremony_of_score(float(row["complexity"] or 0.0)), setting).level.value
        row["parent"] = parents.get(row["name"])
        row["children"] = children.get(row["name"], [])
    return rows


def _skill_cell(row: dict[str, Any]) -> Text:
    text = Text(row["name"])
    if row["parent"]:
        text.append(f"\n↳ part of {row['parent']}", style="dim")
    if row["children"]:
        text.append("\n→ " + ", ".join(row["children"]), style="dim")
    return text


def _attempt_cell(row: dict[str, Any]) -> Text:
    text = Text(f"a{row['attempts']} {row['model'] or ''}".rstrip() if row["attempts"] else "")
    if row["failure_kind"] and row["status"] != "TRUSTED":
        text.append(f"\n{row['failure_kind']}", style="red")
    return text


def status_table(rows: list[dict[str, Any]], title: str) -> Table:
    """The table: a name up to NAME_WIDTH characters, its class, status, trusted version, ceremony level, and its
    latest attempt (number and model, the failure kind below it); a decomposition's parent or children below the
    name. Fits 100 columns."""
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0))
    table.add_column("skill", max_width=NAME_WIDTH, overflow="fold")
    table.add_column("class", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("version", justify="right", no_wrap=True)
    table.add_column("ceremony", no_wrap=True)
    table.add_column("latest attempt", no_wrap=True)
    for row in rows:
        version = row.get("trusted_version")
        table.add_row(_skill_cell(row), row["side_effect_class"], row["status"],
                      "" if version is None else str(version), row["ceremony"], _attempt_cell(row))
    return table
