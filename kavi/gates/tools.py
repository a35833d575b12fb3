"""The static tool gates: one ruff call over both files, and mypy --strict on the skill with a shared cache."""

import contextlib
import fcntl
import functools
import json
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import kavi
from kavi.lifecycle import Verdict
from kavi.sandbox import held
from kavi.sandbox.runner import Limits, SandboxResult
from kavi.sandbox.warm import run_warm
from kavi.verdicts import GATE_MYPY, GATE_RUFF, GateResult

RUFF_SELECT = "E,F,W,I,B,UP"
RUFF_LINE_LENGTH = 110
# The skill's own package and the forge's contract module sort as first-party imports.
FIRST_PARTY = "lint.isort.known-first-party=['skills', 'kavi_assets']"


@functools.cache
def ruff_command() -> tuple[str, ...]:
    """The ruff binary itself (no Python start in front of it), or `python -m ruff` where it cannot be found."""
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

        return (str(Path(find_ruff_bin()).resolve()),)
    except (ImportError, FileNotFoundError):
        return (sys.executable, "-m", "ruff")


def ruff_gate(work: Path, rel_paths: Sequence[str], limits: Limits) -> GateResult:
    t0 = time.monotonic()
    res = run_warm(
        [*ruff_command(), "check", "--isolated", "--no-cache", "--output-format=json",
         f"--select={RUFF_SELECT}", f"--line-length={RUFF_LINE_LENGTH}", "--target-version=py311",
         "--config", FIRST_PARTY, *rel_paths],
        cwd=work, limits=limits,
    )
    duration = time.monotonic() - t0
    if res.timed_out:
        return GateResult(GATE_RUFF, Verdict.FAILED, f"ruff timed out after {limits.wall_s:.0f}s", duration)
    if res.returncode not in (0, 1):
        # 0 is "no findings" and 1 "findings"; anything else means ruff did not check the files (a missing binary
        # used to print nothing, which read as "no findings").
        return GateResult(GATE_RUFF, Verdict.FAILED, f"ruff did not run (exit {res.returncode}): "
                          f"{res.stderr.strip()[:300]}", duration, [], {"returncode": res.returncode})
    try:
        findings = json.loads(res.stdout or "[]")
    except json.JSONDecodeError:
        return GateResult(GATE_RUFF, Verdict.FAILED, f"ruff did not run: {res.stderr.strip()[:300]}", duration)
    messages = []
    for f in findings:
        loc = f.get("location") or {}
        path = str(f.get("filename", "")).replace(str(work) + "/", "")
        messages.append(f"{path}:{loc.get('row')}:{loc.get('column')} {f.get('code')} {f.get('message')}")
    if findings:
        codes = sorted({str(f.get("code")) for f in findings})
        return GateResult(GATE_RUFF, Verdict.FAILED, f"{len(findings)} finding(s): {', '.join(codes)}", duration,
                          messages, {"codes": codes})
    return GateResult(GATE_RUFF, Verdict.PASSED, "no findings", duration)


MYPY_CONFIG = Path(__file__).with_name("mypy_gate.ini")


def _mypy_path() -> str | None:
    # An editable install hides the packages behind an import hook that mypy cannot follow: point it at the tree.
    parent = Path(kavi.__file__).resolve().parent.parent
    return None if "site-packages" in parent.parts else str(parent)


def mypy_cache_dir(cache_root: Path) -> Path:
    import mypy.version

    return cache_root / f"mypy-{mypy.version.__version__}-py{sys.version_info.major}{sys.version_info.minor}"


# What every skill imports (the skill contract, pydantic) and what many do: checked once into a fresh home's cache.
WARM_SKILL_REL = "skills/kavi_mypy_warmup.py"
WARM_SKILL = '''"""Not a skill: the mypy cache's warm-up, checked once per home with what skills import."""

import collections
import datetime
import functools
import itertools
import json
import math
import re
import string

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

USED = (collections, datetime, functools, itertools, json, math, re, string)


class WarmInput(BaseModel):
    text: str


class WarmOutput(BaseModel):
    length: int


class Warm(BaseSkill[WarmInput, WarmOutput]):
    name = "kavi_mypy_warmup"
    description = "The mypy cache's warm-up."
    input_model = WarmInput
    output_model = WarmOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: WarmInput) -> WarmOutput:
        return WarmOutput(length=len(input_data.text))
'''


_WARMED = "kavi-warmed"  # beside the cache (never inside the folder the gate's mypy may write), by the forge


def mypy_cache_warm(cache_root: Path) -> bool:
    return (mypy_cache_dir(cache_root).parent / f"{mypy_cache_dir(cache_root).name}.{_WARMED}").is_file()


def warm_mypy_cache(work: Path, cache_root: Path, limits: Limits) -> bool:
    """Fill an empty mypy cache with the standard library, pydantic and the skill contract by checking a fixed,
    trusted module (in `work`, a fresh folder) exactly as the gate checks a skill: the first verifications of a
    fresh home then do not build it one after another behind the cache's lock. False when it was warm already."""
    if mypy_cache_warm(cache_root):
        return False
    cache = mypy_cache_dir(cache_root)
    cache.mkdir(parents=True, exist_ok=True)
    # One warm-up per cache: the builds starting together find it warm once the first is done.
    with (cache.parent / f"{cache.name}.warmup.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if mypy_cache_warm(cache_root):
            return False
        (work / "skills").mkdir(parents=True, exist_ok=True)
        (work / WARM_SKILL_REL).write_text(WARM_SKILL, encoding="utf-8")
        result = mypy_gate(work, WARM_SKILL_REL, cache_root, limits)
        if result.ok:
            (cache.parent / f"{cache.name}.{_WARMED}").write_text("", encoding="utf-8")
    return result.ok


# What the job imports before its stdin is read (kavi.sandbox.launch); stdin then carries only this.
MYPY_PRELOAD = ("mypy.main", "mypy.build", "mypy.nativeparse", "sqlite3")
MYPY_GO = b"go"


def mypy_job(work: Path, skill_rel: str, cache: Path, limits: Limits) -> held.JobShape:
    """mypy --strict on `skill_rel` in `work`, with `cache` its cache folder (the only other place it may write)."""
    extra = {"MYPYPATH": p} if (p := _mypy_path()) else {}
    argv = [sys.executable, "-m", "kavi.sandbox.launch", ",".join(MYPY_PRELOAD), "mypy", "--strict",
            "--no-error-summary", "--show-error-codes", "--no-color-output", "--config-file", str(MYPY_CONFIG),
            "--cache-dir", str(cache), "--python-version", "3.11", skill_rel]
    return held.shape(argv, cwd=work, limits=limits, env_extra=extra, rw=[cache])


def _run_mypy(work: Path, skill_rel: str, cache: Path, limits: Limits) -> SandboxResult:
    return held.run_job(mypy_job(work, skill_rel, cache, limits), MYPY_GO)


def _own_cache(work: Path) -> Path:
    return work.parent / f"{work.name}.mypy-cache"


@contextlib.contextmanager
def _cache_locked(cache: Path) -> Iterator[None]:
    """mypy's cache, held by this check alone (its lock file beside it)."""
    with (cache.parent / f"{cache.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _private_copy(cache: Path, own: Path) -> None:
    """A copy of the warm cache for one check (the caller holds the cache's lock)."""
    shutil.rmtree(own, ignore_errors=True)
    shutil.copytree(cache, own)


def hold_mypy(work: Path, skill_rel: str, cache_root: Path, limits: Limits) -> bool:
    """Start the mypy job of a build ahead of it (kavi.sandbox.held) in `work` (the static gates' folder, fresh and
    empty; the verification writes the build's files into it), on its private copy of the warm cache; False while
    the cache is not warm yet (the job then runs as without holding)."""
    if not mypy_cache_warm(cache_root):
        return False
    cache, own = mypy_cache_dir(cache_root), _own_cache(work)
    with _cache_locked(cache):
        _private_copy(cache, own)
    if held.hold(mypy_job(work, skill_rel, own, limits)) is not None:
        return True
    shutil.rmtree(own, ignore_errors=True)
    return False


def mypy_gate(work: Path, skill_rel: str, cache_root: Path, limits: Limits) -> GateResult:
    """mypy --strict on the skill. mypy's cache is not safe for two processes at once (its SQLite shards lock, its
    entries race), so no two checks share one: a cold cache is filled by one check at a time, and once it is warm
    each check runs on a private copy of it, taken under the lock (when its job was held, at that time), and leaves
    it unchanged."""
    cache = mypy_cache_dir(cache_root)
    cache.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    own = _own_cache(work)
    res: SandboxResult | None = None
    if not (held.holds(work) and mypy_cache_warm(cache_root)):  # else the held job's copy was taken already
        with _cache_locked(cache):
            if not mypy_cache_warm(cache_root):
                res = _run_mypy(work, skill_rel, cache, limits)
            else:
                _private_copy(cache, own)
    if res is None:
        try:
            res = _run_mypy(work, skill_rel, own, limits)
        finally:
            shutil.rmtree(own, ignore_errors=True)
    duration = time.monotonic() - t0
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ": error:" in ln]
    if res.timed_out:
        return GateResult(GATE_MYPY, Verdict.FAILED, f"mypy timed out after {limits.wall_s:.0f}s", duration)
    if res.returncode == 0:
        return GateResult(GATE_MYPY, Verdict.PASSED, "no type errors (mypy --strict)", duration)
    if res.returncode == 1 and errors:
        return GateResult(GATE_MYPY, Verdict.FAILED, f"{len(errors)} type error(s)", duration, lines)
    return GateResult(GATE_MYPY, Verdict.FAILED, f"mypy could not check the file (exit {res.returncode})", duration,
                      (lines + res.stderr.splitlines())[:20], {"returncode": res.returncode})
