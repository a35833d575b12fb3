"""One bad inbox file never costs another file its partition or its run.

The sensor is called directly (as in tests/dagster/test_intake_sensor.py); the sensor context does not apply
dynamic-partition requests, so the tests read them from the SensorResult.
"""

import json
import os
import signal
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

import sensors.intake as intake_module
from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource
from sensors.intake import proposal_intake


def _evaluate(home: KaviHome, instance: dg.DagsterInstance) -> Any:
    ctx = dg.build_sensor_context(
        instance=instance,
        resources={"home": SkillsHomeResource(root=str(home.root)), "llm": LLMResource(),
                   "gates": GateRunnerResource()},
    )
    return proposal_intake(ctx)


def _valid(home: KaviHome, data: dict[str, Any], name: str) -> Path:
    path = home.inbox_dir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(dict(data, name=name)), encoding="utf-8")
    return path


def _requested(result: Any) -> tuple[list[str], list[str]]:
    assert isinstance(result, dg.SensorResult), result
    runs = [r.partition_key for r in result.run_requests or []]
    parts = [k for req in result.dynamic_partitions_requests or [] for k in (req.partition_keys or [])]
    return runs, parts


def _errors(home: KaviHome) -> dict[str, str]:
    """Rejected file name -> its reason (the .error.txt beside it)."""
    out = {}
    for p in home.rejected_dir.iterdir():
        if p.name.endswith(".error.txt"):
            out[p.name[: -len(".error.txt")]] = p.read_text(encoding="utf-8")
    return out


def _assert_one_line(reason: str) -> None:
    assert reason.endswith("\n") and reason.count("\n") == 1, repr(reason)
    assert "Traceback" not in reason


def test_deeply_nested_files_are_rejected_and_valid_ones_still_get_partition_and_run(
        kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    # 'a_…' sorts before 'word_count', 'z_…' after: a failure on either side of a valid file.
    (kavi_home.inbox_dir / "a_nested.yaml").write_text("name: " + "[" * 20000 + "]" * 20000 + "\n")
    (kavi_home.inbox_dir / "z_nested.json").write_text('{"name": ' + "[" * 100000 + "]" * 100000 + "}")
    _valid(kavi_home, proposal_data, "word_count")
    _valid(kavi_home, proposal_data, "word_total")
    with dg.DagsterInstance.ephemeral() as instance:
        runs, parts = _requested(_evaluate(kavi_home, instance))
    assert runs == ["word_count", "word_total"]
    assert parts == ["word_count", "word_total"]
    errors = _errors(kavi_home)
    assert sorted(n.split("-", 1)[1] for n in errors) == ["a_nested.yaml", "z_nested.json"]
    for reason in errors.values():
        _assert_one_line(reason)
    # The rejected files are kept beside their reasons; nothing is left in the inbox.
    assert sorted(p.name.split("-", 1)[1] for p in kavi_home.rejected_dir.iterdir()
                  if not p.name.endswith(".error.txt")) == ["a_nested.yaml", "z_nested.json"]
    assert not [p for p in kavi_home.inbox_dir.iterdir() if p.is_file()]
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    assert records.require_proposal("word_count") and records.require_proposal("word_total")


def test_bad_encoding_and_a_multi_line_validation_error_are_one_line_each(
        kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    (kavi_home.inbox_dir / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    bad = dict(proposal_data, name="Bad Name", side_effect_class="ROOT")
    (kavi_home.inbox_dir / "invalid.yaml").write_text(yaml.safe_dump(bad), encoding="utf-8")
    _valid(kavi_home, proposal_data, "word_count")
    with dg.DagsterInstance.ephemeral() as instance:
        runs, parts = _requested(_evaluate(kavi_home, instance))
    assert runs == parts == ["word_count"]
    errors = _errors(kavi_home)
    assert len(errors) == 2
    for reason in errors.values():
        _assert_one_line(reason)
    joined = " ".join(errors.values())
    assert "not UTF-8" in joined and "snake_case" in joined and "side_effect_class" in joined


@pytest.mark.parametrize("fault", ["unreadable", "vanishes", "crash_in_intake"])
def test_any_error_on_one_file_rejects_only_that_file(
        kavi_home: KaviHome, proposal_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    victim = _valid(kavi_home, proposal_data, "word_total")
    _valid(kavi_home, proposal_data, "word_count")
    real_load, real_intake = intake_module.load_proposal, intake_module.intake

    def load(path: Path) -> Any:
        if path.name == victim.name:
            if fault == "unreadable":  # root reads a chmod 000 file, so the error is raised as read_text would
                raise PermissionError(13, "Permission denied", str(path))
            if fault == "vanishes":
                path.unlink()
                raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_load(path)

    def crashing_intake(ctx: Any, prop: Any, source: str | None, actor: str = "kavi") -> bool:
        if prop.name == "word_total" and fault == "crash_in_intake":
            raise RuntimeError("the ledger said no\nsecond line")
        return real_intake(ctx, prop, source, actor=actor)

    monkeypatch.setattr(intake_module, "load_proposal", load)
    monkeypatch.setattr(intake_module, "intake", crashing_intake)
    with dg.DagsterInstance.ephemeral() as instance:
        runs, parts = _requested(_evaluate(kavi_home, instance))
    assert runs == parts == ["word_count"]
    errors = _errors(kavi_home)
    assert [n.split("-", 1)[1] for n in errors] == [victim.name]
    reason = next(iter(errors.values()))
    _assert_one_line(reason)
    expected = {"unreadable": "Permission denied", "vanishes": "vanished", "crash_in_intake": "the ledger said no"}
    assert expected[fault] in reason
    assert not victim.exists()
    if fault != "vanishes":  # the file itself is kept beside its reason
        assert any(p.name.endswith(victim.name) for p in kavi_home.rejected_dir.iterdir())


def test_the_cursor_names_the_rejected_files(kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    (kavi_home.inbox_dir / "nested.yaml").write_text("name: " + "[" * 20000 + "]" * 20000 + "\n")
    _valid(kavi_home, proposal_data, "word_count")
    with dg.DagsterInstance.ephemeral() as instance:
        ctx = dg.build_sensor_context(
            instance=instance,
            resources={"home": SkillsHomeResource(root=str(kavi_home.root)), "llm": LLMResource(),
                       "gates": GateRunnerResource()},
        )
        result = proposal_intake(ctx)
        assert isinstance(result, dg.SensorResult)
        cursor = json.loads(ctx.cursor or "{}")
    assert any("nested.yaml" in line for line in cursor["rejected"])


def test_a_symbolic_link_in_the_inbox_is_refused_unread(kavi_home: KaviHome, tmp_path: Path,
                                                        proposal_data: dict[str, Any]) -> None:
    """A link planted in the inbox would make the sensor (often root) read what it points at and quote it in
    the rejection: it is refused without being read, and a good file beside it still gets its run."""
    secret = tmp_path / "secret.yaml"
    secret.write_text("SECRET-LINE-7f3a: [unbalanced\n", encoding="utf-8")
    (kavi_home.inbox_dir / "evil.yaml").symlink_to(secret)
    _valid(kavi_home, proposal_data, "good_one")
    with dg.DagsterInstance.ephemeral() as instance:
        runs, _parts = _requested(_evaluate(kavi_home, instance))
    assert runs == ["good_one"]
    errors = _errors(kavi_home)
    [reason] = [r for name, r in errors.items() if name.endswith("evil.yaml")]
    _assert_one_line(reason)
    assert "symbolic link" in reason and "SECRET-LINE" not in reason
    assert secret.read_text(encoding="utf-8").startswith("SECRET-LINE")  # the target is untouched


@pytest.mark.parametrize("kind", ["directory", "fifo", "symlink-to-fifo"])
def test_an_entry_that_is_not_a_regular_file_is_set_aside_unopened(
        kavi_home: KaviHome, tmp_path: Path, proposal_data: dict[str, Any], kind: str) -> None:
    """A directory or a named pipe with a proposal's suffix is refused from its type (a pipe is never opened, so
    the tick never blocks on it), and a good file beside it still gets its run."""
    entry = kavi_home.inbox_dir / "odd.yaml"
    if kind == "directory":
        entry.mkdir()
        word = "a directory"
    elif kind == "fifo":
        os.mkfifo(entry)
        word = "a named pipe (FIFO)"
    else:
        os.mkfifo(tmp_path / "pipe.yaml")
        entry.symlink_to(tmp_path / "pipe.yaml")
        word = "a symbolic link"
    _valid(kavi_home, proposal_data, "good_one")

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError("the sensor tick blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(30)
    try:
        with dg.DagsterInstance.ephemeral() as instance:
            runs, _parts = _requested(_evaluate(kavi_home, instance))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert runs == ["good_one"]
    [reason] = [r for name, r in _errors(kavi_home).items() if name.endswith("odd.yaml")]
    _assert_one_line(reason)
    assert word in reason and "regular files only" in reason, reason
    assert not entry.exists() and not entry.is_symlink()


def test_control_characters_in_text_and_names_are_rejected_and_shown_escaped(
        kavi_home: KaviHome, proposal_data: dict[str, Any]) -> None:
    bad = dict(proposal_data, name="bad_text", description="Count the words \x1b[2J\x1b[31m in a text.")
    (kavi_home.inbox_dir / "bad_text.yaml").write_text(yaml.safe_dump(bad), encoding="utf-8")
    (kavi_home.inbox_dir / "x\x1b[2J.yaml").write_text("- not a mapping\n", encoding="utf-8")
    _valid(kavi_home, proposal_data, "good_one")
    with dg.DagsterInstance.ephemeral() as instance:
        runs, _parts = _requested(_evaluate(kavi_home, instance))
    assert runs == ["good_one"]
    errors = _errors(kavi_home)
    assert len(errors) == 2
    for reason in errors.values():
        _assert_one_line(reason)
        assert "\x1b" not in reason, repr(reason)
    joined = " ".join(errors.values())
    assert "description: contains the control character U+001B (ESC)" in joined
    assert "x\\x1b[2J.yaml" in joined and "must be a mapping" in joined


def test_the_inbox_runs_the_duplicate_guard_of_kavi_propose(kavi_home: KaviHome) -> None:
    # A renamed copy of a trusted skill (it answers the copy's examples in the sandbox) is set aside with what
    # matched; a proposal with the same words but other answers is recorded and gets its run.
    from tests.factories import example_spec, trust_example

    trust_example(kavi_home, "word_count")
    spec = example_spec("word_count")
    _valid(kavi_home, spec, "count_words_again")
    other = {**spec, "examples": [{**ex, "expected": {**ex["expected"], "words": ex["expected"]["words"] + 1}}
                                  for ex in spec["examples"]]}
    _valid(kavi_home, other, "count_long_words")
    with dg.instance_for_test() as instance:
        runs, _ = _requested(_evaluate(kavi_home, instance))
    assert runs == ["count_long_words"]
    (reason,) = [r for n, r in _errors(kavi_home).items() if n.endswith("count_words_again.yaml")]
    _assert_one_line(reason)
    assert "count_words_again does the task of trusted skill word_count@1" in reason
    assert "answers all" in reason and "kavi propose --force" in reason
    records = ForgeRecords(Ledger(kavi_home.ledger_path))
    assert records.get_proposal("count_words_again") is None
    assert records.get_proposal("count_long_words") is not None
