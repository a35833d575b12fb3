"""Proposal text a person reads holds no control characters but line breaks and tabs; fixture URLs are http(s);
a path that is not a regular file is refused from its type. Data in examples stays as the skill needs it."""

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from kavi.proposals.model import RECORDED, Proposal, ProposalError, load_proposal, parse_proposal, parse_proposal_text
from kavi.proposals.text import check_fixture_url, control_character_problem, printable
from tests.factories import REPO

TRICKS = [
    pytest.param("Count the words\x00 in a text.", "U+0000 (NUL)", id="nul"),
    pytest.param("Count the words.\rDelete everything.", "carriage return not followed by a line feed",
                 id="lone-cr"),
    pytest.param("Count the words \x1b[2J\x1b[31min a text.", "U+001B (ESC)", id="esc-sequence"),
    pytest.param("Count the words \x9b31m in a text.", "U+009B (CSI)", id="c1-csi"),
    pytest.param("Count the words \x85 in a text.", "U+0085 (NEL)", id="c1-nel"),
    pytest.param("Count the words\x7f in a text.", "U+007F (DEL)", id="del"),
    pytest.param("Count the words\x08\x08\x08 in a text.", "U+0008 (BS)", id="backspace"),
    pytest.param("Count the words\x0b in a text.", "U+000B (VT)", id="vertical-tab"),
]


def _one_line_refusal(err: pytest.ExceptionInfo[ProposalError], *needles: str) -> str:
    text = str(err.value)
    assert "\n" not in text and "\r" not in text, repr(text)
    assert text.isprintable(), repr(text)
    for needle in needles:
        assert needle in text, text
    return text


@pytest.mark.parametrize(("text", "needle"), TRICKS)
def test_control_characters_in_the_description_are_refused(proposal_data: dict[str, Any], text: str,
                                                           needle: str) -> None:
    proposal_data["description"] = text
    with pytest.raises(ProposalError) as err:
        parse_proposal(proposal_data, "p.yaml")
    _one_line_refusal(err, "p.yaml", "description: contains", needle)


@pytest.mark.parametrize(("text", "needle"), TRICKS)
def test_control_characters_in_a_field_description_are_refused(proposal_data: dict[str, Any], text: str,
                                                                needle: str) -> None:
    proposal_data["outputs"] = [{"name": "count", "type": "int", "description": text}]
    with pytest.raises(ProposalError) as err:
        parse_proposal(proposal_data, "p.yaml")
    _one_line_refusal(err, "outputs[0].description: contains", needle)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize(("escape", "needle"), [("\\u0000", "NUL"), ("\\r", "carriage return"),
                                                ("\\u001b[31m", "ESC"), ("\\u009b", "CSI")])
def test_escaped_controls_in_a_file_are_refused(tmp_path: Path, proposal_data: dict[str, Any], fmt: str,
                                                escape: str, needle: str) -> None:
    """JSON escapes and YAML double-quoted escapes are how such characters reach a file (the YAML reader refuses
    them raw); both are refused at load."""
    marker = "@@DESCRIPTION@@"
    proposal_data["description"] = marker
    text = json.dumps(proposal_data) if fmt == "json" else yaml.safe_dump(proposal_data, default_style='"')
    path = tmp_path / f"p.{fmt}"
    path.write_text(text.replace(marker, f"Count the words {escape} in a text."), encoding="utf-8")
    with pytest.raises(ProposalError) as err:
        load_proposal(path)
    _one_line_refusal(err, str(path), "description", needle)


def test_raw_controls_in_a_yaml_file_are_refused_by_the_reader(tmp_path: Path, proposal_data: dict[str, Any]) -> None:
    proposal_data["description"] = "@@D@@"
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(proposal_data).replace("@@D@@", "Count the words \x1b[31m in a text."),
                    encoding="utf-8")
    with pytest.raises(ProposalError) as err:
        load_proposal(path)
    _one_line_refusal(err, "malformed YAML")


@pytest.mark.parametrize("text", ["line one\nline two\n", "a\ttabbed\tline here", "windows\r\nline ends\r\n"])
def test_line_breaks_tabs_and_crlf_are_kept_in_text(proposal_data: dict[str, Any], text: str) -> None:
    proposal_data["description"] = text
    proposal_data["inputs"] = [{"name": "text", "type": "str", "description": text}]
    prop = parse_proposal(proposal_data)
    assert prop.description == text and prop.inputs[0].description == text


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_an_honest_proposal_with_crlf_line_ends_loads(tmp_path: Path, proposal_data: dict[str, Any],
                                                      fmt: str) -> None:
    proposal_data["description"] = "Count the words in a text,\nsplitting on whitespace.\n"
    text = json.dumps(proposal_data, indent=2) if fmt == "json" else yaml.safe_dump(proposal_data)
    assert "\r" not in text
    lf, crlf = tmp_path / f"lf.{fmt}", tmp_path / f"crlf.{fmt}"
    lf.write_bytes(text.encode("utf-8"))
    crlf.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    assert b"\r\n" in crlf.read_bytes()
    assert load_proposal(crlf) == load_proposal(lf)


def test_a_crlf_block_scalar_description_loads_with_line_feeds(tmp_path: Path) -> None:
    text = ("name: word_count\n"
            "description: |\n  Count the words in a text.\n  Split on whitespace.\n"
            "side_effect_class: READ_ONLY\n"
            "inputs: [{name: text, type: str, description: \"the text\"}]\n"
            "outputs: [{name: count, type: int}]\n"
            "examples:\n  - {input: {text: \"a b\"}, expected: {count: 2}}\n")
    path = tmp_path / "crlf.yaml"
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    assert load_proposal(path).description == "Count the words in a text.\nSplit on whitespace.\n"


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("name", "word\x1b[31mcount", "snake_case"),
    ("name", "word_count\n", "snake_case"),
])
def test_control_characters_in_a_name_are_refused_and_shown_escaped(proposal_data: dict[str, Any], field: str,
                                                                     value: str, needle: str) -> None:
    proposal_data[field] = value
    with pytest.raises(ProposalError) as err:
        parse_proposal(proposal_data, "p.yaml")
    _one_line_refusal(err, needle, "name")


@pytest.mark.parametrize("type_text", ["str\x1b", "int\r", "str\x00", "\x85str", "str\n"])
def test_control_characters_in_a_field_type_are_refused(proposal_data: dict[str, Any], type_text: str) -> None:
    proposal_data["inputs"] = [{"name": "text", "type": type_text}]
    with pytest.raises(ProposalError) as err:
        parse_proposal(proposal_data)
    _one_line_refusal(err, "inputs[0].type", "control character")


def test_unknown_example_fields_are_named_escaped(proposal_data: dict[str, Any]) -> None:
    proposal_data["examples"] = [{"input": {"text": "a", "\x1b[2Jx": 1}, "expected": {"count": 1}}]
    with pytest.raises(ProposalError) as err:
        parse_proposal(proposal_data)
    _one_line_refusal(err, "unknown fields", "\\x1b[2Jx")


def test_control_characters_in_example_data_are_kept(proposal_data: dict[str, Any]) -> None:
    """Examples are the skill's data, written as JSON or YAML escapes: a skill that strips terminal escapes
    needs them in its inputs, and a vault file or an HTTP fixture may hold any text."""
    dirty = "a\x1b[31mb\x00c\rd\x9be"
    proposal_data["inputs"] = [{"name": "text", "type": "str"}]
    proposal_data["outputs"] = [{"name": "clean", "type": "str"}, {"name": "count", "type": "int"}]
    proposal_data["side_effect_class"] = "NETWORK"
    proposal_data["examples"] = [{"input": {"text": dirty}, "expected": {"clean": "abcde", "count": 1},
                                  "http_responses": {"https://api.example.org/x": {"body": dirty}},
                                  "vault_files": {"notes/a.md": dirty}}]
    proposal_data["holdout_examples"] = [{"input": {"text": "\x07"}, "expected": {"clean": "", "count": 0}}]
    prop = parse_proposal(proposal_data)
    assert prop.examples[0].input["text"] == dirty
    assert prop.examples[0].vault_files["notes/a.md"] == dirty
    loaded = parse_proposal_text(json.dumps(proposal_data), "p.json")
    assert loaded == prop


def _with_fixture(data: dict[str, Any], url: str) -> dict[str, Any]:
    data["side_effect_class"] = "NETWORK"
    data["examples"] = [{"input": {"text": "a"}, "expected": {"count": 1}, "http_responses": {url: {"ok": True}}}]
    return data


@pytest.mark.parametrize(("url", "needle"), [
    ("file:///etc/passwd", "scheme 'file'"),
    ("ftp://ftp.example.org/data.json", "scheme 'ftp'"),
    ("data:application/json,{}", "scheme 'data'"),
    ("javascript:alert(1)", "scheme 'javascript'"),
    ("gopher://gopher.example.org/1", "scheme 'gopher'"),
    ("ws://api.example.org/stream", "scheme 'ws'"),
    ("api.example.org/status", "no scheme"),
    ("//api.example.org/status", "no scheme"),
    ("/status", "no scheme"),
    ("https:///status", "no host"),
    ("http://[::1/status", "not a valid URL"),
    ("https://api.example.org/\x1b[2Jstatus", "U+001B (ESC)"),
    ("https://api.example.org/status\r\nX-Injected: 1", "control character"),
])
def test_fixture_urls_other_than_http_and_https_are_refused(proposal_data: dict[str, Any], url: str,
                                                            needle: str) -> None:
    with pytest.raises(ProposalError) as err:
        parse_proposal(_with_fixture(proposal_data, url), "p.yaml")
    _one_line_refusal(err, "examples[0].http_responses", "fixture URL", needle)


@pytest.mark.parametrize("url", ["https://api.example.org/status", "http://data.example.net/list?page=2",
                                 "HTTPS://API.example.org/x", "http://localhost:8080/v1?q=a%20b#frag"])
def test_http_and_https_fixture_urls_load(proposal_data: dict[str, Any], url: str) -> None:
    assert check_fixture_url(url) == url
    prop = parse_proposal(_with_fixture(proposal_data, url))
    assert list(prop.examples[0].http_responses) == [url]


def test_a_recorded_spec_reads_back_under_the_checks_of_its_day(proposal_data: dict[str, Any]) -> None:
    """The ledger reads what it recorded: a spec that predates these checks is not made unreadable by them."""
    data = _with_fixture(proposal_data, "file:///etc/hosts")
    data["description"] = "Count the words \x1b[31m in a text."
    with pytest.raises(ProposalError):
        parse_proposal(data)
    assert parse_proposal(data, recorded=True).description == data["description"]
    assert Proposal.model_validate_json(json.dumps(data), context=RECORDED).description == data["description"]


def test_printable_escapes_only_what_a_terminal_would_obey() -> None:
    assert printable("café notes.yaml") == "café notes.yaml"
    assert printable("a\x1b[2Jb\nc\x00") == "a\\x1b[2Jb\\nc\\x00"
    assert control_character_problem("tab\tand\nline\r\nend", multiline=True) is None
    assert control_character_problem("tab\t", multiline=False) is not None


# ------------------------------------------------------------------ paths that are not regular files


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: a FIFO opened for reading would block until a writer came."""
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _special(tmp_path: Path, kind: str) -> tuple[Path, str]:
    if kind == "directory":
        path = tmp_path / "dir.yaml"
        path.mkdir()
        return path, "a directory"
    if kind in ("fifo", "fifo-no-suffix"):
        path = tmp_path / ("pipe.yaml" if kind == "fifo" else "pipe")
        os.mkfifo(path)
        return path, "a named pipe (FIFO)"
    if kind == "symlink-to-fifo":
        target = tmp_path / "pipe.yaml"
        os.mkfifo(target)
        link = tmp_path / "link.yaml"
        link.symlink_to(target)
        return link, "a named pipe (FIFO)"
    return Path(kind), "a character device"


@pytest.mark.parametrize("kind", ["directory", "fifo", "fifo-no-suffix", "symlink-to-fifo", "/dev/null",
                                  "/dev/zero"])
def test_load_proposal_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    path, word = _special(tmp_path, kind)
    with _deadline(10), pytest.raises(ProposalError) as err:
        load_proposal(path)
    _one_line_refusal(err, str(path), word, "not a regular file")


def test_shipped_example_proposals_all_load() -> None:
    paths = sorted((REPO / "kavi" / "examples" / "proposals").glob("*.yaml"))
    assert paths
    for path in paths:
        assert load_proposal(path).name == path.stem
