"""Nothing secret leaves through messages. Gate output that reaches the
research note, the next packet, the ledger and Dagster's run storage is bounded and redacted: configured keys,
key-shaped strings and the proposal's holdout values; an endpoint that echoes the key back is not stored either."""

import json
from typing import Any

import pytest

from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.packet import prepare_packet
from kavi.forge.research import research
from kavi.forge.verify import verify
from kavi.home import KaviHome
from kavi.lifecycle import Verdict
from kavi.llm.client import LLMError
from kavi.redact import REDACTED, Redactor
from kavi.settings import KaviSettings
from kavi.verdicts import GateResult
from tests.stub_model import (
    CONFIGURED_KEY,
    MODEL,
    WORD_COUNT_TESTS,
    error_reply,
    files_answer,
    stub_client,
    stub_proposal,
)

FAKE_KEY = "sk-proj-" + "Zq8" * 10
HOLDOUT = "zebra quokka narwhal"  # the holdout input of stub_proposal()
BEARER = "Bearer " + "tok3nV4lue" * 3
HEX_SECRET = "api_key=" + "0123456789abcdef" * 3

# -- the Redactor ----------------------------------------------------------------------------------


def test_redactor_removes_configured_keys_key_shapes_and_holdouts() -> None:
    r = Redactor.for_proposal(stub_proposal(), settings=KaviSettings.from_environ(
        {"KAVI_LLM_API_KEY": CONFIGURED_KEY, "OPENAI_API_KEY": "short"}))
    text = (f"key {CONFIGURED_KEY} fake {FAKE_KEY} hdr {BEARER} env {HEX_SECRET} holdout {HOLDOUT!r} "
            f"json {json.dumps({'text': HOLDOUT})} keep sha256 {'ab' * 32} and words=3")
    out = r.text(text)
    for secret in (CONFIGURED_KEY, FAKE_KEY, "tok3nV4lue", "0123456789abcdef0123", HOLDOUT):
        assert secret not in out, secret
    assert REDACTED in out
    assert "ab" * 32 in out  # a bare content hash is not a secret
    assert "api_key=" in out  # the name stays, the value goes
    assert "words=3" in out  # short values are not redacted


def test_redactor_catches_escaped_and_json_forms_of_holdouts() -> None:
    prop = stub_proposal(holdout_examples=[
        {"input": {"text": 'he said "hi"\nthen left'}, "expected": {"words": 4, "lines": 2, "characters": 1234}}])
    r = Redactor.for_proposal(prop, settings=KaviSettings.from_environ({}))
    for form in ('he said "hi"\nthen left', json.dumps('he said "hi"\nthen left'), repr('he said "hi"\nthen left'),
                 json.dumps({"words": 4, "lines": 2, "characters": 1234}), "1234"):
        assert r.text(f"<{form}>") != f"<{form}>", form


def test_redactor_bounds_each_message_and_the_total() -> None:
    r = Redactor(max_message_chars=50, max_messages=5, max_total_chars=120)
    results = [GateResult("pytest", Verdict.FAILED, "x" * 1000, 0.1, ["y" * 500] * 40, {"blob": "z" * 5000}),
               GateResult("ruff", Verdict.FAILED, "lint", 0.1, ["w" * 60] * 10)]
    out = r.gate_results(results)
    first = out[0]
    assert len(first.reason) <= 500
    assert all(len(m) <= 50 for m in first.messages) and len(first.messages) <= 6
    assert len(str(first.details["blob"])) <= 500
    total = sum(len(m) for res in out for m in res.messages)
    assert total <= 120 + 2 * 60  # the total bound, plus at most one "… more" marker per gate
    assert out[0].verdict is Verdict.FAILED and out[0].gate == "pytest"


def test_redacting_keeps_verdicts_and_shape() -> None:
    r = Redactor(secrets=[CONFIGURED_KEY])
    res = GateResult("pytest", Verdict.PASSED, f"ok {CONFIGURED_KEY}", 0.2, [CONFIGURED_KEY],
                     {"isolation": {"net": "active"}, "tests": 3, "nested": [{"k": CONFIGURED_KEY}]})
    (out,) = r.gate_results([res])
    assert out.ok and out.details["tests"] == 3 and out.details["isolation"] == {"net": "active"}
    assert CONFIGURED_KEY not in json.dumps(out.to_dict())


# -- the forge: nothing secret in the note, the packet, the ledger, the report ---------------------

LEAKY_TEST = WORD_COUNT_TESTS + f'''

FAKE = "{FAKE_KEY}"


def test_leaks() -> None:
    print("{BEARER}", FAKE, "{CONFIGURED_KEY}", "{HOLDOUT}")
    assert False, FAKE + " {CONFIGURED_KEY} {HOLDOUT} {HEX_SECRET}"
'''

SECRETS = (FAKE_KEY, CONFIGURED_KEY, HOLDOUT, "tok3nV4lue", "0123456789abcdef0123")


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _ledger_text(ctx: ForgeContext, table: str) -> str:
    with ctx.records.ledger.connect() as con:
        rows = con.execute(f"SELECT * FROM {table}").fetchall()
    return json.dumps(rows, default=str)


def test_builder_test_output_is_redacted_everywhere_it_is_stored(
    stub_ctx: ForgeContext, stub_endpoint: Any,
) -> None:
    stub_endpoint.script(files_answer(tests=LEAKY_TEST))
    out, note = _attempt(stub_ctx)
    assert note is not None and not out.passed
    pytest_result = {r.gate: r for r in out.results}["pytest"]
    assert any("test_leaks" in m for m in pytest_result.messages)  # the failure is still reported
    assert any(REDACTED in m for m in pytest_result.messages)
    assert not _leaks(json.dumps([r.to_dict() for r in out.results]))
    assert not _leaks(_ledger_text(stub_ctx, "gate_results"))
    assert not _leaks(_ledger_text(stub_ctx, "research_notes"))
    assert not _leaks(stub_ctx.store.get(note.note_sha256).decode())
    assert not _leaks(stub_ctx.store.get(out.report_sha256).decode())
    packet = prepare_packet(stub_ctx, "word_count", run_id=None)
    packet_text = stub_ctx.store.get(packet.packet_sha256).decode()
    assert "test_leaks" in packet_text  # the facts reach the next packet ...
    assert not _leaks(packet_text)  # ... without the secrets


def test_endpoint_echoing_the_key_is_not_stored(kavi_home: KaviHome, stub_endpoint: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_LLM_API_KEY", CONFIGURED_KEY)

    def echo(headers: dict[str, str]) -> Any:
        return error_reply(400, f"invalid request from {headers.get('authorization')} (key {CONFIGURED_KEY})")

    stub_endpoint.script(echo)
    client = stub_client(stub_endpoint)
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "hi"}], model=MODEL, json_mode=False)
    assert CONFIGURED_KEY not in str(info.value) and "invalid request" in str(info.value)

    ctx = ForgeContext.open(kavi_home, lambda: stub_client(stub_endpoint))
    intake(ctx, stub_proposal(), None)
    _out, note = _attempt(ctx)
    assert note is not None
    assert stub_endpoint.requests and CONFIGURED_KEY in stub_endpoint.requests[-1]["headers"]["authorization"]
    for table in ("builds", "research_notes", "model_outcomes", "status_events", "model_set_aside"):
        assert CONFIGURED_KEY not in _ledger_text(ctx, table), table
    for path in kavi_home.artifacts_dir.rglob("*"):
        if path.is_file():
            assert CONFIGURED_KEY.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_dagster_run_storage_holds_no_secret(
    kavi_home: KaviHome, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dagster as dg

    from kavi_assets.cli.dagster_env import instance
    from kavi_assets.cli.forge_run import forge_once
    from resources.llm import LLMResource

    monkeypatch.setenv("KAVI_LLM_API_KEY", CONFIGURED_KEY)
    ctx = ForgeContext.open(kavi_home, lambda: stub_client(stub_endpoint))
    intake(ctx, stub_proposal(), None)
    stub_endpoint.script(files_answer(tests=LEAKY_TEST))
    llm = LLMResource(base_url=stub_endpoint.base_url, models=[MODEL])
    out = forge_once(kavi_home, "word_count", resources={"llm": llm})
    assert out["status"] in ("FAILED", "ESCALATED") and not out["errors"], out
    records = instance().get_records_for_run(out["run_id"], limit=10_000).records
    stored = "\n".join(dg.serialize_value(r.event_log_entry) for r in records)
    assert "test_leaks" in stored  # the gate's messages did reach run storage ...
    assert not _leaks(stored)  # ... redacted


def _attempt(ctx: ForgeContext) -> tuple[Any, Any]:
    prepare_packet(ctx, "word_count", run_id=None)
    run_build(ctx, "word_count", run_id=None)
    out = verify(ctx, "word_count", run_id=None)
    return out, (None if out.passed else research(ctx, "word_count", out))


def test_credentials_in_the_endpoint_url_are_not_in_its_stored_label(stub_endpoint: Any) -> None:
    client = stub_client(stub_endpoint, base_url=f"http://user:{CONFIGURED_KEY}@127.0.0.1:{stub_endpoint.port}/v1")
    assert CONFIGURED_KEY not in client.endpoint_label and "user" not in client.endpoint_label
    assert client.endpoint_label.endswith(f"@127.0.0.1:{stub_endpoint.port}/v1")
