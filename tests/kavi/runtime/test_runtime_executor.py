"""The runner: refusals before anything runs, schema checks, failures as records, the context it grants."""

import sys
import textwrap
from collections.abc import Callable

import pytest

from kavi.home import KaviHome
from kavi.runtime.executor import ConfirmationRequired, SkillNotTrusted, SkillRunner, list_skills
from kavi.runtime.records import ExecutionLog
from kavi.runtime.trust import TrustError, TrustLoader
from tests.kavi.runtime.runtime_skills import ECHO, Registry


def test_successful_run_is_recorded(runner: SkillRunner, registry: Registry) -> None:
    record = runner.run("echo", {"text": "hi", "times": 3}, confirmed=False)
    assert record.success and record.error is None
    assert record.output_data() == {"text": "hihihi", "length": 6}
    assert record.input_data() == {"text": "hi", "times": 3}
    assert record.source_hash == registry["echo"].sha256
    assert record.side_effect_class == "READ_ONLY"
    assert record.session_id and record.parent_execution_id is None and record.replay_of is None
    assert record.duration_ms >= 0 and record.finished_at >= record.started_at
    assert runner.log.read_all() == [record]


def test_unknown_skill_is_refused(runner: SkillRunner) -> None:
    with pytest.raises(SkillNotTrusted, match="'nope' is not trusted"):
        runner.run("nope", {}, confirmed=True)
    assert runner.log.read_all() == []


def test_side_effects_need_confirmation_before_anything_runs(
    runner: SkillRunner, home: KaviHome, loader: TrustLoader
) -> None:
    with pytest.raises(ConfirmationRequired, match="'write_note' is FILE_WRITE: it can write files in the vault"):
        runner.run("write_note", {"path": "n.md", "content": "x"}, confirmed=False)
    assert not (home.vault_dir / "n.md").exists()
    assert runner.log.read_all() == []
    assert loader.stats.reads == 0
    record = runner.run("write_note", {"path": "n.md", "content": "x"}, confirmed=True)
    assert record.success and record.output_data() == {"path": "n.md"}
    assert (home.vault_dir / "n.md").read_text(encoding="utf-8") == "x"


def test_schema_rejection_lists_fields_and_skill_is_not_invoked(runner: SkillRunner, home: KaviHome) -> None:
    record = runner.run("write_note", {"path": 5, "contents": "typo"}, confirmed=True)
    assert not record.success
    assert record.error is not None
    assert record.error.startswith("InputValidationError: input does not match the schema of 'write_note': ")
    assert "path: Input should be a valid string" in record.error
    assert "content: Field required" in record.error
    assert record.output_json is None
    assert home.vault_dir.exists() and list(home.vault_dir.iterdir()) == []
    assert runner.log.read_all() == [record]


def test_skill_exception_becomes_failure_record(runner: SkillRunner) -> None:
    record = runner.run("echo", {"text": "boom"}, confirmed=False)
    assert not record.success
    assert record.error == "ValueError: boom requested"
    assert runner.log.read_all() == [record]


def test_bad_output_becomes_failure_record(runner: SkillRunner) -> None:
    record = runner.run("bad_output", {"x": 1}, confirmed=False)
    assert not record.success
    assert record.error is not None
    assert record.error.startswith("OutputValidationError: output of 'bad_output' does not match its schema: y:")


def test_read_only_skill_cannot_write(runner: SkillRunner, registry: Registry, home: KaviHome) -> None:
    sneaky = ECHO.replace(
        "        text = input_data.text * input_data.times\n",
        "        self.vault.write_text('planted.md', 'x')\n        text = input_data.text\n",
    )
    registry.install("echo", sneaky)
    record = runner.run("echo", {"text": "a"}, confirmed=False)
    assert not record.success
    assert record.error is not None and record.error.startswith("VaultWriteDenied: the vault is read-only")
    assert not (home.vault_dir / "planted.md").exists()


def test_secrets_only_declared_and_http_from_fixture(runner: SkillRunner) -> None:
    ok = runner.run("secret_length", {"name": "API_TOKEN"}, confirmed=True)
    assert ok.success and ok.output_data() == {"length": len("s3cret-token")}
    denied = runner.run("secret_length", {"name": "OTHER_TOKEN"}, confirmed=True)
    assert not denied.success
    assert denied.error is not None and denied.error.startswith("SecretNotDeclared: secret 'OTHER_TOKEN'")
    weather = runner.run("fetch_weather", {"city": "Oslo"}, confirmed=True)
    assert weather.success and weather.output_data() == {"temp_c": -3.5}
    unknown = runner.run("fetch_weather", {"city": "Lima"}, confirmed=True)
    assert unknown.error is not None and unknown.error.startswith("HttpHandleError: no fixture response")


def test_tampered_skill_raises_and_leaves_a_refused_record(runner: SkillRunner, registry: Registry,
                                                           home: KaviHome) -> None:
    registry["echo"].path.write_text(textwrap.dedent(ECHO) + "\n# edited\n", encoding="utf-8")
    with pytest.raises(TrustError, match="hash mismatch") as info:
        runner.run("echo", {"text": "a"}, confirmed=False)
    [record] = runner.log.read_all()
    assert info.value.record == record
    assert record.status == "REFUSED" and record.refusal == "TAMPERED" and not record.success
    assert record.output_json is None and record.source_hash == registry["echo"].sha256
    assert record.error is not None and record.error.startswith("TrustError: hash mismatch for trusted skill 'echo'")
    assert str(home.root) not in str(info.value) and str(home.root) not in record.error


def test_top_level_failure_of_trusted_skill_is_a_failure_record(runner: SkillRunner, registry: Registry) -> None:
    registry.install("echo", ECHO + "\nraise RuntimeError('no')\n")
    record = runner.run("echo", {"text": "a"}, confirmed=False)
    assert not record.success
    assert record.error is not None and record.error.startswith("SkillLoadError:")
    assert "RuntimeError: no" in record.error


def test_run_leaves_no_module_named_after_the_skill(runner: SkillRunner) -> None:
    runner.run("echo", {"text": "a"}, confirmed=False)
    assert "echo" not in sys.modules and "skills.echo" not in sys.modules
    # Only the loader's own name for the skill (the one the gates use too), never an importable path's.
    assert [m for m in sys.modules if m.endswith("echo") or ".echo" in m] == []


def test_list_skills_describes_and_reports_broken(registry: Registry, loader: TrustLoader) -> None:
    registry["read_note"].path.write_text("# tampered\n", encoding="utf-8")
    infos = {i.name: i for i in list_skills(registry.values(), loader=loader)}
    echo = infos["echo"]
    assert echo.class_name == "Echo" and echo.description == "Repeat text."
    assert echo.input_schema is not None and echo.input_schema["required"] == ["text"]
    assert echo.output_schema is not None and set(echo.output_schema["properties"]) == {"text", "length"}
    assert echo.to_dict()["side_effect_class"] == "READ_ONLY"
    broken = infos["read_note"]
    assert broken.error is not None and broken.error.startswith("TrustError: hash mismatch")
    assert [i.name for i in list_skills(registry.values(), loader=loader)] == sorted(registry)


def test_runner_with_fsync_log(make_runner: Callable[..., SkillRunner], home: KaviHome) -> None:
    log = ExecutionLog(home.root / "fsynced.jsonl", fsync=True)
    runner = make_runner()
    runner.log = log
    record = runner.run("echo", {"text": "z"}, confirmed=False)
    assert log.read_all() == [record]
