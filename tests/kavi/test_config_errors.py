"""Errors that hide or lie. Bad configuration is refused before any run with one line naming the
variable (exit 2); a step that crashes prints its root cause and the command exits non-zero; a full disk, a corrupt
ledger and an endpoint that answers HTML each end in one clear line, never a traceback."""

import errno
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.forge.build import run_build
from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.packet import prepare_packet
from kavi.forge.research import research
from kavi.forge.verify import verify
from kavi.home import KaviHome
from kavi.lifecycle import FailureKind
from kavi.settings import validate_config
from kavi.settings_parsers import ConfigError
from kavi_assets.assets import forge as forge_assets
from kavi_assets.cli.main import app
from tests.stub_model import completion, stub_client, stub_proposal

runner = CliRunner()


def _clean(out: str) -> None:
    assert "Traceback" not in out
    assert "DagsterExecutionStepExecutionError" not in out


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"KAVI_LLM_TIMEOUT_S": "abc"}, "KAVI_LLM_TIMEOUT_S"),
        ({"KAVI_LLM_TIMEOUT_S": "-1"}, "KAVI_LLM_TIMEOUT_S"),
        ({"KAVI_LLM_TIMEOUT_S": "nan"}, "KAVI_LLM_TIMEOUT_S"),
        ({"KAVI_LLM_MAX_PROMPT_CHARS": "lots"}, "KAVI_LLM_MAX_PROMPT_CHARS"),
        ({"KAVI_LLM_BASE_URL": "http://127.0.0.1:9/v1", "KAVI_LLM_MODELS": ""}, "KAVI_LLM_MODELS"),
        ({"KAVI_LLM_BASE_URL": "http://127.0.0.1:9/v1", "KAVI_LLM_MODELS": " , "}, "KAVI_LLM_MODELS"),
        ({"KAVI_LLM_BASE_URL": "localhost:8000", "KAVI_LLM_MODELS": "m"}, "KAVI_LLM_BASE_URL"),
        ({"KAVI_LLM_COSTS": "m=cheap"}, "KAVI_LLM_COSTS"),
        ({"KAVI_AUTO_APPROVE": "GOD_MODE"}, "KAVI_AUTO_APPROVE"),
        ({"KAVI_RECORDED_SPEED": "fast"}, "KAVI_RECORDED_SPEED"),
        ({"KAVI_RESEARCH_ADVICE": "yes please"}, "KAVI_RESEARCH_ADVICE"),
        ({"KAVI_DAGSTER_LOG": "LOUD"}, "KAVI_DAGSTER_LOG"),
        ({"KAVI_WARM_RUNNER": "maybe"}, "KAVI_WARM_RUNNER"),
        ({"KAVI_FORGE_WAIT_S": "forever"}, "KAVI_FORGE_WAIT_S"),
        ({"KAVI_RESOURCE_DEADLINE_S": "0"}, "KAVI_RESOURCE_DEADLINE_S"),
        ({"KAVI_RESOURCE_BUDGET_S": "-1"}, "KAVI_RESOURCE_BUDGET_S"),
    ],
)
def test_each_bad_setting_is_named_with_its_expected_form(env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_config(env)
    message = str(info.value)
    assert needle in message and "\n" not in message
    assert "must" in message  # the expected form is stated


def test_good_settings_pass() -> None:
    validate_config({})
    validate_config({"KAVI_LLM_BASE_URL": "http://localhost:8000/v1", "KAVI_LLM_MODELS": "a, b",
                     "KAVI_LLM_TIMEOUT_S": "120", "KAVI_LLM_MAX_PROMPT_CHARS": "30000", "KAVI_LLM_COSTS": "a=0.1",
                     "KAVI_AUTO_APPROVE": "read_only", "KAVI_RECORDED_SPEED": "0", "KAVI_RESEARCH_ADVICE": "1",
                     "KAVI_DAGSTER_LOG": "info", "KAVI_WARM_RUNNER": "0", "KAVI_RESOURCE_DEADLINE_S": "30",
                     "KAVI_RESOURCE_BUDGET_S": "0"})


def _propose(tmp_path: Path, data: dict[str, Any]) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(data))
    res = runner.invoke(app, ["propose", str(f)])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"KAVI_LLM_TIMEOUT_S": "abc", "KAVI_LLM_BASE_URL": "http://127.0.0.1:9/v1", "KAVI_LLM_MODELS": "m"},
         "KAVI_LLM_TIMEOUT_S"),
        ({"KAVI_LLM_BASE_URL": "http://127.0.0.1:9/v1", "KAVI_LLM_MODELS": ""}, "KAVI_LLM_MODELS"),
    ],
)
def test_forge_refuses_bad_configuration_before_any_run(
    kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str], needle: str,
) -> None:
    _propose(tmp_path, proposal_data)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    res = runner.invoke(app, ["forge", "word_count"])
    assert res.exit_code == 2, res.output
    _clean(res.output)
    assert needle in res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1, res.output
    status = json.loads(runner.invoke(app, ["status", "word_count", "--json"]).output)
    assert status[0]["attempts"] == 0  # nothing was started


@pytest.mark.slow
def test_step_crash_prints_the_root_cause_and_exits_non_zero(
    kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    _propose(tmp_path, proposal_data)

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("the build step fell over")

    monkeypatch.setattr(forge_assets, "run_build", crash)
    res = runner.invoke(app, ["forge", "word_count"])
    assert res.exit_code == 1, res.output
    _clean(res.output)
    assert "KeyError" in res.output and "the build step fell over" in res.output


@pytest.mark.slow
def test_full_disk_in_a_step_is_one_clear_line(
    kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    _propose(tmp_path, proposal_data)
    from kavi.ledger.artifacts import ArtifactStore

    def full(self: ArtifactStore, data: bytes, kind: str) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ArtifactStore, "put", full)
    res = runner.invoke(app, ["forge", "word_count"])
    assert res.exit_code == 3, res.output
    _clean(res.output)
    assert "disk is full" in res.output and "free space" in res.output
    from kavi.forge.recovery import open_attempts
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger

    assert open_attempts(ForgeRecords(Ledger(kavi_home.ledger_path))) == []  # nothing left for a sweep


def test_full_disk_outside_a_run_is_one_clear_line(
    kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(proposal_data))
    from kavi.ledger.artifacts import ArtifactStore

    def full(self: ArtifactStore, data: bytes, kind: str) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ArtifactStore, "put", full)
    monkeypatch.setattr("kavi.home.KaviHome.ensure", lambda self: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device", str(self.root))))
    res = runner.invoke(app, ["propose", str(f)])
    assert res.exit_code == 3, res.output  # the environment, not a usage error
    _clean(res.output)
    assert "disk is full" in res.output and "free space" in res.output
    assert len([ln for ln in res.output.splitlines() if ln.strip()]) == 1


def test_corrupt_ledger_is_one_clear_line_and_doctor_names_the_fix(
    kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any],
) -> None:
    _propose(tmp_path, proposal_data)
    kavi_home.ledger_path.write_bytes(b"\x00garbage, not a DuckDB file\xff" * 512)
    for args in (["status"], ["forge", "word_count"], ["lineage", "word_count"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 3, (args, res.output)  # the ledger file: the environment
        _clean(res.output)
        assert "corrupt" in res.output and "move it aside" in res.output, res.output
    res = runner.invoke(app, ["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(res.output)}
    assert checks["ledger"]["status"] == "fail"
    assert "corrupt" in checks["ledger"]["detail"]
    assert "move it aside" in checks["ledger"]["fix"]
    assert res.exit_code == 1


def test_endpoint_answering_html_is_a_recorded_failure_not_a_crash(
    kavi_home: KaviHome, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = ForgeContext.open(kavi_home, lambda: stub_client(stub_endpoint, retry_base_s=0.01))
    intake(ctx, stub_proposal(), None)
    for reply in [(200, {"Content-Type": "text/html"}, b"<html><body>Welcome to nginx!</body></html>"),
                  (200, {"Content-Type": "application/json"}, b"{not json"),
                  (200, {"Content-Type": "application/json"}, b'{"unexpected": true}')]:
        stub_endpoint.script(reply)
        prepare_packet(ctx, "word_count", run_id=None)
        build = run_build(ctx, "word_count", run_id=None)
        assert not build.ok and build.failure is not None
        assert build.failure.stage == "llm", build.failure
        assert "OpenAI-compatible" in build.failure.message and "KAVI_LLM_BASE_URL" in build.failure.message
        out = verify(ctx, "word_count", run_id=None)
        note = research(ctx, "word_count", out)
        # Retried like a 5xx, then the endpoint's failure, not the model's.
        assert note.kind is FailureKind.ENDPOINT_UNAVAILABLE and len(stub_endpoint.requests) == 4
    stub_endpoint.script(completion("fine"))


@pytest.mark.slow
def test_missing_gate_tool_is_one_line_saying_what_to_do(
    kavi_home: KaviHome, stub_endpoint: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kavi.gates.tools as tools
    from kavi.sandbox.runner import SandboxResult
    from kavi.sandbox.warm import run_warm as real
    from tests.stub_model import MODEL, files_answer

    def run(argv: list[str], **kwargs: Any) -> SandboxResult:
        if "ruff" in Path(argv[0]).name or argv[1:3] == ["-m", "ruff"]:
            return SandboxResult(127, "", "prlimit: failed to execute ruff: No such file or directory", 0.01, False,
                                 None, {})
        return real(argv, **kwargs)

    monkeypatch.setattr(tools, "run_warm", run)
    monkeypatch.setenv("KAVI_LLM_BASE_URL", stub_endpoint.base_url)
    monkeypatch.setenv("KAVI_LLM_MODELS", MODEL)
    ctx = ForgeContext.open(kavi_home, lambda: stub_client(stub_endpoint))
    intake(ctx, stub_proposal(), None)
    stub_endpoint.script(files_answer())
    res = runner.invoke(app, ["forge", "word_count"])
    assert res.exit_code == 3, res.output  # the environment, not a verdict
    _clean(res.output)
    assert "INFRASTRUCTURE" in res.output and "not the model's failure" in res.output
    assert "ruff tool was not found" in res.output and "pip install" in res.output
    assert ctx.records.model_outcomes() == []
