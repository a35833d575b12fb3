"""read_setting: one field from the process environment, validated alone."""

import pytest

from kavi.settings import config_problems, read_setting
from kavi.settings_parsers import ConfigError


def test_a_field_read_alone_is_not_judged_against_an_unread_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.delenv("KAVI_LLM_MODELS", raising=False)
    assert read_setting("llm_base_url") == "http://127.0.0.1:8000/v1"
    # the whole settings still name the missing models
    assert any("KAVI_LLM_MODELS" in p for p in config_problems())


def test_a_bad_value_read_alone_is_one_line_naming_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_LLM_BASE_URL", "localhost:8000")
    with pytest.raises(ConfigError, match="KAVI_LLM_BASE_URL") as err:
        read_setting("llm_base_url")
    assert "\n" not in str(err.value)
    monkeypatch.setenv("KAVI_LEDGER_URL", "sqlite:///x.db")
    with pytest.raises(ConfigError, match="KAVI_LEDGER_URL"):
        read_setting("ledger_url")


def test_variables_without_the_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_HOME", "/tmp/dagster-home")
    monkeypatch.setenv("COLUMNS", "not-a-number")
    monkeypatch.setenv("KAVI_LEDGER_STATS_DIR", "/tmp/stats")
    assert read_setting("dagster_home") == "/tmp/dagster-home"
    assert read_setting("columns") == "not-a-number"  # text: the console ignores a width that is not a number
    assert read_setting("ledger_stats_dir") == "/tmp/stats"
    assert config_problems({"COLUMNS": "not-a-number"}) == []


def test_every_unset_field_reads_as_its_default_and_a_set_one_as_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    from kavi.settings import KaviSettings, env_name

    defaults = KaviSettings.from_environ({})
    for field in KaviSettings.model_fields:
        if field == "env_secrets":
            continue
        monkeypatch.delenv(env_name(field), raising=False)
        assert read_setting(field) == getattr(defaults, field), field
    monkeypatch.setenv("KAVI_RUN_WORKERS", "7")
    monkeypatch.setenv("KAVI_SANDBOX_OFF", "seccomp,net")
    assert read_setting("run_workers") == 7
    assert read_setting("sandbox_off") == ("net", "seccomp")
    monkeypatch.setenv("KAVI_RUN_WORKERS", "")  # blank: the default again
    assert read_setting("run_workers") == defaults.run_workers
