"""Refusals that teach: every policy message names the allowed way, the retry packet carries it to the model, and
`kavi check` prints it; `kavi policy show` prints the map."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kavi.gates.static import policy_gate
from kavi.llm.prompts import _failure_text
from kavi.policy.capabilities import attribute_refusal
from kavi.policy.policy import default_policy
from kavi.policy.scanner import scan_source
from kavi.proposals.model import parse_proposal
from kavi.research.classifier import AttemptFailure, classify
from kavi.skills.base import SideEffectClass
from kavi_assets.cli.main import app
from tests.factories import CORPUS
from tests.kavi.policy.test_corpus import HOSTILE, load

runner = CliRunner()
CORPUS = CORPUS


@pytest.mark.parametrize("path", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_every_refusal_of_the_hostile_corpus_names_the_allowed_way(path: Path) -> None:
    f = load(path)
    found = scan_source(f.source, f.side_effect, declared_secrets=f.secrets)
    assert found
    for v in found:
        why, sep, instead = v.why.partition("; instead: ")
        assert sep and why.strip() and instead.strip(), v.render()


def test_every_rule_has_a_fallback_alternative() -> None:
    policy = default_policy()
    rules = {"POL-IMPORT", "POL-IMPORT-TIME", "POL-ESCAPE", "POL-INTROSPECTION", "POL-DYNAMIC-CODE", "POL-TAMPER",
             "POL-HANDLE", "POL-FS", "POL-FS-WRITE", "POL-NETWORK", "POL-SECRET", "POL-ENV", "POL-PROCESS",
             "POL-NATIVE"}
    assert all(policy.alternative(r) for r in rules)
    assert all(policy.alternative(n) for n in policy.denied_names)
    assert all(attribute_refusal(policy, a).instead for a in policy.denied_attributes)


def _proposal() -> object:
    return parse_proposal({
        "name": "fs_pathlib_write_text",
        "description": "Reads a file the model should have read through the vault.",
        "inputs": [{"name": "text", "type": "str"}],
        "outputs": [{"name": "ok", "type": "bool"}],
        "side_effect_class": "READ_ONLY",
        "examples": [{"input": {"text": "a"}, "expected": {"ok": True}}],
    })


def test_the_retry_packet_carries_the_allowed_way_to_the_model() -> None:
    source = (CORPUS / "hostile" / "fs_pathlib_write_text.py").read_text(encoding="utf-8")
    result = policy_gate(source, _proposal(), None)  # type: ignore[arg-type]
    assert not result.ok
    note = classify(AttemptFailure(stage="verify", message="gates failed", gate_results=[result]))
    text = _failure_text({"attempt": 1, "failure_kind": note.kind.value, "facts": note.facts})
    assert "instead: " in text and "self.vault" in text, text


def test_kavi_check_prints_the_allowed_way() -> None:
    res = runner.invoke(app, ["check", str(CORPUS / "hostile" / "fs_io_open.py"), "--side-effect", "READ_ONLY"])
    assert res.exit_code == 1, res.output
    assert "instead" in res.output and "io.StringIO" in res.output.replace("\n", "")


def test_kavi_policy_show_lists_every_module() -> None:
    res = runner.invoke(app, ["policy", "show", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert {r["module"] for r in rows} == set(default_policy().modules)
    assert all(r["verdict"] and r["reason"] for r in rows)
    table = runner.invoke(app, ["policy", "show"])
    assert table.exit_code == 0 and "os.path" in table.output and "mixed" in table.output


def test_kavi_policy_show_one_module_gives_its_attributes_and_alternatives() -> None:
    res = runner.invoke(app, ["policy", "show", "os.path", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["verdict"] == "mixed" and "join" in doc["pure_attributes"]
    assert doc["refused_attributes"]["exists"]["instead"] == "self.vault.exists(path)"
    assert doc["importable_by"] == ["READ_ONLY", "FILE_WRITE", "NETWORK", "SECRET_READ"]
    text = runner.invoke(app, ["policy", "show", "socket"])
    assert text.exit_code == 0 and "needs NETWORK" in text.output and "self.http" in text.output
    inherited = runner.invoke(app, ["policy", "show", "json.decoder", "--json"])
    assert json.loads(inherited.output)["decided_by"] == "json"


def test_kavi_policy_show_unknown_module_is_a_clear_error() -> None:
    res = runner.invoke(app, ["policy", "show", "numpy"])
    assert res.exit_code == 2
    assert "not in the capability map" in res.output and "Traceback" not in res.output


def test_kavi_policy_show_with_a_tightening_policy(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("modules:\n  csv: {verdict: refused, reason: not here, instead: split lines}\n", encoding="utf-8")
    res = runner.invoke(app, ["policy", "show", "csv", "--json", "--policy", str(path)])
    assert res.exit_code == 0 and json.loads(res.output)["verdict"] == "refused"
    bad = tmp_path / "widen.yaml"
    bad.write_text("modules:\n  subprocess: {verdict: pure, reason: trust}\n", encoding="utf-8")
    res = runner.invoke(app, ["policy", "show", "--policy", str(bad)])
    assert res.exit_code == 2 and "only tighten" in res.output




def _names_probe(body: str) -> list[str]:
    from tests.kavi.policy.test_imports import skill

    return [v.rule_id for v in scan_source(skill("", "0").replace("return Out(value=str(0))", body),
                                           SideEffectClass.READ_ONLY)]


def test_a_parameter_named_like_a_refused_builtin_is_not_the_builtin() -> None:
    """A reference solution's `def reverse(input, k)` is honest; the builtin itself stays refused wherever it can
    reach the parameter: as an argument, as a default (evaluated outside the function), or under `global`."""
    ok = "def rev(input: str) -> str:\n            return input[::-1]\n\n        return Out(value=rev(text))"
    assert _names_probe(ok) == []
    assert "POL-TAMPER" in _names_probe("def rev(input: str) -> str:\n            return input\n\n"
                                        "        return Out(value=rev(input))")
    assert "POL-TAMPER" in _names_probe("f = lambda input=input: input('x')\n        return Out(value=f())")
