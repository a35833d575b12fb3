"""The independent implementation is asked for while the build is made (two model answers per attempt,
one after the other, made every attempt wait twice): the build step starts it in the background once the packet has
routed the builder's model, and the verification takes the answer from that request."""

import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from kavi.forge import independent
from kavi.forge import verify as verify_step
from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.intake import intake
from kavi.forge.packet import prepare_packet
from kavi.forge.verify import verify
from kavi.home import KaviHome
from kavi.llm.client import Completion, LLMClient, LLMError, LLMErrorKind
from kavi.proposals.model import parse_proposal
from resources.llm import LLMResource
from tests.kavi.forge.test_nversion import ALL_LEVELS, HONEST, SPEC, TWO, _cassettes

DELAY_S = 1.5


class SlowClient(LLMClient):
    """The recorded model, each answer taking DELAY_S (a live model's seconds), every call counted by kind."""

    calls: list[str]
    spans: dict[str, tuple[float, float]]
    fail_independent: bool = False

    def complete(self, messages: Sequence[Mapping[str, str]], *, model: str, json_mode: bool = True,
                 headers: Mapping[str, str] | None = None, timeout_s: float | None = None) -> Completion:
        kind = (headers or {}).get("X-Kavi-Kind", "")
        with _calls_lock:
            self.calls.append(kind)
        started = time.monotonic()
        try:
            time.sleep(DELAY_S)
            if kind == "independent" and self.fail_independent:
                raise LLMError(LLMErrorKind.UNAVAILABLE, "the independent endpoint is down", model)
            return super().complete(messages, model=model, json_mode=json_mode, headers=headers,
                                    timeout_s=timeout_s)
        finally:
            with _calls_lock:
                self.spans[kind] = (started, time.monotonic())


_calls_lock = threading.Lock()


def _slow_ctx(home: KaviHome, tmp_path: Path, *, fail_independent: bool = False, build_raw: str | None = None
              ) -> tuple[ForgeContext, list[str], dict[str, tuple[float, float]]]:
    folder = _cassettes(tmp_path, HONEST)
    if build_raw is not None:  # the builder's answer, replaced
        data = yaml.safe_load((folder / "sign_of.yaml").read_text())
        data["interactions"][0] = {"kind": "build", "raw": build_raw}
        (folder / "sign_of.yaml").write_text(yaml.safe_dump(data))
    base = LLMResource(models=TWO, cassette_dir=str(folder)).get_client()
    calls: list[str] = []
    spans: dict[str, tuple[float, float]] = {}

    def factory() -> LLMClient:
        client = SlowClient(base.settings)
        client.calls = calls
        client.spans = spans
        client.fail_independent = fail_independent
        return client

    ctx = ForgeContext.open(home, factory, ForgeSettings(evidence_levels=ALL_LEVELS))
    intake(ctx, parse_proposal(SPEC), None)
    return ctx, calls, spans


def _kinds(calls: list[str]) -> dict[str, int]:
    return {k: calls.count(k) for k in set(calls)}


def test_the_independent_answer_is_asked_during_the_build_and_waited_for_once(
        kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx, calls, spans = _slow_ctx(kavi_home, tmp_path)
    prepare_packet(ctx, "sign_of", run_id=None)
    built = run_build(ctx, "sign_of", run_id=None)
    assert built.ok, built.failure
    build = ctx.records.latest_build("sign_of")
    assert build is not None
    proposal_row = ctx.records.require_proposal("sign_of")
    got = independent.obtain_independent(ctx, "sign_of", build, proposal_row.proposal, proposal_row.spec_sha256)
    # Side by side, not one after the other: the independent request was under way before the builder's answer
    # came back (an order of events, not a time limit).
    build_started, build_ended = spans["build"]
    independent_started, _ = spans["independent"]
    assert independent_started < build_ended, (spans, build_started)
    assert got.status == "OK" and got.source is not None and not got.reused and got.model != build.model
    assert _kinds(calls) == {"build": 1, "independent": 1}
    rows = ctx.records.independents("sign_of")
    assert len(rows) == 1 and rows[0].requested_by_build == build.build_id and rows[0].status == "OK"
    assert rows[0].model == got.model and rows[0].source_sha256 == got.sha256


def test_one_request_per_spec_digest_and_the_verification_uses_it(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx, calls, _ = _slow_ctx(kavi_home, tmp_path)
    prepare_packet(ctx, "sign_of", run_id=None)
    build = ctx.records.latest_build("sign_of")
    assert build is not None
    row = ctx.records.require_proposal("sign_of")
    first = independent.prefetch_independent(ctx, "sign_of", build.model, row.proposal, row.spec_sha256)
    again = independent.prefetch_independent(ctx, "sign_of", build.model, row.proposal, row.spec_sha256)
    assert first and not again
    run_build(ctx, "sign_of", run_id=None)  # starts none: one is in flight for this digest
    out = verify(ctx, "sign_of", run_id=None)
    assert out.passed, [(r.gate, r.reason) for r in out.results if not r.ok]
    assert _kinds(calls) == {"build": 1, "independent": 1}
    assert out.evidence["independent"]["used"]
    rows = ctx.records.independents("sign_of")
    assert len(rows) == 1 and rows[0].requested_by_build == build.build_id
    edges = {(e["relation"], e["child"]) for e in ctx.records.lineage_edges("sign_of")}
    assert ("evidence_for", out.report_sha256) in edges and ("file_of", rows[0].source_sha256) in edges
    # The next attempt of the same spec reuses the ledger's answer (nothing asked in the background), unless its
    # builder is the model that wrote it: then the other model is asked, once.
    prepare_packet(ctx, "sign_of", run_id=None)
    run_build(ctx, "sign_of", run_id=None)
    second = ctx.records.latest_build("sign_of")
    assert second is not None
    again_out = independent.obtain_independent(ctx, "sign_of", second, row.proposal, row.spec_sha256)
    if second.model != rows[0].model:
        assert again_out.reused and _kinds(calls) == {"build": 2, "independent": 1}
    else:
        assert not again_out.reused and again_out.model != second.model
        assert _kinds(calls) == {"build": 2, "independent": 2}


def test_a_failing_background_request_is_the_independent_models_failure(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx, calls, _ = _slow_ctx(kavi_home, tmp_path, fail_independent=True)
    prepare_packet(ctx, "sign_of", run_id=None)
    built = run_build(ctx, "sign_of", run_id=None)
    assert built.ok  # the prefetch's failure never reaches the build
    out = verify(ctx, "sign_of", run_id=None)
    assert out.passed
    assert "model call failed" in out.evidence["independent"]["not_used_because"]
    rows = ctx.records.independents("sign_of")
    assert [r.status for r in rows] == ["LLM_ERROR"] and "unavailable" in str(rows[0].reason).lower()
    assert _kinds(calls) == {"build": 1, "independent": 1}


def test_a_prefetch_that_cannot_start_never_fails_the_build(kavi_home: KaviHome, tmp_path: Path,
                                                             monkeypatch: Any) -> None:
    ctx, calls, _ = _slow_ctx(kavi_home, tmp_path)

    def broken(*args: Any, **kwargs: Any) -> bool:
        raise RuntimeError("the ledger is busy")

    monkeypatch.setattr(verify_step, "prefetch_independent", broken)
    prepare_packet(ctx, "sign_of", run_id=None)
    built = run_build(ctx, "sign_of", run_id=None)
    assert built.ok and any("independent" in line for line in built.log), built.log
    out = verify(ctx, "sign_of", run_id=None)  # asked synchronously, as before
    assert out.passed and out.evidence["independent"]["used"]
    assert _kinds(calls) == {"build": 1, "independent": 1}


def test_no_prefetch_when_the_ceremony_level_takes_no_evidence(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx, calls, _ = _slow_ctx(kavi_home, tmp_path)
    ctx.settings = ForgeSettings(evidence_levels=("standard", "strict"))
    prepare_packet(ctx, "sign_of", run_id=None)
    run_build(ctx, "sign_of", run_id=None)
    time.sleep(0.2)
    assert _kinds(calls) == {"build": 1}


def test_the_request_of_a_failed_build_is_recorded_and_reused(kavi_home: KaviHome, tmp_path: Path) -> None:
    ctx, calls, _ = _slow_ctx(kavi_home, tmp_path, build_raw="not json")
    prepare_packet(ctx, "sign_of", run_id=None)
    built = run_build(ctx, "sign_of", run_id=None)
    assert not built.ok and built.failure is not None and built.failure.stage == "answer"
    out = verify(ctx, "sign_of", run_id=None)
    assert not out.ran
    build = ctx.records.latest_build("sign_of")
    assert build is not None
    # Not verified, but the request was made: its answer is in the ledger, for the spend and the next attempt.
    rows = ctx.records.independents("sign_of")
    assert [r.status for r in rows] == ["OK"] and rows[0].requested_by_build == build.build_id
    assert _kinds(calls) == {"build": 1, "independent": 1}
