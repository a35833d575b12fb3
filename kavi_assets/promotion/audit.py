"""The trust audit: the promotion hash chain, the registry projection, and every trusted file's bytes."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kavi_assets.home import KaviHome
from kavi_assets.ledger.artifacts import sha256_bytes
from kavi_assets.ledger.records import ForgeRecords
from kavi_assets.promotion.registry import registry_drift, registry_file_mark, write_registry


@dataclass(frozen=True)
class AuditReport:
    chain_problems: list[str] = field(default_factory=list)
    registry_problems: list[str] = field(default_factory=list)
    file_problems: list[str] = field(default_factory=list)
    policy_problems: list[str] = field(default_factory=list)
    checked_skills: int = 0
    promotions: int = 0
    # Not a problem: the registry file was behind the ledger (it is a projection, regenerated after promotions
    # by the refresh_registry sensor); says whether the audit regenerated it.
    registry_note: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.chain_problems or self.registry_problems or self.file_problems or self.policy_problems)

    def problems(self) -> list[str]:
        return [*self.chain_problems, *self.registry_problems, *self.file_problems, *self.policy_problems]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checked_skills": self.checked_skills,
            "promotions": self.promotions,
            "chain_problems": self.chain_problems,
            "registry_problems": self.registry_problems,
            "file_problems": self.file_problems,
            "policy_problems": self.policy_problems,
            "registry_note": self.registry_note,
        }


def audit(records: ForgeRecords, home: KaviHome, *, policy_path: Path | None = None,
          refresh_stale: bool = False) -> AuditReport:
    """Check the hash chain, every trusted file (hash and today's policy) and the registry projection.

    The registry file records the ledger state it was generated at. Generated at the current state, its content
    must match the ledger exactly (a difference is an edit: a problem). Generated earlier (or missing, or without
    a mark), it is only behind: with `refresh_stale` the audit regenerates it, otherwise it says so in a note.
    """
    chain = records.verify_promotion_chain()
    mark, file_mark = records.registry_mark(), registry_file_mark(home.registry_path)
    note = None
    if file_mark != mark:
        behind = (f"registry.json was generated at promotion #{file_mark[0]} ({file_mark[1]} trusted)"
                  if file_mark else "registry.json is missing or carries no ledger mark")
        now = f"the ledger is at promotion #{mark[0]} ({mark[1]} trusted)"
        if refresh_stale:
            write_registry(records, home.registry_path)
            note = f"{behind}; {now}: regenerated"
        else:
            note = f"{behind}; {now}: the refresh_registry sensor or `kavi verify` regenerates it"
    # Compared only when it claims the current state: a file just regenerated is the projection itself, and one
    # that is behind differs by design.
    registry = registry_drift(records, home.registry_path) if file_mark == mark else []
    files: list[str] = []
    policy: list[str] = []
    trusted = records.trusted()
    for t in trusted:
        path = home.root / t.skill_path
        if not path.is_file():
            files.append(f"{t.name}: trusted file {path} is missing")
            continue
        data = path.read_bytes()
        actual = sha256_bytes(data)
        if actual != t.source_sha256:
            files.append(f"{t.name}: {path} was changed since promotion (sha256 {actual[:16]}…, "
                         f"ledger {t.source_sha256[:16]}…)")
            continue
        policy += _rescan(t.name, data, t.side_effect_class, t.required_secrets, policy_path)
    return AuditReport(chain, registry, files, policy, len(trusted), len(records.promotions()), note)


def _rescan(name: str, data: bytes, side_effect: Any, secrets: tuple[str, ...], policy_path: Path | None) -> list[str]:
    """Re-run the static gates with today's policy: a tightened policy can revoke yesterday's trust."""
    from kavi_assets.policy.invariants import check_invariants
    from kavi_assets.policy.policy import load_policy
    from kavi_assets.policy.scanner import scan_source

    source = data.decode("utf-8")
    found = scan_source(source, side_effect, declared_secrets=secrets, policy=load_policy(policy_path))
    found += check_invariants(source, expected_class=side_effect, expected_name=name)
    return [f"{name}: {v.render()}" for v in found]
