"""Infrastructure is not blamed on the model. A gate tool that cannot execute (126) or is not found
(127), a full disk or a file-size limit in the forge's own writes, and an oversized prompt are INFRASTRUCTURE
failures: no model outcome, no posterior update, retried later with a backoff outside the model's budget. Transient
5xx/429 answers are retried with backoff honouring Retry-After before anything is classified."""

import errno
import json
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.packet import prepare_packet
from kavi.forge.research import research
from kavi.forge.verify import verify
from kavi.home import KaviHome
from kavi.lifecycle import FailureKind, ProposalStatus, Verdict
from kavi.llm.client import LLMError, LLMErrorKind, retry_after_s
from kavi.llm.prompts import PromptTooLarge
from kavi.research.classifier import AttemptFailure, classify
from kavi.sandbox.runner import SandboxResult
from kavi.verdicts import GateResult
from tests.stub_model import (
    MODEL,
    WORD_COUNT_SOURCE,
    completion,
    error_reply,
    files_answer,
    retry_sensor_tick,
    stub_client,
    stub_proposal,
)

# -- classification --------------------------------------------------------------------------------


def _gate(gate: str, reason: str, messages: list[str] | None = None, **details: Any) -> GateResult:
    return GateResult(gate, Verdict.FAILED, reason, 0.1, messages or [], details)


def _ok(gate: str) -> GateResult:
    return GateResult(gate, Verdict.PASSED, "ok", 0.1)


@pytest.mark.parametrize(
    "bad",
    [
        _gate("mypy", "mypy could not check the file (exit 127)", ["prlimit: failed to execute mypy: No such file"],
              returncode=127),
        _gate("mypy", "mypy could not check the file (exit 126)", ["cannot execute"], returncode=126),
        _gate("ruff", "ruff did not run: [Errno 2] No such file or directory: 'ruff'"),
        _gate("mypy", "mypy could not check the file (exit 2)",
              ["error: could not write cache: [Errno 28] No space left on device"], returncode=2),
        _gate("mypy", "mypy could not check the file (exit -25)", [], returncode=-25),
        _gate("pytest", "pytest exited 126", ["bwrap: cannot set up the sandbox"], returncode=126, tests=0),
        _gate("acceptance", "the acceptance run died (exit 127)", ["not found"]),
        _gate("pytest", "zero tests collected", ["bwrap: Creating new namespace failed: Operation not permitted"],
              returncode=1, tests=0),
        _gate("policy", "the gate itself failed: OSError: [Errno 28] No space left on device"),
    ],
)
def test_tool_and_disk_failures_are_infrastructure(bad: GateResult) -> None:
    results = [_ok(g) for g in ("ruff", "mypy", "pytest", "coverage", "policy", "invariants", "acceptance")
               if g != bad.gate] + [bad]
    cls = classify(AttemptFailure("verify", "gates failed", gate_results=results))
    assert cls.kind is FailureKind.INFRASTRUCTURE, (bad.gate, bad.reason)
    assert cls.facts["infrastructure"][bad.gate]


def test_a_real_model_failure_beside_a_tool_failure_is_the_models() -> None:
    results = [_gate("ruff", "1 finding(s): F401", ["skills/x.py:1:1 F401 unused"]),
               _gate("mypy", "mypy could not check the file (exit 127)", [], returncode=127)]
    assert classify(AttemptFailure("verify", "gates failed", gate_results=results)).kind is FailureKind.VERIFY_LINT


def test_a_test_killed_for_writing_a_huge_file_is_the_models() -> None:
    # SIGXFSZ in the builder's own tests is the builder's doing; only the forge's own writes are infrastructure.
    results = [_gate("pytest", "the test process was killed by signal 25", [], returncode=-25, tests=3)]
    assert classify(AttemptFailure("verify", "gates failed", gate_results=results)).kind is FailureKind.VERIFY_TEST


def test_oversized_prompt_is_not_the_models_failure() -> None:
    cls = classify(AttemptFailure("llm", "the prompt is 90000 characters", llm_error_kind="PROMPT_TOO_LONG"))
    assert cls.kind is FailureKind.INFRASTRUCTURE


# -- the pipeline: no model outcome, not escalated, budget untouched ------------------------------


def _outcomes(ctx: ForgeContext) -> list[dict[str, Any]]:
    return list(ctx.records.model_outcomes())


def _missing_ruff(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The gate tool `fault["tool"]` (ruff, or mypy) is gone: exit 127 from the launcher, for a job started with the
    verification and for one started ahead of it (kavi.sandbox.held). "" ends the fault."""
    import kavi.gates.tools as tools
    from kavi.sandbox import held
    from kavi.sandbox.runner import run_sandboxed
    from kavi.sandbox.warm import run_warm
    fault = {"tool": "ruff"}

    def missing(argv: list[str]) -> SandboxResult | None:
        tool = fault["tool"]
        launched = argv[1:3] == ["-m", "kavi.sandbox.launch"] and argv[4:5] == [tool]
        if tool and (tool in Path(argv[0]).name or argv[1:3] == ["-m", tool] or launched):
            return SandboxResult(127, "", f"prlimit: failed to execute {tool}: No such file or directory", 0.01,
                                 False, None, {})
        return None

    def fresh(argv: list[str], **kwargs: Any) -> SandboxResult:
        return missing(argv) or run_warm(argv, **kwargs)

    def ahead(argv: list[str], **kwargs: Any) -> SandboxResult:
        return missing(argv) or run_sandboxed(argv, **kwargs)

    monkeypatch.setattr(tools, "run_warm", fresh)  # ruff
    monkeypatch.setattr(held, "run_warm", fresh)  # mypy and pytest, started with the verification
    monkeypatch.setattr(held, "run_sandboxed", ahead)  # and started ahead of it
    return fault


def test_missing_gate_tool_is_infrastructure_and_not_the_models_outcome(
    stub_ctx: ForgeContext, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub_endpoint.script(files_answer())
    _missing_ruff(monkeypatch)
    _out, note = pipeline_attempt(stub_ctx)
    assert note is not None and note.kind is FailureKind.INFRASTRUCTURE
    assert not note.escalated and note.status is ProposalStatus.FAILED
    assert "ruff" in json.dumps(note.facts["infrastructure"])
    assert note.facts["infrastructure"]["ruff"].startswith("the ruff tool was not found (exit 127)")
    assert _outcomes(stub_ctx) == []  # the router learns nothing from it
    build = stub_ctx.records.latest_build("word_count")
    assert build is not None and build.failure_kind == "INFRASTRUCTURE"


def test_infrastructure_attempts_do_not_spend_the_model_budget(
    stub_ctx: ForgeContext, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub_endpoint.script(files_answer())
    fault = _missing_ruff(monkeypatch)
    _, note = pipeline_attempt(stub_ctx)
    budget = note.budget
    kinds = [note.kind]
    while note.attempt < budget - 1:  # alternate the missing tool, so no stuck loop is detected
        fault["tool"] = "mypy" if fault["tool"] == "ruff" else "ruff"
        _, note = pipeline_attempt(stub_ctx)
        kinds.append(note.kind)
        assert "BUDGET_EXHAUSTED" not in note.triggers and not note.escalated, note.triggers
    fault["tool"] = ""
    # A skill with a lint finding now fails as the model's own failure: it is the proposal's attempt `budget`, but
    # only the model's first, so the budget is not exhausted.
    stub_endpoint.script(files_answer(skill=WORD_COUNT_SOURCE.replace("import re\n", "import re\nimport string\n")))
    _, note = pipeline_attempt(stub_ctx)
    assert note.attempt == budget >= 3
    assert note.kind is FailureKind.VERIFY_LINT
    assert "BUDGET_EXHAUSTED" not in note.triggers and not note.escalated
    assert set(kinds) == {FailureKind.INFRASTRUCTURE}
    assert [o["failure_kind"] for o in _outcomes(stub_ctx)] == [note.kind.value]


def test_repeated_infrastructure_failure_escalates_instead_of_looping(
    stub_ctx: ForgeContext, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub_endpoint.script(files_answer())
    _missing_ruff(monkeypatch)
    notes = [pipeline_attempt(stub_ctx)[1] for _ in range(3)]
    # On a failure, say what each attempt was judged (a gate failing for another reason changes the fingerprint).
    seen = [(n.kind, n.fingerprint, n.facts.get("failed_gates"), n.facts.get("infrastructure"), n.triggers)
            for n in notes]
    assert [n.escalated for n in notes] == [False, False, True], seen
    assert "REPEATED_FAILURE" in notes[-1].triggers
    assert _outcomes(stub_ctx) == []


def test_full_disk_in_the_forges_own_build_writes_is_infrastructure(
    stub_ctx: ForgeContext, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub_endpoint.script(files_answer())
    import kavi.forge.build as build_step

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(build_step, "write_files", full)
    _out, note = pipeline_attempt(stub_ctx)
    assert note is not None and note.kind is FailureKind.INFRASTRUCTURE
    assert "No space left" in note.facts["error"]
    assert _outcomes(stub_ctx) == []


def test_file_size_limit_in_the_gates_own_copies_is_infrastructure(
    stub_ctx: ForgeContext, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub_endpoint.script(files_answer())
    import kavi.gates.runner as gr

    def too_big(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(gr, "write_files", too_big)
    _out, note = pipeline_attempt(stub_ctx)
    assert note is not None and note.kind is FailureKind.INFRASTRUCTURE
    assert "File too large" in note.facts["error"]
    assert _outcomes(stub_ctx) == []


def test_oversized_prompt_records_no_model_outcome(kavi_home: KaviHome, stub_endpoint: Any) -> None:
    # The packet step refuses a prompt whose fixed part is over the bound: no attempt, nothing sent, no outcome.
    ctx = ForgeContext.open(kavi_home, lambda: stub_client(stub_endpoint, max_prompt_chars=500))
    intake(ctx, stub_proposal(), None)
    stub_endpoint.script(files_answer())
    with pytest.raises(PromptTooLarge, match="over the bound"):
        prepare_packet(ctx, "word_count", run_id=None)
    assert ctx.records.builds("word_count") == []
    assert _outcomes(ctx) == [] and stub_endpoint.requests == []


def test_prompt_over_the_clients_bound_is_infrastructure_and_escalates(
    stub_ctx: ForgeContext, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Should a prompt still reach the client over its bound, the client refuses it before sending: that attempt is
    # not the model's, and another try cannot shrink the spec, so a person decides.
    stub_endpoint.script(files_answer())
    prepare_packet(stub_ctx, "word_count", run_id=None)
    stub_ctx.llm_factory = lambda: stub_client(stub_endpoint, max_prompt_chars=500)
    run_build(stub_ctx, "word_count", run_id=None)
    out = verify(stub_ctx, "word_count", run_id=None)
    note = research(stub_ctx, "word_count", out)
    assert note.kind is FailureKind.INFRASTRUCTURE
    assert note.escalated and "PROMPT_TOO_LONG" in note.triggers
    assert _outcomes(stub_ctx) == [] and stub_endpoint.requests == []


def pipeline_attempt(ctx: ForgeContext) -> tuple[Any, Any]:
    prepare_packet(ctx, "word_count", run_id=None)
    run_build(ctx, "word_count", run_id=None)
    out = verify(ctx, "word_count", run_id=None)
    return out, (None if out.passed else research(ctx, "word_count", out))


# -- the retry sensor ------------------------------------------------------------------------------


def test_retry_sensor_retries_infrastructure_after_its_own_backoff(
    stub_ctx: ForgeContext, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub_endpoint.script(files_answer())
    _missing_ruff(monkeypatch)
    pipeline_attempt(stub_ctx)
    held = retry_sensor_tick(stub_ctx.home, retry_backoff_s=0.0, infra_backoff_s=600.0)
    assert isinstance(held, dg.SkipReason) and "infrastructure" in str(held.skip_message)
    ready = retry_sensor_tick(stub_ctx.home, retry_backoff_s=600.0, infra_backoff_s=0.0)
    assert isinstance(ready, dg.SensorResult)
    (req,) = ready.run_requests or []
    assert req.tags["kavi/reason"] == "INFRASTRUCTURE" and req.run_key == "retry:word_count:2"


# -- transient HTTP errors: retried with backoff, Retry-After honoured ---------------------------


def test_503_then_200_is_retried_by_the_client(stub_endpoint: Any) -> None:
    stub_endpoint.script(error_reply(503, "overloaded"), error_reply(502, "bad gateway"), completion("hello"))
    client = stub_client(stub_endpoint, retry_base_s=0.05)
    out = client.complete([{"role": "user", "content": "hi"}], model=MODEL, json_mode=False)
    assert out.text == "hello" and len(stub_endpoint.requests) == 3


def test_429_retry_after_seconds_is_honoured(stub_endpoint: Any) -> None:
    stub_endpoint.script(error_reply(429, "slow down", {"Retry-After": "1"}), completion("ok"))
    client = stub_client(stub_endpoint, retry_base_s=0.01)
    t0 = time.monotonic()
    assert client.complete([{"role": "user", "content": "hi"}], model=MODEL, json_mode=False).text == "ok"
    assert len(stub_endpoint.requests) == 2
    assert stub_endpoint.times[1] - stub_endpoint.times[0] >= 0.95
    assert time.monotonic() - t0 < 5


def test_retry_after_forms_and_cap() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert retry_after_s("2", now=now, cap_s=30) == 2.0
    assert retry_after_s(format_datetime(now + timedelta(seconds=7), usegmt=True), now=now, cap_s=30) == 7.0
    assert retry_after_s("3600", now=now, cap_s=30) == 30.0
    assert retry_after_s(format_datetime(now - timedelta(seconds=7), usegmt=True), now=now, cap_s=30) == 0.0
    assert retry_after_s("soon", now=now, cap_s=30) is None
    assert retry_after_s(None, now=now, cap_s=30) is None


def test_persistent_503_gives_up_after_bounded_tries(stub_endpoint: Any) -> None:
    stub_endpoint.script(error_reply(503, "down for maintenance"))
    client = stub_client(stub_endpoint, retry_base_s=0.01, max_retries=2)
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "hi"}], model=MODEL, json_mode=False)
    assert info.value.kind is LLMErrorKind.UNAVAILABLE and "3 tries" in str(info.value)
    assert len(stub_endpoint.requests) == 3


def test_quota_and_client_errors_are_not_retried(stub_endpoint: Any) -> None:
    stub_endpoint.script(error_reply(429, "You exceeded your current quota", code="insufficient_quota"))
    client = stub_client(stub_endpoint, retry_base_s=0.01)
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "hi"}], model=MODEL, json_mode=False)
    assert info.value.kind is LLMErrorKind.QUOTA and len(stub_endpoint.requests) == 1
    stub_endpoint.script(error_reply(400, "bad request"))
    with pytest.raises(LLMError):
        client.complete([{"role": "user", "content": "hi"}], model=MODEL, json_mode=False)
    assert len(stub_endpoint.requests) == 1


def test_sdk_retries_stay_off_so_one_layer_retries(stub_endpoint: Any) -> None:
    client = stub_client(stub_endpoint)
    assert client._client.max_retries == 0


def test_sdk_clients_of_one_process_share_one_http_client(stub_endpoint: Any) -> None:
    """Building the SDK's HTTP client loads the TLS trust store: a process builds one (the run host, before it
    forks), and every SDK client of the process (one per endpoint, key and timeout) sends through it."""
    from kavi.llm.client import http_client

    stub_endpoint.script(completion("one"), completion("two"))
    short, long = stub_client(stub_endpoint, timeout_s=7.0), stub_client(stub_endpoint, timeout_s=11.0)
    assert short._client is not long._client
    assert short._client._client is long._client._client is http_client()
    assert short._client.timeout == 7.0 and long._client.timeout == 11.0  # each client's own timeout still holds
    assert short.complete([{"role": "user", "content": "hi"}], model=MODEL, json_mode=False).text == "one"
    assert long.complete([{"role": "user", "content": "hi"}], model=MODEL, json_mode=False).text == "two"
    assert len(stub_endpoint.requests) == 2
