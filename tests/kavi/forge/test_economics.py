"""Each trusted version's forge cost counts every attempt (failed ones too), the independent
implementations and the research advice, priced per model from configuration; its executions; and the break-even
number of uses, defined in the output."""

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from kavi.forge.economics import economics
from kavi.home import KaviHome
from kavi.ledger.records import IndependentRow
from kavi.ledger.verification_records import VerificationRecords
from kavi.prices import parse_prices
from kavi_assets.cli.main import app
from tests.factories import forge_ctx, record_build, trust_version

runner = CliRunner()
PRICES = "builder-m=3/15,indep-m=1/2"  # USD per million prompt/completion tokens


def _kavi(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert "Traceback" not in res.output, res.output
    return res


def _forge_history(home: KaviHome) -> None:
    """Attempt 1 fails (with research advice and an independent implementation); attempt 2 is trusted as v1."""
    failed = record_build(home)
    ctx = forge_ctx(home, evidence_levels=())
    ctx.records.finish_build(failed, status="VERIFY_FAILED", failure_kind="TEST_FAILURE")
    ctx.records.record_independent(IndependentRow(
        "ind-1", "word_count", ctx.records.require_proposal("word_count").spec_sha256, failed, "indep-m", "second",
        "e", "OK", None, None, None, prompt_tokens=2000, completion_tokens=500, latency_ms=800.0))
    VerificationRecords(ctx.records.ledger).record_model_call(purpose="advice", name="word_count", build_id=failed,
                                                        model="builder-m", prompt_tokens=500, completion_tokens=100,
                                                        latency_ms=300.0, ok=True)
    trust_version(home, coach=False)


def test_forge_cost_counts_failed_attempts_independents_and_advice(kavi_home: KaviHome,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_PRICES", PRICES)
    monkeypatch.delenv("KAVI_SAVING_PER_USE_USD", raising=False)
    _forge_history(kavi_home)
    for text in ("a b", "c", "d e f"):
        assert _kavi(["run", "word_count", "--json", json.dumps({"text": text})]).exit_code == 0
    res = _kavi(["economics", "word_count", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert "break-even uses = forge cost ÷ saving per use" in doc["definition"]
    [v] = doc["versions"]
    assert v["ref"] == "word_count@1" and v["attempts"] == 2 and v["failed_attempts"] == 1
    # 2 builds at 1000/400 tokens (0.009 each), the independent 2000/500 (0.003), the advice 500/100 (0.003)
    assert v["forge_cost_usd"] == pytest.approx(0.024)
    models = {m["model"]: m for m in v["by_model"]}
    assert models["builder-m"]["calls"] == 3 and models["builder-m"]["prompt_tokens"] == 2500
    assert models["indep-m"]["completion_tokens"] == 500 and models["indep-m"]["wall_s"] == pytest.approx(0.8)
    assert v["forge_wall_s"] == pytest.approx(1.5 + 1.5 + 0.8 + 0.3)
    assert v["executions"] == 3 and v["executions_median_ms"] is not None and v["executions_total_s"] > 0
    # saving per use: builder-m for 1000 prompt + 500 completion tokens = 0.0105; 0.024 / 0.0105 → 3 uses
    assert v["saving_per_use_usd"] == pytest.approx(0.0105) and v["break_even_uses"] == 3 and v["uses_to_go"] == 0
    monkeypatch.setenv("KAVI_SAVING_PER_USE_USD", "0.001")
    assert economics(forge_ctx(kavi_home, evidence_levels=()).records, kavi_home)[0].break_even_uses == 24
    table = _kavi(["economics"])
    assert table.exit_code == 0 and "word_count@1" in table.output and "break-even" in table.output


def test_a_later_version_counts_only_its_own_attempts_and_unpriced_models_cost_nothing(
        kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAVI_PRICES", raising=False)
    _forge_history(kavi_home)
    from tests.factories import WORD_COUNT_SOURCE, WORD_COUNT_TESTS

    trust_version(kavi_home, source=WORD_COUNT_SOURCE.replace("Count the words, lines", "Count words, lines"),
                  tests=WORD_COUNT_TESTS, coach=False)
    rows = {r.ref: r for r in economics(forge_ctx(kavi_home, evidence_levels=()).records, kavi_home)}
    assert rows["word_count@1"].attempts == 2 and rows["word_count@2"].attempts == 1
    assert rows["word_count@2"].forge_cost_usd == 0 and rows["word_count@2"].break_even_uses == 0
    assert rows["word_count@2"].unpriced_models == ["builder-m"]
    (kavi_home.root / "prices.yaml").write_text("builder-m: {prompt: 3, completion: 15}\n")
    rows = {r.ref: r for r in economics(forge_ctx(kavi_home, evidence_levels=()).records, kavi_home)}
    assert rows["word_count@2"].forge_cost_usd == pytest.approx(0.009)


def test_prices_are_validated(kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_prices("m=2.5/10, n=1")["n"].completion_per_m == 1
    for bad in ("m", "m=-1", "m=1/x", "m=nan", "=1"):
        with pytest.raises(ValueError):
            parse_prices(bad)
    monkeypatch.setenv("KAVI_PRICES", "m=oops")
    res = _kavi(["economics"])
    assert res.exit_code == 2 and "KAVI_PRICES" in res.output
    from kavi.settings import config_problems

    assert any("KAVI_PRICES" in p for p in config_problems())


class _AdviceClient:
    """Stands in for the endpoint: answers (or fails) the research advice call, as LLMClient.complete would."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail

    def complete(self, messages: Any, **kw: Any) -> Any:
        from kavi.llm.client import Completion, LLMError, LLMErrorKind

        if self.fail:
            raise LLMError(LLMErrorKind.UNAVAILABLE, "down", kw["model"])
        return Completion("try str.split", kw["model"], 321, 54, 250.0, "stop", False, None)


@pytest.mark.parametrize("fail", [False, True])
def test_research_advice_calls_are_recorded_for_the_forge_cost(kavi_home: KaviHome, fail: bool) -> None:
    from kavi.forge.context import ForgeContext, ForgeSettings
    from kavi.forge.research import _advice
    from kavi.lifecycle import FailureKind

    build_id = record_build(kavi_home)
    client: Any = _AdviceClient(fail)
    ctx = ForgeContext.open(kavi_home, lambda: client, ForgeSettings(research_advice=True))
    build = ctx.records.get_build(build_id)
    assert build is not None
    advice, unavailable = _advice(ctx, "word_count", build, FailureKind.VERIFY_TEST, {"x": 1})
    assert unavailable is fail and (advice is None) is fail
    with ctx.records.ledger.connect() as con:
        rows = con.execute("SELECT purpose, build_id, model, prompt_tokens, completion_tokens, ok FROM model_calls"
                           ).fetchall()
    expected = (None, None, False) if fail else (321, 54, True)
    assert rows == [("advice", build_id, "builder-m", *expected)]
