"""The acceptance gate: the forge runs the proposal's examples and holdout examples against the built skill.

It runs after the builder's tests, in a fresh sandbox of its own holding one file: a pristine copy of the skill,
written from the bytes the other gates read, whose hash is checked before and after the run. The runner is the
installed package's (read-only in the sandbox); the cases reach it through a pipe, without their expected
outputs; the comparison happens here, outside the sandbox. The builder learns the examples' mismatches, and of
the holdouts only how many failed.
"""

import hashlib
import json
import math
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kavi_assets.build.sandbox_dir import write_files
from kavi_assets.gates.acceptance_runner import RESULT_PREFIX
from kavi_assets.gates.types import GATE_ACCEPTANCE, GateResult
from kavi_assets.lifecycle import Verdict
from kavi_assets.proposals.model import Proposal
from kavi_assets.sandbox.runner import Limits, read_job_file
from kavi_assets.sandbox.warm import run_warm


def equal(a: Any, b: Any) -> bool:
    """JSON values equal as the contract means it: bools are not numbers, numbers compare with a tolerance."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _cases(proposal: Proposal) -> list[tuple[str, bool, dict[str, Any]]]:
    """(label, holdout, example as JSON) for every example, shown first."""
    shown = [(f"example[{i}]", False, ex.model_dump(mode="json")) for i, ex in enumerate(proposal.examples)]
    hidden = [(f"holdout[{i}]", True, ex.model_dump(mode="json")) for i, ex in enumerate(proposal.holdout_examples)]
    return shown + hidden


def _job(proposal: Proposal, skill_rel: str, digest: str,
         cases: list[tuple[str, bool, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "skill_name": proposal.name,
        "skill_file": skill_rel,
        "sha256": digest,
        "side_effect_class": proposal.side_effect_class.value,
        "declared_secrets": list(proposal.required_secrets),
        # No label, no holdout flag, no expected output: only what the skill needs to run.
        "cases": [{"id": i, "input": ex.get("input"), "vault_files": ex.get("vault_files") or {},
                   "http_responses": ex.get("http_responses") or {}, "secrets": ex.get("secrets") or {}}
                  for i, (_label, _holdout, ex) in enumerate(cases)],
    }


def _file_digest(path: Path) -> str | None:
    data = read_job_file(path)  # the job could have swapped the file for a link or a FIFO
    return None if data is None else hashlib.sha256(data).hexdigest()


def acceptance_gate(work: Path, proposal: Proposal, skill_bytes: bytes, limits: Limits,
                    after: Callable[[], object] | None = None) -> GateResult:
    """Run every example against a pristine copy of `skill_bytes` in `work` (a fresh, empty directory).

    With `after`, the sandbox starts at once and imports its tools, but the job (and so the skill) reaches it
    only once `after()` returns: the builder's tests have finished by then."""
    skill_rel = f"skills/{proposal.name}.py"
    digest = hashlib.sha256(skill_bytes).hexdigest()
    write_files(work, {skill_rel: skill_bytes})
    skill_file = work / skill_rel
    cases = _cases(proposal)
    nonce = secrets.token_hex(16)
    job = json.dumps({**_job(proposal, skill_rel, digest, cases), "nonce": nonce}).encode()
    started: list[float] = []

    def release() -> None:
        if after is not None:
            after()
        started.append(time.monotonic())

    if _file_digest(skill_file) != digest:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, "the skill copy did not match the verified bytes", 0.0)
    res = run_warm([sys.executable, "-m", "kavi_assets.gates.acceptance_runner"], cwd=work, limits=limits,
                   stdin=job, hold_stdin=release, scratch=True)
    duration = time.monotonic() - (started[0] if started else time.monotonic())
    details: dict[str, Any] = {"isolation": res.isolation, "sha256": digest, "returncode": res.returncode,
                               "sandbox_started": res.started}
    if _file_digest(skill_file) != digest:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED,
                          "the skill file changed while acceptance ran (its hash no longer matches)", duration, [],
                          details)
    if res.timed_out:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, f"timed out after {limits.wall_s:.0f}s", duration, [],
                          details)
    marker = f"{RESULT_PREFIX}{nonce}:"
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(marker)), None)
    if line is None:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, f"the acceptance run died (exit {res.returncode})",
                          duration, [], details)
    try:
        out = json.loads(line[len(marker):])
    except json.JSONDecodeError:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, "the acceptance run answered garbage", duration, [],
                          details)
    if not isinstance(out, dict):
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, "the acceptance run answered garbage", duration, [],
                          details)
    if "load_error" in out:
        err = str(out["load_error"])[:500]
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, f"the skill could not be loaded: {err}", duration,
                          [err], details)
    return _judge(cases, out.get("results"), duration, details)


def _judge(cases: list[tuple[str, bool, dict[str, Any]]], raw: Any, duration: float,
           details: dict[str, Any]) -> GateResult:
    by_id: dict[int, dict[str, Any]] = {}
    if isinstance(raw, list):
        for r in raw:
            if isinstance(r, dict) and isinstance(r.get("id"), int) and r["id"] not in by_id:
                by_id[r["id"]] = r
    messages: list[str] = []
    shown_failed = 0
    hidden_failed = 0
    hidden_total = 0
    holdout_summary: list[dict[str, Any]] = []
    for i, (label, holdout, ex) in enumerate(cases):
        r = by_id.get(i)
        problem: str | None
        if r is None:
            problem = "no result reported"
        elif not r.get("ran"):
            problem = str(r.get("error") or "did not run")[:300]
        else:
            got = r.get("output")
            expected = ex.get("expected") or {}
            if not isinstance(got, dict):
                problem = "the output is not an object"
            else:
                wrong = {k: {"expected": v, "got": got.get(k, "<missing>")}
                         for k, v in expected.items() if k not in got or not equal(got[k], v)}
                problem = f"wrong output {json.dumps(wrong)[:400]}" if wrong else None
        if holdout:
            hidden_total += 1
            # The forge keeps only whether a holdout passed; no value of it reaches a message.
            holdout_summary.append({"label": label, "ok": problem is None})
            if problem is not None:
                hidden_failed += 1
        elif problem is not None:
            shown_failed += 1
            messages.append(f"{label}: {problem}")
    if hidden_failed:
        # The builder must not learn the holdout cases; it only learns how many failed.
        messages.append(f"{hidden_failed} of {hidden_total} holdout example(s) failed")
    shown_total = len(cases) - hidden_total
    details.update(examples=shown_total, holdout=holdout_summary, holdout_failed=hidden_failed,
                   examples_failed=shown_failed)
    total_failed = shown_failed + hidden_failed
    if total_failed:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED,
                          f"{total_failed} of {len(cases)} examples failed ({hidden_failed} holdout)",
                          duration, messages, details)
    return GateResult(GATE_ACCEPTANCE, Verdict.PASSED,
                      f"all {shown_total} examples and {hidden_total} holdout examples passed", duration, [], details)
