"""Every verification records the fingerprint of what judged it; when the fingerprint moves (here:
a user policy that refuses the `re` module word_count uses), re-verification re-runs the real gates, records the new
verdict beside the old one, marks the version SUSPECT, `kavi run` refuses it with the reason, and a person's
recorded decision reinstates it."""

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kavi.forge.fingerprint import current_fingerprint, judge_settings
from kavi.forge.reverify import stale_versions
from kavi.home import KaviHome
from kavi.ledger.verification_records import VerificationRecords
from kavi.settings import KaviSettings
from kavi_assets.cli.main import app
from tests.factories import REFUSE_RE, forge_ctx, trust_by_gates

runner = CliRunner()


def _kavi(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert "Traceback" not in res.output, res.output
    return res


def _run_word_count() -> Any:
    return _kavi(["run", "word_count", "--json", '{"text": "a b c"}', "--output-json"])


@pytest.fixture()
def home(kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> KaviHome:
    monkeypatch.setenv("KAVI_EVIDENCE_LEVELS", "none")  # the gates only: the generated inputs are tested elsewhere
    monkeypatch.delenv("KAVI_SUSPECT_POLICY", raising=False)
    return kavi_home


@pytest.mark.slow
def test_a_tightened_policy_makes_a_trusted_version_suspect_refused_then_reinstated(home: KaviHome,
                                                                                  monkeypatch: pytest.MonkeyPatch
                                                                                  ) -> None:
    outcome = trust_by_gates(home)
    ctx = forge_ctx(home, evidence_levels=())
    report = json.loads(ctx.store.get(outcome.report_sha256))
    assert report["fingerprint"]["digest"] == current_fingerprint(judge_settings(), home).digest
    parts = {"python", "ruff", "mypy", "pytest", "coverage", "hypothesis", "policy", "gates"}
    assert parts <= set(report["fingerprint"])
    assert stale_versions(ctx) == []  # verified under today's judges
    assert json.loads(_run_word_count().output)["success"] is True

    # The judges change: the home's policy now refuses `re`.
    (home.root / "policy.yaml").write_text(REFUSE_RE)
    stale = stale_versions(forge_ctx(home, evidence_levels=()))
    assert [s.ref for s in stale] == ["word_count@1"] and stale[0].changes == ["policy changed"]
    noted = _run_word_count()  # still TRUSTED: it runs, and the start of the command says the verdict is stale
    assert noted.exit_code == 0 and "verdicts are stale" in noted.output

    res = _kavi(["reverify", "--all"])
    assert res.exit_code == 1, res.output
    assert "SUSPECT" in res.output and "policy" in res.output

    records = VerificationRecords(ctx.records.ledger)
    rows = records.verifications("word_count")
    assert [(r.kind, r.passed) for r in rows] == [("forge", True), ("reverify", False)]  # beside, not over
    assert rows[0].fingerprint != rows[1].fingerprint
    assert [f["gate"] for f in rows[1].failing] == ["policy"]
    [suspect] = records.suspects()
    assert suspect.ref == "word_count@1" and "gate policy" in suspect.reason and "re" in suspect.reason

    refused = _run_word_count()
    assert refused.exit_code == 2
    assert "SUSPECT" in refused.output and "gate policy" in refused.output and "kavi reinstate" in refused.output
    pinned = _kavi(["run", "word_count@1", "--json", '{"text": "a"}'])
    assert pinned.exit_code == 2 and "it is SUSPECT" in pinned.output
    assert "word_count" not in [s["name"] for s in json.loads(_kavi(["skills", "--json"]).output)]

    doctor = json.loads(_kavi(["doctor", "--json"]).output)
    by_name = {c["name"]: c for c in doctor}
    assert by_name["suspect versions"]["status"] == "warn"
    assert "word_count@1" in by_name["suspect versions"]["detail"]

    # The user's setting: SUSPECT versions may keep running.
    monkeypatch.setenv("KAVI_SUSPECT_POLICY", "allow")
    assert _run_word_count().exit_code == 0
    monkeypatch.setenv("KAVI_SUSPECT_POLICY", "refuse")

    bad = _kavi(["reinstate", "word_count@1", "--by", "", "--reason", "checked"])
    assert bad.exit_code == 2
    ok = _kavi(["reinstate", "word_count@1", "--by", "ada", "--reason", "re is fine for this skill"])
    assert ok.exit_code == 0, ok.output
    assert records.suspects() == []
    events = records.version_events("word_count", 1)
    assert [(e.status, e.actor) for e in events][-2:] == [("SUSPECT", "kavi reverify"), ("TRUSTED", "ada")]
    assert json.loads(_run_word_count().output)["success"] is True
    again = _kavi(["reinstate", "word_count@1", "--by", "ada", "--reason", "twice"])
    assert again.exit_code == 2 and "not SUSPECT" in again.output


@pytest.mark.slow
def test_reverify_under_unchanged_judges_passes_and_keeps_trust(home: KaviHome) -> None:
    trust_by_gates(home)
    res = _kavi(["reverify", "word_count", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    [result] = doc["results"]
    assert result["passed"] and not result["marked_suspect"] and result["previous"]["passed"] is True
    assert result["previous"]["fingerprint"] == doc["fingerprint"]["digest"]
    ctx = forge_ctx(home, evidence_levels=())
    assert [t.ref for t in ctx.records.trusted_versions()] == ["word_count@1"]
    stored = json.loads(ctx.store.get(result["report_sha256"]))
    assert stored["reverify"] is True and {g["gate"] for g in stored["gates"]} >= {"ruff", "mypy", "pytest", "policy"}


def test_reverify_refuses_bad_arguments(home: KaviHome) -> None:
    assert _kavi(["reverify"]).exit_code == 2
    assert _kavi(["reverify", "../etc"]).exit_code == 2
    assert _kavi(["reverify", "word_count"]).exit_code == 2  # nothing trusted by that name
    assert _kavi(["reinstate", "word_count", "--by", "a", "--reason", "b"]).exit_code == 2  # no version


def test_suspect_policy_setting_is_checked(home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_SUSPECT_POLICY", "sometimes")
    from kavi.settings import config_problems

    assert any("KAVI_SUSPECT_POLICY" in p for p in config_problems())


def test_fingerprint_names_what_changed(home: KaviHome, tmp_path: Path) -> None:
    fp = current_fingerprint(judge_settings(), home)
    older = dict(fp.parts, ruff="0.0.1")
    assert fp.changes_from(older) == [f"ruff 0.0.1 → {fp.parts['ruff']}"]
    assert current_fingerprint(judge_settings(), home) is fp  # computed once per process
    tightened = judge_settings(KaviSettings.from_environ({"KAVI_EVIDENCE_LEVELS": "strict"}))
    assert current_fingerprint(tightened, home).changes_from(fp.parts) == ["gates changed"]
    # Fewer mutants can leave a question unasked: the verdicts they gave are stale too.
    fewer = judge_settings(KaviSettings.from_environ({"KAVI_ADEQUACY_MAX_MUTANTS": "10"}))
    assert current_fingerprint(fewer, home).changes_from(fp.parts) == ["gates changed"]


def test_the_judging_settings_match_the_forges(home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    """The start-up check reads the settings without importing the forge; they must be those the forge judges by."""
    from kavi.forge import fingerprint
    from kavi.forge.ceremony import DEFAULT_EVIDENCE_LEVELS
    from kavi.policy import policy
    from resources.gates import GateRunnerResource

    assert fingerprint.DEFAULT_POLICY == policy.DEFAULT_POLICY and fingerprint.CAPABILITY_MAP == policy.CAPABILITY_MAP
    for levels in ("", "none", "standard,strict"):
        monkeypatch.setenv("KAVI_EVIDENCE_LEVELS", levels)
        forge = current_fingerprint(GateRunnerResource().settings(), home)
        assert current_fingerprint(judge_settings(), home).digest == forge.digest
    monkeypatch.delenv("KAVI_EVIDENCE_LEVELS")
    monkeypatch.setenv("KAVI_ADEQUACY_MAX_MUTANTS", "12")
    forge = current_fingerprint(GateRunnerResource().settings(), home)
    assert forge.parts["gates"]["adequacy_max_mutants"] == 12
    assert current_fingerprint(judge_settings(), home).digest == forge.digest
    monkeypatch.delenv("KAVI_ADEQUACY_MAX_MUTANTS")
    assert sorted(judge_settings().evidence_levels) == sorted(level.value for level in DEFAULT_EVIDENCE_LEVELS)


def test_an_unusable_policy_file_is_refused_and_marks_nothing_suspect(home: KaviHome) -> None:
    from tests.factories import trust_version

    trust_version(home, coach=False)
    (home.root / "policy.yaml").write_text("imports: {all: [socket]}\n")  # widens the default: unusable
    res = _kavi(["reverify", "--all"])
    assert res.exit_code == 2 and "policy" in res.output
    ctx = forge_ctx(home, evidence_levels=())
    assert VerificationRecords(ctx.records.ledger).suspects() == []
    assert [t.ref for t in ctx.records.trusted_versions()] == ["word_count@1"]
