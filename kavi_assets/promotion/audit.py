"""The trust audit: the promotion hash chain, the registry projection, and every trusted file's bytes."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kavi_assets.home import KaviHome
from kavi_assets.ledger.artifacts import sha256_bytes
from kavi_assets.ledger.records import ForgeRecords
from kavi_assets.promotion.registry import registry_drift


@dataclass(frozen=True)
class AuditReport:
    chain_problems: list[str] = field(default_factory=list)
    registry_problems: list[str] = field(default_factory=list)
    file_problems: list[str] = field(default_factory=list)
    policy_problems: list[str] = field(default_factory=list)
    checked_skills: int = 0
    promotions: int = 0

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
        }


def audit(records: ForgeRecords, home: KaviHome, *, policy_path: Path | None = None) -> AuditReport:
    chain = records.verify_promotion_chain()
    registry = registry_drift(records, home.registry_path)
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
    return AuditReport(chain, registry, files, policy, len(trusted), len(records.promotions()))


def _rescan(name: str, data: bytes, side_effect: Any, secrets: tuple[str, ...], policy_path: Path | None) -> list[str]:
    """Re-run the static gates with today's policy: a tightened policy can revoke yesterday's trust."""
    from kavi_assets.policy.invariants import check_invariants
    from kavi_assets.policy.policy import load_policy
    from kavi_assets.policy.scanner import scan_source

    source = data.decode("utf-8")
    found = scan_source(source, side_effect, declared_secrets=secrets, policy=load_policy(policy_path))
    found += check_invariants(source, expected_class=side_effect, expected_name=name)
    return [f"{name}: {v.render()}" for v in found]
