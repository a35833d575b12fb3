"""The ledger's read paths that must not grow with its size, its step sessions and its schema migration 2."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from kavi.ledger import store
from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.records import ForgeRecords, LedgerConflictError
from kavi.ledger.schema import MIGRATIONS, SCHEMA_VERSION
from kavi.ledger.store import Ledger
from kavi.lifecycle import ProposalStatus, Verdict
from kavi.proposals.model import parse_proposal
from kavi.verdicts import GateResult


def _propose(records: ForgeRecords, name: str, data: dict[str, Any], **extra: Any) -> None:
    records.register_proposal(parse_proposal({**data, "name": name, **extra}), source_path=None, complexity=0.1)


def _ref(sha: str, kind: str, size: int = 10) -> ArtifactRef:
    return ArtifactRef(sha, kind, size, Path(f"artifacts/{sha}"))


def test_a_session_is_one_connection_and_one_transaction(tmp_path: Path, proposal_data: dict[str, Any],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    _propose(records, "word_count", proposal_data)
    opened = []
    real_open = store.Ledger._open
    monkeypatch.setattr(store.Ledger, "_open", lambda self, read_only=False: opened.append(1) or real_open(self))
    with records.session():
        records.set_status("word_count", ProposalStatus.BUILT, build_id=None, reason="a")
        assert records.require_proposal("word_count").status is ProposalStatus.BUILT  # sees its own write
        records.set_status("word_count", ProposalStatus.VERIFIED, build_id=None, reason="b")
    assert len(opened) == 1
    with pytest.raises(RuntimeError), records.session():
        records.set_status("word_count", ProposalStatus.FAILED, build_id=None, reason="c")
        raise RuntimeError("the step failed")
    # Nothing of the failed step was kept.
    assert records.require_proposal("word_count").status is ProposalStatus.VERIFIED
    assert [e["to"] for e in records.status_events("word_count")] == ["PROPOSED", "BUILT", "VERIFIED"]


def test_constructing_a_ledger_costs_no_connection_and_migrates_in_the_first(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    opened = []
    real_open = store.Ledger._open
    monkeypatch.setattr(store.Ledger, "_open", lambda self, read_only=False: opened.append(1) or real_open(self))
    led = Ledger(tmp_path / "l.duckdb")
    assert opened == []
    assert led.schema_version() == SCHEMA_VERSION and len(opened) == 1


@pytest.mark.ledger_file
def test_migration_2_gives_old_lineage_edges_their_kind_and_size(tmp_path: Path) -> None:
    path = tmp_path / "l.duckdb"
    con = duckdb.connect(str(path))
    try:  # a ledger written by schema 1
        con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
        for stmt in dict(MIGRATIONS)[1]:
            con.execute(stmt)
        con.execute("INSERT INTO schema_version VALUES (1, now())")
        con.execute("INSERT INTO artifacts VALUES ('c1', 'build_packet', 123, 'p', now())")
        con.execute("INSERT INTO lineage VALUES ('p1', 'c1', 'packet_of', 'b1', 'word_count', now())")
    finally:
        con.close()
    records = ForgeRecords(Ledger(path))
    assert records.ledger.schema_version() == SCHEMA_VERSION >= 2
    assert records.lineage_edges("word_count") == [
        {"parent": "p1", "child": "c1", "relation": "packet_of", "build_id": "b1", "kind": "build_packet", "size": 123}]


def test_new_lineage_edges_carry_their_childs_artifact_kind(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    _propose(records, "word_count", proposal_data)
    records.start_build("word_count", run_id=None, model="m", endpoint="e", packet=_ref("pk", "build_packet", 5),
                        build_id="b1", attempt=1, parent_build_id=None, lineage_parent="spec")
    # The same bytes recorded twice under two kinds: the first recording names the artifact, as it always did.
    records.finish_build("b1", status="BUILT", failure_kind=None, artifacts=[
        ("skill", _ref("same", "skill_source", 7), "pk", "file_of"),
        ("tests", _ref("same", "skill_tests", 7), "pk", "file_of"),
        ("build_log", _ref("log", "build_log", 9), "pk", "log_of")])
    edges = {(e["child"], e["relation"]): (e["kind"], e["size"]) for e in records.lineage_edges("word_count")}
    assert edges == {("pk", "packet_of"): ("build_packet", 5), ("same", "file_of"): ("skill_source", 7),
                     ("log", "log_of"): ("build_log", 9)}
    assert records.build_artifacts("b1") == {"packet": "pk", "skill": "same", "tests": "same", "build_log": "log"}
    assert records.artifacts_of_builds(["b1", "none"]) == {"b1": records.build_artifacts("b1"), "none": {}}


def test_status_of_one_name_is_the_same_row_as_in_the_listing(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    for name in ("alpha_skill", "beta_skill", "gamma_skill"):
        _propose(records, name, proposal_data)
    records.start_build("beta_skill", run_id=None, model="m", endpoint="e", packet=_ref("pk", "build_packet"),
                        build_id="b1", attempt=1, parent_build_id=None, lineage_parent="spec")
    everyone = records.list_status()
    assert [r["name"] for r in everyone] == ["alpha_skill", "beta_skill", "gamma_skill"]
    for row in everyone:
        assert records.list_status(row["name"]) == [row]
    assert records.list_status("nobody") == []
    beta = records.list_status("beta_skill")[0]
    assert beta["attempts"] == 1 and beta["latest_build"] == "b1" and beta["build_status"] == "PACKET"
    stored = records.require_proposal("beta_skill").updated_at
    assert beta["updated_at"] == stored.astimezone(UTC).isoformat()


def test_promotions_and_trusted_read_back_what_was_hashed(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    _propose(records, "one_skill", proposal_data)
    _propose(records, "two_skill", proposal_data, side_effect_class="SECRET_READ", required_secrets=["API_TOKEN"])
    for i, name in enumerate(("one_skill", "two_skill", "one_skill")):
        records.record_promotion(name=name, build_id=f"{name}-b{i}", from_status=ProposalStatus.VERIFIED,
                                 approved_by="ana", source_sha256="ab" * 32, test_sha256=None,
                                 skill_path=f"skills/{name}.py")
    # A build is promoted once: a second promotion of it is refused, naming the first.
    with pytest.raises(LedgerConflictError, match="already trusted as one_skill@1"):
        records.record_promotion(name="one_skill", build_id="one_skill-b0", from_status=ProposalStatus.VERIFIED,
                                 approved_by="bo", source_sha256="ab" * 32, test_sha256=None,
                                 skill_path="skills/one_skill.py")
    assert records.verify_promotion_chain() == []
    assert [p.seq for p in records.promotions("one_skill")] == [1, 3]
    assert [p.version for p in records.promotions("one_skill")] == [1, 2]
    assert [p.seq for p in records.promotions()] == [1, 2, 3]
    assert all(p.created_at.tzinfo is not None and p.created_at <= datetime.now(UTC) for p in records.promotions())
    trusted = {t.name: t for t in records.trusted()}
    assert trusted["two_skill"].required_secrets == ("API_TOKEN",)
    assert trusted["two_skill"].side_effect_class.value == "SECRET_READ"
    assert trusted["one_skill"].required_secrets == () and trusted["one_skill"].promoted_at == \
        records.promotions("one_skill")[-1].created_at


def test_growing_tables_keep_no_index_and_their_keys_stay_unique(tmp_path: Path,
                                                                  proposal_data: dict[str, Any]) -> None:
    """Schema 3: no table that grows with every attempt carries an index (a checkpoint rewrites each one whole);
    the records keep the keys unique instead."""
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    _propose(records, "word_count", proposal_data)
    with records.ledger.connect() as con:
        indexed = {r[0] for r in con.execute("SELECT table_name FROM duckdb_indexes()").fetchall()}
        keyed = {r[0] for r in con.execute("SELECT table_name FROM duckdb_constraints() "
                                           "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE')").fetchall()}
    growing = {"artifacts", "lineage", "build_artifacts", "gate_results", "research_notes", "model_outcomes",
               "builds", "status_events"}
    assert not (indexed | keyed) & growing
    packet = _ref("pk", "build_packet")
    for _ in range(2):
        with records.session():
            records.record_artifact(packet)
    records.start_build("word_count", run_id=None, model="m", endpoint="e", packet=packet, build_id="b1", attempt=1,
                        parent_build_id=None, lineage_parent="spec")
    with pytest.raises(LedgerConflictError):
        records.start_build("word_count", run_id=None, model="m", endpoint="e", packet=packet, build_id="b2",
                            attempt=1, parent_build_id=None, lineage_parent="spec")
    for verdict in (Verdict.FAILED, Verdict.PASSED):  # re-verification replaces the verdicts
        records.record_gate_results("b1", [GateResult("ruff", verdict, "r", 0.1),
                                           GateResult("mypy", verdict, "r", 0.1)])
        records.finish_build("b1", status="VERIFIED", failure_kind=None,
                             artifacts=[("report", _ref(f"rep-{verdict.value}", "verification_report"), "pk",
                                         "report_of")])
    for _ in range(2):
        records.record_model_outcome(build_id="b1", name="word_count", model="m", task_type="t", success=True,
                                     failure_kind=None, latency_ms=None, tokens=None, cost_usd=None)
    assert [g["verdict"] for g in records.gate_results("b1")] == ["passed", "passed"]
    assert records.build_artifacts("b1") == {"packet": "pk", "report": "rep-passed"}
    assert len(records.model_outcomes()) == 1
    with records.ledger.connect() as con:
        assert con.execute("SELECT count(*) FROM artifacts WHERE sha256 = 'pk'").fetchone() == (1,)
        assert con.execute("SELECT count(*) FROM lineage WHERE child_sha256 = 'pk'").fetchone() == (1,)


@pytest.mark.ledger_file
def test_migration_3_keeps_every_row(tmp_path: Path) -> None:
    path = tmp_path / "l.duckdb"
    con = duckdb.connect(str(path))
    try:  # a ledger written by schema 2, with a row in each rebuilt table
        con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
        for version in (1, 2):
            for stmt in dict(MIGRATIONS)[version]:
                con.execute(stmt)
            con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
        con.execute("INSERT INTO builds (build_id, proposal_name, attempt_number, status, started_at) "
                    "VALUES ('b1', 'word_count', 1, 'VERIFIED', now())")
        con.execute("INSERT INTO artifacts VALUES ('c1', 'build_packet', 123, 'p', now())")
        con.execute("INSERT INTO lineage VALUES ('p1', 'c1', 'packet_of', 'b1', 'word_count', now(), "
                    "'build_packet', 1)")
        con.execute("INSERT INTO gate_results VALUES ('b1', 'ruff', 'passed', 'passed', 'ok', 1, '[]', '{}', now())")
        con.execute("INSERT INTO build_artifacts VALUES ('b1', 'packet', 'c1')")
    finally:
        con.close()
    records = ForgeRecords(Ledger(path))
    assert records.ledger.schema_version() == SCHEMA_VERSION
    build = records.get_build("b1")
    assert build is not None and build.status == "VERIFIED"
    assert records.build_artifacts("b1") == {"packet": "c1"}
    assert [g["gate"] for g in records.gate_results("b1")] == ["ruff"]
    assert records.lineage_edges("word_count")[0]["kind"] == "build_packet"


def test_the_proposal_row_mirrors_its_latest_attempt(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    """Schema 4: the listing reads the proposals table alone; it must say what the builds table says."""
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    _propose(records, "word_count", proposal_data)
    for attempt, (status, kind) in enumerate((("VERIFY_FAILED", "VERIFY_TEST"), ("VERIFIED", None)), start=1):
        records.start_build("word_count", run_id=None, model=f"model-{attempt}", endpoint="e",
                            packet=_ref(f"pk{attempt}", "build_packet"), build_id=f"b{attempt}", attempt=attempt,
                            parent_build_id=None, lineage_parent="spec")
        row = records.list_status("word_count")[0]
        assert (row["attempts"], row["latest_build"], row["model"], row["build_status"], row["failure_kind"]) == \
            (attempt, f"b{attempt}", f"model-{attempt}", "PACKET", None)
        records.finish_build(f"b{attempt}", status=status, failure_kind=kind)
        row = records.list_status("word_count")[0]
        assert (row["build_status"], row["failure_kind"]) == (status, kind)
    # Finishing an older build again (a re-verification of attempt 1) leaves the latest attempt's mirror alone.
    records.finish_build("b1", status="VERIFY_FAILED", failure_kind="VERIFY_LINT")
    row = records.list_status("word_count")[0]
    latest = records.latest_build("word_count")
    assert latest is not None
    assert (row["attempts"], row["latest_build"], row["model"], row["build_status"], row["failure_kind"]) == \
        (latest.attempt_number, latest.build_id, latest.model, latest.status, latest.failure_kind)


@pytest.mark.ledger_file
def test_migration_4_gives_every_proposal_its_latest_attempt(tmp_path: Path) -> None:
    path = tmp_path / "l.duckdb"
    con = duckdb.connect(str(path))
    try:  # a ledger written by schema 3: two proposals, one with two attempts, one never built
        con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
        for version in (1, 2, 3):
            for stmt in dict(MIGRATIONS)[version]:
                con.execute(stmt)
            con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
        for name in ("built_skill", "idle_skill"):
            con.execute("INSERT INTO proposals VALUES (?, '{}', 'x', 'READ_ONLY', 0.1, 'FAILED', NULL, now(), now())",
                        [name])
        con.execute("INSERT INTO builds (build_id, proposal_name, attempt_number, model, status, failure_kind, "
                    "started_at) VALUES ('b2', 'built_skill', 2, 'm2', 'VERIFY_FAILED', 'VERIFY_TYPE', now()), "
                    "('b1', 'built_skill', 1, 'm1', 'VERIFY_FAILED', 'VERIFY_TEST', now())")
    finally:
        con.close()
    records = ForgeRecords(Ledger(path))
    rows = {r["name"]: r for r in records.list_status()}
    assert (rows["built_skill"]["attempts"], rows["built_skill"]["latest_build"], rows["built_skill"]["model"],
            rows["built_skill"]["failure_kind"], rows["built_skill"]["build_status"]) == \
        (2, "b2", "m2", "VERIFY_TYPE", "VERIFY_FAILED")
    assert (rows["idle_skill"]["attempts"], rows["idle_skill"]["latest_build"]) == (0, None)


@pytest.mark.ledger_file
def test_migration_5_leaves_proposals_and_promotions_keyless_and_whole(tmp_path: Path,
                                                                      proposal_data: dict[str, Any]) -> None:
    """A keyed table's insert rewrote its row group and index at every checkpoint (growing with the ledger);
    after migration 5 the records keep names unique and the chain keeps its sequence."""
    path = tmp_path / "l.duckdb"
    con = duckdb.connect(str(path))
    try:  # a ledger written by schema 4 with a proposal and a promotion
        con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
        for version in (1, 2, 3, 4):
            for stmt in dict(MIGRATIONS)[version]:
                con.execute(stmt)
            con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
    finally:
        con.close()
    con = duckdb.connect(str(path))
    try:
        con.execute("INSERT INTO proposals (name, spec_json, spec_sha256, side_effect_class, complexity, status, "
                    "source_path, created_at, updated_at, attempts) VALUES ('word_count', '{}', 'x', 'READ_ONLY', "
                    "0.1, 'TRUSTED', NULL, now(), now(), 2)")
        con.execute("INSERT INTO promotions VALUES (1, 'word_count', 'b1', 'VERIFIED', 'TRUSTED', 'ana', 'ab', NULL, "
                    "'skills/word_count.py', 'p', 'r', now())")
    finally:
        con.close()
    records = ForgeRecords(Ledger(path))
    assert records.ledger.schema_version() == SCHEMA_VERSION
    with records.ledger.connect() as c:
        keyed = {r[0] for r in c.execute("SELECT table_name FROM duckdb_constraints() "
                                         "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE')").fetchall()}
        indexed = {r[0] for r in c.execute("SELECT table_name FROM duckdb_indexes()").fetchall()}
        assert c.execute("SELECT name, status, attempts FROM proposals").fetchall() == [("word_count", "TRUSTED", 2)]
        assert c.execute("SELECT seq, build_id FROM promotions").fetchall() == [(1, "b1")]
    assert not (keyed | indexed) & {"proposals", "promotions"}
    # Names stay unique without the key: registering again revises the one row.
    _propose(records, "word_count", proposal_data)
    _propose(records, "word_count", proposal_data, description="A revised description of the skill.")
    with records.ledger.connect() as c:
        assert c.execute("SELECT count(*) FROM proposals WHERE name = 'word_count'").fetchone() == (1,)


def test_a_freshly_stored_artifact_is_recorded_once_with_a_bounded_lookup(tmp_path: Path,
                                                                         proposal_data: dict[str, Any]) -> None:
    """A ref from a `put` that created the file carries its store time: the ledger looks for its rows among those
    created since (not through the whole table) and still records it once, however often it is passed."""
    from kavi.ledger.artifacts import ArtifactStore

    store = ArtifactStore(tmp_path / "artifacts")
    records = ForgeRecords(Ledger(tmp_path / "l.duckdb"))
    _propose(records, "word_count", proposal_data)
    packet = store.put(b"packet bytes", "build_packet")
    assert packet.stored_at is not None and store.put(b"packet bytes", "build_packet").stored_at is None
    records.start_build("word_count", run_id=None, model="m", endpoint="e", packet=packet, build_id="b1", attempt=1,
                        parent_build_id=None, lineage_parent="spec")
    report = store.put(b"report bytes", "verification_report")
    for _ in range(2):  # the same fresh refs again: no second row, no second edge
        records.record_artifact(packet)
        records.finish_build("b1", status="VERIFIED", failure_kind=None,
                             artifacts=[("report", report, packet.sha256, "report_of"),
                                        ("report", report, packet.sha256, "report_of")])
    with records.ledger.connect() as con:
        assert con.execute("SELECT sha256, count(*) FROM artifacts GROUP BY 1 ORDER BY 1").fetchall() == \
            sorted([(packet.sha256, 1), (report.sha256, 1)])
        assert con.execute("SELECT relation, count(*) FROM lineage GROUP BY 1 ORDER BY 1").fetchall() == \
            [("packet_of", 1), ("report_of", 1)]
