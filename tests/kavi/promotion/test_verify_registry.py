"""`kavi verify` never rewrites the registry. A registry that disagrees with the ledger is a
problem (exit 1, the file untouched) and only `kavi registry rebuild` rewrites it; a registry that is only behind the
ledger is a note; a file in the skills folder that no promotion put there is a problem, with the fix."""

import json
from typing import Any

from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi_assets.cli.main import app
from tests.factories import WORD_COUNT_SOURCE, WORD_COUNT_V2, forge_ctx, trust_version, word_count_spec

runner = CliRunner()


def _run(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert "Traceback" not in res.output
    return res


def _trusted_with_registry(home: KaviHome) -> bytes:
    trust_version(home, word_count_spec(), WORD_COUNT_SOURCE)
    rebuilt = _run(["registry", "rebuild"])
    assert rebuilt.exit_code == 0, rebuilt.output
    ok = _run(["verify"])
    assert ok.exit_code == 0, ok.output
    return home.registry_path.read_bytes()


def _edit(home: KaviHome, change: Any) -> bytes:
    data = json.loads(home.registry_path.read_text())
    change(data)
    text = json.dumps(data, indent=1).encode()
    home.registry_path.write_bytes(text)
    return text


def test_an_edited_registry_fails_verify_and_is_left_as_it_is(kavi_home: KaviHome) -> None:
    _trusted_with_registry(kavi_home)

    def other_hash(data: dict[str, Any]) -> None:
        data["skills"][0]["source_sha256"] = "cd" * 32
        data["skills"][0]["versions"][0]["source_sha256"] = "cd" * 32

    edited = _edit(kavi_home, other_hash)
    res = _run(["verify"])
    assert res.exit_code == 1 and "registry" in res.output and "kavi registry rebuild" in res.output
    assert kavi_home.registry_path.read_bytes() == edited
    assert _run(["doctor", "--json"]).exit_code == 1
    assert kavi_home.registry_path.read_bytes() == edited


def test_an_edit_that_also_moves_the_mark_back_is_still_an_edit(kavi_home: KaviHome) -> None:
    """The mark is in the file too: an edit that claims an older ledger state must still agree with that state."""
    _trusted_with_registry(kavi_home)
    for change in (
        lambda d: d.update(ledger_mark={"last_promotion_seq": 0, "trusted": 0}),  # claims 'behind', lists a skill
        lambda d: d.pop("ledger_mark"),  # no mark at all
        lambda d: d.update(skills=[]),  # the trusted skill dropped, the mark left
        lambda d: d.update(ledger_mark={"last_promotion_seq": 9, "trusted": 1}),  # ahead of the ledger
    ):
        _run(["registry", "rebuild"])
        edited = _edit(kavi_home, change)
        res = _run(["verify"])
        assert res.exit_code == 1, (res.output, edited)
        assert kavi_home.registry_path.read_bytes() == edited


def test_registry_rebuild_is_the_explicit_fix(kavi_home: KaviHome) -> None:
    _trusted_with_registry(kavi_home)
    _edit(kavi_home, lambda d: d["skills"][0].update(side_effect_class="NETWORK"))
    assert _run(["verify"]).exit_code == 1
    res = _run(["registry", "rebuild"])
    assert res.exit_code == 0 and "registry.json" in res.output
    assert _run(["verify"]).exit_code == 0


def test_a_registry_behind_the_ledger_is_a_note_and_verify_writes_nothing(kavi_home: KaviHome) -> None:
    before = _trusted_with_registry(kavi_home)
    trust_version(kavi_home, word_count_spec(), WORD_COUNT_V2)  # promoted; the projection has not caught up yet
    res = _run(["verify"])
    assert res.exit_code == 0, res.output
    assert "behind" in res.output and "kavi registry rebuild" in res.output
    assert kavi_home.registry_path.read_bytes() == before
    # Behind, but an entry the ledger never promoted at that state: an edit.
    _edit(kavi_home, lambda d: d["skills"][0]["versions"].append(dict(d["skills"][0]["versions"][0], version=5)))
    assert _run(["verify"]).exit_code == 1


def test_a_stray_file_in_the_skills_folder_fails_verify_with_the_fix(kavi_home: KaviHome) -> None:
    _trusted_with_registry(kavi_home)
    for stray in (kavi_home.skills_dir / "evil.py", kavi_home.skills_dir / "word_count" / "v9.py"):
        stray.write_text("print('never promoted')\n")
        res = _run(["verify"])
        assert res.exit_code == 1, res.output
        assert str(stray.relative_to(kavi_home.root)) in res.output and "rm " in res.output
        stray.unlink()
    assert _run(["verify"]).exit_code == 0
    assert [t.version for t in forge_ctx(kavi_home).records.trusted_versions()] == [1]
