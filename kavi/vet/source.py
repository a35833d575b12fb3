"""Reading a third party's source for `kavi vet`: a Python file, or an Agent Skills folder, read whole or refused.

Nothing in a source is run or imported here. A source the forge cannot read fully, as one text every reader sees
(binaries, compiled or archived code, text that is not UTF-8, oversized files, bidirectional or invisible
characters in code, a test file that reaches into pytest's collection or reporting), is refused with the reasons
before any gate runs: what a scanner cannot read, it must not pass.
"""

import ast
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kavi.skills.source import source_problem

MAX_FILE_BYTES = 256 * 1024
MAX_FILES = 64
MAX_LINES = 5000  # a code file longer than this is refused (padding before a payload is a known scanner evasion)
COMPILED_OR_ARCHIVED = (".pyc", ".pyo", ".pyd", ".so", ".dll", ".dylib", ".whl", ".egg", ".zip", ".tar", ".gz",
                        ".tgz", ".bz2", ".xz", ".7z", ".rar", ".jar", ".exe", ".bin")
_MAGIC = {b"PK\x03\x04": "a zip archive", b"\x1f\x8b": "a gzip archive", b"\x7fELF": "an ELF binary",
          b"BZh": "a bzip2 archive", b"\xfd7zXZ": "an xz archive", b"7z\xbc\xaf": "a 7z archive",
          b"MZ": "a Windows executable"}
# Format characters (Cf) include the bidirectional controls and zero-width characters; in code they make what a
# reviewer sees differ from what Python runs.
_BIDI = {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
         "\u200f", "\u061c"}
_PYTEST_HOOK = re.compile(r"^pytest_[a-z_]+$")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)


class VetRefused(ValueError):
    """The source cannot be vetted as given; `reasons` says each thing, one per line."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass(frozen=True)
class VetSource:
    """A third party's source, read whole: the function's file, its tests, its SKILL.md, and a digest of every
    file the source holds (the provenance of a vetted version)."""

    origin: str  # "python file" or "agent skill folder"
    skill_name: str  # the proposal name it must match (a folder's hyphenated name, with underscores)
    code: str
    code_path: str  # relative to the source: the file name, or scripts/<name>.py
    tests: dict[str, str] = field(default_factory=dict)  # relative path -> text
    description: str | None = None  # SKILL.md's description (data for a person and the coach, never instructions)
    skill_md: str | None = None  # SKILL.md as written (data for a person and the coach)
    frontmatter: dict[str, Any] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # relative path -> sha256 of every file

    def digest_set(self) -> str:
        """One digest over every file's path and digest (the source as a whole)."""
        lines = "".join(f"{p}\0{d}\n" for p, d in sorted(self.digests.items()))
        return hashlib.sha256(lines.encode()).hexdigest()


def skill_name_of(spec_name: str) -> str:
    """The Agent Skills name (lowercase, hyphens) as a proposal name: `isbn-check` is `isbn_check`."""
    return spec_name.strip().replace("-", "_")


def _file_problems(rel: str, data: bytes, *, code: bool) -> list[str]:
    problems: list[str] = []
    lower = rel.lower()
    if lower.endswith(COMPILED_OR_ARCHIVED):
        return [f"{rel}: compiled or archived content cannot be read, so it is not vetted"]
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            return [f"{rel}: {what}, which cannot be read, so it is not vetted"]
    if len(data) > MAX_FILE_BYTES:
        return [f"{rel}: {len(data)} bytes, over the {MAX_FILE_BYTES}-byte limit"]
    problem = source_problem(data)
    if problem is not None:
        return [f"{rel}: {problem}"]
    text = data.decode("utf-8")
    if code:
        lines = text.count("\n") + 1
        if lines > MAX_LINES:
            problems.append(f"{rel}: {lines} lines, over the {MAX_LINES}-line limit for code")
        for n, line in enumerate(text.splitlines(), 1):
            hidden = sorted({c for c in line if c in _BIDI or unicodedata.category(c) in ("Cf", "Co", "Cs")})
            if hidden:
                names = ", ".join(f"U+{ord(c):04X}" for c in hidden)
                problems.append(f"{rel}:{n}: invisible or bidirectional characters in code ({names})")
                break
    return problems


def _test_problems(rel: str, text: str, module: str) -> list[str]:
    """A shipped test may import the skill and assert; it may not touch how pytest collects or reports."""
    try:
        tree = ast.parse(text, filename=rel)
    except SyntaxError as err:
        return [f"{rel}:{err.lineno}: not Python ({err.msg})"]
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _PYTEST_HOOK.match(node.name):
            problems.append(f"{rel}:{node.lineno}: defines the pytest hook {node.name} (tests may not change how "
                            "pytest collects or reports)")
        elif isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in ("pytest_plugins", "hookimpl", "hookspec"):
                problems.append(f"{rel}:{node.lineno}: names {name} (tests may not load pytest plugins or hooks)")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                if top in ("_pytest", "pluggy", "conftest"):
                    problems.append(f"{rel}:{node.lineno}: imports {name} (pytest's internals)")
                if top == "scripts" and name != f"scripts.{module}":
                    problems.append(f"{rel}:{node.lineno}: imports {name}; a test imports only scripts.{module}")
    return problems


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_python_file(path: Path) -> VetSource:
    """A single Python file: the function's module; no tests of its own (the proposal's examples become them)."""
    if path.is_symlink() or not path.is_file():
        raise VetRefused([f"{path.name}: not a regular file"])
    with path.open("rb") as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    problems = _file_problems(path.name, data, code=True)
    if not path.name.endswith(".py"):
        problems.insert(0, f"{path.name}: a Python source file must end in .py")
    if problems:
        raise VetRefused(problems)
    return VetSource("python file", path.stem, data.decode("utf-8"), path.name, digests={path.name: _digest(data)})


def _frontmatter(text: str) -> tuple[dict[str, Any], str]:
    hit = _FRONTMATTER.match(text)
    if hit is None:
        raise VetRefused(["SKILL.md: no YAML frontmatter between '---' lines at its start"])
    try:
        meta = yaml.safe_load(hit.group(1))
    except yaml.YAMLError as err:
        raise VetRefused([f"SKILL.md: its frontmatter is not YAML ({str(err).splitlines()[0]})"]) from None
    if not isinstance(meta, dict):
        raise VetRefused(["SKILL.md: its frontmatter is not a mapping"])
    return meta, hit.group(2)


def read_skill_folder(folder: Path) -> VetSource:
    """An Agent Skills folder: SKILL.md with `name` and `description`, scripts/<name>.py, optionally tests/."""
    files: dict[str, bytes] = {}
    problems: list[str] = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            problems.append(f"{rel}: a symbolic link (a vetted source holds its own files only)")
            continue
        if p.is_dir():
            continue
        if not p.is_file():
            problems.append(f"{rel}: not a regular file")
            continue
        if len(files) >= MAX_FILES:
            problems.append(f"more than {MAX_FILES} files")
            break
        with p.open("rb") as fh:
            files[rel] = fh.read(MAX_FILE_BYTES + 1)
    if "SKILL.md" not in files:
        raise VetRefused([*problems, "SKILL.md is missing (an Agent Skills folder starts with it)"])
    for rel, data in files.items():
        problems += _file_problems(rel, data, code=rel.endswith(".py"))
        if Path(rel).name == "conftest.py":
            problems.append(f"{rel}: a conftest.py changes how pytest collects and reports tests; not vetted")
        elif rel.endswith(".py") and not (rel.startswith("scripts/") or rel.startswith("tests/")):
            problems.append(f"{rel}: Python outside scripts/ and tests/ is not run, so it is not vetted")
    if problems:
        raise VetRefused(problems)
    skill_md = files["SKILL.md"].decode("utf-8")
    meta, _body = _frontmatter(skill_md)
    raw_name = meta.get("name")
    if not isinstance(raw_name, str) or not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", raw_name.strip()):
        raise VetRefused(["SKILL.md: its frontmatter `name` must be lowercase letters, digits and hyphens"])
    name = skill_name_of(raw_name)
    description = meta.get("description")
    script = f"scripts/{name}.py"
    if script not in files:
        raise VetRefused([f"{script} is missing (SKILL.md names the skill {raw_name!r})"])
    extra = [r for r in files if r.startswith("scripts/") and r.endswith(".py") and r != script]
    if extra:
        raise VetRefused([f"{r}: only {script} is vetted; a helper module would run unvetted" for r in extra])
    tests = {r: d.decode("utf-8") for r, d in files.items()
             if r.startswith("tests/") and r.endswith(".py") and Path(r).name.startswith("test_")}
    test_problems = [p for r, t in tests.items() for p in _test_problems(r, t, name)]
    if len(tests) > 1:
        test_problems.append(f"tests/ holds {len(tests)} test files ({', '.join(sorted(tests))}); the forge runs a "
                             f"skill's tests from one file: join them into tests/test_{name}.py")
    if test_problems:
        raise VetRefused(test_problems)
    return VetSource("agent skill folder", name, files[script].decode("utf-8"), script, tests,
                     description.strip() if isinstance(description, str) else None, skill_md, meta,
                     {r: _digest(d) for r, d in files.items()})


def read_source(path: Path) -> VetSource:
    """The source at `path`: a folder is an Agent Skills folder, a file a Python module."""
    if not path.exists():
        raise VetRefused([f"{path.name}: no such file or folder"])
    if path.is_dir() and not path.is_symlink():
        return read_skill_folder(path)
    return read_python_file(path)
