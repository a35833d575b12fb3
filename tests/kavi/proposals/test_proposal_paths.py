"""Every path a proposal carries stays inside the vault.

A proposal whose example carries `vault_files` with an absolute or climbing path used to make the acceptance
runner write that file on the host during `kavi forge`. Now such a proposal is refused when it is validated
(`kavi propose`, the intake sensor: one line, exit 2, nothing recorded) and the runner's write helper refuses
the path again even for a proposal object built without validation.
"""

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kavi.gates.acceptance import _cases, _job
from kavi.gates.acceptance_runner import run_job
from kavi.home import KaviHome
from kavi.proposals.model import Example, Proposal, ProposalError, parse_proposal
from kavi.proposals.paths import MAX_VAULT_PATH_CHARS, check_vault_relpath, resolve_inside
from kavi_assets.cli.main import app
from tests.factories import REPO

ANSWERS = REPO / "kavi" / "examples" / "answers"
runner = CliRunner()

BAD_PATHS = [
    ("/tmp/x", "absolute"),
    ("/etc/passwd", "absolute"),
    ("../../x", ".."),
    ("notes/../../x", ".."),
    ("..", ".."),
    ("C:/x", "drive"),
    ("c:x", "drive"),
    ("\\\\server\\share\\x", "backslash"),
    ("notes\\x.md", "backslash"),
    ("a\x00b", "NUL"),
    ("a\nb", "control"),
    ("a\x1bb", "control"),
    ("", "empty"),
    ("notes//x.md", "empty component"),
    ("./x.md", "'.'"),
    ("notes/", "empty component"),
    ("~/x", "home"),
    ("a/" * 200 + "x", "long"),
    ("x" * 300, "long"),
]


def _ledger_untouched(home: KaviHome) -> None:
    """Nothing recorded: no proposal rows and no stored artifacts."""
    if home.ledger_path.exists():
        from kavi.ledger.records import ForgeRecords
        from kavi.ledger.store import Ledger

        assert ForgeRecords(Ledger(home.ledger_path)).list_status() == []
    assert not [p for p in home.artifacts_dir.rglob("*") if p.is_file()]


@pytest.mark.parametrize(("rel", "needle"), BAD_PATHS)
def test_check_vault_relpath_refuses(rel: str, needle: str) -> None:
    with pytest.raises(ValueError) as err:
        check_vault_relpath(rel)
    msg = str(err.value)
    assert needle in msg, msg
    assert "\n" not in msg
    assert repr(rel)[:40] in msg or "characters" in msg


@pytest.mark.parametrize("rel", ["a.md", "notes/bank.md", "daily/2026-01-05.md", "deep/er/still/x.txt",
                                 "name with spaces.md", "ünïcode/ß.md", ".hidden.md"])
def test_check_vault_relpath_accepts_ordinary_paths(rel: str) -> None:
    assert check_vault_relpath(rel) == rel


def test_resolve_inside(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    assert resolve_inside(root, "notes/a.md") == root.resolve() / "notes" / "a.md"
    for rel, _ in BAD_PATHS:
        with pytest.raises(ValueError):
            resolve_inside(root, rel)
    # A symbolic link on the way is refused, wherever it points.
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(ValueError, match="symbolic link"):
        resolve_inside(root, "link/x.md")
    (root / "inner").mkdir()
    (root / "inlink").symlink_to(root / "inner")
    with pytest.raises(ValueError, match="symbolic link"):
        resolve_inside(root, "inlink/x.md")
    (root / "file-link").symlink_to(outside / "target")
    with pytest.raises(ValueError, match="symbolic link"):
        resolve_inside(root, "file-link")
    assert not (outside / "target").exists()


def _with_vault_files(data: dict[str, Any], files: dict[str, str], *, holdout: bool = False) -> dict[str, Any]:
    key = "holdout_examples" if holdout else "examples"
    data[key] = [dict(data[key][0], vault_files=files)]
    return data


@pytest.mark.parametrize(("rel", "needle"), BAD_PATHS)
def test_parse_proposal_refuses_bad_vault_paths(proposal_data: dict[str, Any], rel: str, needle: str) -> None:
    with pytest.raises(ProposalError) as err:
        parse_proposal(_with_vault_files(proposal_data, {rel: "pwned"}), "p.yaml")
    msg = str(err.value)
    assert "examples[0].vault_files" in msg and needle in msg, msg
    assert len(msg.splitlines()) == 1, msg


def test_holdout_paths_are_checked_too(proposal_data: dict[str, Any]) -> None:
    with pytest.raises(ProposalError, match=r"holdout_examples\[0\]\.vault_files.*'\.\./x'"):
        parse_proposal(_with_vault_files(proposal_data, {"../x": "pwned"}, holdout=True), "p.yaml")


def test_a_file_and_a_directory_of_the_same_name_are_refused(proposal_data: dict[str, Any]) -> None:
    with pytest.raises(ProposalError, match="both a file and a directory"):
        parse_proposal(_with_vault_files(proposal_data, {"notes": "x", "notes/a.md": "y"}), "p.yaml")


def test_vault_path_length_bound_is_named() -> None:
    assert 64 <= MAX_VAULT_PATH_CHARS <= 4096
    check_vault_relpath("a" * 100 + "/" + "b" * 100)


@pytest.mark.parametrize("rel", ["/tmp/kavi-escape-abs", "../../kavi-escape-rel", "C:/x", "a\\..\\..\\x"])
def test_kavi_propose_refuses_escaping_vault_files(kavi_home: KaviHome, tmp_path: Path,
                                                   proposal_data: dict[str, Any], rel: str) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(_with_vault_files(proposal_data, {rel: "pwned"})))
    res = runner.invoke(app, ["propose", str(f)])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert "examples[0].vault_files" in res.output and repr(rel) in res.output
    assert len(res.output.strip().splitlines()) == 1, res.output
    _ledger_untouched(kavi_home)


def test_kavi_propose_json_refuses_escaping_vault_files(kavi_home: KaviHome, tmp_path: Path,
                                                        proposal_data: dict[str, Any]) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps(_with_vault_files(proposal_data, {"/tmp/x": "pwned"}, holdout=True)))
    res = runner.invoke(app, ["propose", str(f)])
    assert res.exit_code == 2 and "holdout_examples[0].vault_files" in res.output and "'/tmp/x'" in res.output
    _ledger_untouched(kavi_home)


def test_acceptance_runner_refuses_escaping_paths_of_an_unvalidated_proposal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proposal_data: dict[str, Any]) -> None:
    """Even a Proposal built with model_construct (no validation) cannot make the runner write outside."""
    work = tmp_path / "work"
    (work / "skills").mkdir(parents=True)
    skill = work / "skills" / "word_count.py"
    skill.write_text((ANSWERS / "word_count" / "1" / "skill.py").read_text())
    abs_target = tmp_path / "abs-escape.txt"
    rel_target = tmp_path / "rel-escape.txt"
    good = parse_proposal(proposal_data)
    bad_examples = [
        Example.model_construct(input={"text": "a"}, expected={"words": 1},
                                vault_files={str(abs_target): "pwned"}, http_responses={}, secrets={}),
        Example.model_construct(input={"text": "a"}, expected={"words": 1},
                                vault_files={"../../rel-escape.txt": "pwned"}, http_responses={}, secrets={}),
        Example.model_construct(input={"text": "a"}, expected={"words": 1},
                                vault_files={"ok.md": "fine"}, http_responses={}, secrets={}),
    ]
    hostile = Proposal.model_construct(**{**dict(good), "examples": bad_examples, "holdout_examples": []})
    digest = hashlib.sha256(skill.read_bytes()).hexdigest()
    job = _job(hostile, "skills/word_count.py", digest, _cases(hostile))
    monkeypatch.chdir(work)
    out = run_job(job)
    assert not abs_target.exists()
    assert not rel_target.exists()
    assert not (work / "rel-escape.txt").exists()
    results = out["results"]
    assert [r["ran"] for r in results] == [False, False, True], results
    assert "vault_files" in results[0]["error"] and str(abs_target) in results[0]["error"]
    assert "'..'" in results[1]["error"]


def test_acceptance_runner_refuses_a_symlinked_vault_component(tmp_path: Path) -> None:
    from kavi.gates.acceptance_runner import write_vault_files

    root = tmp_path / "vault"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "notes").symlink_to(outside)
    with pytest.raises(ValueError, match="symbolic link"):
        write_vault_files(root, {"notes/x.md": "pwned"})
    assert not (outside / "x.md").exists()
    write_vault_files(root, {"a/b/c.md": "fine"})
    assert (root / "a" / "b" / "c.md").read_text() == "fine"
    assert os.listdir(outside) == []
