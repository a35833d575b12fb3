"""The acceptance gate: the forge runs the proposal's examples and holdout examples against the built skill.

It runs after the builder's tests, in a fresh sandbox of its own holding one file: a pristine copy of the skill,
written from the bytes the other gates read, whose hash is checked before and after the run. The runner is the
installed package's (read-only in the sandbox); the cases reach it through a pipe, without their expected
outputs; the comparison happens here, outside the sandbox. The builder learns the examples' mismatches, and of
the holdouts only how many failed.
"""

import hashlib
import json
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kavi.build.sandbox_dir import write_files
from kavi.gates.acceptance_runner import RESULT_PREFIX
from kavi.gates.values import equal
from kavi.lifecycle import Verdict
from kavi.proposals.model import Proposal
from kavi.sandbox.runner import Limits, read_job_file
from kavi.sandbox.warm import run_warm
from kavi.verdicts import GATE_ACCEPTANCE, GateResult


def _cases(proposal: Proposal) -> list[tuple[str, bool, dict[str, Any]]]:
    """(label, holdout, example as JSON) for every example, shown first."""
    shown = [(f"example[{i}]", False, ex.model_dump(mode="json")) for i, ex in enumerate(proposal.examples)]
    hidden = [(f"holdout[{i}]", True, ex.model_dump(mode="json")) for i, ex in enumerate(proposal.holdout_examples)]
    return shown + hidden


def job_case(case_id: int, case: dict[str, Any]) -> dict[str, Any]:
    """A case as the runner gets it: an id, an input and its fixtures; no label, no expected output."""
    return {"id": case_id, "input": case.get("input"), "vault_files": case.get("vault_files") or {},
            "http_responses": case.get("http_responses") or {}, "secrets": case.get("secrets") or {}}


def _job(proposal: Proposal, skill_rel: str, digest: str,
         cases: Sequence[dict[str, Any] | tuple[str, bool, dict[str, Any]]]) -> dict[str, Any]:
    """The job for `cases`: case dicts, or the (label, holdout, example) triples of `_cases` (labels dropped)."""
    return {
        "skill_name": proposal.name,
        "skill_file": skill_rel,
        "sha256": digest,
        "side_effect_class": proposal.side_effect_class.value,
        "declared_secrets": list(proposal.required_secrets),
        # No label, no holdout flag, no expected output: only what the skill needs to run.
        "cases": [job_case(i, c[2] if isinstance(c, tuple) else c) for i, c in enumerate(cases)],
    }


def _file_digest(path: Path) -> str | None:
    data = read_job_file(path)  # the job could have swapped the file for a link or a FIFO
    return None if data is None else hashlib.sha256(data).hexdigest()


# Why a run gave nothing usable, as each reader words it.
RUN_FAILURES = {
    "copy_mismatch": "the skill copy did not match the verified bytes",
    "changed": "the skill file changed while {what} ran (its hash no longer matches)",
    "timed_out": "timed out after {wall:.0f}s",
    "garbage": "the {what} run answered garbage",
    "died": "the {what} run died (exit {rc})",
    "load_error": "the skill could not be loaded: {err}",
}


@dataclass
class CaseRun:
    """What one sandboxed run of a skill over a list of cases reported, read outside the sandbox.

    `results` holds the runner's entry per case index, `done` whether the runner said it finished (it stops
    early when the time budget of the cases after `must_run` is spent), `failure` a key of RUN_FAILURES when the
    run gave nothing usable at all."""

    results: dict[int, dict[str, Any]]
    done: bool
    timed_out: bool
    failure: str | None
    details: dict[str, Any]
    duration_s: float
    wall_s: float = 0.0
    load_error: str = ""
    resource: list[dict[str, Any]] | None = None  # the resource probes' lines, when the job had probes
    resource_done: bool = False  # the runner said it finished them
    adequacy: list[dict[str, Any]] | None = None  # one line per mutant tried, when the job had the analysis
    adequacy_done: dict[str, Any] | None = None  # the runner's last line of it (how many tried, why it stopped)

    @property
    def resource_s(self) -> float:
        """CPU seconds the resource probes measured (part of `duration_s`)."""
        return sum(float(e.get("s") or 0.0) for e in self.resource or [])

    @property
    def adequacy_s(self) -> float:
        """Seconds the mutation analysis took (part of `duration_s`)."""
        spent = (self.adequacy_done or {}).get("s")
        return float(spent) if isinstance(spent, int | float) else 0.0

    def complete_through(self, count: int) -> bool:
        return all(i in self.results for i in range(count))

    def describe(self, what: str) -> str:
        return RUN_FAILURES.get(self.failure or "", "{what} failed").format(
            what=what, wall=self.wall_s, rc=self.details.get("returncode"), err=self.load_error)


def run_cases(work: Path, proposal: Proposal, skill_bytes: bytes, cases: list[dict[str, Any]], limits: Limits,
              after: Callable[[], object] | None = None, must_run: int | None = None,
              budget_s: float | None = None, resource: dict[str, Any] | None = None,
              adequacy: dict[str, Any] | None = None, case_cap_s: float | None = None,
              paired: bool = False) -> CaseRun:
    """Run `cases` (each {"input", "vault_files", "http_responses", "secrets"}) against a pristine copy of
    `skill_bytes` in `work` (a fresh, empty directory), in a sandbox of its own, and read what came back.

    With `after`, the sandbox starts at once and imports its tools, but the job (and so the skill) reaches it
    only once `after()` returns. With `budget_s`, the cases after the first `must_run` share that time budget, each
    for at most `case_cap_s` (`paired`: they come twice in a row, and a case cut at the cap is not run again). With
    `resource` (kavi.gates.resource), the resource probes run after the cases, in the same sandbox."""
    skill_rel = f"skills/{proposal.name}.py"
    digest = hashlib.sha256(skill_bytes).hexdigest()
    write_files(work, {skill_rel: skill_bytes})
    skill_file = work / skill_rel
    nonce = secrets.token_hex(16)
    job: dict[str, Any] = {**_job(proposal, skill_rel, digest, cases), "nonce": nonce}
    if budget_s is not None:
        job.update(must_run=len(cases) if must_run is None else must_run, budget_s=budget_s)
        if case_cap_s is not None:
            job.update(case_cap_s=case_cap_s, paired=paired)
    if resource is not None:
        job["resource"] = resource
    if adequacy is not None:
        job["adequacy"] = adequacy
    started: list[float] = []

    def release() -> None:
        if after is not None:
            after()
        started.append(time.monotonic())

    details: dict[str, Any] = {"sha256": digest}
    if _file_digest(skill_file) != digest:
        return CaseRun({}, False, False, "copy_mismatch", details, 0.0, limits.wall_s)
    res = run_warm([sys.executable, "-m", "kavi.gates.acceptance_runner"], cwd=work, limits=limits,
                   stdin=json.dumps(job).encode(), hold_stdin=release, scratch=True)
    duration = time.monotonic() - (started[0] if started else time.monotonic())
    details.update(isolation=res.isolation, returncode=res.returncode, sandbox_started=res.started)
    run = CaseRun({}, False, res.timed_out, None, details, duration, limits.wall_s,
                  resource=[] if resource is not None else None, adequacy=[] if adequacy is not None else None)
    if _file_digest(skill_file) != digest:
        run.failure = "changed"
        return run
    marker = f"{RESULT_PREFIX}{nonce}:"
    garbage = False
    for ln in res.stdout.splitlines():
        if not ln.startswith(marker):
            continue
        try:
            payload = json.loads(ln[len(marker):])
        except json.JSONDecodeError:
            garbage = True  # e.g. a line cut short by the capture limit
            continue
        if not isinstance(payload, dict):
            garbage = True
        elif "load_error" in payload:
            run.load_error = str(payload["load_error"])[:500]
            run.failure = "load_error"
        elif "done" in payload:
            run.done = True
        elif isinstance(payload.get("resource"), dict) and run.resource is not None:
            run.resource.append(payload["resource"])
        elif payload.get("resource_done") is True:
            run.resource_done = True
        elif isinstance(payload.get("mutant"), dict) and run.adequacy is not None:
            run.adequacy.append(payload["mutant"])
        elif isinstance(payload.get("adequacy_done"), dict):
            run.adequacy_done = payload["adequacy_done"]
        elif isinstance(payload.get("result"), dict):
            entry = payload["result"]
            key = entry.get("id")
            if isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(cases) and key not in run.results:
                run.results[key] = entry
    if run.failure is None and not run.results and not run.done:
        run.failure = "timed_out" if res.timed_out else "garbage" if garbage else "died"
    return run


def acceptance_run(work: Path, proposal: Proposal, skill_bytes: bytes, limits: Limits,
                   after: Callable[[], object] | None = None, generated: list[dict[str, Any]] | None = None,
                   budget_s: float | None = None, resource: dict[str, Any] | None = None,
                   adequacy: dict[str, Any] | None = None, case_cap_s: float | None = None
                   ) -> tuple[GateResult, CaseRun]:
    """The acceptance gate, and the run it judged: every example and holdout example, then (after them, under
    `budget_s`) each generated case twice in a row, then the resource probes, all in one sandbox. The verdict is
    about the examples and holdouts only; the generated cases' results (indices after them) are the differential
    gate's to judge, the probes' lines the resource gate's."""
    cases = _cases(proposal)
    job_cases = [ex for _label, _holdout, ex in cases]
    for case in generated or []:
        job_cases += [case, case]
    run = run_cases(work, proposal, skill_bytes, job_cases, limits, after, must_run=len(cases),
                    budget_s=budget_s if generated else None, resource=resource, adequacy=adequacy,
                    case_cap_s=case_cap_s, paired=True)
    details = dict(run.details)
    if run.failure is None and not run.complete_through(len(cases)):
        # Results came, but not for every example: the run ended (timed out, died) before they were all judged.
        run.failure = "timed_out" if run.timed_out else "died"
    if run.failure is not None:
        messages = [run.load_error] if run.failure == "load_error" else []
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, run.describe("acceptance"), run.duration_s, messages,
                          details), run
    return _judge(cases, [run.results[i] for i in range(len(cases))], run.duration_s, details), run


def acceptance_gate(work: Path, proposal: Proposal, skill_bytes: bytes, limits: Limits,
                    after: Callable[[], object] | None = None) -> GateResult:
    """Run every example against a pristine copy of `skill_bytes` in `work` (a fresh, empty directory).

    With `after`, the sandbox starts at once and imports its tools, but the job (and so the skill) reaches it
    only once `after()` returns: the builder's tests have finished by then."""
    return acceptance_run(work, proposal, skill_bytes, limits, after)[0]


def judge_examples(proposal: Proposal, raw: list[dict[str, Any]]) -> GateResult:
    """The acceptance verdict on results in example order (examples, then holdout examples)."""
    return _judge(_cases(proposal), raw, 0.0, {})


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
