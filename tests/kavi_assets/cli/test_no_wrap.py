"""No line meant for scripts wraps when stdout is not a terminal, however long its paths.

CI runs this file (and the corpus test) a second time with a base temp longer than 150 characters.
"""

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kavi_assets.cli.main import app
from tests.factories import REPO

runner = CliRunner()
CLI_DIR = REPO / "kavi_assets" / "cli"


@pytest.fixture()
def deep(tmp_path: Path) -> Path:
    """A directory whose path alone is longer than any default console width."""
    path = tmp_path / ("d" * 70) / ("e" * 70) / ("f" * 70)
    path.mkdir(parents=True)
    assert len(str(path)) > 200
    return path


def _lines(output: str) -> list[str]:
    return [line.rstrip() for line in output.splitlines()]


@pytest.mark.parametrize(("content", "args", "suffix"), [
    (None, ["--side-effect", "READ_ONLY"], ": no such file"),
    ("def broken(:\n    pass\n", ["--side-effect", "READ_ONLY"], ": syntax error at line 1: "),
    (b"\xff\xfe not utf-8", ["--side-effect", "READ_ONLY"], ": not UTF-8 text"),
], ids=["missing", "syntax", "encoding"])
def test_kavi_check_error_lines_stay_whole(deep: Path, content: str | bytes | None, args: list[str],
                                           suffix: str) -> None:
    path = deep / "skill.py"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    res = runner.invoke(app, ["check", str(path), *args])
    assert res.exit_code == 2, res.output
    assert any(line.startswith(f"error: {path}{suffix}") for line in _lines(res.output)), res.output


def test_kavi_check_policy_error_line_stays_whole(deep: Path) -> None:
    path = deep / "skill.py"
    path.write_text("x = 1\n", encoding="utf-8")
    policy = deep / "missing-policy.yaml"
    res = runner.invoke(app, ["check", str(path), "--side-effect", "READ_ONLY", "--policy", str(policy)])
    assert res.exit_code == 2, res.output
    [line] = [line for line in _lines(res.output) if line.startswith("error:")]
    assert str(policy) in line and "cannot read the policy file" in line


def test_kavi_check_unknown_class_line_stays_whole(deep: Path) -> None:
    path = deep / "skill.py"
    path.write_text("x = 1\n", encoding="utf-8")
    cls = "NOT_A_CLASS_" * 12
    res = runner.invoke(app, ["check", str(path), "--side-effect", cls])
    assert res.exit_code == 2, res.output
    assert (f"error: unknown side-effect class {cls!r} (READ_ONLY, FILE_WRITE, NETWORK, SECRET_READ)"
            in _lines(res.output)), res.output


def test_expected_errors_of_other_commands_stay_whole(deep: Path) -> None:
    missing = deep / "proposal.yaml"
    res = runner.invoke(app, ["propose", str(missing), "--home", str(deep / "home")])
    assert res.exit_code == 2, res.output
    assert f"error: {missing}: no such file" in _lines(res.output), res.output


def test_plain_output_lines_stay_whole(deep: Path) -> None:
    out = deep / "schema.json"
    res = runner.invoke(app, ["schema", "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert f"wrote {out}" in _lines(res.output), res.output


def test_every_cli_console_is_made_unwrapping() -> None:
    """Every rich console of the CLI comes from one helper that turns wrapping off (soft wrap)."""
    offenders = []
    for path in sorted(CLI_DIR.glob("*.py")):
        if path.name == "console.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bConsole\(", line):
                offenders.append(f"{path.name}:{n}: {line.strip()}")
    assert not offenders, "use kavi_assets.cli.console.make_console():\n" + "\n".join(offenders)
    from kavi_assets.cli.console import make_console

    assert make_console().soft_wrap and make_console(stderr=True).soft_wrap
