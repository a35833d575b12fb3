"""On the runtime side: `kavi run` / `kavi chain` inputs are bounded, and the execution audit log
keeps a hash and a bounded excerpt of a huge input or output instead of the whole value."""

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi.proposals import bounds
from kavi.runtime.records import EXCERPT_CHARS, MAX_KEPT_JSON_CHARS, ExecutionLog, to_json
from kavi_assets.cli.main import app
from tests.factories import REPO, trust_version

ANSWERS = REPO / "kavi" / "examples" / "answers"
runner = CliRunner()

ECHO_SKILL = '''"""Echo a text."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EchoTextInput(BaseModel):
    text: str


class EchoTextOutput(BaseModel):
    text: str


class EchoText(BaseSkill[EchoTextInput, EchoTextOutput]):
    name = "echo_text"
    description = "Return the text it is given."
    input_model = EchoTextInput
    output_model = EchoTextOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EchoTextInput) -> EchoTextOutput:
        return EchoTextOutput(text=input_data.text)
'''


def _trust(home: KaviHome, name: str, source: str, outputs: list[dict[str, str]], example: dict[str, Any]) -> None:
    trust_version(home, {
        "name": name, "description": f"The {name} skill for bound tests.", "inputs": [{"name": "text", "type": "str"}],
        "outputs": outputs, "side_effect_class": "READ_ONLY", "examples": [example]}, source)


@pytest.fixture()
def trusted_home(kavi_home: KaviHome) -> KaviHome:
    _trust(kavi_home, "word_count", (ANSWERS / "word_count" / "1" / "skill.py").read_text(),
           [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"}, {"name": "characters", "type": "int"}],
           {"input": {"text": "a"}, "expected": {"words": 1}})
    _trust(kavi_home, "echo_text", ECHO_SKILL, [{"name": "text", "type": "str"}],
           {"input": {"text": "a"}, "expected": {"text": "a"}})
    return kavi_home


def _log_size(home: KaviHome) -> int:
    return home.executions_log.stat().st_size if home.executions_log.exists() else 0


def _refused(home: KaviHome, args: list[str], needle: str) -> str:
    before = _log_size(home)
    res = runner.invoke(app, args)
    out = res.output.strip()
    assert res.exit_code == 2, out[-2000:]
    assert "Traceback" not in out
    assert len(out.splitlines()) == 1, out[:2000]
    assert len(out) < 600, out[:600]
    assert needle in out, out
    assert _log_size(home) == before  # nothing ran, nothing recorded
    return out


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("text", "needle"), [
    ('{"text": ' + DEEP + "}", "nested deeper than"),
    ('{"text": ' + "9" * 100_000 + "}", "digits"),
    ('{"text": "a", "text": "b"}', "duplicate key 'text'"),
    ('{"text": NaN}', "finite"),
    ('{"text": "' + "x" * (bounds.MAX_RUN_INPUT_BYTES + 1) + '"}', "bytes"),
])
def test_kavi_run_inline_input_bounded(trusted_home: KaviHome, text: str, needle: str) -> None:
    out = _refused(trusted_home, ["run", "word_count", "--json", text], needle)
    assert "--json" in out


def test_kavi_run_input_from_a_file(trusted_home: KaviHome, tmp_path: Path) -> None:
    f = tmp_path / "in.json"
    f.write_text('{"text": "a b c"}')
    res = runner.invoke(app, ["run", "word_count", "--json", f"@{f}", "--output-json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["output"]["words"] == 3
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(10 * 1024 * 1024)
    _refused(trusted_home, ["run", "word_count", "--json", f"@{big}"], "bytes")
    _refused(trusted_home, ["run", "word_count", "--json", f"@{tmp_path / 'absent.json'}"], "no such file")
    f.write_text('{"text": ' + DEEP + "}")
    _refused(trusted_home, ["run", "word_count", "--json", f"@{f}"], "nested deeper than")


def test_kavi_chain_input_bounded(trusted_home: KaviHome, tmp_path: Path) -> None:
    spec = tmp_path / "chain.json"
    spec.write_text('{"steps": [{"skill": "word_count", "input": {"text": ' + DEEP + "}}]}")
    _refused(trusted_home, ["chain", "--json", f"@{spec}"], "nested deeper than")
    _refused(trusted_home, ["chain", "--json", '{"steps": [{"skill": "word_count", "input": {"text": '
                            + "1" * 100_000 + "}}]}"], "digits")
    _refused(trusted_home, ["chain", "--json", f"@{tmp_path / 'absent.json'}"], "no such file")
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(10 * 1024 * 1024)
    _refused(trusted_home, ["chain", "--json", f"@{big}"], "bytes")
    spec.write_text('{"steps": [{"skill": "word_count", "input": {"text": "a b"}}]}')
    res = runner.invoke(app, ["chain", "--json", f"@{spec}"])
    assert res.exit_code == 0, res.output


def _last_line(home: KaviHome) -> str:
    return home.executions_log.read_bytes().splitlines()[-1].decode()


def test_audit_log_keeps_hash_and_excerpt_of_huge_values(trusted_home: KaviHome) -> None:
    from kavi_assets.cli.runtime_cmd import _runner

    run, _, _ = _runner(trusted_home)
    text = "word " * (2 * 1024 * 1024)  # 10 MiB
    record = run.run("echo_text", {"text": text}, confirmed=False)
    assert record.success
    assert record.output_data() == {"text": text}  # the caller still gets the whole output
    line = _last_line(trusted_home)
    assert len(line) < 3 * EXCERPT_CHARS + 2000, len(line)
    stored = json.loads(line)
    full_in = to_json({"text": text})
    assert stored["input_json"] is None and stored["output_json"] is None
    assert stored["input_digest"]["sha256"] == hashlib.sha256(full_in.encode()).hexdigest()
    assert stored["input_digest"]["chars"] == len(full_in)
    excerpt = stored["input_digest"]["excerpt"]
    assert full_in.startswith(excerpt) and len(excerpt) <= EXCERPT_CHARS
    assert stored["output_digest"]["chars"] > 10_000_000
    back = ExecutionLog(trusted_home.executions_log).find(record.execution_id)
    assert not back.input_kept and back.input_digest is not None
    # Small values are kept whole, as before.
    small = run.run("echo_text", {"text": "hi"}, confirmed=False)
    kept = json.loads(_last_line(trusted_home))
    assert kept["input_json"] == '{"text":"hi"}' and kept.get("input_digest") is None
    assert small.success
    # tail and session still read the log.
    res = runner.invoke(app, ["tail", "--json"])
    assert res.exit_code == 0 and len(json.loads(res.output)) == 2


def test_replay_of_an_unkept_input_is_refused(trusted_home: KaviHome, tmp_path: Path) -> None:
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"text": "w " * MAX_KEPT_JSON_CHARS}))
    res = runner.invoke(app, ["run", "word_count", "--json", f"@{f}", "--output-json"])
    assert res.exit_code == 0, res.output[-500:]
    rec = json.loads(res.output)
    assert rec["output"]["words"] == MAX_KEPT_JSON_CHARS
    before = _log_size(trusted_home)
    res = runner.invoke(app, ["replay", rec["execution_id"][:8]])
    out = res.output.strip()
    assert res.exit_code == 2, out
    assert "too large to keep" in out and "not replayable" in out
    assert "Traceback" not in out and len(out.splitlines()) == 1
    assert _log_size(trusted_home) == before


def test_a_chain_passes_a_huge_output_on_whole(trusted_home: KaviHome) -> None:
    from kavi.runtime.chain import ChainSpec, run_chain
    from kavi_assets.cli.runtime_cmd import _runner

    run, _, _ = _runner(trusted_home)
    text = "w " * MAX_KEPT_JSON_CHARS
    spec = ChainSpec.model_validate({"steps": [{"skill": "echo_text", "input": {"text": text}},
                                               {"skill": "word_count", "from_prev": {"text": "text"}}]})
    records = run_chain(run, spec, confirmed=False)
    assert [r.success for r in records] == [True, True]
    assert records[1].output_data()["words"] == MAX_KEPT_JSON_CHARS


def test_huge_error_messages_are_bounded_in_the_log(trusted_home: KaviHome) -> None:
    from kavi_assets.cli.runtime_cmd import _runner

    run, _, _ = _runner(trusted_home)
    record = run.run("word_count", {"text": 5, "x" * 200_000: 1}, confirmed=False)
    assert not record.success
    stored = json.loads(_last_line(trusted_home))
    assert len(stored["error"]) <= EXCERPT_CHARS + 200
