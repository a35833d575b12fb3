"""Everything a proposal file can make the forge spend is bounded.

Each refusal is one line, exit status 2 from `kavi propose`, no traceback, and nothing in the ledger.
"""

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.proposals import bounds
from kavi.proposals.model import (
    MAX_EXAMPLES,
    MAX_FIELDS,
    ProposalError,
    load_proposal,
    parse_proposal,
    parse_proposal_text,
)
from kavi_assets.cli.main import app
from tests.factories import REPO

runner = CliRunner()

# The classic "billion laughs": nine levels of nine aliases each, about 530 bytes, hidden in an example input.
ALIAS_BOMB = textwrap.dedent("""\
    name: word_count
    description: Count the words in a text, splitting on whitespace.
    side_effect_class: READ_ONLY
    inputs: [{name: text, type: json}]
    outputs: [{name: count, type: int}]
    examples:
    - expected: {count: 1}
      input:
        text:
        - &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
        - &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
        - &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
        - &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
        - &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
        - &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
        - &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
        - &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
        - &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
    """)


def _ledger_untouched(home: KaviHome) -> None:
    if home.ledger_path.exists():
        from kavi.ledger.records import ForgeRecords
        from kavi.ledger.store import Ledger

        assert ForgeRecords(Ledger(home.ledger_path)).list_status() == []
    assert not [p for p in home.artifacts_dir.rglob("*") if p.is_file()]


def _propose_refused(home: KaviHome, path: Path, needle: str) -> str:
    t0 = time.monotonic()
    res = runner.invoke(app, ["propose", str(path)])
    elapsed = time.monotonic() - t0
    out = res.output.strip()
    assert res.exit_code == 2, out[-2000:]
    assert "Traceback" not in out
    assert len(out.splitlines()) == 1, out[:2000]
    assert len(out) < 600, out[:2000]
    assert needle in out, out
    assert elapsed < 5, elapsed
    _ledger_untouched(home)
    return out


def test_alias_bomb_refused_fast_under_an_address_space_limit(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(ALIAS_BOMB)
    assert 480 <= len(ALIAS_BOMB.encode()) <= 700
    script = textwrap.dedent(f"""\
        import resource, sys, time
        limit = 4 * 1024 ** 3
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        from kavi.proposals.model import ProposalError, load_proposal
        from pathlib import Path
        t0 = time.monotonic()
        try:
            load_proposal(Path({str(bomb)!r}))
        except ProposalError as err:
            print("REFUSED", round(time.monotonic() - t0, 3), str(err))
        else:
            print("ACCEPTED", round(time.monotonic() - t0, 3))
        """)
    try:
        res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the alias bomb was still being expanded after 60 s")
    assert res.returncode == 0, res.stderr[-2000:]
    verdict, seconds, *message = res.stdout.split(maxsplit=2)
    assert verdict == "REFUSED", res.stdout
    assert float(seconds) < 1.0
    assert "alias" in message[0] or "anchor" in message[0]


def test_kavi_propose_refuses_aliases(kavi_home: KaviHome, tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(ALIAS_BOMB)
    _propose_refused(kavi_home, f, "anchor")
    small = tmp_path / "small.yaml"
    small.write_text("name: &n word_count\ndescription: *n\n")
    _propose_refused(kavi_home, small, "anchor")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_deep_nesting_refused(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any], fmt: str) -> None:
    f = tmp_path / f"p.{fmt}"
    deep = "[" * 100_000 + "]" * 100_000
    if fmt == "json":
        f.write_text(json.dumps(proposal_data)[:-1] + ', "extra": ' + deep + "}")
    else:
        f.write_text(yaml.safe_dump(proposal_data) + "extra: " + deep + "\n")
    _propose_refused(kavi_home, f, "nested deeper than")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_moderate_nesting_refused_with_the_bound(tmp_path: Path, proposal_data: dict[str, Any], fmt: str) -> None:
    depth = bounds.MAX_DEPTH + 5
    proposal_data["examples"][0]["input"]["text"] = json.loads("[" * depth + "]" * depth)
    f = tmp_path / f"p.{fmt}"
    f.write_text(json.dumps(proposal_data) if fmt == "json" else yaml.safe_dump(proposal_data))
    with pytest.raises(ProposalError, match=f"nested deeper than {bounds.MAX_DEPTH}"):
        load_proposal(f)


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_huge_integer_refused(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any], fmt: str) -> None:
    proposal_data["examples"][0]["expected"]["count"] = "__BIG__"
    text = json.dumps(proposal_data) if fmt == "json" else yaml.safe_dump(proposal_data)
    f = tmp_path / f"p.{fmt}"
    f.write_text(text.replace('"__BIG__"', "9" * 100_000).replace("__BIG__", "9" * 100_000))
    _propose_refused(kavi_home, f, "digits")


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "1.0e+999"])
def test_non_finite_floats_refused(tmp_path: Path, proposal_data: dict[str, Any], value: str) -> None:
    proposal_data["examples"][0]["expected"]["count"] = "__F__"
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(proposal_data).replace("__F__", value))
    with pytest.raises(ProposalError, match="finite"):
        load_proposal(f)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_json_numbers_refused(tmp_path: Path, proposal_data: dict[str, Any], value: str) -> None:
    proposal_data["examples"][0]["expected"]["count"] = "__F__"
    f = tmp_path / "p.json"
    f.write_text(json.dumps(proposal_data).replace('"__F__"', value))
    with pytest.raises(ProposalError, match="finite"):
        load_proposal(f)


@pytest.mark.parametrize("name", ["abc\n", "word_count\n", "\nabc", "abc\r"])
def test_name_must_match_whole(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any], name: str) -> None:
    proposal_data["name"] = name
    with pytest.raises(ProposalError, match="snake_case"):
        parse_proposal(proposal_data)
    f = tmp_path / "p.json"
    f.write_text(json.dumps(proposal_data))
    _propose_refused(kavi_home, f, "snake_case")


def test_field_and_secret_names_must_match_whole(proposal_data: dict[str, Any]) -> None:
    proposal_data["inputs"] = [{"name": "text\n", "type": "str"}]
    with pytest.raises(ProposalError, match="lowercase Python identifier"):
        parse_proposal(proposal_data)


def test_secret_names_must_match_whole(proposal_data: dict[str, Any]) -> None:
    proposal_data.update(side_effect_class="SECRET_READ", required_secrets=["TOKEN\n"])
    with pytest.raises(ProposalError, match="UPPER_SNAKE_CASE"):
        parse_proposal(proposal_data)


def test_duplicate_yaml_keys_refused(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(proposal_data) + "name: other_name\n")
    _propose_refused(kavi_home, f, "duplicate key 'name'")
    nested = tmp_path / "n.yaml"
    text = yaml.safe_dump(proposal_data)
    assert "    text: a b c\n" in text
    nested.write_text(text.replace("    text: a b c\n", "    text: a b c\n    text: x\n", 1))
    with pytest.raises(ProposalError, match="duplicate key 'text'"):
        load_proposal(nested)


def test_duplicate_json_keys_refused(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps(proposal_data)[:-1] + ', "name": "other_name"}')
    _propose_refused(kavi_home, f, "duplicate key 'name'")


def test_yaml_merge_keys_refused(tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("<<: {name: word_count}\ndescription: Count the words in a text.\n")
    with pytest.raises(ProposalError, match="merge"):
        load_proposal(f)


def test_file_size_bound(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    f = tmp_path / "p.json"
    proposal_data["description"] = "x" * (bounds.MAX_PROPOSAL_BYTES + 10)
    f.write_text(json.dumps(proposal_data))
    out = _propose_refused(kavi_home, f, "bytes")
    assert str(bounds.MAX_PROPOSAL_BYTES) in out


def test_file_size_checked_before_reading_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "big.yaml"
    with f.open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: large without costing disk
    reads: list[int] = []
    real_read_bytes = Path.read_bytes

    def spy_read_bytes(self: Path) -> bytes:
        reads.append(1)
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", spy_read_bytes)
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: pytest.fail("read the whole file"))
    with pytest.raises(ProposalError, match="larger than"):
        load_proposal(f)
    assert not reads


def test_two_hundred_thousand_examples_refused(kavi_home: KaviHome, tmp_path: Path,
                                               proposal_data: dict[str, Any]) -> None:
    proposal_data["examples"] = [{"input": {"text": "a"}, "expected": {"count": 1}}] * 200_000
    f = tmp_path / "p.json"
    f.write_text(json.dumps(proposal_data))
    _propose_refused(kavi_home, f, "bytes")


def test_example_count_bound(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    proposal_data["examples"] = [{"input": {"text": "a"}, "expected": {"count": 1}}] * (MAX_EXAMPLES + 1)
    f = tmp_path / "p.json"
    f.write_text(json.dumps(proposal_data, separators=(",", ":")))
    _propose_refused(kavi_home, f, f"at most {MAX_EXAMPLES}")


def test_holdout_count_bound(proposal_data: dict[str, Any]) -> None:
    proposal_data["holdout_examples"] = [{"input": {"text": "a"}, "expected": {"count": 1}}] * (MAX_EXAMPLES + 1)
    with pytest.raises(ProposalError, match=r"holdout_examples.*at most"):
        parse_proposal(proposal_data)


def test_field_count_bound(proposal_data: dict[str, Any]) -> None:
    proposal_data["inputs"] = [{"name": f"f{i}", "type": "str", "required": False} for i in range(MAX_FIELDS + 1)]
    with pytest.raises(ProposalError, match=f"at most {MAX_FIELDS}"):
        parse_proposal(proposal_data)


def test_total_examples_size_bound(proposal_data: dict[str, Any]) -> None:
    from kavi.proposals.model import MAX_EXAMPLES_CHARS

    big = "word " * 8000
    proposal_data["holdout_examples"] = [{"input": {"text": big}, "expected": {"count": 8000}}
                                         for _ in range(MAX_EXAMPLES_CHARS // len(big) + 2)]
    with pytest.raises(ProposalError, match="examples hold"):
        parse_proposal(proposal_data)


def test_long_strings_refused(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    proposal_data["examples"][0]["input"]["text"] = "x" * (bounds.MAX_STRING_CHARS + 1)
    f = tmp_path / "p.json"
    f.write_text(json.dumps(proposal_data))
    with pytest.raises(ProposalError, match=r"examples\[0\]\.input\.text.*characters"):
        load_proposal(f)


def test_long_description_refused(proposal_data: dict[str, Any]) -> None:
    proposal_data["description"] = "d" * 5000
    with pytest.raises(ProposalError, match="description"):
        parse_proposal(proposal_data)


def test_build_prompt_bound_refused_at_propose(kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    proposal_data["examples"] = [{"input": {"text": f"word {i} " * 40}, "expected": {"count": 80}}
                                 for i in range(60)]
    f = tmp_path / "p.json"
    f.write_text(json.dumps(proposal_data))
    monkeypatch.setenv("KAVI_LLM_MAX_PROMPT_CHARS", "24000")
    out = _propose_refused(kavi_home, f, "build prompt")
    assert "24000" in out and "KAVI_LLM_MAX_PROMPT_CHARS" in out
    monkeypatch.setenv("KAVI_LLM_MAX_PROMPT_CHARS", "200000")
    assert runner.invoke(app, ["propose", str(f)]).exit_code == 0


def test_render_refuses_an_oversized_spec_before_any_model_call(proposal_data: dict[str, Any]) -> None:
    from kavi.llm.prompts import PromptTooLarge, render_build_messages

    prop = parse_proposal(proposal_data)
    ok = render_build_messages(prop.builder_view(), attempt=1, skill_name=prop.name, class_name=prop.class_name,
                               prior_failures=[], hint=None, max_chars=24000)
    assert sum(len(m["content"]) for m in ok) <= 24000
    with pytest.raises(PromptTooLarge, match="over the bound of 2000"):
        render_build_messages(prop.builder_view(), attempt=1, skill_name=prop.name, class_name=prop.class_name,
                              prior_failures=[], hint=None, max_chars=2000)


def test_a_long_hint_and_failures_never_push_the_prompt_over(proposal_data: dict[str, Any]) -> None:
    from kavi.llm.prompts import render_build_messages

    prop = parse_proposal(proposal_data)
    failures = [{"attempt": i, "failure_kind": "VERIFY_TYPE", "facts": {"error": "e" * 5000}} for i in range(20)]
    msgs = render_build_messages(prop.builder_view(), attempt=21, skill_name=prop.name, class_name=prop.class_name,
                                 prior_failures=failures, hint="h" * 50_000, max_chars=24000)
    assert sum(len(m["content"]) for m in msgs) <= 24000


def test_the_shipped_examples_still_load() -> None:
    for path in sorted((REPO / "kavi" / "examples" / "proposals").glob("*.yaml")):
        load_proposal(path)


def test_parse_proposal_text_is_bounded_too(proposal_data: dict[str, Any]) -> None:
    with pytest.raises(ProposalError, match="anchor"):
        parse_proposal_text("name: &x word_count\n", "inline")


def test_intake_sensor_uses_the_bounded_loader() -> None:
    import sensors.intake as intake
    from kavi.proposals import model

    assert intake.load_proposal is model.load_proposal


def test_intake_sensor_moves_unbounded_files_to_rejected(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    import dagster as dg

    from resources.gates import GateRunnerResource
    from resources.home import SkillsHomeResource
    from resources.llm import LLMResource
    from sensors.intake import proposal_intake

    (kavi_home.inbox_dir / "bomb.yaml").write_text(ALIAS_BOMB)
    (kavi_home.inbox_dir / "deep.json").write_text(json.dumps(proposal_data)[:-1] + ', "x": '
                                                   + "[" * 100_000 + "]" * 100_000 + "}")
    escaping = dict(proposal_data, examples=[dict(proposal_data["examples"][0], vault_files={"../../x": "p"})])
    (kavi_home.inbox_dir / "escape.yaml").write_text(yaml.safe_dump(escaping))
    with dg.DagsterInstance.ephemeral() as instance:
        ctx = dg.build_sensor_context(instance=instance, resources={
            "home": SkillsHomeResource(root=str(kavi_home.root)), "llm": LLMResource(), "gates": GateRunnerResource()})
        result = proposal_intake(ctx)
    assert not getattr(result, "run_requests", None)
    reasons = sorted(p.read_text() for p in kavi_home.rejected_dir.glob("*.error.txt"))
    assert len(reasons) == 3, reasons
    joined = " ".join(reasons)
    assert "anchors and aliases" in joined and "nested deeper than" in joined and "'../../x'" in joined
    _ledger_untouched(kavi_home)
