"""A trusted version keeps serving until a newer version is approved; a revised proposal is a new
revision (its class change shown and approved by a person), never an edit of what is trusted; versions can be
pinned in `kavi run`, in chains and in replays."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.forge.promote import promote
from kavi.home import KaviHome
from kavi.skills.base import SideEffectClass
from kavi_assets.cli.main import app
from tests.factories import (
    WORD_COUNT_FILE_WRITE,
    WORD_COUNT_SOURCE,
    WORD_COUNT_V2,
    forge_ctx,
    trust_version,
    verified_candidate,
    word_count_spec,
)
from tests.stub_model import closed_port_url

runner = CliRunner()


def _run(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert "Traceback" not in res.output
    return res


def _run_record(args: list[str]) -> dict[str, Any]:
    res = _run([*args, "--output-json"])
    assert res.exit_code == 0, res.output
    record: dict[str, Any] = json.loads(res.output)
    return record


def registry_doc(home: KaviHome) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(home.registry_path.read_text())
    return data


def _propose(tmp_path: Path, spec: dict[str, Any]) -> Any:
    f = tmp_path / f"{spec['name']}.yaml"
    f.write_text(yaml.safe_dump(spec))
    return _run(["propose", str(f)])


def test_forging_a_trusted_skill_with_the_endpoint_down_keeps_it_serving(
        kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    trust_version(kavi_home, word_count_spec(), WORD_COUNT_SOURCE)
    monkeypatch.setenv("KAVI_LLM_BASE_URL", closed_port_url())
    monkeypatch.setenv("KAVI_LLM_MODELS", "offline-model")
    monkeypatch.setenv("KAVI_LLM_TIMEOUT_S", "5")
    forged = _run(["forge", "word_count", "--json"])
    out = json.loads(forged.output[forged.output.index("{"):])
    assert out["attempt"] == 2 and out["status"] != "TRUSTED"  # the candidate failed: the endpoint is down
    assert forged.exit_code == 3  # --json exits as without it: the environment failed, not the verdict
    record = _run_record(["run", "word_count", "--json", '{"text": "a b c"}'])
    assert record["success"] and record["output"]["words"] == 3
    assert record["skill_version"] == 1
    listed = json.loads(_run(["skills", "--json"]).output)
    assert [(s["name"], s["version"], s["versions"]) for s in listed] == [("word_count", 1, [1])]
    status = json.loads(_run(["status", "word_count", "--json"]).output)[0]
    assert status["trusted_version"] == 1 and status["status"] != "TRUSTED"
    assert _run(["verify"]).exit_code == 0


def test_a_revised_class_is_a_new_revision_that_needs_a_person(kavi_home: KaviHome, tmp_path: Path) -> None:
    trust_version(kavi_home, word_count_spec(), WORD_COUNT_SOURCE)
    same = _propose(tmp_path, word_count_spec())
    assert same.exit_code == 0 and "identical" in same.output and "revision 1" in same.output
    revised = _propose(tmp_path, word_count_spec(side_effect_class="FILE_WRITE"))
    assert revised.exit_code == 0, revised.output
    assert "revision 2" in revised.output and "READ_ONLY → FILE_WRITE" in revised.output
    ctx = forge_ctx(kavi_home)
    revisions = ctx.records.revisions("word_count")
    assert [(r.revision, r.side_effect_class.value, r.previous_class) for r in revisions] == [
        (1, "READ_ONLY", None), (2, "FILE_WRITE", "READ_ONLY")]
    assert any(d["field"] == "side_effect_class" for d in revisions[1].diff)
    doc = json.loads(_run(["lineage", "word_count", "--json"]).output)
    assert (doc["revision"], doc["trusted_version"]) == (2, 1)
    assert doc["revisions"][1]["class_change"] == ["READ_ONLY", "FILE_WRITE"]
    assert doc["promotions"][0]["side_effect_class"] == "READ_ONLY" and doc["promotions"][0]["spec_revision"] == 1
    # Version 1 still serves, with the class it was trusted as: no confirmation asked, READ_ONLY recorded.
    record = _run_record(["run", "word_count", "--json", '{"text": "a b"}'])
    assert record["side_effect_class"] == "READ_ONLY" and record["skill_version"] == 1
    # A verified build of revision 2: an auto-approve policy covering FILE_WRITE does not cross a class change.
    build_id = verified_candidate(kavi_home, word_count_spec(side_effect_class="FILE_WRITE"), WORD_COUNT_FILE_WRITE)
    auto = forge_ctx(kavi_home, auto_approve=(SideEffectClass.READ_ONLY, SideEffectClass.FILE_WRITE))
    out = promote(auto, "word_count")
    assert not out.promoted and "READ_ONLY → FILE_WRITE" in out.reason and "kavi approve" in out.reason
    assert auto.records.approval_for("word_count", build_id) is None
    assert [t.version for t in auto.records.trusted_versions("word_count")] == [1]
    # A person approves: version 2 is FILE_WRITE; version 1 stays READ_ONLY and pinnable.
    approved = _run(["approve", "word_count", "--by", "ana"])
    assert approved.exit_code == 0, approved.output
    assert "word_count@2" in approved.output and "READ_ONLY → FILE_WRITE" in approved.output
    latest = _run(["run", "word_count", "--json", '{"text": "a b"}'])
    assert latest.exit_code == 2 and "--yes" in latest.output  # FILE_WRITE now asks for confirmation
    record = _run_record(["run", "word_count", "--yes", "--json", '{"text": "a b"}'])
    assert record["side_effect_class"] == "FILE_WRITE" and record["skill_version"] == 2
    pinned = _run_record(["run", "word_count@1", "--json", '{"text": "a b"}'])
    assert pinned["side_effect_class"] == "READ_ONLY" and pinned["skill_version"] == 1


def test_versions_are_pinned_in_run_chain_and_replay(kavi_home: KaviHome) -> None:
    trust_version(kavi_home, word_count_spec(), WORD_COUNT_SOURCE)
    first = _run_record(["run", "word_count", "--json", '{"text": "x y"}'])
    trust_version(kavi_home, word_count_spec(), WORD_COUNT_V2)
    ctx = forge_ctx(kavi_home)
    v1, v2 = ctx.records.trusted_versions("word_count")
    assert (v1.version, v2.version) == (1, 2) and v1.skill_path != v2.skill_path
    assert v1.skill_path == "skills/word_count/v1.py" and v2.skill_path == "skills/word_count/v2.py"
    assert _run_record(["run", "word_count", "--json", '{"text": "x"}'])["source_hash"] == v2.source_sha256
    pinned = _run_record(["run", "word_count@1", "--json", '{"text": "x"}'])
    assert pinned["source_hash"] == v1.source_sha256 and pinned["skill_version"] == 1
    missing = _run(["run", "word_count@7", "--json", '{"text": "x"}'])
    assert missing.exit_code == 2 and "word_count@7" in missing.output and "1, 2" in missing.output
    chain = _run(["chain", "--json", json.dumps({"steps": [
        {"skill": "word_count@1", "input": {"text": "one two three"}},
        {"skill": "word_count", "input_template": {"text": "{words} words"}}]})])
    assert chain.exit_code == 0, chain.output
    records = json.loads(_run(["tail", "--json", "--n", "2"]).output)
    assert [(r["skill_version"], r["source_hash"]) for r in records] == [(1, v1.source_sha256),
                                                                         (2, v2.source_sha256)]
    # A record made on version 1 replays on version 1, though version 2 is the latest now.
    replayed = _run(["replay", first["execution_id"][:8]])
    assert replayed.exit_code == 0, replayed.output
    last = json.loads(_run(["tail", "--json", "--n", "1"]).output)[0]
    assert last["replay_of"] == first["execution_id"] and last["skill_version"] == 1
    # The registry shows every version and the latest.
    assert _run(["registry", "rebuild"]).exit_code == 0
    entry = registry_doc(kavi_home)["skills"][0]
    assert entry["name"] == "word_count" and entry["latest"] == 2
    assert [v["version"] for v in entry["versions"]] == [1, 2]
    assert entry["source_sha256"] == v2.source_sha256
    listed = json.loads(_run(["skills", "--json"]).output)
    assert [(s["version"], s["versions"]) for s in listed] == [(2, [1, 2])]


def test_a_schema_5_home_migrates_its_trusted_skills_to_version_1(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A ledger written before versioned skills: its trusted file stays where it was promoted, as version 1."""
    import hashlib

    import duckdb

    from kavi.ledger.records import GENESIS_HASH, promotion_hash
    from kavi.ledger.schema import MIGRATIONS

    home = KaviHome(tmp_path / "home").ensure()
    monkeypatch.setenv("KAVI_HOME", str(home.root))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    source = WORD_COUNT_SOURCE.encode()
    sha = hashlib.sha256(source).hexdigest()
    (home.skills_dir / "word_count.py").write_bytes(source)
    spec = json.dumps(word_count_spec(), sort_keys=True)
    con = duckdb.connect(str(home.ledger_path))
    try:
        con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
        for version in (1, 2, 3, 4, 5):
            for stmt in dict(MIGRATIONS)[version]:
                con.execute(stmt)
            con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
        con.execute("INSERT INTO proposals (name, spec_json, spec_sha256, side_effect_class, complexity, status, "
                    "created_at, updated_at) VALUES ('word_count', ?, 'spec', 'READ_ONLY', 0.1, 'TRUSTED', now(), "
                    "now())", [spec])
        from datetime import UTC, datetime
        at = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
        payload = {"seq": 1, "proposal_name": "word_count", "build_id": "b1", "from_status": "VERIFIED",
                   "to_status": "TRUSTED", "approved_by": "ana", "source_sha256": sha, "test_sha256": None,
                   "skill_path": "skills/word_count.py", "prev_hash": GENESIS_HASH, "created_at": at.isoformat()}
        con.execute("INSERT INTO promotions VALUES (1, 'word_count', 'b1', 'VERIFIED', 'TRUSTED', 'ana', ?, NULL, "
                    "'skills/word_count.py', ?, ?, ?)", [sha, GENESIS_HASH, promotion_hash(payload), at])
    finally:
        con.close()
    [trusted] = forge_ctx(home).records.trusted_versions()
    assert (trusted.name, trusted.version, trusted.skill_path) == ("word_count", 1, "skills/word_count.py")
    record = _run_record(["run", "word_count@1", "--json", '{"text": "a"}'])
    assert record["success"] and record["skill_version"] == 1
    res = _run(["verify"])
    assert res.exit_code == 0, res.output
