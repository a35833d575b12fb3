"""A person's own proposal with no endpoint configured: the recorded model answers only the shipped examples. That
is a configuration problem, said in one line at `kavi propose` and `kavi forge`, filed as LLM_NOT_CONFIGURED (not a
model failure for a person to review), never charged to the model and never retried in a loop."""

import json
import re
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.lifecycle import FailureKind
from kavi.llm.client import LLMClient, LLMError, LLMErrorKind, LLMSettings
from kavi.llm.recorded import RecordedModelServer
from kavi.research.classifier import AttemptFailure, classify
from kavi.research.escalation import EscalationInput, triggers_for
from kavi.skills.base import SideEffectClass
from kavi_assets.cli.main import app
from tests.factories import REPO

EXAMPLES = REPO / "kavi" / "examples" / "proposals"
runner = CliRunner()


def test_the_recorded_model_without_a_recording_is_not_configured_and_not_retried() -> None:
    with RecordedModelServer() as server:
        client = LLMClient(LLMSettings(server.base_url, "k", tuple(server.models), recorded=True))
        client._sleep = lambda s: (_ for _ in ()).throw(AssertionError("a missing recording is not retried"))
        with pytest.raises(LLMError) as caught:
            client.complete([{"role": "user", "content": "hi"}], model=server.models[0],
                            headers={"x-kavi-skill": "count_vowels", "x-kavi-attempt": "1"})
    err = caught.value
    assert err.kind is LLMErrorKind.NOT_CONFIGURED and not err.terminal
    assert "count_vowels" in str(err) and "KAVI_LLM_BASE_URL" in str(err) and "503" not in str(err)
    assert client.retries_done == 0


def test_not_configured_is_its_own_kind_and_no_trigger_for_a_person() -> None:
    cls = classify(AttemptFailure("llm", "no model endpoint", llm_error_kind="NOT_CONFIGURED"))
    assert cls.kind is FailureKind.LLM_NOT_CONFIGURED
    assert triggers_for(EscalationInput(kind=cls.kind, fingerprint=cls.fingerprint, previous_fingerprints=[],
                                        attempt=1, budget=5, declared_class=SideEffectClass.READ_ONLY)) == []
    # A real endpoint that is down is an outage, not a configuration problem.
    assert classify(AttemptFailure("llm", "down", llm_error_kind="UNAVAILABLE")).kind is \
        FailureKind.ENDPOINT_UNAVAILABLE


def _own_proposal(tmp_path: Path, proposal_data: dict[str, Any]) -> Path:
    f = tmp_path / "count_vowels.yaml"
    f.write_text(yaml.safe_dump({**proposal_data, "name": "count_vowels",
                                 "description": "Count the vowels in a text, case-insensitively."}))
    return f


def test_propose_and_forge_say_it_in_one_line(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAVI_LLM_BASE_URL", raising=False)
    shipped = runner.invoke(app, ["propose", str(EXAMPLES / "word_count.yaml")])
    assert shipped.exit_code == 0 and shipped.stderr == "", shipped.output  # the recorded model answers these
    own = runner.invoke(app, ["propose", str(_own_proposal(tmp_path, proposal_data))])
    assert own.exit_code == 0, own.output
    (note,) = own.stderr.splitlines()
    assert "recorded model answers only the shipped examples" in note and "KAVI_LLM_BASE_URL" in note, note

    res = runner.invoke(app, ["forge", "count_vowels"])
    assert res.exit_code == 2, res.output  # a configuration problem, like a bad KAVI_* setting
    # No 503 from the recorded model is shown (a run id such as 7c33f503 may hold the digits: word-bounded).
    assert "Traceback" not in res.output and not re.search(r"\b503\b", res.output), res.output
    assert res.stdout.splitlines()[0].startswith("count_vowels: attempt 1 (recorded-coder-")
    assert "→ FAILED (LLM_NOT_CONFIGURED)" in res.stdout.splitlines()[0], res.stdout
    conf = [line for line in res.stderr.splitlines() if "KAVI_LLM_BASE_URL" in line]
    assert len(conf) == 1 and "kavi forge count_vowels" in conf[0], res.stderr
    assert "escalated" not in res.output and "kavi retry" not in res.output, res.output

    (row,) = json.loads(runner.invoke(app, ["status", "count_vowels", "--json"]).output)
    assert row["status"] == "FAILED" and row["failure_kind"] == "LLM_NOT_CONFIGURED", row
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    assert records.model_outcomes() == []  # the routing learner is not told the model failed
    (note_row,) = records.research_notes("count_vowels")
    assert not note_row["escalated"] and note_row["triggers"] == []

    from resources.gates import GateRunnerResource
    from resources.home import SkillsHomeResource
    from sensors.retry import retry_failed_attempts

    with dg.DagsterInstance.ephemeral() as instance:
        ctx = dg.build_sensor_context(instance=instance, resources={
            "home": SkillsHomeResource(root=str(kavi_home.root)), "gates": GateRunnerResource(retry_backoff_s=0.0)})
        result = retry_failed_attempts(ctx)
    assert isinstance(result, dg.SkipReason), result  # another try cannot help until an endpoint is configured
    assert "KAVI_LLM_BASE_URL" in str(result.skip_message)
