"""The trust loader: hash checked before any code runs, exactly the hashed bytes executed, no stale modules."""

import gc
import os
import sys
import textwrap
from pathlib import Path

import pytest

from kavi.home import KaviHome
from kavi.runtime.trust import (
    SkillLoadError,
    TrustedSkill,
    TrustError,
    TrustLoader,
    load_trusted,
    skill_module_name,
)
from kavi.skills.base import BaseSkill, SideEffectClass
from tests.kavi.runtime.runtime_skills import ECHO, install_source


def _tamper_source(marker: Path) -> str:
    # Same skill, plus top-level code that would leave a marker if it ever ran.
    return ECHO + f"\nopen({str(marker)!r}, 'w').write('tampered code ran')\n"


def test_good_skill_loads_and_runs(home: KaviHome, loader: TrustLoader) -> None:
    skill = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    cls = loader.load(skill)
    assert issubclass(cls, BaseSkill)
    assert cls.__name__ == "Echo" and cls.name == "echo"
    out = cls().execute(cls.input_model(text="ab", times=2))
    assert out.model_dump() == {"text": "abab", "length": 4}
    # The module name depends on the skill's name and the hash of its bytes: the same in the gates and at run time.
    assert cls.__module__ == skill_module_name("echo", skill.sha256) == f"kavi_skill_echo_{skill.sha256[:16]}"
    assert sys.modules[cls.__module__].__dict__["Echo"] is cls


def test_module_level_function_uses_process_loader(home: KaviHome) -> None:
    skill = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    assert load_trusted(skill).name == "echo"


def test_tampered_skill_never_runs(home: KaviHome, loader: TrustLoader, tmp_path: Path) -> None:
    skill = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    marker = tmp_path / "marker.txt"
    skill.path.write_text(textwrap.dedent(_tamper_source(marker)), encoding="utf-8")
    with pytest.raises(TrustError) as info:
        loader.load(skill)
    message = str(info.value)
    assert "hash mismatch" in message
    assert f"expected sha256 {skill.sha256}" in message
    assert str(skill.path) in message
    assert not marker.exists()
    assert loader.stats.executions == 0


def test_tampered_after_a_good_load_is_caught(home: KaviHome, loader: TrustLoader, tmp_path: Path) -> None:
    skill = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    loader.load(skill)
    marker = tmp_path / "marker.txt"
    skill.path.write_text(textwrap.dedent(_tamper_source(marker)), encoding="utf-8")
    with pytest.raises(TrustError, match="hash mismatch"):
        loader.load(skill)
    assert not marker.exists()


def test_missing_file_and_bad_hash_are_trust_errors(home: KaviHome, loader: TrustLoader) -> None:
    skill = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    with pytest.raises(TrustError, match="not a SHA-256 hex digest"):
        loader.load(TrustedSkill("echo", skill.path, "abc", SideEffectClass.READ_ONLY))
    skill.path.unlink()
    with pytest.raises(TrustError, match="trusted skill file is missing"):
        loader.load(skill)
    fifo = home.skills_dir / "fifo.py"
    os.mkfifo(fifo)
    with pytest.raises(TrustError, match="not a regular file"):
        loader.load(TrustedSkill("fifo", fifo, "0" * 64, SideEffectClass.READ_ONLY))


def test_cache_skips_execution_but_never_hashing(home: KaviHome, loader: TrustLoader) -> None:
    skill = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    first = loader.load(skill)
    assert loader.load(skill) is first
    assert loader.stats.reads == 2
    assert loader.stats.executions == 1


def test_edit_with_new_mtime_is_caught(home: KaviHome, loader: TrustLoader) -> None:
    skill = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    loader.load(skill)
    data = skill.path.read_bytes()
    edited = data.replace(b"Repeat text.", b"Repeat TEXT.")
    assert len(edited) == len(data)
    skill.path.write_bytes(edited)
    st = skill.path.stat()
    os.utime(skill.path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    with pytest.raises(TrustError, match="hash mismatch"):
        loader.load(skill)


def test_same_size_edit_with_restored_mtime_is_still_caught(home: KaviHome, loader: TrustLoader) -> None:
    # The cache key is the content hash of freshly read bytes, not (inode, size, mtime): restoring the
    # mtime after a same-size edit does not get past it.
    skill = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    loader.load(skill)
    before = skill.path.stat()
    data = skill.path.read_bytes()
    skill.path.write_bytes(data.replace(b"Repeat text.", b"Repeat t3xt."))
    os.utime(skill.path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = skill.path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    with pytest.raises(TrustError, match="hash mismatch"):
        loader.load(skill)


def test_repromoted_source_replaces_module_and_leaves_nothing_stale(home: KaviHome, loader: TrustLoader) -> None:
    old = install_source(home, "echo", ECHO, SideEffectClass.READ_ONLY)
    old_cls = loader.load(old)
    new = install_source(home, "echo", ECHO.replace("Repeat text.", "Repeat text, v2."), SideEffectClass.READ_ONLY)
    new_cls = loader.load(new)
    assert new_cls is not old_cls and new_cls.description == "Repeat text, v2."
    assert old_cls.__module__ not in sys.modules
    assert new_cls.__module__ in sys.modules
    # Whatever other loaders hold, every module of this skill carries the loader's prefix and a hash.
    assert all(m.startswith("kavi_skill_echo_") for m in sys.modules if "echo" in m)
    assert not any(m in sys.modules for m in ("echo", "skills.echo", "skills"))
    loader.forget("echo")
    assert new_cls.__module__ not in sys.modules


def test_future_annotations_skill_resolves_through_its_module(home: KaviHome, loader: TrustLoader) -> None:
    source = "from __future__ import annotations\n" + textwrap.dedent(ECHO)
    cls = loader.load(install_source(home, "echo", source, SideEffectClass.READ_ONLY))
    assert cls.input_model.model_validate({"text": "x"}).times == 1


@pytest.mark.parametrize(
    ("source", "error", "message"),
    [
        (ECHO + "\nraise RuntimeError('top level fails')\n", SkillLoadError, "RuntimeError: top level fails"),
        (ECHO + "\nimport sys\nsys.exit(3)\n", SkillLoadError, "SystemExit: 3"),
        (ECHO + "\ndef broken(:\n", SkillLoadError, "does not compile"),
        (ECHO + "\nclass Echo2(Echo):\n    pass\n", SkillLoadError, r"exactly one BaseSkill subclass, found 2"),
        ("x = 1\n", SkillLoadError, "found 0"),
        (ECHO.replace('name = "echo"', 'name = "other"'), SkillLoadError, "named 'other', expected 'echo'"),
        (ECHO.replace("SideEffectClass.READ_ONLY", "SideEffectClass.NETWORK"), TrustError, "declares side effects"),
    ],
)
def test_bad_modules_fail_to_load_and_are_not_left_in_sys_modules(
    home: KaviHome, loader: TrustLoader, source: str, error: type[Exception], message: str
) -> None:
    before = set(sys.modules)
    skill = install_source(home, "echo", source, SideEffectClass.READ_ONLY)
    with pytest.raises(error, match=message):
        loader.load(skill)
    leaked = {m for m in set(sys.modules) - before if m.startswith("kavi_skill_")}
    assert leaked == set()


def test_dropped_loader_unregisters_its_modules(home: KaviHome) -> None:
    temporary = TrustLoader()
    name = temporary.load(install_source(home, "echo", ECHO + "\n# variant\n", SideEffectClass.READ_ONLY)).__module__
    assert name in sys.modules
    del temporary
    gc.collect()
    assert name not in sys.modules
