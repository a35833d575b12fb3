"""The registry file: a projection of the ledger's trusted skills, regenerated, never edited by hand."""

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from kavi_assets.ledger.records import ForgeRecords

REGISTRY_VERSION = 1


def registry_projection(records: ForgeRecords) -> dict[str, Any]:
    with records.session():  # the mark and the entries from one transaction: they describe the same ledger state
        seq, count = records.registry_mark()
        trusted = records.trusted()
    skills = [
        {
            "name": t.name,
            "side_effect_class": t.side_effect_class.value,
            "required_secrets": list(t.required_secrets),
            "build_id": t.build_id,
            "source_sha256": t.source_sha256,
            "test_sha256": t.test_sha256,
            "path": t.skill_path,
            "approved_by": t.approved_by,
            "promoted_at": t.promoted_at.isoformat(),
        }
        for t in trusted
    ]
    return {
        "version": REGISTRY_VERSION,
        "generated_from": "ledger",
        "ledger_mark": {"last_promotion_seq": seq, "trusted": count},
        "note": "Generated from the Kavi ledger; edits are overwritten. The ledger is the source of truth.",
        "skills": skills,
    }


def registry_text(data: dict[str, Any]) -> str:
    """The registry as JSON, one skill per line (json's indented output runs in pure Python: at 10,000 trusted
    skills it took most of a second; this is its C encoder, one entry at a time)."""
    head = {k: v for k, v in data.items() if k != "skills"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}," for k, v in sorted(head.items())]
    entries = [json.dumps(s, sort_keys=True) for s in data["skills"]]
    lines += ['  "skills": [' + ("" if entries else "]")]
    if entries:
        lines += [",\n".join(f"    {e}" for e in entries), "  ]"]
    return "\n".join([*lines, "}"]) + "\n"


def write_registry(records: ForgeRecords, path: Path) -> dict[str, Any]:
    """Regenerate the registry file from the ledger, atomically (a reader sees the old file or the new one)."""
    data = registry_projection(records)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".registry-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(registry_text(data))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return data


def registry_file_mark(path: Path) -> tuple[int, int] | None:
    """The ledger mark the registry file was generated at, or None (missing, unreadable, or without a mark).

    The sensor asks at every tick and the skills list is as long as the registry: a file laid out as
    `registry_text` writes it is read up to its header's mark line; any other layout is parsed whole.
    """
    prefix = '  "ledger_mark": '
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(prefix):
                    return _mark(json.loads(line[len(prefix):].rstrip().rstrip(",")))
                if line.startswith('  "skills"'):
                    break
        return _mark(json.loads(path.read_text(encoding="utf-8")).get("ledger_mark"))
    except (OSError, ValueError, AttributeError):
        return None


def _mark(value: Any) -> tuple[int, int] | None:
    try:
        return int(value["last_promotion_seq"]), int(value["trusted"])
    except (KeyError, TypeError, ValueError):
        return None


def refresh_registry_file(records: ForgeRecords, path: Path) -> bool:
    """Regenerate the registry file unless it is already at the ledger's mark; True when it was written."""
    if registry_file_mark(path) == records.registry_mark():
        return False
    write_registry(records, path)
    return True


def registry_drift(records: ForgeRecords, path: Path) -> list[str]:
    """Differences between the registry file and what the ledger says it should be."""
    expected = registry_projection(records)["skills"]
    if not path.exists():
        return [f"{path} is missing; run `kavi verify` or materialize forge/skill_registry to regenerate it"]
    try:
        actual = json.loads(path.read_text(encoding="utf-8")).get("skills", [])
    except (json.JSONDecodeError, AttributeError):
        return [f"{path} is not a valid registry file"]
    problems: list[str] = []
    exp = {s["name"]: s for s in expected}
    act = {s.get("name"): s for s in actual if isinstance(s, dict)}
    for name in sorted(set(exp) | set(act), key=str):
        if name not in act:
            problems.append(f"registry file lacks trusted skill {name}")
        elif name not in exp:
            problems.append(f"registry file lists {name}, which the ledger does not trust")
        elif act[name].get("source_sha256") != exp[name]["source_sha256"]:
            problems.append(f"registry file has a different hash for {name} than the ledger")
    return problems
