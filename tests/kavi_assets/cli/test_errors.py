"""The CLI's expected errors are found among the modules already imported: reporting one imports nothing new (not
the model client, the gates or the forge's steps), and each still names the class its module defines."""

import importlib
import json
import subprocess
import sys
from pathlib import Path

from kavi_assets.cli.errors import EXPECTED_ERRORS, expected_errors, is_environment


def test_every_listed_error_is_the_class_its_module_defines() -> None:
    for module, name in EXPECTED_ERRORS:
        cls = getattr(importlib.import_module(module), name)
        assert isinstance(cls, type) and issubclass(cls, BaseException), (module, name)
        assert cls.__module__ == module, f"{name} is defined in {cls.__module__}, not {module}"
    assert len(expected_errors()) == len(EXPECTED_ERRORS)  # all imported now: every one of them


def test_an_error_of_an_imported_module_is_expected_and_one_of_the_environment_says_so() -> None:
    from kavi.ledger.store import LedgerLockedError
    from kavi.llm.client import LLMError, LLMErrorKind
    from kavi.settings_parsers import ConfigError

    assert ConfigError in expected_errors() and LLMError in expected_errors()
    assert is_environment(LedgerLockedError("the ledger is locked"))
    assert is_environment(LLMError(LLMErrorKind.UNAVAILABLE, "the endpoint is down", "m"))
    assert not is_environment(ConfigError("KAVI_X: not a number"))


def test_reporting_an_error_imports_nothing_new() -> None:
    code = (
        "import json, sys\n"
        "from kavi_assets.cli.errors import expected_errors, is_environment\n"
        "from kavi.settings_parsers import ConfigError\n"
        "before = set(sys.modules)\n"
        "found = expected_errors()\n"
        "environment = is_environment(ConfigError('x'))\n"
        "print(json.dumps({'new': sorted(set(sys.modules) - before), 'config': ConfigError in found,\n"
        "                  'environment': environment, 'openai': 'openai' in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[3], timeout=120)
    seen = json.loads(out.stdout)
    assert seen == {"new": [], "config": True, "environment": False, "openai": False}, seen
