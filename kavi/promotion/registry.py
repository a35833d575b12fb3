"""The registry file: a projection of the ledger's trusted versions, regenerated, never edited by hand."""

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kavi.ledger.records import ForgeRecords, TrustedRecord

# 2: one entry per skill, with its latest version's fields, `latest` and every trusted version in `versions`.
REGISTRY_VERSION = 2
REBUILD = "kavi registry rebuild"


def _version_entry(t: TrustedRecord) -> dict[str, Any]:
    return {
        "version": t.version,
        "side_effect_class": t.side_effect_class.value,
        "required_secrets": list(t.required_secrets),
        "build_id": t.build_id,
        "source_sha256": t.source_sha256,
        "test_sha256": t.test_sha256,
        "path": t.skill_path,
        "approved_by": t.approved_by,
        "promoted_at": t.promoted_at.isoformat(),
        "promotion_seq": t.promotion_seq,
        "spec_revision": t.spec_revision,
    }


def registry_projection(records: ForgeRecords) -> dict[str, Any]:
    with records.session():  # the mark and the entries from one transaction: they describe the same ledger state
        seq, count = records.registry_mark()
        trusted = records.trusted_versions()
    by_name: dict[str, list[dict[str, Any]]] = {}
    for t in trusted:
        by_name.setdefault(t.name, []).append(_version_entry(t))
    skills = []
    for name, versions in sorted(by_name.items()):
        latest = versions[-1]  # trusted_versions() orders each skill's versions
        top = {k: v for k, v in latest.items() if k not in ("version", "promotion_seq", "spec_revision")}
        skills.append({"name": name, **top, "latest": latest["version"], "versions": versions})
    return {
        "version": REGISTRY_VERSION,
        "generated_from": "ledger",
        "ledger_mark": {"last_promotion_seq": seq, "trusted": count},
        "note": "Generated from the Kavi ledger; do not edit: `kavi verify` reports a file that disagrees with the "
                f"ledger, and `{REBUILD}` rewrites it. The ledger is the source of truth.",
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
    """The ledger mark the registry file was generated at, or None (missing, unreadable, or without a
    mark); a file laid out as `registry_text` writes it is read only up to its header's mark line."""
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


@dataclass(frozen=True)
class RegistryState:
    """How the registry file stands against the ledger.

    - current: generated at the ledger's present mark, and equal to its projection;
    - behind: generated at an earlier ledger state (or in an earlier format) and consistent with the ledger's
      history up to that state — a projection that has not caught up yet (the refresh_registry sensor, or the
      commands that promote, regenerate it);
    - missing: there is no file (nothing to disagree with; regenerated like a file that is behind);
    - edited: anything else — content that differs at the current mark, a mark ahead of the ledger or none at all,
      an entry the ledger never promoted or a trusted version left out. Only `kavi registry rebuild` rewrites it.
    """

    kind: str
    problems: list[str] = field(default_factory=list)
    note: str | None = None

    @property
    def refreshable(self) -> bool:
        return self.kind in ("behind", "missing")


def registry_state(records: ForgeRecords, path: Path) -> RegistryState:
    with records.session():  # one ledger state for every comparison below
        return _registry_state(records, path)


def _registry_state(records: ForgeRecords, path: Path) -> RegistryState:
    mark = records.registry_mark()
    name = path.name
    if not path.exists():
        if mark == (0, 0):
            return RegistryState("missing", note=f"{name} is missing; the ledger trusts nothing yet")
        return RegistryState("missing", note=f"{name} is missing; the ledger is at promotion #{mark[0]} "
                                             f"({mark[1]} trusted versions): `{REBUILD}` or the refresh_registry "
                                             "sensor writes it")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return RegistryState("edited", [f"{name} is not a readable registry file ({err}); `{REBUILD}` rewrites it"])
    if not isinstance(data, dict) or not isinstance(data.get("skills"), list):
        return RegistryState("edited", [f"{name} is not a registry file (no skills list); `{REBUILD}` rewrites it"])
    file_mark = _mark(data.get("ledger_mark"))
    if file_mark is None:
        return RegistryState("edited", [f"{name} carries no ledger mark, so it was not generated from the ledger; "
                                        f"`{REBUILD}` rewrites it"])
    if file_mark[0] > mark[0]:
        return RegistryState("edited", [f"{name} claims promotion #{file_mark[0]}, but the ledger ends at "
                                        f"promotion #{mark[0]}; `{REBUILD}` rewrites it"])
    if file_mark == mark and data.get("version") == REGISTRY_VERSION:
        problems = registry_drift(records, path, data)
        return RegistryState("edited", problems) if problems else RegistryState("current")
    problems = _behind_problems(records, data, file_mark[0])
    if problems:
        return RegistryState("edited", problems)
    fmt = "" if data.get("version") == REGISTRY_VERSION else f" in registry format {data.get('version')}"
    return RegistryState("behind", note=(
        f"{name} is behind the ledger: generated{fmt} at promotion #{file_mark[0]} ({file_mark[1]} trusted), the "
        f"ledger is at promotion #{mark[0]} ({mark[1]} trusted); the refresh_registry sensor or `{REBUILD}` "
        "brings it up to date"))


def _claims(entry: dict[str, Any]) -> list[tuple[int | None, Any, Any]]:
    """(version or None, source hash, path) of every version an entry lists (format 1 lists only the latest)."""
    out: list[tuple[int | None, Any, Any]] = [(None, entry.get("source_sha256"), entry.get("path"))]
    for v in entry.get("versions") or []:
        if isinstance(v, dict):
            out.append((v.get("version"), v.get("source_sha256"), v.get("path")))
    return out


def _behind_problems(records: ForgeRecords, data: dict[str, Any], file_seq: int) -> list[str]:
    """A file generated at promotion #file_seq may list only what had been promoted by then, exactly as promoted,
    and must list every version promoted by then that the ledger still trusts."""
    promoted = {(p.proposal_name, p.version): p for p in records.promotions() if p.seq <= file_seq}
    problems: list[str] = []
    listed: set[tuple[str, int | None]] = set()
    for entry in data["skills"]:
        if not isinstance(entry, dict):
            problems.append("registry file has an entry that is not an object")
            continue
        name = str(entry.get("name"))
        for version, sha, path in _claims(entry):
            matches = [p for (n, v), p in promoted.items() if n == name and (version is None or v == version)]
            if not any(p.source_sha256 == sha and p.skill_path == path for p in matches):
                what = f"{name}@{version}" if version is not None else name
                problems.append(f"registry file lists {what} (sha256 {str(sha)[:16]}), which the ledger had not "
                                f"promoted by promotion #{file_seq}; `{REBUILD}` rewrites it")
            listed.add((name, version))
    versioned = data.get("version") == REGISTRY_VERSION
    for t in records.trusted_versions():
        if t.promotion_seq <= file_seq and (t.name, t.version if versioned else None) not in listed:
            problems.append(f"registry file lacks trusted version {t.ref} (promoted at #{t.promotion_seq}); "
                            f"`{REBUILD}` rewrites it")
    return problems


def refresh_registry_file(records: ForgeRecords, path: Path) -> bool:
    """Regenerate the registry file when it is only behind the ledger (or missing); True when it was written.
    A file that disagrees with the ledger is left for `kavi verify` to report and `kavi registry rebuild` to fix."""
    if registry_file_mark(path) == records.registry_mark() or not registry_state(records, path).refreshable:
        return False
    write_registry(records, path)
    return True


def registry_drift(records: ForgeRecords, path: Path, data: dict[str, Any] | None = None) -> list[str]:
    """Differences between the registry file and what the ledger says it should be."""
    expected = registry_projection(records)["skills"]
    if data is None:
        if not path.exists():
            return [f"{path} is missing; `{REBUILD}` or materializing forge/skill_registry regenerates it"]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return [f"{path} is not a valid registry file"]
    actual = data.get("skills", []) if isinstance(data, dict) else []
    problems: list[str] = []
    exp = {s["name"]: s for s in expected}
    act = {s.get("name"): s for s in actual if isinstance(s, dict)}
    fix = f"; `{REBUILD}` rewrites it"
    for name in sorted(set(exp) | set(act), key=str):
        if name not in act:
            problems.append(f"registry file lacks trusted skill {name}{fix}")
        elif name not in exp:
            problems.append(f"registry file lists {name}, which the ledger does not trust{fix}")
        elif act[name] != exp[name]:
            hashes = [v.get("source_sha256") for v in act[name].get("versions") or [] if isinstance(v, dict)]
            if (act[name].get("source_sha256") != exp[name]["source_sha256"]
                    or hashes != [v["source_sha256"] for v in exp[name]["versions"]]):
                problems.append(f"registry file has a different hash for {name} than the ledger{fix}")
            else:
                fields = sorted(k for k in set(act[name]) | set(exp[name]) if act[name].get(k) != exp[name].get(k))
                problems.append(f"registry file's entry for {name} differs from the ledger ({', '.join(fields)}){fix}")
    if len(actual) != len(act):
        problems.append(f"registry file has entries that are not skills{fix}")
    return problems
