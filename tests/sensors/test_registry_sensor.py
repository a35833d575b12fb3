"""The registry projection leaves the promotion path: promotions do not rewrite registry.json; the
`refresh_registry` sensor asks for one `skill_registry` run when the ledger's trusted skills moved, and the file
it writes carries the ledger mark it was generated at."""

import json
from typing import Any

import dagster as dg
import pytest

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.lifecycle import ProposalStatus
from kavi.promotion.registry import registry_drift, registry_file_mark, write_registry
from kavi.proposals.model import parse_proposal
from resources.home import SkillsHomeResource
from sensors.registry import refresh_registry


@pytest.fixture()
def records(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> ForgeRecords:
    r = ForgeRecords(Ledger(kavi_home.ledger_path))
    for name in ("alpha_skill", "beta_skill"):
        r.register_proposal(parse_proposal({**proposal_data, "name": name}), source_path=None, complexity=0.1)
    return r


def _promote(records: ForgeRecords, name: str) -> None:
    version = records.next_version(name)
    records.record_promotion(name=name, build_id=f"{name}-b{version}", from_status=ProposalStatus.VERIFIED,
                             approved_by="ana", source_sha256="ab" * 32, test_sha256=None,
                             skill_path=f"skills/{name}/v{version}.py")


def _evaluate(home: KaviHome, cursor: str | None = None) -> tuple[Any, str | None]:
    with dg.DagsterInstance.ephemeral() as instance:
        ctx = dg.build_sensor_context(instance=instance, cursor=cursor,
                                      resources={"home": SkillsHomeResource(root=str(home.root))})
        return refresh_registry(ctx), ctx.cursor


def test_sensor_requests_one_run_per_ledger_state(kavi_home: KaviHome, records: ForgeRecords) -> None:
    _promote(records, "alpha_skill")
    _promote(records, "beta_skill")
    result, cursor = _evaluate(kavi_home)
    assert isinstance(result, dg.RunRequest) and result.tags["kavi/trusted"] == "2"
    # The same state again, before its run wrote the file: no second request.
    again, _ = _evaluate(kavi_home, cursor)
    assert isinstance(again, dg.SkipReason) and "requested already" in str(again.skip_message)
    # The run regenerates the file at that state: nothing to do.
    write_registry(records, kavi_home.registry_path)
    assert registry_file_mark(kavi_home.registry_path) == records.registry_mark() == (2, 2)
    done, _ = _evaluate(kavi_home, cursor)
    assert isinstance(done, dg.SkipReason) and "current" in str(done.skip_message)
    # A later attempt of a trusted skill failing is not a demotion: trust belongs to the version.
    records.set_status("beta_skill", ProposalStatus.FAILED, build_id=None, reason="a later attempt failed")
    assert records.registry_mark() == (2, 2)
    # A revocation of a version moves the mark (the count drops) and a promotion does (the sequence grows).
    records.revoke_version("beta_skill", 1, reason="re-verification failed", actor="ana")
    demoted, cursor = _evaluate(kavi_home, cursor)
    assert isinstance(demoted, dg.RunRequest) and demoted.tags["kavi/trusted"] == "1"
    write_registry(records, kavi_home.registry_path)
    skills = json.loads(kavi_home.registry_path.read_text())["skills"]
    assert [s["name"] for s in skills] == ["alpha_skill"] and registry_drift(records, kavi_home.registry_path) == []
    _promote(records, "beta_skill")
    promoted, _ = _evaluate(kavi_home, cursor)
    assert isinstance(promoted, dg.RunRequest) and promoted.tags["kavi/trusted"] == "2"


def test_a_deleted_registry_is_regenerated_and_a_hand_edited_one_left_for_a_person(
        kavi_home: KaviHome, records: ForgeRecords) -> None:
    """An edit is evidence. The sensor used to regenerate a hand-edited registry (erasing the edit); now it
    leaves it for `kavi verify` to report and `kavi registry rebuild` to rewrite. A deleted one is regenerated."""
    _promote(records, "alpha_skill")
    write_registry(records, kavi_home.registry_path)
    kavi_home.registry_path.write_text('{"skills": []}')  # edited by hand, without the mark
    result, _ = _evaluate(kavi_home)
    assert isinstance(result, dg.SkipReason) and "kavi registry rebuild" in str(result.skip_message)
    kavi_home.registry_path.unlink()
    result, _ = _evaluate(kavi_home)
    assert isinstance(result, dg.RunRequest)


def test_the_registry_file_is_the_ledgers_projection(kavi_home: KaviHome, records: ForgeRecords) -> None:
    _promote(records, "beta_skill")
    _promote(records, "alpha_skill")
    data = write_registry(records, kavi_home.registry_path)
    on_disk = json.loads(kavi_home.registry_path.read_text())
    assert on_disk == data and [s["name"] for s in on_disk["skills"]] == ["alpha_skill", "beta_skill"]
    assert on_disk["ledger_mark"] == {"last_promotion_seq": 2, "trusted": 2}
    assert not list(kavi_home.root.glob(".registry-*"))  # no temporary file left behind


def test_audit_tells_a_registry_behind_the_ledger_from_an_edited_one(kavi_home: KaviHome,
                                                                    records: ForgeRecords) -> None:
    from kavi.promotion.audit import audit

    _promote(records, "alpha_skill")
    write_registry(records, kavi_home.registry_path)
    _promote(records, "beta_skill")  # the file is now one promotion behind: stale, not tampered
    report = audit(records, kavi_home)
    assert report.registry_problems == [] and report.registry_note and "promotion #1" in report.registry_note
    assert registry_file_mark(kavi_home.registry_path) == (1, 1)  # without refresh_stale nothing is written
    report = audit(records, kavi_home, refresh_stale=True)
    assert report.registry_problems == [] and report.registry_note and report.registry_note.endswith("regenerated")
    assert registry_file_mark(kavi_home.registry_path) == (2, 2)
    # An edit of a file generated at the current state is drift: a problem, in both modes.
    data = json.loads(kavi_home.registry_path.read_text())
    data["skills"][0]["source_sha256"] = "cd" * 32
    kavi_home.registry_path.write_text(json.dumps(data))
    for refresh in (False, True):
        report = audit(records, kavi_home, refresh_stale=refresh)
        assert report.registry_note is None
        assert report.registry_problems == ["registry file has a different hash for alpha_skill than the ledger; "
                                            "`kavi registry rebuild` rewrites it"]
