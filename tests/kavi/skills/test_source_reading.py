"""One reading of a skill's source: a coding declaration, a BOM, a NUL or bytes that are not UTF-8 make every
reader refuse the file (the build step as GATE_VIOLATION, `kavi check`, the gate runner, the loader), and the
statements such a file hides never run."""

import codecs
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.build.allowlist import check_allowlist
from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.intake import intake
from kavi.forge.packet import prepare_packet
from kavi.forge.research import research
from kavi.forge.verify import verify
from kavi.home import KaviHome
from kavi.lifecycle import FailureKind, ProposalStatus, Verdict
from kavi.proposals.model import parse_proposal
from kavi.skills.loading import exec_skill_module
from kavi.skills.source import SourceEncodingError, decode_source, source_problem
from kavi.verdicts import GATE_POLICY
from kavi_assets.cli.main import app
from resources.llm import LLMResource

# An honest READ_ONLY skill; the tricks below put a call that the policy refuses in what UTF-8 reads as a comment.
HONEST = '''"""Count words."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class WordCountInput(BaseModel):
    text: str


class WordCountOutput(BaseModel):
    count: int


class WordCount(BaseSkill[WordCountInput, WordCountOutput]):
    name = "word_count"
    description = "Count the words of a text."
    input_model = WordCountInput
    output_model = WordCountOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: WordCountInput) -> WordCountOutput:
        return WordCountOutput(count=len(input_data.text.split()))
'''

# In UTF-7, "+AAo-" is a newline and "+ACI-" a double quote: Python compiles the second line as a statement.
HIDDEN_UTF7 = b"# +AAo-import builtins+ADs- builtins.KAVI_HIDDEN_RAN = True\n"


def _with_prefix(prefix: bytes) -> bytes:
    return prefix + HONEST.encode()


TRICKS: dict[str, bytes] = {
    "utf-7 cookie": _with_prefix(b"# -*- coding: utf-7 -*-\n" + HIDDEN_UTF7),
    "utf-7 cookie, vim style": _with_prefix(b"# vim: set fileencoding=utf-7 :\n" + HIDDEN_UTF7),
    "utf-7 cookie on line 2": _with_prefix(b"#!/usr/bin/env python\n# coding=utf-7\n" + HIDDEN_UTF7),
    "form feed before the cookie": _with_prefix(b"\x0c# coding: utf-7\n" + HIDDEN_UTF7),
    "form feed and a shebang": _with_prefix(b"#!python\n\x0c\t# coding: UTF-7\n" + HIDDEN_UTF7),
    "cookie after a carriage return": _with_prefix(b"#!python\r\rx\n# coding: utf-7\n" + HIDDEN_UTF7),
    "latin-1 cookie": _with_prefix(b"# -*- coding: latin-1 -*-\n"),
    "cp1252 cookie": _with_prefix(b"# coding: cp1252\n"),
    "utf-16 cookie": _with_prefix(b"# coding: utf-16\n"),
    "unknown codec": _with_prefix(b"# coding: no-such-codec\n"),
    "utf-8-sig cookie": _with_prefix(b"# coding: utf-8-sig\n"),
    "byte-order mark": codecs.BOM_UTF8 + HONEST.encode(),
    "NUL byte": HONEST.encode().replace(b'"""Count words."""', b'"""Count\x00 words."""'),
    "not UTF-8": HONEST.encode().replace(b"Count words.", b"Count w\xf6rds."),
    "UTF-16 bytes": HONEST.encode("utf-16"),
}

ALLOWED_PREFIXES = {
    "no declaration": b"",
    "utf-8 cookie": b"# -*- coding: utf-8 -*-\n",
    "UTF8 cookie": b"# coding=UTF8\n",
    "decoding in a docstring": b'"""Base64 decoding: turns text into bytes."""\n',
    "a comment about encodings": b"# this module never changes its encoding; see the docs\n",
}


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_every_trick_is_refused_with_its_reason(trick: str) -> None:
    problem = source_problem(TRICKS[trick])
    assert problem is not None
    with pytest.raises(SourceEncodingError, match="the source"):
        decode_source(TRICKS[trick])


@pytest.mark.parametrize("prefix", sorted(ALLOWED_PREFIXES))
def test_honest_sources_are_read_once(prefix: str) -> None:
    data = _with_prefix(ALLOWED_PREFIXES[prefix])
    assert source_problem(data) is None
    assert decode_source(data) == data.decode("utf-8")


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_the_build_step_refuses_the_file_before_any_gate(trick: str) -> None:
    files = [("skills/word_count.py", TRICKS[trick].decode("utf-8", errors="surrogateescape")),
             ("tests/test_skill_word_count.py", "def test_x() -> None:\n    assert True\n")]
    if trick in ("not UTF-8", "UTF-16 bytes"):
        pytest.skip("a model's answer is text: these bytes cannot come from one (the loader and check refuse them)")
    res = check_allowlist("word_count", files)
    assert not res.ok and res.files == {}
    assert any(v.startswith("'skills/word_count.py' ") for v in res.violations), res.violations


def test_the_test_file_is_held_to_the_same_rule() -> None:
    files = [("skills/word_count.py", HONEST),
             ("tests/test_skill_word_count.py", "# coding: utf-7\n# +AAo-assert 1\ndef test_x() -> None: pass\n")]
    res = check_allowlist("word_count", files)
    assert not res.ok
    assert any("tests/test_skill_word_count.py" in v and "utf-7" in v for v in res.violations)


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_the_loader_never_runs_what_the_scan_did_not_read(trick: str) -> None:
    import builtins

    with pytest.raises(SourceEncodingError):
        exec_skill_module("word_count", TRICKS[trick], "0" * 64)
    assert not hasattr(builtins, "KAVI_HIDDEN_RAN")


def test_the_loader_compiles_the_text_it_read() -> None:
    module = exec_skill_module("word_count", _with_prefix(b"# coding: utf-8\n"), "1" * 64)
    assert module.WordCount().execute(module.WordCountInput(text="a b c")).count == 3


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_kavi_check_fails_the_file(trick: str, tmp_path: Path) -> None:
    path = tmp_path / "word_count.py"
    path.write_bytes(TRICKS[trick])
    res = CliRunner().invoke(app, ["check", str(path), "--side-effect", "READ_ONLY"])
    if trick in ("not UTF-8", "UTF-16 bytes"):  # no text at all: the file is unusable (exit 2), as before
        assert res.exit_code == 2 and res.output.startswith(f"error: {path}: not UTF-8 text"), res.output
        return
    assert res.exit_code == 1, res.output
    assert "SRC-ENCODING" in res.output and "Traceback" not in res.output
    assert res.output.rstrip().splitlines()[-1].startswith(f"fail: {path}")


def test_kavi_check_still_passes_an_honest_file(tmp_path: Path) -> None:
    path = tmp_path / "word_count.py"
    path.write_bytes(_with_prefix(b"# -*- coding: utf-8 -*-\n"))
    res = CliRunner().invoke(app, ["check", str(path), "--side-effect", "READ_ONLY"])
    assert res.exit_code == 0, res.output


def test_the_gate_runner_runs_nothing_of_such_bytes(tmp_path: Path) -> None:
    from kavi.gates.runner import GateConfig, run_gates

    spec = _spec()
    files = {"skills/word_count.py": TRICKS["utf-7 cookie"],
             "tests/test_skill_word_count.py": b"def test_x() -> None:\n    assert True\n"}
    outcome = run_gates(tmp_path / "work", parse_proposal(spec), files, GateConfig())
    assert not outcome.passed
    by_gate = {r.gate: r for r in outcome.results}
    assert by_gate[GATE_POLICY].verdict is Verdict.FAILED and "utf-7" in by_gate[GATE_POLICY].reason
    others = [r for g, r in by_gate.items() if g != GATE_POLICY]
    assert all(r.verdict is Verdict.OMITTED and r.reason for r in others)
    assert not (tmp_path / "work").exists() or not any((tmp_path / "work").rglob("*.py"))


def _spec() -> dict[str, Any]:
    return {
        "name": "word_count",
        "description": "Count the words of a text, split on whitespace.",
        "inputs": [{"name": "text", "type": "str"}],
        "outputs": [{"name": "count", "type": "int"}],
        "side_effect_class": "READ_ONLY",
        "examples": [{"input": {"text": "a b"}, "expected": {"count": 2}}],
        "holdout_examples": [{"input": {"text": "one"}, "expected": {"count": 1}}],
    }


def test_a_forged_answer_with_a_utf7_cookie_is_a_gate_violation(kavi_home: KaviHome, tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    skill = TRICKS["utf-7 cookie"].decode("utf-8")
    interactions = [{"kind": "build", "files": {
        "skills/word_count.py": skill,
        "tests/test_skill_word_count.py": "def test_x() -> None:\n    assert True\n"}}]
    (folder / "word_count.yaml").write_text(yaml.safe_dump(
        {"skill": "word_count", "models": ["recorded-coder-a"], "interactions": interactions}))
    llm = LLMResource(models=["recorded-coder-a"], cassette_dir=str(folder))
    ctx = ForgeContext.open(kavi_home, llm.get_client, ForgeSettings())
    intake(ctx, parse_proposal(_spec()), None)
    prepare_packet(ctx, "word_count", run_id=None)
    run_build(ctx, "word_count", run_id=None)
    out = verify(ctx, "word_count", run_id=None)
    assert not out.ran
    note = research(ctx, "word_count", out)
    assert note.kind is FailureKind.GATE_VIOLATION
    assert any("utf-7" in v for v in note.facts["violations"])
    assert ctx.records.require_proposal("word_count").status is ProposalStatus.GATE_VIOLATION
    assert not list(kavi_home.skills_dir.iterdir())
    assert not list(kavi_home.sandboxes_dir.iterdir())
