"""A source the forge cannot read whole is refused with the reason before any gate runs (kavi.vet.source)."""

import shutil
from pathlib import Path

import pytest

from kavi.vet.source import MAX_LINES, VetRefused, read_source

SOURCES = Path(__file__).parent / "sources"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    dst = tmp_path / "isbn-check"
    shutil.copytree(SOURCES / "isbn-check", dst)
    return dst


def refused(path: Path) -> str:
    with pytest.raises(VetRefused) as err:
        read_source(path)
    return "\n".join(err.value.reasons)


def test_the_honest_folder_is_read_with_a_digest_of_every_file(folder: Path) -> None:
    src = read_source(folder)
    assert src.skill_name == "isbn_check" and src.code_path == "scripts/isbn_check.py"
    assert set(src.digests) == {"SKILL.md", "scripts/isbn_check.py", "tests/test_isbn_check.py"}
    assert list(src.tests) == ["tests/test_isbn_check.py"]
    assert src.description == "Check whether a string is a valid ISBN-10 or ISBN-13."
    assert len(src.digest_set()) == 64


@pytest.mark.parametrize(("rel", "data", "why"), [
    ("scripts/isbn_check.cpython-311.pyc", b"\xa7\r\r\n" + b"\0" * 12, "compiled or archived"),
    ("scripts/_speedups.so", b"\x7fELF\x02\x01\x01", "compiled or archived"),
    ("assets/data.dat", b"PK\x03\x04rest", "a zip archive"),
    ("references/notes.md", "caf\xe9".encode("latin-1"), "not UTF-8"),
    ("references/blob.txt", b"abc\x00def", "NUL byte"),
])
def test_binaries_archives_and_text_that_is_not_utf8_are_refused(folder: Path, rel: str, data: bytes,
                                                                  why: str) -> None:
    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_bytes(data)
    assert why in refused(folder)


def test_a_coding_cookie_that_is_not_utf8_is_refused(folder: Path) -> None:
    script = folder / "scripts" / "isbn_check.py"
    script.write_bytes(b"# -*- coding: utf-7 -*-\n" + script.read_bytes())
    assert "utf-7" in refused(folder)


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200b", "\ufeff"])
def test_bidirectional_or_invisible_characters_in_code_are_refused(folder: Path, char: str) -> None:
    script = folder / "scripts" / "isbn_check.py"
    text = script.read_text(encoding="utf-8").replace("return total % 11 == 0",
                                                       f"return total % 11 == 0  # {char}ok")
    script.write_text(text, encoding="utf-8")
    assert "invisible or bidirectional" in refused(folder)


def test_padding_before_a_payload_is_refused_as_oversized(folder: Path) -> None:
    script = folder / "scripts" / "isbn_check.py"
    script.write_text("\n" * 100_000 + script.read_text(encoding="utf-8"), encoding="utf-8")
    assert f"over the {MAX_LINES}-line limit" in refused(folder)


def test_a_conftest_or_a_pytest_hook_in_a_test_is_refused(folder: Path, tmp_path: Path) -> None:
    (folder / "tests" / "conftest.py").write_text("def pytest_runtest_makereport(item, call):\n    pass\n")
    assert "conftest.py" in refused(folder)
    (folder / "tests" / "conftest.py").unlink()
    test = folder / "tests" / "test_isbn_check.py"
    test.write_text(test.read_text() + "\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n")
    assert "pytest hook pytest_collection_modifyitems" in refused(folder)
    test.write_text(test.read_text().replace("def pytest_collection_modifyitems", "def helper")
                    + "\npytest_plugins = ['evil']\n")
    assert "pytest_plugins" in refused(folder)


def test_python_outside_scripts_and_tests_a_helper_module_and_a_link_are_refused(folder: Path) -> None:
    (folder / "setup.py").write_text("import os\n")
    (folder / "scripts" / "helper.py").write_text("X = 1\n")
    (folder / "scripts" / "link.py").symlink_to("/etc/hostname")
    why = refused(folder)
    assert "setup.py: Python outside scripts/ and tests/" in why
    assert "scripts/link.py: a symbolic link" in why


def test_a_folder_without_skill_md_or_its_script_is_refused(folder: Path) -> None:
    (folder / "scripts" / "isbn_check.py").rename(folder / "scripts" / "other.py")
    assert "scripts/isbn_check.py is missing" in refused(folder)
    (folder / "SKILL.md").unlink()
    assert "SKILL.md is missing" in refused(folder)
