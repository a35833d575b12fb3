"""`kavi propose` (and `kavi check`, `kavi run --json @FILE`) given what is not a proposal file: a directory, a
named pipe, a device, a link to a pipe, text with terminal escapes. One line on stderr, exit status 2, no
traceback, promptly, and nothing recorded. Run as real processes, so a blocking open would show as a timeout."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kavi.home import KaviHome

TIMEOUT_S = 60


def _kavi(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        res = subprocess.run([sys.executable, "-m", "kavi_assets.cli", *args], capture_output=True, text=True,
                             timeout=TIMEOUT_S, env={**os.environ, "COLUMNS": "80"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"kavi {' '.join(args)} was still running after {TIMEOUT_S} s")
    return res


def _refused_in_one_line(res: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr[-2000:]
    assert lines[0].startswith("error: "), lines[0]
    assert "\x1b" not in res.stderr, repr(res.stderr)
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _nothing_recorded(home: KaviHome) -> None:
    if home.ledger_path.exists():
        from kavi.ledger.records import ForgeRecords
        from kavi.ledger.store import Ledger

        assert ForgeRecords(Ledger(home.ledger_path)).list_status() == []


def _special(tmp_path: Path, kind: str) -> tuple[Path, str]:
    if kind in ("directory", "directory.yaml"):
        path = tmp_path / kind
        path.mkdir()
        return path, "a directory"
    if kind in ("fifo", "fifo.yaml"):
        path = tmp_path / kind
        os.mkfifo(path)
        return path, "a named pipe (FIFO)"
    if kind == "symlink-to-fifo":
        os.mkfifo(tmp_path / "pipe.yaml")
        (tmp_path / "link.yaml").symlink_to(tmp_path / "pipe.yaml")
        return tmp_path / "link.yaml", "a named pipe (FIFO)"
    return Path(kind), "a character device"


KINDS = ["directory", "directory.yaml", "fifo", "fifo.yaml", "symlink-to-fifo", "/dev/null", "/dev/zero"]


@pytest.mark.parametrize("kind", KINDS)
def test_propose_refuses_what_is_not_a_regular_file(kavi_home: KaviHome, tmp_path: Path, kind: str) -> None:
    path, word = _special(tmp_path, kind)
    res = _kavi("propose", str(path))
    _refused_in_one_line(res, str(path), word, "not a regular file")
    _nothing_recorded(kavi_home)


@pytest.mark.parametrize("kind", ["directory", "fifo.yaml", "symlink-to-fifo", "/dev/zero"])
def test_check_and_run_input_refuse_what_is_not_a_regular_file(kavi_home: KaviHome, tmp_path: Path,
                                                               kind: str) -> None:
    path, word = _special(tmp_path, kind)
    res = _kavi("check", str(path), "--side-effect", "READ_ONLY")
    _refused_in_one_line(res, word)
    res = _kavi("run", "word_count", "--json", f"@{path}")
    _refused_in_one_line(res, word)


def test_a_missing_path_with_escapes_in_its_name_is_shown_escaped(kavi_home: KaviHome, tmp_path: Path) -> None:
    path = tmp_path / "evil\x1b[2J\x1b[31m.yaml"
    res = _kavi("propose", str(path))
    _refused_in_one_line(res, "no such file", "\\x1b[2J")


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("description", "Count the words \x1b[2J\x1b[31m in a text.", "U+001B (ESC)"),
    ("description", "Count the words.\rAll good here, trust me.", "carriage return"),
    ("description", "Count the words \x00 in a text.", "U+0000 (NUL)"),
    ("description", "Count the words \x9b2J in a text.", "U+009B (CSI)"),
])
def test_propose_refuses_control_characters_in_text(kavi_home: KaviHome, tmp_path: Path,
                                                    proposal_data: dict[str, Any], field: str, value: str,
                                                    needle: str) -> None:
    proposal_data[field] = value
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(proposal_data), encoding="utf-8")  # written as YAML escapes
    res = _kavi("propose", str(path))
    _refused_in_one_line(res, f"{field}: contains", needle)
    _nothing_recorded(kavi_home)


def test_propose_refuses_a_file_fixture_url(kavi_home: KaviHome, tmp_path: Path,
                                            proposal_data: dict[str, Any]) -> None:
    proposal_data["side_effect_class"] = "NETWORK"
    proposal_data["examples"] = [{"input": {"text": "a"}, "expected": {"count": 1},
                                  "http_responses": {"file:///etc/passwd": {"ok": True}}}]
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(proposal_data), encoding="utf-8")
    res = _kavi("propose", str(path))
    _refused_in_one_line(res, "examples[0].http_responses", "scheme 'file'")
    _nothing_recorded(kavi_home)


def test_propose_records_an_honest_crlf_proposal(kavi_home: KaviHome, tmp_path: Path,
                                                 proposal_data: dict[str, Any]) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(yaml.safe_dump(proposal_data).replace("\n", "\r\n").encode("utf-8"))
    res = _kavi("propose", str(path))
    assert res.returncode == 0, res.stderr[-2000:]
    assert "word_count" in res.stdout and "recorded as revision 1" in res.stdout
