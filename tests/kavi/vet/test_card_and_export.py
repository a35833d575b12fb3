"""The skill card (hashed into the attestation, shown by `kavi card`) and `kavi export --format agent-skill`: the
folder runs its skill through the contained runtime on its own, and refuses once a byte of the skill changed."""

import base64
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi_assets.cli.main import app

SOURCES = Path(__file__).parent / "sources"
runner = CliRunner()


@pytest.fixture()
def trusted(kavi_home: KaviHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KaviHome:
    monkeypatch.setenv("KAVI_AUTO_APPROVE", "READ_ONLY")
    folder = tmp_path / "isbn-check"
    shutil.copytree(SOURCES / "isbn-check", folder)
    res = runner.invoke(app, ["vet", str(folder), "--proposal", str(SOURCES / "isbn_check.yaml")])
    assert res.exit_code == 0, res.output
    return kavi_home


def test_the_card_is_the_one_the_attestation_hashes(trusted: KaviHome, tmp_path: Path) -> None:
    res = runner.invoke(app, ["card", "isbn_check", "--json"])
    assert res.exit_code == 0, res.output
    card = json.loads(res.stdout)
    assert card.pop("attested") is True
    assert card["origin"]["kind"] == "vetted" and card["surface"]["side_effect_class"] == "READ_ONLY"
    assert card["evidence"]["gates"]["acceptance"] == "passed"
    assert card["evidence"]["adequacy"]["tried"] > 0
    assert any("independent implementation" in limit for limit in card["known_limits"])
    runner.invoke(app, ["attest", "isbn_check", "-o", str(tmp_path / "att.json")])
    envelope = json.loads((tmp_path / "att.json").read_text())["envelope"]
    predicate = json.loads(base64.b64decode(envelope["payload"]))["predicate"]
    from kavi.forge.attempt import canonical

    assert hashlib.sha256(canonical(card)).hexdigest() == predicate["card_sha256"]
    text = runner.invoke(app, ["card", "isbn_check@1"]).output
    assert text.startswith("# isbn_check@1") and "## Known limits" in text and "vetted from a agent skill" in text


def test_the_exported_folder_runs_contained_and_refuses_a_changed_byte(trusted: KaviHome, tmp_path: Path) -> None:
    out = tmp_path / "exported"
    res = runner.invoke(app, ["export", "isbn_check", str(out), "--format", "agent-skill"])
    assert res.exit_code == 0, res.output
    folder = out / "isbn-check"
    front = yaml.safe_load((folder / "SKILL.md").read_text().split("---")[1])
    assert front["name"] == "isbn-check" and front["metadata"]["kavi-side-effect-class"] == "READ_ONLY"
    skill = folder / "scripts" / "isbn_check.py"
    assert hashlib.sha256(skill.read_bytes()).hexdigest() == front["metadata"]["kavi-source-sha256"]
    assert runner.invoke(app, ["attest", "--verify", str(folder / "attestation.json")]).exit_code == 0
    checked = runner.invoke(app, ["attest", "--verify", str(folder)])
    assert checked.exit_code == 0, checked.output
    assert "SLSA VSA PASSED" in checked.output and "in-toto Test Result PASSED" in checked.output
    assert "model.sig (OpenSSF Model Signing): every file" in checked.output
    # The model-signing tool itself checks the folder, as on another machine.
    tool = subprocess.run([str(Path(sys.executable).parent / "model_signing"), "verify", "key", "--signature",
                           str(folder / "model.sig"), "--public_key", str(folder / "model-signing.pub"), str(folder)],
                          capture_output=True, text=True, timeout=120)
    assert tool.returncode == 0, tool.stdout + tool.stderr

    def run(payload: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(folder / "scripts" / "run.py"), payload], capture_output=True,
                              text=True, timeout=120, cwd=tmp_path)

    ok = run('{"isbn": "0-306-40615-2"}')
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout) == {"valid": True, "kind": "ISBN-10"}
    assert run('{"isbn": 42}').returncode == 1  # the input is checked against the schema in the worker
    data = bytearray(skill.read_bytes())
    data[data.index(b"% 11")] = ord("^")  # one flipped byte
    skill.chmod(0o644)
    skill.write_bytes(bytes(data))
    bad = run('{"isbn": "0-306-40615-2"}')
    assert bad.returncode == 1 and "is not the attested skill" in bad.stderr
    flipped = runner.invoke(app, ["attest", "--verify", str(folder)])
    assert flipped.exit_code == 1 and "Hash mismatch" in flipped.output
    tool = subprocess.run([str(Path(sys.executable).parent / "model_signing"), "verify", "key", "--signature",
                           str(folder / "model.sig"), "--public_key", str(folder / "model-signing.pub"), str(folder)],
                          capture_output=True, text=True, timeout=120)
    assert tool.returncode != 0
    assert runner.invoke(app, ["export", "isbn_check", str(out)]).exit_code == 2  # the folder is not empty
