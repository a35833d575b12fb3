"""Run every gate on one build, concurrently, each code-running gate on its own copy of the files."""

import contextlib
import dataclasses
import hashlib
import math
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kavi.build.allowlist import skill_path, test_path
from kavi.build.sandbox_dir import write_files
from kavi.gates.acceptance import CaseRun, acceptance_run, run_cases
from kavi.gates.adequacy import AdequacyConfig, AdequacyPlan, adequacy_gate, plan_adequacy
from kavi.gates.differential import (
    GENERATED_CASE_CAP_S,
    SLOW_MIN_S,
    EvidenceConfig,
    IndependentEvidence,
    differential_gate,
    evidence_seed,
    independent_evidence,
)
from kavi.gates.generate import generated_cases
from kavi.gates.resource import ResourceConfig, resource_gate
from kavi.gates.resource_shapes import resource_probes
from kavi.gates.static import invariants_gate, policy_gate
from kavi.gates.testing import hold_pytest, pytest_and_coverage
from kavi.gates.tools import hold_mypy, mypy_gate, ruff_gate
from kavi.lifecycle import Verdict
from kavi.proposals.model import Proposal
from kavi.sandbox import held
from kavi.sandbox.runner import Limits, read_job_file
from kavi.sandbox.slots import gate_slot
from kavi.skills.source import source_problem
from kavi.verdicts import (
    DETERMINISTIC_GATES,
    GATE_ACCEPTANCE,
    GATE_ADEQUACY,
    GATE_DIFFERENTIAL,
    GATE_POLICY,
    GATE_RESOURCE,
    GateResult,
)


@dataclass(frozen=True)
class GateConfig:
    wall_s: float = 60.0
    coverage_min: float = 80.0
    mypy_cache_root: Path | None = None
    policy_path: Path | None = None
    limits: Limits = field(default_factory=Limits)
    evidence: EvidenceConfig = field(default_factory=EvidenceConfig)
    resource: ResourceConfig = field(default_factory=ResourceConfig)
    adequacy: AdequacyConfig = field(default_factory=AdequacyConfig)
    slots: int | None = None  # gate slots of this machine (kavi/sandbox/slots.py); None: KAVI_GATE_SLOTS


@dataclass(frozen=True)
class VerificationOutcome:
    results: list[GateResult]
    isolation: dict[str, str]
    passed: bool
    duration_s: float
    slot_wait_s: float = 0.0  # waited for a gate slot before the gates started (not in duration_s)


def prestart() -> None:
    """Start this process's warm runner in the background, so the next verification's gates find it ready."""
    from kavi.sandbox.warm import prestart as start_warm_runner

    start_warm_runner()


def _copy(work_root: Path, name: str, files: Mapping[str, bytes]) -> Path:
    """A private copy per gate: a hostile test cannot change what another gate, or promotion, sees. Where a gate's
    job was started ahead in the folder (kavi.sandbox.held), the files go into it in place: its sandbox was built
    with the folder, and a held scratch job with these files' inodes."""
    target = work_root / name
    if held.holds(target):
        write_files(target, files, in_place=True)
        held.hand_over(target)
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    write_files(target, files)
    return target


def gate_limits(config: GateConfig) -> Limits:
    """The limits of the builder's tests and the static gates' jobs (acceptance's grow by its budgets)."""
    return Limits(
        wall_s=config.wall_s, cpu_s=config.limits.cpu_s, address_space_mb=config.limits.address_space_mb,
        file_size_mb=config.limits.file_size_mb, max_processes=config.limits.max_processes, network=False,
        scratch_mb=config.limits.scratch_mb,
    )


def can_hold_gate_jobs() -> bool:
    return held.can_hold()


def hold_gate_jobs(work_root: Path, name: str, config: GateConfig) -> list[str]:
    """Start this build's pytest and mypy jobs ahead of its verification (kavi.sandbox.held), each in the folder
    the verification gives it, while the build waits for its model: the verification finds their tools imported.
    Where jobs cannot be held, or the mypy cache is not warm yet, those jobs start with the verification as before."""
    if not held.can_hold():
        return []
    limits = gate_limits(config)
    skill_rel, test_rel = skill_path(name), test_path(name)
    started = []
    if hold_pytest(_fresh(work_root / "pytest"), name, (skill_rel, test_rel), limits):
        started.append("pytest")
    if config.mypy_cache_root is not None and hold_mypy(_fresh(work_root / "static"), skill_rel,
                                                        config.mypy_cache_root, limits):
        started.append("mypy")
    return started


def release_gate_jobs(work_root: Path) -> None:
    """Release the jobs held for a build that will not be verified (its build failed)."""
    held.release_under(work_root)


def _guard(gate: str, fn: Callable[[], GateResult]) -> GateResult:
    t0 = time.monotonic()
    try:
        return fn()
    except Exception as err:  # a gate that crashes fails, with the reason; the others still report
        return GateResult(gate, Verdict.FAILED, f"the gate itself failed: {type(err).__name__}: {err}",
                          time.monotonic() - t0)


def _generate(proposal: Proposal, evidence: EvidenceConfig, seed: int) -> tuple[list[dict[str, Any]], str]:
    if not evidence.enabled or evidence.max_cases <= 0:
        return [], ""
    try:
        return generated_cases(proposal, max_cases=evidence.max_cases, seed=seed), ""
    except Exception as err:  # no generated evidence is a weaker verdict, not a crash of every gate
        return [], f"input generation failed: {type(err).__name__}: {str(err)[:200]}"


# The generated inputs depend on the proposal, the case count and the seed only, not on the build. A build
# asks for them while it waits for its model's answer (prepare_generated_inputs, in a thread of the run's process),
# and its verification takes them here instead of generating them again inside its gate slot: the same inputs, made
# while the cores would otherwise wait with the build.
_PREPARED_MAX = 4
ADEQUACY_MARGIN_S = 1.0  # the sandbox's time beyond the analysis's budget (a call running past it is cut at its cap)
_prepared_lock = threading.Lock()
_prepared: dict[tuple[str, int, int], "Future[tuple[list[dict[str, Any]], str, float]]"] = {}


def _generation_key(proposal: Proposal, evidence: EvidenceConfig, seed: int) -> tuple[str, int, int]:
    return hashlib.sha256(proposal.canonical_json().encode()).hexdigest(), evidence.max_cases, seed


def prepare_generated_inputs(proposal: Proposal, max_cases: int, seed: int | None = None) -> bool:
    """Generate the differential gate's inputs for `proposal` in a background thread of this process; the next
    verification of the same proposal with the same case count and seed in this process takes them. False when
    they are already being prepared."""
    evidence = EvidenceConfig(max_cases=max_cases, seed=seed)
    key = _generation_key(proposal, evidence, evidence_seed(proposal, evidence))
    future: Future[tuple[list[dict[str, Any]], str, float]] = Future()
    with _prepared_lock:
        if key in _prepared or max_cases <= 0:
            return False
        while len(_prepared) >= _PREPARED_MAX:  # of builds that never reached their verification: the oldest go
            del _prepared[next(iter(_prepared))]
        _prepared[key] = future

    def work() -> None:
        t0 = time.monotonic()
        try:
            cases, note = _generate(proposal, evidence, key[2])
            future.set_result((cases, note, time.monotonic() - t0))
        except BaseException as err:  # _generate catches what generation raises; this is only a safety net
            future.set_exception(err)

    threading.Thread(target=work, name="kavi-inputs", daemon=True).start()
    return True


def _generated_inputs(proposal: Proposal, evidence: EvidenceConfig, seed: int) -> tuple[list[dict[str, Any]], str,
                                                                                         float]:
    """The inputs prepared during the build when there are (waiting for them if still in the making), else
    generated now; with the seconds their generation took."""
    future = None
    if evidence.enabled and evidence.max_cases > 0:
        with _prepared_lock:
            future = _prepared.pop(_generation_key(proposal, evidence, seed), None)
    if future is not None:
        with contextlib.suppress(Exception):  # else generated again below, as without preparation
            return future.result()
    t0 = time.monotonic()
    cases, note = _generate(proposal, evidence, seed)
    return cases, note, time.monotonic() - t0


def _unreadable_sources(files: Mapping[str, bytes], paths: tuple[str, ...]) -> VerificationOutcome | None:
    """A build whose source has more than one reading fails the policy gate and no gate runs its code (the build
    step refuses such files already; this holds for bytes that reach the gates another way, e.g. re-verification)."""
    problems = [f"{rel}: the source {p}" for rel in paths
                if rel in files and (p := source_problem(bytes(files[rel]))) is not None]
    if not problems:
        return None
    why = "not run: the source has more than one reading (see the policy gate)"
    results = [GateResult(GATE_POLICY, Verdict.FAILED, problems[0], 0.0, problems) if g == GATE_POLICY
               else GateResult(g, Verdict.OMITTED, why, 0.0) for g in DETERMINISTIC_GATES]
    return VerificationOutcome(results, {}, False, 0.0)


def _fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def run_gates(
    work_root: Path, proposal: Proposal, files: Mapping[str, bytes], config: GateConfig,
    independent: bytes | None = None, independent_label: str = "",
) -> VerificationOutcome:
    """Every gate on the build's bytes (see _run_gates), once this build holds one of the machine's gate slots: the
    gates are the forge's CPU work, and builds verified one per core finish sooner than all at once."""
    try:
        with gate_slot(config.slots) as waited:
            outcome = _run_gates(work_root, proposal, files, config, independent, independent_label)
    finally:
        held.release_under(work_root)  # a job held for a gate that did not run is not left waiting
    return dataclasses.replace(outcome, slot_wait_s=round(waited, 3))


def _run_gates(
    work_root: Path, proposal: Proposal, files: Mapping[str, bytes], config: GateConfig,
    independent: bytes | None, independent_label: str,
) -> VerificationOutcome:
    """Every gate on the same hashed bytes. The builder's tests, ruff and mypy run concurrently, each in a
    sandbox of its own on a private copy; acceptance runs after the builder's tests, in a fresh sandbox holding
    only a pristine copy of the skill, and then runs the generated inputs and the resource gate's probes; at the end
    every copy is checked against the hash.

    `independent` is the source of an independent implementation of the same proposal (a skill module, written
    by a different model than the builder): scanned with the policy, then run at once in a sandbox of its own on
    the examples, the holdout examples and the generated inputs; the differential gate compares, out here."""
    name = proposal.name
    skill_rel, test_rel = skill_path(name), test_path(name)
    skill_bytes = bytes(files[skill_rel])
    refused = _unreadable_sources(files, (skill_rel, test_rel))
    if refused is not None:
        return refused
    digest = hashlib.sha256(skill_bytes).hexdigest()
    source = skill_bytes.decode("utf-8")
    limits = gate_limits(config)
    evidence = config.evidence
    seed = evidence_seed(proposal, evidence)
    generated, generation_note, generation_s = _generated_inputs(proposal, evidence, seed)
    budget = max(0.0, evidence.time_budget_s) if generated else None
    # The resource probes run after the cases, in the same sandbox (no second interpreter to start).
    probes = resource_probes(proposal, source) if config.resource.enabled else []
    resource_job = config.resource.job_section(probes) if probes else None
    # The mutation analysis last, in the same sandbox again (kavi.gates.adequacy).
    plan = plan_adequacy(proposal, source, generated, config.adequacy) if evidence.enabled else AdequacyPlan(
        [], 0, [], None, evidence.skipped_reason or "the evidence does not run at this ceremony level")
    # The generated inputs run after the examples, within their own budget, the probes and the analysis within
    # theirs: the sandbox's limits grow by them.
    extra = (budget or 0.0) + (config.resource.wall_margin_s if resource_job is not None else 0.0) + (
        config.adequacy.budget_s + ADEQUACY_MARGIN_S if plan.section is not None else 0.0)
    run_limits = limits if not extra else dataclasses.replace(
        limits, wall_s=limits.wall_s + extra, cpu_s=limits.cpu_s + math.ceil(extra))
    pristine = {rel: bytes(data) for rel, data in files.items()}
    static_dir = _copy(work_root, "static", pristine)
    tests_dir = _copy(work_root, "pytest", pristine)
    accept_dir = _fresh(work_root / "acceptance")
    cache_root = config.mypy_cache_root or (work_root / "mypy-cache")
    indep_refused = ""
    if independent is not None and evidence.enabled:
        indep_problem = source_problem(bytes(independent))
        scan = (GateResult(GATE_POLICY, Verdict.FAILED, f"the source {indep_problem}", 0.0) if indep_problem
                else _guard("policy", lambda: policy_gate(independent.decode("utf-8"), proposal, config.policy_path)))
        if not scan.ok:
            indep_refused = f"the independent implementation was refused by the policy ({scan.reason}); not run"
    if plan.section is not None and independent is not None and evidence.enabled and not indep_refused and generated:
        # The independent implementation runs the probes too: a probe the candidate cannot finish is worth a longer
        # try, whose time is compared with the independent's (kavi.gates.adequacy: too slow).
        plan.section["slow_cap_s"] = SLOW_MIN_S
    t0 = time.monotonic()
    tests_done = threading.Event()

    def accept_job() -> tuple[GateResult, CaseRun | None]:
        t_start = time.monotonic()
        try:
            return acceptance_run(accept_dir, proposal, skill_bytes, run_limits, tests_done.wait, generated, budget,
                                  resource_job, plan.section, case_cap_s=GENERATED_CASE_CAP_S)
        except Exception as err:  # like _guard, but the run is wanted too
            return GateResult(GATE_ACCEPTANCE, Verdict.FAILED,
                              f"the gate itself failed: {type(err).__name__}: {err}", time.monotonic() - t_start), None

    def independent_job() -> CaseRun | None:
        assert independent is not None
        indep_dir = _fresh(work_root / "independent")
        examples = [ex.model_dump(mode="json") for ex in (*proposal.examples, *proposal.holdout_examples)]
        try:
            # The adequacy probes before the generated inputs (a slow generated input cannot starve them): the
            # independent implementation answers a mutant's question before any person.
            return run_cases(indep_dir, proposal, bytes(independent), examples + plan.probes + generated, run_limits,
                             must_run=len(examples), budget_s=budget, case_cap_s=GENERATED_CASE_CAP_S)
        except Exception:  # a run the forge could not make is no evidence; the verdict says the comparison is off
            return None

    with ThreadPoolExecutor(max_workers=5, thread_name_prefix="kavi-gate") as pool:
        fut_indep: Future[CaseRun | None] | None = None
        if independent is not None and evidence.enabled and not indep_refused and generated:
            # Not the builder's code: it need not wait for the builder's tests.
            fut_indep = pool.submit(independent_job)
        fut_tests: Future[tuple[GateResult, GateResult]] = pool.submit(
            pytest_and_coverage, tests_dir, name, limits, config.coverage_min, tuple(pristine))
        fut_tests.add_done_callback(lambda _f: tests_done.set())
        # Acceptance's sandbox starts now and imports its tools; its job (and so the skill) reaches it only
        # after the builder's tests have finished: nothing they started is alive any more.
        fut_accept = pool.submit(accept_job)
        fut_mypy = pool.submit(_guard, "mypy", lambda: mypy_gate(static_dir, skill_rel, cache_root, limits))
        fut_ruff = pool.submit(_guard, "ruff", lambda: ruff_gate(static_dir, [skill_rel, test_rel], limits))
        policy = _guard("policy", lambda: policy_gate(source, proposal, config.policy_path))
        invariants = _guard("invariants", lambda: invariants_gate(source, proposal))
        try:
            pytest_result, coverage_result = fut_tests.result()
        except Exception as err:
            pytest_result = GateResult("pytest", Verdict.FAILED, f"the gate itself failed: {err}", 0.0)
            coverage_result = GateResult("coverage", Verdict.OMITTED, "not measured: pytest did not run", 0.0)
        accept, accept_run = fut_accept.result()
        indep_run = fut_indep.result() if fut_indep is not None else None
    indep: IndependentEvidence | None = None
    answers: dict[str, dict[str, Any]] | None = None
    if independent is not None:
        both = independent_evidence(proposal, bytes(independent), independent_label, indep_run, indep_refused)
        # Its results by pool key for the analysis, and by generated index for the differential gate.
        probes_n = len(plan.probes)
        answers = {(f"p{k}" if k < probes_n else f"g{k - probes_n}"): v for k, v in both.results.items()} \
            if both.used else None
        indep = dataclasses.replace(both, results={k - probes_n: v for k, v in both.results.items() if k >= probes_n})
    resource_s = accept_run.resource_s if accept_run is not None else 0.0
    adequacy_s = accept_run.adequacy_s if accept_run is not None else 0.0
    differential = _guard(GATE_DIFFERENTIAL, lambda: differential_gate(
        proposal, evidence, generated, accept_run, indep, seed=seed, generation_note=generation_note,
        duration_s=generation_s + (accept_run.duration_s - resource_s - adequacy_s if accept_run is not None
                                   else 0.0)))
    ran = accept_run is not None and accept_run.failure is None and accept_run.complete_through(
        len(proposal.examples) + len(proposal.holdout_examples))
    resource = _guard(GATE_RESOURCE, lambda: resource_gate(
        probes, config.resource, accept_run.resource if ran and accept_run is not None else None,
        ended=accept_run is not None and accept_run.resource_done, duration_s=resource_s))
    by_gate = {
        r.gate: r
        for r in (fut_ruff.result(), fut_mypy.result(), pytest_result, coverage_result, policy, invariants, accept,
                  differential, resource)
    }
    # ruff and mypy read the same copy: one read tells for both.
    data = read_job_file(static_dir / skill_rel)
    intact = data is not None and hashlib.sha256(data).hexdigest() == digest
    for gate in () if intact else ("ruff", "mypy"):
        r = by_gate[gate]
        by_gate[gate] = GateResult(gate, Verdict.FAILED, "the skill file changed while this gate read it "
                                   "(its hash no longer matches the verified bytes)", r.duration_s, r.messages,
                                   r.details)
    by_gate[GATE_ADEQUACY] = _guard(GATE_ADEQUACY, lambda: adequacy_gate(
        proposal, config.adequacy, plan, accept_run.adequacy if accept_run is not None else None,
        accept_run.adequacy_done if accept_run is not None else None, generated, answers,
        others_passed=all(r.ok for r in by_gate.values()), duration_s=adequacy_s))
    results = [by_gate[g] for g in DETERMINISTIC_GATES]
    isolation = dict(pytest_result.details.get("isolation") or {})
    return VerificationOutcome(results, isolation, all(r.ok for r in results), time.monotonic() - t0)
