"""Per-call cost of the trusted runtime versus calling a skill's `execute` directly, in process.

Run: python benchmarks/runtime_overhead.py [--iterations N] [--fsync-iterations N] [--dir PATH]
The runtime path is: trusted lookup, read + SHA-256 of the skill file (the class is cached by hash),
input validation, context, execute, output validation, record, log append (with and without fsync).
fsync cost depends on the file system holding --dir (tmpfs makes it nearly free); the table says which.
"""

import argparse
import hashlib
import statistics
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from kavi.home import KaviHome
from kavi.runtime.context import context_for
from kavi.runtime.executor import SkillRunner
from kavi.runtime.records import ExecutionLog
from kavi.runtime.trust import TrustedSkill, TrustLoader
from kavi.skills.base import SideEffectClass

SKILL = textwrap.dedent(
    """
    from pydantic import BaseModel

    from kavi_assets.skills.base import BaseSkill, SideEffectClass


    class AddInput(BaseModel):
        a: int
        b: int


    class AddOutput(BaseModel):
        total: int


    class Add(BaseSkill[AddInput, AddOutput]):
        name = "add"
        description = "Add two integers."
        input_model = AddInput
        output_model = AddOutput
        side_effect_class = SideEffectClass.READ_ONLY

        def execute(self, input_data: AddInput) -> AddOutput:
            return AddOutput(total=input_data.a + input_data.b)
    """
).encode("utf-8")


def measure(fn: Callable[[], object], iterations: int, warmup: int = 50) -> list[float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(iterations):
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
    return samples


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def filesystem_of(path: Path) -> str:
    """The mount's file system type, from /proc/mounts where there is one."""
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return "unknown"
    best, kind = "", "unknown"
    resolved = str(path.resolve())
    for line in mounts:
        fields = line.split()
        if len(fields) >= 3 and resolved.startswith(fields[1]) and len(fields[1]) > len(best):
            best, kind = fields[1], fields[2]
    return kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--fsync-iterations", type=int, default=500)
    parser.add_argument("--dir", type=Path, default=None, help="where the skills home and log go (default: a temp dir)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        home = KaviHome(Path(tmp) / "home").ensure()
        path = home.skills_dir / "add.py"
        path.write_bytes(SKILL)
        skill = TrustedSkill("add", path, hashlib.sha256(SKILL).hexdigest(), SideEffectClass.READ_ONLY)
        loader = TrustLoader()
        cls = loader.load(skill)
        payload = {"a": 2, "b": 3}
        parsed = cls.input_model.model_validate(payload)
        ctx = context_for(SideEffectClass.READ_ONLY, vault_root=home.vault_dir)
        instance = cls(ctx)

        def runner(fsync: bool) -> SkillRunner:
            log = ExecutionLog(home.root / f"executions-{'fsync' if fsync else 'nofsync'}.jsonl", fsync=fsync)
            return SkillRunner(home, {"add": skill}.get, log, environ={}, loader=loader)

        plain, synced = runner(False), runner(True)
        rows: list[tuple[str, list[float]]] = [
            ("execute() directly (pre-validated input)", measure(lambda: instance.execute(parsed), args.iterations)),
            (
                "validate + execute + validate output",
                measure(
                    lambda: cls.output_model.model_validate(
                        instance.execute(cls.input_model.model_validate(payload)).model_dump()
                    ),
                    args.iterations,
                ),
            ),
            ("trust check only (read + sha256, cached class)", measure(lambda: loader.load(skill), args.iterations)),
            (
                "runner.run, log without fsync",
                measure(lambda: plain.run("add", payload, confirmed=False), args.iterations),
            ),
            (
                "runner.run, fsync'd log",
                measure(lambda: synced.run("add", payload, confirmed=False), args.fsync_iterations, warmup=10),
            ),
        ]
        fs = filesystem_of(home.root)
        assert all(r.success for r in plain.log.read_all())

    base = statistics.median(rows[0][1])
    print(f"runtime overhead, in-process (microseconds); log on a {fs} file system")
    print(f"{'path':<50} {'n':>6} {'p50':>9} {'p99':>9} {'mean':>9} {'p50 - direct':>13}")
    for label, samples in rows:
        p50 = statistics.median(samples)
        print(
            f"{label:<50} {len(samples):>6} {p50:>9.1f} {percentile(samples, 0.99):>9.1f} "
            f"{statistics.fmean(samples):>9.1f} {p50 - base:>13.1f}"
        )


if __name__ == "__main__":
    main()
