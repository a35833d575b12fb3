"""The diff allowlist: a build may write exactly `skills/<name>.py` and `tests/test_skill_<name>.py`."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from kavi.skills.source import source_problem


def skill_path(name: str) -> str:
    return f"skills/{name}.py"


def test_path(name: str) -> str:
    return f"tests/test_skill_{name}.py"


MAX_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class AllowlistResult:
    files: dict[str, bytes]
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def _why_path_refused(path: str) -> str | None:
    if "\x00" in path:
        return "contains a NUL byte"
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        return "is an absolute path"
    if "\\" in path:
        return "uses backslashes"
    parts = path.split("/")
    if ".." in parts:
        return "climbs out with '..'"
    if any(p in ("", ".") for p in parts):
        return "is not a normalised relative path"
    return None


def check_allowlist(name: str, answer_files: Sequence[tuple[str, str]]) -> AllowlistResult:
    """Every file must be one of the two allowed paths, each one unambiguous UTF-8 text (see skills/source.py);
    both must be present; nothing else is written."""
    allowed = {skill_path(name), test_path(name)}
    violations: list[str] = []
    accepted: dict[str, bytes] = {}
    for path, content in answer_files:
        why = _why_path_refused(path)
        if why is not None:
            violations.append(f"{path!r} {why}")
            continue
        if path not in allowed:
            violations.append(f"{path!r} is not on the allowlist (only {sorted(allowed)} may be written)")
            continue
        if path in accepted:
            violations.append(f"{path!r} is written twice")
            continue
        data = content.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            violations.append(f"{path!r} is {len(data)} bytes, over the {MAX_FILE_BYTES}-byte limit")
            continue
        problem = source_problem(data)
        if problem is not None:
            violations.append(f"{path!r} {problem}")
            continue
        accepted[path] = data
    for required in sorted(allowed):
        if required not in accepted and not any(required in v for v in violations):
            violations.append(f"required file {required!r} is missing")
    return AllowlistResult(accepted if not violations else {}, violations)
