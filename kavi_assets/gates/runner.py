"""Run every gate on one build, concurrently, each code-running gate on its own copy of the files."""

import hashlib
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kavi_assets.build.allowlist import skill_path, test_path
from kavi_assets.build.sandbox_dir import write_files
from kavi_assets.gates.acceptance import acceptance_gate
from kavi_assets.gates.static import invariants_gate, policy_gate
from kavi_assets.gates.testing import pytest_and_coverage
from kavi_assets.gates.tools import mypy_gate, ruff_gate
from kavi_assets.gates.types import ALL_GATES, GateResult
from kavi_assets.lifecycle import Verdict
from kavi_assets.proposals.model import Proposal
from kavi_assets.sandbox.runner import Limits, read_job_file


@dataclass(frozen=True)
class GateConfig:
    wall_s: float = 60.0
    coverage_min: float = 80.0
    mypy_cache_root: Path | None = None
    policy_path: Path | None = None
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class VerificationOutcome:
    results: list[GateResult]
    isolation: dict[str, str]
    passed: bool
    duration_s: float


def prestart() -> None:
    """Start this process's warm runner in the background, so the next verification's gates find it ready."""
    from kavi_assets.sandbox.warm import prestart as start_warm_runner

    start_warm_runner()


def _copy(work_root: Path, name: str, files: Mapping[str, bytes]) -> Path:
    """A private copy per gate: a hostile test cannot change what another gate, or promotion, sees."""
    target = work_root / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    write_files(target, files)
    return target


def _guard(gate: str, fn: Callable[[], GateResult]) -> GateResult:
    t0 = time.monotonic()
    try:
        return fn()
    except Exception as err:  # a gate that crashes fails, with the reason; the others still report
        return GateResult(gate, Verdict.FAILED, f"the gate itself failed: {type(err).__name__}: {err}",
                          time.monotonic() - t0)


def run_gates(
    work_root: Path, proposal: Proposal, files: Mapping[str, bytes], config: GateConfig
) -> VerificationOutcome:
    """Every gate on the same hashed bytes. The builder's tests, ruff and mypy run concurrently, each in a
    sandbox of its own on a private copy; acceptance runs after the builder's tests, in a fresh sandbox holding
    only a pristine copy of the skill; at the end every copy is checked against the hash."""
    name = proposal.name
    skill_rel, test_rel = skill_path(name), test_path(name)
    skill_bytes = bytes(files[skill_rel])
    digest = hashlib.sha256(skill_bytes).hexdigest()
    source = skill_bytes.decode("utf-8", errors="replace")
    limits = Limits(
        wall_s=config.wall_s, cpu_s=config.limits.cpu_s, address_space_mb=config.limits.address_space_mb,
        file_size_mb=config.limits.file_size_mb, max_processes=config.limits.max_processes, network=False,
        scratch_mb=config.limits.scratch_mb,
    )
    pristine = {rel: bytes(data) for rel, data in files.items()}
    static_dir = _copy(work_root, "static", pristine)
    tests_dir = _copy(work_root, "pytest", pristine)
    accept_dir = work_root / "acceptance"
    if accept_dir.exists():
        shutil.rmtree(accept_dir)
    accept_dir.mkdir(parents=True)
    cache_root = config.mypy_cache_root or (work_root / "mypy-cache")
    t0 = time.monotonic()
    tests_done = threading.Event()
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="kavi-gate") as pool:
        fut_tests: Future[tuple[GateResult, GateResult]] = pool.submit(
            pytest_and_coverage, tests_dir, name, limits, config.coverage_min)
        fut_tests.add_done_callback(lambda _f: tests_done.set())
        # Acceptance's sandbox starts now and imports its tools; its job (and so the skill) reaches it only
        # after the builder's tests have finished: nothing they started is alive any more.
        fut_accept = pool.submit(_guard, "acceptance",
                                 lambda: acceptance_gate(accept_dir, proposal, skill_bytes, limits, tests_done.wait))
        fut_mypy = pool.submit(_guard, "mypy", lambda: mypy_gate(static_dir, skill_rel, cache_root, limits))
        fut_ruff = pool.submit(_guard, "ruff", lambda: ruff_gate(static_dir, [skill_rel, test_rel], limits))
        policy = _guard("policy", lambda: policy_gate(source, proposal, config.policy_path))
        invariants = _guard("invariants", lambda: invariants_gate(source, proposal))
        try:
            pytest_result, coverage_result = fut_tests.result()
        except Exception as err:
            pytest_result = GateResult("pytest", Verdict.FAILED, f"the gate itself failed: {err}", 0.0)
            coverage_result = GateResult("coverage", Verdict.OMITTED, "not measured: pytest did not run", 0.0)
        accept = fut_accept.result()
        by_gate = {
            r.gate: r
            for r in (fut_ruff.result(), fut_mypy.result(), pytest_result, coverage_result, policy, invariants, accept)
        }
    # ruff and mypy read the same copy: one read tells for both.
    data = read_job_file(static_dir / skill_rel)
    intact = data is not None and hashlib.sha256(data).hexdigest() == digest
    for gate in () if intact else ("ruff", "mypy"):
        r = by_gate[gate]
        by_gate[gate] = GateResult(gate, Verdict.FAILED, "the skill file changed while this gate read it "
                                   "(its hash no longer matches the verified bytes)", r.duration_s, r.messages,
                                   r.details)
    results = [by_gate[g] for g in ALL_GATES]
    isolation = dict(pytest_result.details.get("isolation") or {})
    return VerificationOutcome(results, isolation, all(r.ok for r in results), time.monotonic() - t0)

