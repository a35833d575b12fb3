"""The trust audit: the promotion hash chain, the registry projection, every trusted file's bytes, stray files."""

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kavi.home import KaviHome
from kavi.ledger.artifacts import ArtifactStore, sha256_bytes
from kavi.ledger.records import ForgeRecords
from kavi.promotion.provenance import check_attestations
from kavi.promotion.registry import registry_state, write_registry


@dataclass(frozen=True)
class AuditReport:
    chain_problems: list[str] = field(default_factory=list)
    registry_problems: list[str] = field(default_factory=list)
    file_problems: list[str] = field(default_factory=list)
    policy_problems: list[str] = field(default_factory=list)
    attestation_problems: list[str] = field(default_factory=list)
    checked_attestations: int = 0
    checked_skills: int = 0
    promotions: int = 0
    # Not a problem: the registry file is behind the ledger (it is a projection, regenerated after promotions
    # by the refresh_registry sensor) or missing; says whether the audit regenerated it.
    registry_note: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.chain_problems or self.registry_problems or self.file_problems or self.policy_problems
                    or self.attestation_problems)

    def problems(self) -> list[str]:
        return [*self.chain_problems, *self.registry_problems, *self.file_problems, *self.policy_problems,
                *self.attestation_problems]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checked_skills": self.checked_skills,
            "promotions": self.promotions,
            "chain_problems": self.chain_problems,
            "registry_problems": self.registry_problems,
            "file_problems": self.file_problems,
            "policy_problems": self.policy_problems,
            "attestation_problems": self.attestation_problems,
            "checked_attestations": self.checked_attestations,
            "registry_note": self.registry_note,
        }


def audit(records: ForgeRecords, home: KaviHome, *, policy_path: Path | None = None,
          refresh_stale: bool = False) -> AuditReport:
    """Check the hash chain, every trusted version's file (hash and today's policy), the skills folder and the
    registry projection.

    The registry file records the ledger state it was generated at (see `registry_state`). At the current state
    its content must equal the ledger's projection; at an earlier state it must agree with the ledger's history up
    to then. Anything else is an edit: a problem, and the file is left as it is (`kavi registry rebuild` rewrites
    it). A file that is only behind (or missing) is a note; with `refresh_stale` (the scheduled audit) the audit
    regenerates it, as the refresh_registry sensor would.
    """
    chain = records.verify_promotion_chain()
    state = registry_state(records, home.registry_path)
    note = state.note
    if state.refreshable and refresh_stale:
        write_registry(records, home.registry_path)
        note = f"{note}: regenerated" if note else "regenerated"
    from kavi.runtime.composition import parse_doc

    files: list[str] = []
    policy: list[str] = []
    trusted = records.trusted_versions()
    for t in trusted:
        path = home.root / t.skill_path
        if not path.is_file():
            files.append(f"{t.ref}: trusted file {path} is missing")
            continue
        data = path.read_bytes()
        actual = sha256_bytes(data)
        if actual != t.source_sha256:
            files.append(f"{t.ref}: {path} was changed since promotion (sha256 {actual[:16]}…, "
                         f"ledger {t.source_sha256[:16]}…)")
            continue
        if parse_doc(data) is not None:
            continue  # a composition (a decomposed parent) holds no code: its children are trusted files of their own
        policy += [f"{t.ref}: {p}" for p in _rescan(t.name, data, t.side_effect_class, t.required_secrets,
                                                     policy_path)]
    files += stray_files(records, home)
    signed = check_attestations(records, ArtifactStore(home.artifacts_dir), home)
    return AuditReport(chain, state.problems, files, policy, signed.problems, signed.checked, len(trusted),
                       len(records.promotions()), note)


def stray_files(records: ForgeRecords, home: KaviHome) -> list[str]:
    """Files in the skills folder that no promotion put there. The runtime never loads them (it loads only what
    the ledger trusts, by path and hash), but a file there looks trusted to anyone browsing the folder."""
    known = records.promoted_paths()
    out: list[str] = []
    for path in sorted(home.skills_dir.rglob("*")) if home.skills_dir.is_dir() else []:
        if path.is_dir() and not path.is_symlink():
            continue
        rel = path.relative_to(home.root).as_posix()
        if rel not in known:
            out.append(f"{rel} is in the skills folder but no promotion put it there (it never runs): remove it "
                       f"(rm {shlex.quote(str(path))}), or propose and forge it to make it a trusted version")
    return out


def _rescan(name: str, data: bytes, side_effect: Any, secrets: tuple[str, ...], policy_path: Path | None) -> list[str]:
    """Re-run the static gates with today's policy: a tightened policy can revoke yesterday's trust."""
    from kavi.policy.invariants import check_invariants
    from kavi.policy.policy import load_policy
    from kavi.policy.scanner import scan_source
    from kavi.skills.source import source_problem

    problem = source_problem(data)
    if problem is not None:
        return [f"{name}: SRC-ENCODING: the source {problem}"]
    source = data.decode("utf-8")
    found = scan_source(source, side_effect, declared_secrets=secrets, policy=load_policy(policy_path))
    found += check_invariants(source, expected_class=side_effect, expected_name=name)
    return [f"{name}: {v.render()}" for v in found]
