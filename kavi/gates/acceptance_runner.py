"""Runs inside the gate sandbox, from the installed package (mounted read-only): calls the built skill on the
proposal's example inputs and reports what it returned. It never sees an expected output: the forge compares
outside the sandbox, so nothing here — and nothing the skill does — can fake a verdict.

The job arrives on stdin (a pipe the forge writes; no file holds it): the skill's name, the relative path and
SHA-256 of its file, its side-effect class and declared secrets, and the cases — each an id, an input and its
fixtures (vault files, HTTP responses, secrets). The skill is loaded exactly as `kavi run` loads it
(`kavi.skills.loading`) and gets the same handle classes: a `Vault`, an `HttpClient` (whose transport
serves the fixtures instead of the network) and `DeclaredSecrets`.

Each case's result goes to stdout as soon as it is known, on a line of its own prefixed with RESULT_PREFIX and
the job's nonce, and a last such line says the job is done: when a later case hangs or kills the process, the
results before it still reach the forge. With `must_run` and `budget_s`, the cases after the first `must_run`
share a time budget: none starts once it is spent, and one still running when it runs out is interrupted (where
the skill's code lets a signal through), reported, and ends the job.
"""

import contextlib
import hashlib
import json
import linecache
import os
import re
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

RESULT_PREFIX = "KAVI-ACCEPTANCE-RESULT:"
MAX_OUTPUT_CHARS = 200_000


def _import_httpx() -> None:
    """httpx, for a NETWORK skill only, and without its command line client: `httpx/__init__` imports the client
    (click, rich, pygments: more start-up CPU than the rest of a job) in a `try/except ImportError`, and a None
    entry in `sys.modules` makes that import fail at once. The entry is removed again afterwards."""
    if "httpx" in sys.modules:
        return
    blocked = "httpx._main" not in sys.modules
    if blocked:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]
    try:
        import httpx  # noqa: F401
    finally:
        if blocked and sys.modules.get("httpx._main", 0) is None:
            del sys.modules["httpx._main"]


def _fixture_transport(responses: dict[str, Any]) -> Any:
    """An httpx transport answering GETs from the fixtures by normalised URL; anything else is a 404."""
    _import_httpx()
    import httpx

    from kavi.runtime.http_client import normalize_url

    table = {normalize_url(url): value for url, value in responses.items()}

    def handler(request: httpx.Request) -> httpx.Response:
        key = normalize_url(str(request.url))
        if request.method != "GET" or key not in table:
            return httpx.Response(404, text=f"no fixture response for {request.method} {key}")
        value = table[key]
        if isinstance(value, str):
            return httpx.Response(200, text=value)
        return httpx.Response(200, json=value)

    return httpx.MockTransport(handler)


def _read_skill(rel: str, sha256: str) -> bytes:
    fd = os.open(rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError("the skill file is not the one the forge verified (hash mismatch)")
    return data


def _load(job: dict[str, Any]) -> Any:
    return _load_module(job)[0]


def _load_module(job: dict[str, Any]) -> tuple[Any, Any, str]:
    """(the skill class, its module, the source text the module was compiled from)."""
    from kavi.skills.loading import exec_skill_module, skill_classes
    from kavi.skills.source import decode_source

    data = _read_skill(str(job["skill_file"]), str(job["sha256"]))
    module = exec_skill_module(str(job["skill_name"]), data, str(job["sha256"]))
    classes = skill_classes(module)
    if len(classes) != 1:
        raise TypeError(f"expected one BaseSkill subclass, found {len(classes)}")
    return classes[0], module, decode_source(data)


def write_vault_files(vault_root: Path, files: dict[str, str]) -> None:
    """Write an example's fixture files, each checked again here: a path that is absolute, climbs out or goes
    through a link is refused (ValueError) even if the proposal reached the runner without validation."""
    from kavi.proposals.paths import check_vault_relpaths, resolve_inside

    check_vault_relpaths(files)
    for rel, content in files.items():
        target = resolve_inside(vault_root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        resolve_inside(vault_root, rel)  # again, now that the directories exist
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(content)


# A case's vault, written once per distinct set of files for a skill that cannot write to it: the mutation analysis
# and the probes call the skill on the same fixtures hundreds of times. A FILE_WRITE skill gets a fresh one per call.
# A READ_ONLY skill's whole context (a read-only vault, nothing else) is kept with it.
_SHARED_VAULTS: dict[str, Path] = {}
_READ_ONLY_CONTEXTS: dict[str, Any] = {}


def _vault_for(files: dict[str, str], key: str, shared: bool) -> Path:
    if shared and key in _SHARED_VAULTS:
        return _SHARED_VAULTS[key]
    vault_root = Path(tempfile.mkdtemp(prefix="vault-", dir="."))
    write_vault_files(vault_root, files)
    if shared:
        _SHARED_VAULTS[key] = vault_root
    return vault_root


def _context(job: dict[str, Any], case: dict[str, Any]) -> Any:
    from kavi.runtime.context import context_for
    from kavi.runtime.http_client import HttpClient
    from kavi.skills.base import SideEffectClass

    side = SideEffectClass(job["side_effect_class"])
    files = {str(k): str(v) for k, v in (case.get("vault_files") or {}).items()}
    key = json.dumps(files, sort_keys=True)
    if side is SideEffectClass.READ_ONLY and key in _READ_ONLY_CONTEXTS:
        return _READ_ONLY_CONTEXTS[key]
    vault_root = _vault_for(files, key, shared=side is not SideEffectClass.FILE_WRITE)
    http = HttpClient(transport=_fixture_transport(case.get("http_responses") or {})) \
        if side is SideEffectClass.NETWORK else None
    context = context_for(side, vault_root=vault_root, declared_secrets=list(job.get("declared_secrets") or []),
                          environ=dict(case.get("secrets") or {}), http=http, llm=None)
    if side is SideEffectClass.READ_ONLY:
        _READ_ONLY_CONTEXTS[key] = context
    return context


class OverBudget(BaseException):
    """Raised into a case still running when the time budget of the cases after `must_run` runs out. A
    BaseException, so a skill's `except Exception` does not swallow it."""


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Interrupt the block with OverBudget after `seconds` (main thread only: signals reach no other)."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(_signum: int, _frame: object) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_RAISE = re.compile(r"\s*raise\b")


def _error_kind(err: BaseException, skill_file: str) -> str:
    """How the forge may read an exception on an input nobody vouched for: "rejected" when the skill declared the
    input outside its domain — a ValueError (which pydantic's validation errors are), any exception its own code
    raised deliberately with a `raise` statement (a `KeyError("no such path")` is a refusal), or the world's
    answer through a handle (a missing vault file, an HTTP error, an undeclared secret); "raised" for the rest,
    an exception an operation of the skill ran into (ZeroDivisionError, IndexError, KeyError, RecursionError...),
    which is a bug the input exposed."""
    from kavi.runtime.declared_secrets import SecretsError
    from kavi.runtime.http_client import HttpHandleError
    from kavi.runtime.model_endpoint import ModelHandleError

    if isinstance(err, ValueError | OSError | HttpHandleError | SecretsError | ModelHandleError):
        return "rejected"
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    deliberate = (tb is not None and tb.tb_frame.f_code.co_filename == skill_file
                  and _RAISE.match(linecache.getline(skill_file, tb.tb_lineno)) is not None)
    return "rejected" if deliberate else "raised"


def _run_case(cls: Any, job: dict[str, Any], case: dict[str, Any], entry: dict[str, Any]) -> None:
    try:
        ctx = _context(job, case)
    except Exception as err:
        entry.update(ran=False, error=f"vault_files: {err}" if isinstance(err, ValueError)
                     else f"fixture refused: {type(err).__name__}: {err}", error_kind="fixture")
        return
    try:
        out = cls(ctx).execute(cls.input_model.model_validate(case["input"]))
        dumped = cls.output_model.model_validate(out.model_dump()).model_dump(mode="json")
        text = json.dumps(dumped)
        if len(text) > MAX_OUTPUT_CHARS:
            entry.update(ran=False, error=f"output of {len(text)} characters exceeds {MAX_OUTPUT_CHARS}",
                         error_kind="output")
        else:
            entry.update(ran=True, output=dumped)
    except Exception as err:
        entry.update(ran=False, error=f"{type(err).__name__}: {str(err)[:500]}",
                     error_kind=_error_kind(err, cls.execute.__code__.co_filename))


def run_job(job: dict[str, Any], emit: Callable[[dict[str, Any]], None] | None = None,
            cls: Any = None) -> dict[str, Any]:
    cls = cls if cls is not None else _load(job)
    cases = list(job["cases"])
    must_run = int(job.get("must_run", len(cases)))
    budget = job.get("budget_s")
    # Each case under the budget gets at most `case_cap_s` of it: one hard input does not spend it all. With
    # `paired` (each such case twice in a row), the second run of a case cut at the cap is not made.
    cap_s = job.get("case_cap_s")
    case_cap = float(cap_s) if isinstance(cap_s, int | float) else None
    paired = bool(job.get("paired"))
    budget_start: float | None = None
    results = []
    skip: int | None = None
    for index, case in enumerate(cases):
        remaining: float | None = None
        if index >= must_run and isinstance(budget, int | float):
            if budget_start is None:
                budget_start = time.monotonic()
            remaining = float(budget) - (time.monotonic() - budget_start)
            if remaining <= 0:
                break
        if index == skip:
            continue
        capped = case_cap is not None and remaining is not None and case_cap < remaining
        entry: dict[str, Any] = {"id": case["id"]}
        stop = False
        started = time.monotonic()
        try:
            with _deadline(case_cap if capped else remaining):
                _run_case(cls, job, case, entry)
        except OverBudget:
            if capped:
                entry.update(ran=False, error=f"stopped: the case's time cap ({case_cap:g} s)",
                             error_kind="cap")
                if paired and (index - must_run) % 2 == 0:
                    skip = index + 1
            else:
                entry.update(ran=False, error="stopped: the time budget was spent", error_kind="budget")
                stop = True
        entry["ms"] = round((time.monotonic() - started) * 1000, 3)  # how long it ran (the differential gate asks)
        results.append(entry)
        if emit is not None:
            emit(entry)
        if stop:
            break
    return {"results": results}


def capped_call(cls: Any, job: dict[str, Any]) -> Callable[[dict[str, Any], float], dict[str, Any]]:
    """A call of the skill on one case, stopped after `cap_s` seconds (as `error_kind` "timeout")."""

    def call(case: dict[str, Any], cap_s: float) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        try:
            with _deadline(cap_s):
                _run_case(cls, job, case, entry)
        except OverBudget:
            entry.update(ran=False, error="stopped: the call's time cap", error_kind="timeout")
        return entry

    return call


def probe_call(cls: Any, job: dict[str, Any], fixtures: dict[str, Any]) -> Callable[[dict[str, Any]],
                                                                                  Callable[[], None]]:
    """For the resource probes: the call of the skill on one input with the probe's fixtures, its context (and vault)
    built before, untimed; the call validates the input and the output as a case does. A context that cannot be
    built is a call that raises."""

    def call_for(data: dict[str, Any]) -> Callable[[], None]:
        try:
            ctx = _context(job, fixtures)
        except Exception as err:
            failed = err

            def refused() -> None:
                raise failed

            return refused

        def call() -> None:
            out = cls(ctx).execute(cls.input_model.model_validate(data))
            cls.output_model.model_validate(out.model_dump()).model_dump(mode="json")

        return call

    return call_for


def result_channel(nonce: str) -> Callable[[dict[str, Any]], None]:
    """Where a runner in the sandbox writes its result lines (this one and composition_runner). Result lines go
    straight to a copy of the stdout descriptor taken now: whatever the skill does to `sys.stdout` (or prints without
    a newline) cannot reach a line the forge reads. And the skill's own output goes nowhere: it can neither flood the
    captured output past the forge's capture limit (cutting off the result lines) nor interleave with them."""
    marker = RESULT_PREFIX + nonce + ":"
    sys.stdout.flush()
    out_fd = os.dup(1)
    try:
        null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        null = -1
    if null >= 0:
        os.dup2(null, 1)
        os.close(null)

    def line(payload: dict[str, Any]) -> None:
        data = memoryview(("\n" + marker + json.dumps(payload) + "\n").encode())
        while data:
            data = data[os.write(out_fd, data):]

    return line


def main() -> None:
    # The tools first: the forge may hold the job back until the builder's tests have finished. Not httpx: each
    # job is a fresh interpreter, and only a NETWORK skill's fixtures need it (see _import_httpx).
    import pydantic  # noqa: F401

    import kavi.runtime.context
    import kavi.runtime.model_endpoint
    import kavi.skills.base
    import kavi.skills.loading  # noqa: F401
    from kavi.gates.resource_probe import run_probes  # its clock is bound before any skill code runs

    job = json.loads(sys.stdin.read())
    # The nonce leaves the job before any skill code runs.
    line = result_channel(str(job.pop("nonce", "")))
    try:
        cls, module, source = _load_module(job)
        out = run_job(job, emit=lambda entry: line({"result": entry}), cls=cls)
        line({"done": len(out["results"])})
    except Exception as err:
        line({"load_error": f"{type(err).__name__}: {str(err)[:500]}"})
        return
    resource = job.get("resource")
    if isinstance(resource, dict):
        # After every case: how the skill's time grows with its input (kavi.gates.resource judges it).
        run_probes(resource, lambda probe, data: probe_call(cls, job, probe)(data),
                   lambda entry: line({"resource": entry}))
        line({"resource_done": True})
    if isinstance(job.get("adequacy"), dict):
        # Last: the mutants of the skill on the same cases (kavi.gates.adequacy judges what they did).
        from kavi.gates.adequacy_runner import run_adequacy

        results = {int(e["id"]): e for e in out["results"]}
        run_adequacy(capped_call(cls, job), module.__dict__, source, str(module.__file__), job, results, line)


if __name__ == "__main__":
    main()
