"""Exit codes that mean one thing, per command. 0 done; 1 a verdict against (or a check that found a
problem); 2 usage or configuration; 3 the environment (a full disk, the ledger file, the model endpoint)."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi_assets.cli.main import app
from kavi_assets.cli.outcome import EXIT_STATUS_HELP

runner = CliRunner()

# Each command with arguments that are well-formed: what it does with them depends on the ledger alone.
READING_THE_LEDGER: dict[str, list[str]] = {
    "forge": ["forge", "word_count"],
    "status": ["status"],
    "lineage": ["lineage", "word_count"],
    "approve": ["approve", "word_count", "--by", "ada"],
    "retry": ["retry", "word_count", "--by", "ada"],
    "skills": ["skills"],
    "tools": ["tools", "--short"],
    "run": ["run", "word_count", "--json", '{"text": "a b"}'],
    "chain": ["chain", "--json", '{"steps": [{"skill": "word_count", "input": {"text": "a"}}]}'],
    "verify": ["verify"],
    "search": ["search", "count words"],
    "tree": ["tree", "word_count"],
    "economics": ["economics"],
    "registry": ["registry", "rebuild"],
    "holdout": ["holdout", "list", "word_count"],
    "reverify": ["reverify", "--all", "--json"],
    "decompose": ["decompose", "word_count"],
}


def _corrupt(home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(proposal_data))
    assert runner.invoke(app, ["propose", str(f)]).exit_code == 0
    home.ledger_path.write_bytes(b"\x00garbage, not a DuckDB file\xff" * 512)


@pytest.mark.parametrize("command", sorted(READING_THE_LEDGER))
def test_a_corrupt_ledger_is_the_environment_exit_3(
    command: str, kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any],
) -> None:
    _corrupt(kavi_home, tmp_path, proposal_data)
    res = runner.invoke(app, READING_THE_LEDGER[command])
    assert res.exit_code == 3, (command, res.output)
    assert "Traceback" not in res.output
    assert "corrupt" in res.output and "move it aside" in res.output, res.output


@pytest.mark.parametrize("command", sorted([*READING_THE_LEDGER, "propose", "doctor", "demo", "serve", "tail",
                                            "session", "replay", "ceremony", "attest", "policy", "schema", "check"]))
def test_a_bad_option_is_a_usage_error_exit_2(command: str, kavi_home: KaviHome) -> None:
    args = [*READING_THE_LEDGER.get(command, [command])[:1], "--no-such-option"]
    res = runner.invoke(app, args)
    assert res.exit_code == 2, (command, res.output)


def test_a_bad_setting_is_configuration_exit_2(kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_LLM_TIMEOUT_S", "abc")
    res = runner.invoke(app, ["forge", "word_count"])
    assert res.exit_code == 2 and "KAVI_LLM_TIMEOUT_S" in res.output


def test_doctor_on_a_corrupt_ledger_names_it_once_and_exits_1(
    kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any],
) -> None:
    _corrupt(kavi_home, tmp_path, proposal_data)
    res = runner.invoke(app, ["doctor", "--json"])
    assert res.exit_code == 1  # a check that found a problem
    checks = {c["name"]: c for c in json.loads(res.output)}
    assert checks["ledger"]["status"] == "fail" and "corrupt" in checks["ledger"]["detail"]
    # The checks that read the ledger say they could not, and point at it: none blames dagster.yaml.
    for name in ("stale runs", "abandoned attempts", "registry and trusted files", "re-verification"):
        assert checks[name]["detail"].startswith("not checked: the ledger cannot be read"), checks[name]
    assert "dagster.yaml" not in res.output


def test_reading_commands_on_a_fresh_home_exit_0(kavi_home: KaviHome) -> None:
    for args in (["status"], ["skills"], ["tools", "--short"], ["verify"], ["economics"], ["tail"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, (args, res.output)


def test_the_statuses_are_documented_in_help_and_readme() -> None:
    for code, words in ((0, "done"), (1, "a verdict against"), (2, "a usage error"), (3, "the environment")):
        assert f"{code} {words}" in EXIT_STATUS_HELP, code
    res = runner.invoke(app, ["--help"])
    assert "3 the" in " ".join(res.output.split())
    readme = " ".join(Path("README.md").read_text().split())
    assert "3 the environment failed" in readme
