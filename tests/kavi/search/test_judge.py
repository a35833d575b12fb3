"""The duplicate guard's reading of two descriptions: a trusted skill that answers every example of a proposal is
its duplicate only when the descriptions say the same thing; in other words, a configured model judges (a recorded
answer served by the recorded model over HTTP), and an answer that is not what was asked, or none, leaves a
warning."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.llm.client import LLMSettings
from kavi.llm.recorded import RecordedModelServer
from kavi.proposals.model import Proposal, parse_proposal
from kavi.search.documents import Hit
from kavi.search.guard import check_duplicates
from kavi.search.judge import JUDGE_KIND, JudgeError, judge_key, judge_same_task, parse_judgement
from kavi.search.same_task import content_words, description_difference, descriptions_differ
from tests.factories import example_spec, trust_example
from tests.stub_model import STALL, StubEndpoint, error_reply

MODEL = "recorded-judge"
PARAPHRASE = "Tell how many words, lines and characters a piece of text has."


def test_content_words_leave_out_what_says_nothing_of_the_task() -> None:
    assert content_words("Write a python function to find the sum of an array.") == {"find", "sum", "array"}
    # Plurals meet their singular, links go, numbers stay, case does not count.
    assert content_words("Sort the Elements; see https://example.org/sorting") == {"sort", "element", "see"}
    assert content_words("Check whether a number is a multiple of 11") == {"check", "whether", "number", "multiple",
                                                                            "11"}
    assert description_difference("Locate the left insertion point for a value in sorted order.",
                                  "Write a function to locate the right insertion point for a value in sorted "
                                  "order.") == (["left"], ["right"])
    assert description_difference("Write a function to remove all whitespaces from the given string.",
                                  "Write a function to remove all whitespaces from a string.") == ([], [])
    # Any script: two descriptions in another language are compared by their own words, not taken as empty.
    assert content_words("Trier les éléments d'une liste") == {"trier", "les", "élément", "d", "une", "liste"}
    left, right = "左の挿入位置を探す", "右の挿入位置を探す"
    assert description_difference(left, right) == ([left], [right])
    # Descriptions that say nothing of a task do not say the same thing.
    assert description_difference("Write a function.", "Write a python function.") is None
    assert descriptions_differ("Write a function.", "Write a python function.") == (
        "neither description says what the task is")
    assert descriptions_differ("Sort the list.", "Sort a list") is None


def test_judgements_are_parsed_strictly() -> None:
    assert parse_judgement('{"same": true, "reason": " both count\\n words "}') == (True, "both count words")
    assert parse_judgement('```json\n{"same": false, "reason": "prefix, not substring"}\n```') == (
        False, "prefix, not substring")
    for bad, why in (("yes", "not JSON"), ('{"same": "yes", "reason": "x"}', "no 'same' true or false"),
                     ("[true]", "no 'same'"), ('{"same": true}', "no reason"),
                     ('{"same": false, "reason": "  "}', "no reason")):
        with pytest.raises(JudgeError, match=why):
            parse_judgement(bad)


def _proposal(name: str, description: str) -> Proposal:
    """A proposal word_count answers: its one example, in other words or in word_count's own."""
    return parse_proposal({
        "name": name, "side_effect_class": "READ_ONLY", "description": description,
        "inputs": [{"name": "text", "type": "str"}],
        "outputs": [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"}],
        "examples": [{"input": {"text": "hello world"}, "expected": {"words": 2, "lines": 1}}]})


def _hit(home: KaviHome) -> Hit:
    spec = example_spec("word_count")
    return Hit("skill", "word_count", 1, "READ_ONLY", spec["description"], 1.0, 0.0, None,
               tuple((f["name"], f["type"]) for f in spec["inputs"]),
               tuple((f["name"], f["type"]) for f in spec["outputs"]))


@pytest.fixture()
def judged(kavi_home: KaviHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """word_count trusted; BM25 alone and a threshold the paraphrases reach; the recorded model answers three
    judgements (the same task, another, not what was asked) and has none for a fourth."""
    trust_example(kavi_home, "word_count")
    monkeypatch.setenv("KAVI_SEARCH_EMBEDDER", "none")
    monkeypatch.setenv("KAVI_SEARCH_DUPLICATE_SCORE", "0.5")
    hit = _hit(kavi_home)
    answers = {"the same": '{"same": true, "reason": "both count the words and lines of a text"}',
               "another": '{"same": false, "reason": "this one counts only the words that hold a vowel"}',
               "not asked": "They look alike to me."}
    descriptions = {"the same": PARAPHRASE,
                    "another": "Tell how many words with a vowel, and lines, a piece of text has.",
                    "not asked": "Say how many words, lines and characters some text holds.",
                    "none": "Give the number of words, lines and characters in a text."}
    folder = tmp_path / "cassettes"
    folder.mkdir()
    for label, raw in answers.items():
        key = judge_key(_proposal("p", descriptions[label]), hit)
        (folder / f"{key}.yaml").write_text(yaml.safe_dump({
            "skill": key, "models": [MODEL], "interactions": [{"kind": JUDGE_KIND, "raw": raw}]}))
    server = RecordedModelServer(folder).start()
    monkeypatch.setenv("KAVI_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("KAVI_LLM_MODELS", MODEL)
    yield {"home": kavi_home, "descriptions": descriptions}
    server.stop()


def _guard(home: KaviHome, name: str, description: str) -> tuple[str | None, str]:
    result = check_duplicates(home, ForgeRecords(Ledger(home.ledger_path)), _proposal(name, description))
    return result.refusal(), " ".join(" ".join(result.warnings()).split())


def test_the_model_judges_descriptions_in_other_words(judged: dict[str, Any]) -> None:
    home, descriptions = judged["home"], judged["descriptions"]
    refusal, _ = _guard(home, "count_text_words", descriptions["the same"])
    assert refusal is not None and "does the task of trusted skill word_count@1" in refusal
    assert (f"it answers all 1 of the proposal's examples as expected, and the model {MODEL} judged the two "
            "descriptions the same task: both count the words and lines of a text") in refusal

    refusal, warned = _guard(home, "count_vowel_words", descriptions["another"])
    assert refusal is None
    assert "not the same task: it answers all 1 of the proposal's examples as expected, but the descriptions" in warned
    assert f"the model {MODEL} judged them two tasks: this one counts only the words that hold a vowel" in warned
    own = next(ex for ex in example_spec("word_count")["examples"] if ex["input"] != {"text": "hello world"})
    assert ("one of its own examples, to compare with what yours should answer: word_count(text="
            f"{own['input']['text']!r}) -> ") in warned

    for label, why in (("not asked", "the model's answer is not JSON"), ("none", "the model could not judge")):
        refusal, warned = _guard(home, f"count_{label.replace(' ', '_')}", descriptions[label])
        assert refusal is None, label
        assert f"the model did not judge them: {why}" in warned, warned

    # The same words need no model: refused on the evidence alone. A skill that does not answer the examples is
    # never shown to the model.
    refusal, _ = _guard(home, "count_again", example_spec("word_count")["description"])
    assert refusal is not None and "the same description in its content words" in refusal
    other = parse_proposal({**json.loads(_proposal("count_off", PARAPHRASE).model_dump_json()), "examples": [
        {"input": {"text": "hello world"}, "expected": {"words": 3, "lines": 1}}]})
    result = check_duplicates(home, ForgeRecords(Ledger(home.ledger_path)), other)
    assert result.refusal() is None
    assert "does not answer the proposal's examples as expected" in " ".join(result.warnings())
    assert "the model" not in " ".join(result.warnings()) and "one of its own" not in " ".join(result.warnings())


def test_without_a_model_or_with_judging_off_it_is_a_warning(judged: dict[str, Any],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    home, descriptions = judged["home"], judged["descriptions"]
    monkeypatch.setenv("KAVI_SEARCH_RERANK", "0")
    refusal, warned = _guard(home, "count_text_words", descriptions["the same"])
    assert refusal is None and "the model" not in warned
    assert "only the proposal's says 'has', 'how', 'many', 'piece', 'tell'" in warned
    monkeypatch.delenv("KAVI_SEARCH_RERANK")
    monkeypatch.delenv("KAVI_LLM_BASE_URL")
    refusal, warned = _guard(home, "count_text_words_two", descriptions["the same"])
    assert refusal is None and "the model" not in warned


@pytest.mark.parametrize("slow_s", [0.0, 2.0])
def test_a_judgement_is_one_bounded_try(kavi_home: KaviHome, stub_endpoint: StubEndpoint, slow_s: float) -> None:
    # The guard runs in every door (the intake sensor's tick too): a model that is down or slow is one try, within
    # the endpoint's timeout and never more than JUDGE_TIMEOUT_S, and then a warning.
    status, headers, body = error_reply(503, "overloaded")
    stub_endpoint.script((status, {**headers, STALL: str(slow_s)} if slow_s else headers, body))
    endpoint = LLMSettings(base_url=stub_endpoint.base_url, api_key="k", models=(MODEL,), timeout_s=1.0)
    why = r"could not judge \(TIMEOUT\)" if slow_s else r"could not judge \(UNAVAILABLE\): the endpoint answered 503"
    with pytest.raises(JudgeError, match=why):
        judge_same_task(endpoint, _proposal("p", PARAPHRASE), _hit(kavi_home))
    assert len(stub_endpoint.requests) == 1
