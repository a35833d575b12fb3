"""No silent widening: a new version that reaches more than the trusted one (here a vetted re-release that imports
a new module) waits for a person even under auto-approve; `kavi diff` names the difference; the person's approval
names it too, and the attestation records each version's surface."""

import base64
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi_assets.cli.main import app

SOURCES = Path(__file__).parent / "sources"
runner = CliRunner()


def _vet(folder: Path) -> dict[str, object]:
    res = runner.invoke(app, ["vet", str(folder), "--proposal", str(SOURCES / "isbn_check.yaml"), "--json"])
    out: dict[str, object] = json.loads(res.stdout)
    return out


def test_a_wider_version_waits_for_a_person_who_is_told_the_difference(
        kavi_home: KaviHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_AUTO_APPROVE", "READ_ONLY")
    folder = tmp_path / "isbn-check"
    shutil.copytree(SOURCES / "isbn-check", folder)
    assert _vet(folder)["status"] == "TRUSTED"  # version 1, auto-approved
    script = folder / "scripts" / "isbn_check.py"
    text = script.read_text(encoding="utf-8")
    text = text.replace("from typing import Any\n", "import unicodedata\nfrom typing import Any\n")
    text = text.replace('return isbn.replace("-", "").replace(" ", "")',
                        'return unicodedata.normalize("NFKC", isbn).replace("-", "").replace(" ", "")')
    script.write_text(text, encoding="utf-8")
    out = _vet(folder)
    assert out["status"] == "VERIFIED" and out["trusted_version"] == 1, out  # v1 still serves; v2 waits
    assert out["widening"] == ["imports: + unicodedata"]

    res = runner.invoke(app, ["diff", "isbn_check@1", "isbn_check", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["surface"]["wider"] == ["imports: + unicodedata"]
    assert any(line.startswith("+import unicodedata") for line in doc["code"])
    assert doc["schema"] == []

    res = runner.invoke(app, ["approve", "isbn_check", "--by", "bob"])
    assert res.exit_code == 0, res.output
    assert "reaches more than the trusted version: imports: + unicodedata (approved by a person: bob)" in res.output
    assert "isbn_check@2 is TRUSTED" in res.output
    res = runner.invoke(app, ["attest", "isbn_check@2", "-o", str(tmp_path / "att.json")])
    assert res.exit_code == 0, res.output
    envelope = json.loads((tmp_path / "att.json").read_text())["envelope"]
    surface = json.loads(base64.b64decode(envelope["payload"]))["predicate"]["surface"]
    assert surface["imports"] == ["unicodedata"] and surface["side_effect_class"] == "READ_ONLY"
