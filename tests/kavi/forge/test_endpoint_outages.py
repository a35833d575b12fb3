"""An endpoint that fails is the endpoint's fault. A real OpenAI-compatible endpoint on loopback (the
stub) answers 500, 429 with Retry-After, a body that is not JSON, a cut-off body, a dropped connection, or stalls
past the timeout: after the client's own retries each attempt ends as ENDPOINT_UNAVAILABLE, with no model outcome
(the router's posteriors do not move), no attempt of the budget spent and no escalation; the retry sensor waits its
own backoff; a sustained outage escalates naming the endpoint and its last status; when the endpoint recovers the
proposal is verified and trusted."""

import json
from typing import Any

import dagster as dg
import pytest

from kavi.forge.context import ForgeContext
from kavi.forge.promote import approve, promote
from kavi.forge.research import record_success
from kavi.lifecycle import FailureKind, ProposalStatus
from kavi.llm.client import ENDPOINT_KINDS, LLMError, LLMErrorKind
from kavi.research import classifier
from kavi.routing.posteriors import Outcome, compute_posteriors
from tests.stub_model import (
    DROP,
    MODEL,
    STALL,
    TRUNCATE,
    Reply,
    StubEndpoint,
    attempt,
    completion,
    error_reply,
    files_answer,
    retry_sensor_tick,
    stub_client,
)

NOT_JSON: Reply = (200, {"Content-Type": "application/json"}, b"<html>502 Bad Gateway</html>")
CUT_OFF: Reply = (200, {"Content-Type": "application/json", TRUNCATE: "1"}, b'{"id": "chatcmpl-1", "choi')

# Each way an endpoint fails, with the few words the attempt's facts keep of it.
OUTAGES: dict[str, tuple[Reply, str]] = {
    "500": (error_reply(500, "internal error"), "HTTP 500"),
    "429 with Retry-After": (error_reply(429, "slow down", {"Retry-After": "0"}), "HTTP 429"),
    "a body that is not JSON": (NOT_JSON, "malformed answer"),
    "a cut-off body": (CUT_OFF, "answer cut off"),
    "a dropped connection": ((200, {DROP: "1"}, b""), "connection dropped"),
    "a stall past the timeout": ((*completion("late")[:1], {STALL: "1.5"}, completion("late")[2]), "timeout"),
}


def _fast(stub: StubEndpoint) -> Any:
    """The stub's client with quick request-level retries and a short timeout (the stall is cut at it)."""
    return lambda: stub_client(stub, retry_base_s=0.01, retry_max_delay_s=0.05, timeout_s=1.0)


def _posteriors(ctx: ForgeContext) -> list[Any]:
    outcomes = [Outcome(model=o["model"], task_type=o["task_type"], success=bool(o["success"]))
                for o in ctx.records.model_outcomes()]
    return compute_posteriors(outcomes, models=[MODEL], task_types=["READ_ONLY/simple"])


def test_the_classifier_and_the_client_agree_on_what_is_the_endpoints() -> None:
    assert {k.value for k in ENDPOINT_KINDS} == classifier._ENDPOINT_ERRORS


@pytest.mark.parametrize("mode", list(OUTAGES))
def test_each_failure_is_retried_by_the_client_then_named(stub_endpoint: StubEndpoint, mode: str) -> None:
    reply, status = OUTAGES[mode]
    stub_endpoint.script(reply)
    client = _fast(stub_endpoint)()
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "hi"}], model=MODEL)
    assert info.value.kind in ENDPOINT_KINDS and not info.value.terminal
    assert info.value.status == status
    # A timeout already waited its whole timeout: not sent again; every other fault is retried like a 5xx.
    assert len(stub_endpoint.requests) == (1 if status == "timeout" else 4), mode
    if mode == "a cut-off body":
        assert "cut off" in str(info.value) and "cannot reach" not in str(info.value)


@pytest.mark.parametrize("mode", list(OUTAGES))
def test_an_outage_costs_the_model_nothing_and_the_recovered_endpoint_gets_it_trusted(
    stub_ctx: ForgeContext, stub_endpoint: StubEndpoint, mode: str,
) -> None:
    stub_ctx.llm_factory = _fast(stub_endpoint)
    before = _posteriors(stub_ctx)
    reply, status = OUTAGES[mode]
    notes = []
    for _ in range(2):
        stub_endpoint.script(reply)
        out, note = attempt(stub_ctx)
        assert not out.passed and note is not None
        notes.append(note)
    for note in notes:
        assert note.kind is FailureKind.ENDPOINT_UNAVAILABLE, (mode, note.facts)
        assert not note.escalated and note.triggers == [] and note.status is ProposalStatus.FAILED
        assert note.facts["endpoint_status"] == status
        assert note.facts["endpoint"] == stub_endpoint.base_url
    assert [n.facts["outage"]["attempts_in_a_row"] for n in notes] == [1, 2]
    assert stub_ctx.records.model_outcomes() == [] and _posteriors(stub_ctx) == before
    # The endpoint recovers: the next attempt is the model's first, and its success is what the router learns.
    stub_endpoint.script(files_answer())
    out, note = attempt(stub_ctx)
    assert out.passed, out
    record_success(stub_ctx, "word_count", out.build_id)  # as the verification asset does
    approve(stub_ctx, "word_count", "tester")
    assert promote(stub_ctx, "word_count").version == 1
    assert stub_ctx.records.require_proposal("word_count").status is ProposalStatus.TRUSTED
    (learned,) = stub_ctx.records.model_outcomes()
    assert learned["success"] and learned["model"] == MODEL


def test_outages_spend_none_of_the_budget_and_a_sustained_one_escalates_naming_the_endpoint(
    stub_ctx: ForgeContext, stub_endpoint: StubEndpoint,
) -> None:
    stub_ctx.llm_factory = _fast(stub_endpoint)
    limit = stub_ctx.settings.endpoint_outage_attempts
    stub_endpoint.script(error_reply(503, "maintenance"))
    notes = [attempt(stub_ctx)[1] for _ in range(limit)]
    budget = notes[0].budget
    assert limit > budget  # more outages than the model's whole budget, and still no BUDGET_EXHAUSTED
    assert all(not n.escalated for n in notes[:-1])
    assert "BUDGET_EXHAUSTED" not in notes[-1].triggers
    assert notes[-1].escalated and notes[-1].triggers == ["ENDPOINT_OUTAGE"]
    assert notes[-1].status is ProposalStatus.ESCALATED
    reason = stub_ctx.records.status_events("word_count")[-1]["reason"]
    assert "ENDPOINT_OUTAGE" in reason and stub_endpoint.base_url in reason and "HTTP 503" in reason
    said = json.loads(stub_ctx.store.get(notes[-1].note_sha256))["next"]
    assert f"has failed {limit} attempts in a row (last: HTTP 503)" in said and "kavi retry word_count" in said
    assert stub_ctx.records.model_outcomes() == []


def test_a_model_failure_streak_is_not_broken_or_extended_by_an_outage(
    stub_ctx: ForgeContext, stub_endpoint: StubEndpoint,
) -> None:
    stub_ctx.llm_factory = _fast(stub_endpoint)
    bad = completion("Sure! Here is the code you asked for.")  # not the JSON asked for: the model's own failure
    kinds = []
    for reply in (bad, error_reply(500, "down"), bad, bad):
        stub_endpoint.script(reply)
        note = attempt(stub_ctx)[1]
        kinds.append((note.kind, note.escalated))
    assert kinds[1] == (FailureKind.ENDPOINT_UNAVAILABLE, False)
    # Three identical model failures in a row, the outage between them aside: a stuck loop, escalated.
    assert kinds[3] == (FailureKind.LLM_BAD_OUTPUT, True)


def test_the_retry_sensor_waits_the_endpoints_own_backoff(
    stub_ctx: ForgeContext, stub_endpoint: StubEndpoint,
) -> None:
    stub_ctx.llm_factory = _fast(stub_endpoint)
    stub_endpoint.script(error_reply(502, "bad gateway"))
    attempt(stub_ctx)
    held = retry_sensor_tick(stub_ctx.home, retry_backoff_s=0.0, endpoint_backoff_s=600.0)
    assert isinstance(held, dg.SkipReason)
    assert "endpoint outage (not the model's; 1 of 6 in a row" in str(held.skip_message)
    ready = retry_sensor_tick(stub_ctx.home, retry_backoff_s=600.0, endpoint_backoff_s=0.0)
    assert isinstance(ready, dg.SensorResult)
    (req,) = ready.run_requests or []
    assert req.tags["kavi/reason"] == "ENDPOINT_UNAVAILABLE" and req.run_key == "retry:word_count:2"


def test_terminal_endpoint_answers_stay_what_they_were() -> None:
    # A refused key or a missing model is not an outage: another try cannot clear it, a person must.
    cls = classifier.classify(classifier.AttemptFailure("llm", "bad key", llm_error_kind=LLMErrorKind.AUTH.value,
                                                        llm_terminal=True))
    assert cls.kind is FailureKind.LLM_UNAVAILABLE


@pytest.mark.slow
def test_kavi_forge_says_the_endpoint_failed_and_exits_3(
    stub_ctx: ForgeContext, stub_endpoint: StubEndpoint, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    from kavi_assets.cli.main import app

    monkeypatch.setenv("KAVI_LLM_BASE_URL", stub_endpoint.base_url)
    monkeypatch.setenv("KAVI_LLM_MODELS", MODEL)
    monkeypatch.setenv("KAVI_HOME", str(stub_ctx.home.root))
    stub_endpoint.script(error_reply(503, "maintenance", {"Retry-After": "0"}))
    res = CliRunner().invoke(app, ["forge", "word_count"])
    assert res.exit_code == 3, res.output
    assert "Traceback" not in res.output
    assert "→ FAILED (ENDPOINT_UNAVAILABLE)" in res.output
    assert f"the model endpoint {stub_endpoint.base_url} failed (HTTP 503): not the model's failure" in res.output
    assert "5 more in a row and it waits for a person" in res.output
    assert stub_ctx.records.model_outcomes() == []
