"""The edge of the settings: a child's environment as a value, and the one writer of this process's environment."""

import json
import os
import subprocess
import sys

import pytest

from kavi.process_env import export, export_defaults, exported, replace_environment
from kavi.settings import child_environment, read_setting


def test_a_child_environment_is_this_processs_with_the_overrides_and_changes_nothing_here(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_DAGSTER_LOG", "INFO")
    monkeypatch.delenv("KAVI_HOME", raising=False)
    env = child_environment({"KAVI_HOME": "/srv/kavi"})
    assert env["KAVI_HOME"] == "/srv/kavi" and env["KAVI_DAGSTER_LOG"] == "INFO"
    assert {k: v for k, v in env.items() if k != "KAVI_HOME"} == dict(os.environ)
    assert "KAVI_HOME" not in os.environ


def test_exported_variables_hold_for_the_block_and_are_restored_or_unset_after_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_DAGSTER_LOG", "INFO")
    monkeypatch.delenv("KAVI_HOME", raising=False)
    with pytest.raises(RuntimeError), exported({"KAVI_DAGSTER_LOG": "debug", "KAVI_HOME": "/srv/kavi"}):
        assert read_setting("dagster_log") == "DEBUG" and read_setting("home") == "/srv/kavi"
        raise RuntimeError("the block failed")
    assert os.environ["KAVI_DAGSTER_LOG"] == "INFO" and "KAVI_HOME" not in os.environ
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    export({"DAGSTER_HOME": "/srv/dagster"})
    assert read_setting("dagster_home") == "/srv/dagster"


def test_a_replaced_environment_holds_exactly_the_variables_given(monkeypatch: pytest.MonkeyPatch) -> None:
    saved = dict(os.environ)
    try:
        monkeypatch.setenv("KAVI_LLM_API_KEY", "sk-server-secret")
        replace_environment({"HOME": "/job/home", "TMPDIR": "/job/tmp"})
        assert dict(os.environ) == {"HOME": "/job/home", "TMPDIR": "/job/tmp"}
        # The process's own environment, not only the mapping: a child started without env= inherits it.
        code = "import json, os; print(json.dumps(dict(os.environ)))"
        seen = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                         check=True).stdout)
        assert "KAVI_LLM_API_KEY" not in seen and (seen["HOME"], seen["TMPDIR"]) == ("/job/home", "/job/tmp")
        assert not set(seen) & (set(saved) - {"HOME", "TMPDIR"})
    finally:
        replace_environment(saved)


def test_defaults_are_set_only_where_the_environment_holds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_DAGSTER_LOG", "INFO")
    monkeypatch.delenv("KAVI_HOME", raising=False)
    export_defaults({"KAVI_DAGSTER_LOG": "DEBUG", "KAVI_HOME": "/srv/kavi"})
    assert os.environ["KAVI_DAGSTER_LOG"] == "INFO"  # a person's value wins
    assert os.environ["KAVI_HOME"] == "/srv/kavi"
    monkeypatch.delenv("KAVI_HOME")


@pytest.mark.parametrize(("given", "seen"), [(None, "__all__"), ("", ""), ("logfire", "logfire")])
def test_the_kavi_command_loads_no_pydantic_plugins_unless_a_person_asks(given: str | None, seen: str) -> None:
    code = ("import atexit, os, sys\n"
            "sys.argv = ['kavi', '--version']\n"
            "atexit.register(lambda: print('plugins=' + repr(os.environ.get('PYDANTIC_DISABLE_PLUGINS'))))\n"
            "from kavi_assets.cli.main import main\n"
            "main()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if given is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = given
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"plugins={seen!r}" in out.stdout
