"""Test factories: specs and proposals, builds, and trusted versions, recorded through the forge's own records and
step functions; the gates' warmed mypy cache; the real `kavi` CLI in a subprocess; and ledger writers in processes
of their own. Every test builds these from here."""

import atexit
import copy
import functools
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kavi.forge.attempt import BUILD_OK
from kavi.forge.context import ForgeContext, ForgeSettings
from kavi.forge.promote import approve, promote
from kavi.forge.verify import VerifyOutcome, verify
from kavi.home import KaviHome
from kavi.lifecycle import ProposalStatus, Verdict
from kavi.proposals.model import Proposal, parse_proposal
from kavi.verdicts import ALL_GATES, DETERMINISTIC_GATES, GATE_COACH, GateResult

REPO = Path(__file__).resolve().parents[1]
ANSWERS = REPO / "kavi" / "examples" / "answers"
PROPOSALS = REPO / "kavi" / "examples" / "proposals"
CORPUS = REPO / "tests" / "corpus"

# -- specs and proposals ----------------------------------------------------------------------------------------------
WORD_COUNT_SOURCE = (ANSWERS / "word_count" / "1" / "skill.py").read_text()
WORD_COUNT_TESTS = (ANSWERS / "word_count" / "1" / "test.py").read_text()
# A second version of the same skill: same interface, a different description (so a different hash).
WORD_COUNT_V2 = WORD_COUNT_SOURCE.replace('description = "Count the words, lines and characters of a text."',
                                          'description = "Count words, lines and characters (version two)."')
# The same skill declared FILE_WRITE: what a revised proposal with a changed class would be built into.
WORD_COUNT_FILE_WRITE = WORD_COUNT_SOURCE.replace("SideEffectClass.READ_ONLY", "SideEffectClass.FILE_WRITE")
# Tests recorded for a build whose tests nothing runs.
PLACEHOLDER_TESTS = "def test_x() -> None: ...\n"

# The shipped word_count answer's proposal (kavi/examples/answers/word_count/1).
WORD_COUNT_SPEC: dict[str, Any] = {
    "name": "word_count",
    "description": "Count the words, lines and characters of a text.",
    "inputs": [{"name": "text", "type": "str"}],
    "outputs": [{"name": "words", "type": "int"}, {"name": "lines", "type": "int"},
                {"name": "characters", "type": "int"}],
    "side_effect_class": "READ_ONLY",
    "examples": [{"input": {"text": "a b"}, "expected": {"words": 2, "lines": 1}}],
    "holdout_examples": [{"input": {"text": "one two"}, "expected": {"words": 2, "lines": 1}}],
}

# A user policy that tightens a rule word_count relies on: the `re` module is refused.
REFUSE_RE = """modules:
  re:
    verdict: refused
    reason: regular expressions are refused on this machine (a test's tightening)
    instead: split the text with str.split
"""


# sign_of: a small READ_ONLY skill whose example and holdout leave zero open (the coach and N-version tests).
SIGN_OF_SPEC: dict[str, Any] = {
    "name": "sign_of",
    "description": "Return the sign of an integer: -1 when it is negative, 0 when it is zero, 1 when positive.",
    "inputs": [{"name": "n", "type": "int"}],
    "outputs": [{"name": "sign", "type": "int"}],
    "side_effect_class": "READ_ONLY",
    "examples": [{"input": {"n": 5}, "expected": {"sign": 1}}],
    "holdout_examples": [{"input": {"n": -7}, "expected": {"sign": -1}}],
}

_SIGN_OF_SOURCE = '''"""The sign of an integer."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SignOfInput(BaseModel):
    n: int


class SignOfOutput(BaseModel):
    sign: int


class SignOf(BaseSkill[SignOfInput, SignOfOutput]):
    name = "sign_of"
    description = "Return the sign of an integer."
    input_model = SignOfInput
    output_model = SignOfOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SignOfInput) -> SignOfOutput:
        n = input_data.n
        return SignOfOutput(sign={body})
'''


# The sign_of skill's tests, as a builder would write them from the example and holdout.
SIGN_OF_TESTS = '''from skills.sign_of import SignOf, SignOfInput


def sign(n: int) -> int:
    return SignOf().execute(SignOfInput(n=n)).sign


def test_positive() -> None:
    assert sign(5) == 1


def test_negative() -> None:
    assert sign(-7) == -1


def test_large() -> None:
    assert sign(10**9) == 1
'''


def sign_of_source(body: str = "1 if n > 0 else (-1 if n < 0 else 0)") -> str:
    """The sign_of skill's source, its returned sign computed by `body` (an expression in n)."""
    return _SIGN_OF_SOURCE.format(body=body)


# A skill that computes for as long as it is asked (CPU time): a runaway call, as a backtracking regex would be.
SPIN_SPEC: dict[str, Any] = {
    "name": "spin", "side_effect_class": "READ_ONLY", "timeout_s": 3,
    "description": "Count upwards for the given number of seconds of CPU time, then return the count.",
    "inputs": [{"name": "seconds", "type": "float"}], "outputs": [{"name": "count", "type": "int"}],
    "examples": [{"input": {"seconds": 0}, "expected": {"count": 0}}],
}
SPIN_SOURCE = '''"""Count for a while."""

import time

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SpinInput(BaseModel):
    seconds: float


class SpinOutput(BaseModel):
    count: int


class Spin(BaseSkill[SpinInput, SpinOutput]):
    name = "spin"
    description = "Count upwards for a while."
    input_model = SpinInput
    output_model = SpinOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SpinInput) -> SpinOutput:
        count = 0
        end = time.process_time() + input_data.seconds
        while time.process_time() < end:
            count += 1
        return SpinOutput(count=count)
'''


def word_count_spec(**changes: Any) -> dict[str, Any]:
    """The word_count proposal as data, with fields replaced at will (a fresh copy each call)."""
    return copy.deepcopy({**WORD_COUNT_SPEC, **changes})


def word_count_proposal(**changes: Any) -> Proposal:
    return parse_proposal(word_count_spec(**changes))


def example_spec(name: str) -> dict[str, Any]:
    """A shipped example proposal (kavi/examples/proposals/NAME.yaml) as data."""
    data: dict[str, Any] = yaml.safe_load((PROPOSALS / f"{name}.yaml").read_text())
    return data


def example_source(name: str) -> str:
    """The latest numbered recorded answer's skill source for a shipped example."""
    versions = sorted((p for p in (ANSWERS / name).iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    return (versions[-1] / "skill.py").read_text()


# -- the forge --------------------------------------------------------------------------------------------------------
def no_model() -> Any:
    raise AssertionError("no model call expected here")


def forge_ctx(home: KaviHome, **settings: Any) -> ForgeContext:
    """A forge context whose model must not be called; `settings` are ForgeSettings fields (none: the defaults)."""
    return ForgeContext.open(home, no_model, ForgeSettings(**settings) if settings else None)


# -- builds -----------------------------------------------------------------------------------------------------------
# Each factory below records through one forge context in one ledger session (one connection, one transaction, as a
# forge step does): the same rows as one connection per record, at a fraction of the cost.
def record_build(home: KaviHome, spec: dict[str, Any] | None = None, source: str | None = None,
                 tests: str | None = None, *, model: str = "builder-m", prompt_tokens: int | None = 1000,
                 completion_tokens: int | None = 400, latency_ms: float | None = 1500.0) -> str:
    """Record the spec (a first proposal or a revision; default word_count's) and its next attempt, BUILT, holding
    `source` and `tests` as a model's answer would. Without `source`: the shipped word_count answer and its tests;
    with it, `tests` defaults to a placeholder. Returns the build id."""
    ctx = forge_ctx(home)
    with ctx.records.session():
        return _record_build(ctx, spec, source, tests, model=model, prompt_tokens=prompt_tokens,
                             completion_tokens=completion_tokens, latency_ms=latency_ms)


def _record_build(ctx: ForgeContext, spec: dict[str, Any] | None, source: str | None, tests: str | None, *,
                  model: str = "builder-m", prompt_tokens: int | None = 1000, completion_tokens: int | None = 400,
                  latency_ms: float | None = 1500.0) -> str:
    spec = copy.deepcopy(spec or WORD_COUNT_SPEC)
    if source is None:
        source, tests = WORD_COUNT_SOURCE, WORD_COUNT_TESTS if tests is None else tests
    ctx.records.register_proposal(parse_proposal(spec), source_path=None, complexity=0.1)
    name = spec["name"]
    attempt = len(ctx.records.builds(name)) + 1
    packet = ctx.store.put(json.dumps({"kind": "BUILD_PACKET", "messages": [], "attempt": attempt}).encode(),
                           "build_packet")
    skill = ctx.store.put(source.encode(), "skill_source")
    test = ctx.store.put((PLACEHOLDER_TESTS if tests is None else tests).encode(), "skill_tests")
    build_id = f"{name}-a{attempt}-test"
    ctx.records.start_build(name, run_id=None, model=model, endpoint="e", packet=packet, build_id=build_id,
                            attempt=attempt, parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status=BUILD_OK, failure_kind=None, skill_sha256=skill.sha256,
                             test_sha256=test.sha256, prompt_tokens=prompt_tokens,
                             completion_tokens=completion_tokens, latency_ms=latency_ms)
    return build_id


def passing_gates(coach: bool | None = None) -> list[GateResult]:
    """Every gate passed. With `coach` False, the coach gate is omitted as the pipeline records it at ceremony low;
    with True, a coach model passed it; None: ALL_GATES, each PASSED."""
    if coach is None:
        return [GateResult(g, Verdict.PASSED, "ok", 0.1) for g in ALL_GATES]
    review = (GateResult(GATE_COACH, Verdict.PASSED, "the coach found the tests adequate", 0.1,
                         details={"coach_model": "coach-m"}) if coach
              else GateResult(GATE_COACH, Verdict.OMITTED, "ceremony low: deterministic gates only", 0.0,
                              details={"ceremony": "low"}))
    return [*(GateResult(g, Verdict.PASSED, "ok", 0.1, details={}) for g in DETERMINISTIC_GATES), review]


def verified_candidate(home: KaviHome, spec: dict[str, Any] | None = None, source: str | None = None,
                       tests: str | None = None, *, gates: Sequence[GateResult] | None = None,
                       **build: Any) -> str:
    """A recorded attempt (see record_build) whose gate verdicts are recorded as passed without running the gates:
    the proposal is VERIFIED, awaiting a person's approval. Returns the build id."""
    ctx = forge_ctx(home)
    with ctx.records.session():
        return _verified_candidate(ctx, spec, source, tests, gates=gates, **build)


def _verified_candidate(ctx: ForgeContext, spec: dict[str, Any] | None, source: str | None, tests: str | None, *,
                        gates: Sequence[GateResult] | None = None, **build: Any) -> str:
    build_id = _record_build(ctx, spec, source, tests, **build)
    name = (spec or WORD_COUNT_SPEC)["name"]
    ctx.records.record_gate_results(build_id, list(passing_gates() if gates is None else gates))
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None)
    ctx.records.set_status(name, ProposalStatus.VERIFIED, build_id=build_id, reason="every gate passed")
    return build_id


def trust_version(home: KaviHome, spec: dict[str, Any] | None = None, source: str | None = None,
                  tests: str | None = None, *, approver: str = "ada", coach: bool | None = None,
                  **build: Any) -> str:
    """The next trusted version, fast: a verified candidate (gate verdicts recorded, not run), a person's approval
    and the promotion. Returns the build id."""
    ctx = forge_ctx(home)
    name = (spec or WORD_COUNT_SPEC)["name"]
    with ctx.records.session():
        build_id = _verified_candidate(ctx, spec, source, tests, gates=passing_gates(coach), **build)
        approve(ctx, name, approver)
        assert promote(ctx, name).promoted
    return build_id


def trust_example(home: KaviHome, name: str, approver: str = "ada") -> str:
    """A shipped example skill trusted fast (trust_version of its proposal and its latest recorded answer)."""
    return trust_version(home, example_spec(name), example_source(name), approver=approver)


def verified_by_gates(home: KaviHome, **build: Any) -> VerifyOutcome:
    """A recorded word_count attempt (see record_build) judged by the real gates, without the generated-input
    evidence."""
    build_id = record_build(home, **build)
    return verify(forge_ctx(home, evidence_levels=()), "word_count", None, build_id)


def trust_by_gates(home: KaviHome, approver: str = "ada", **build: Any) -> VerifyOutcome:
    """A trusted word_count version whose gates really ran (and passed), approved by a person and promoted."""
    outcome = verified_by_gates(home, **build)
    assert outcome.passed, [r.to_dict() for r in outcome.results if not r.ok]
    ctx = forge_ctx(home, evidence_levels=())
    approve(ctx, "word_count", approver)
    assert promote(ctx, "word_count").promoted
    return outcome


# -- the gates' mypy cache --------------------------------------------------------------------------------------------
_WARMED_MYPY: dict[str, Path] = {}
_MYPY_WARMUPS_FAILED: list[str] = []


def _warmed_mypy_cache() -> Path | None:
    """One mypy cache per test process, filled by the forge's own warm-up (the standard library, pydantic and the
    skill contract, checked in the gate sandbox exactly as a skill is); None where the warm-up did not succeed
    (tried again at the next call, twice at most: a test may have patched the sandbox when it came first)."""
    from kavi.gates.tools import mypy_cache_warm, warm_mypy_cache
    from kavi.sandbox.runner import Limits

    if "root" in _WARMED_MYPY or len(_MYPY_WARMUPS_FAILED) >= 3:
        return _WARMED_MYPY.get("root")
    root = Path(tempfile.mkdtemp(prefix="kavi-tests-mypy-"))
    atexit.register(shutil.rmtree, root, True)
    cache_root = root / "cache"
    try:
        warm_mypy_cache(root / "work", cache_root, Limits(network=False))
    except Exception as err:
        _MYPY_WARMUPS_FAILED.append(repr(err))
        return None
    if not mypy_cache_warm(cache_root):
        _MYPY_WARMUPS_FAILED.append("the warm-up's mypy run failed")
        return None
    _WARMED_MYPY["root"] = cache_root
    return cache_root


def warm_mypy_cache_root(dest: Path) -> Path:
    """`dest` as a gate mypy cache root, holding a copy of the process's warmed cache: what a home's cache is after
    its first verification. A cold cache costs each test seconds of mypy over the standard library and pydantic;
    the verdicts are the same. Tests about the warm-up itself use a cache root of their own."""
    warmed = _warmed_mypy_cache()
    if warmed is not None:
        shutil.copytree(warmed, dest, dirs_exist_ok=True)
    return dest


# -- a new home's ledger and Dagster storage --------------------------------------------------------------------------
# What the first open of DAGSTER_HOME creates beside kavi's dagster.yaml (which names its own folder: never copied).
_DAGSTER_STORAGE = ("history", "schedules")


@functools.cache
def _first_opened() -> Path:
    """One skills home and DAGSTER_HOME per test process, opened once by the forge's own code: the ledger migrated
    and the Dagster storage created, as a home's first command leaves them."""
    from kavi.ledger.store import Ledger
    from kavi.process_env import exported
    from kavi_assets.cli.dagster_env import ensure_dagster_home, instance

    root = Path(tempfile.mkdtemp(prefix="kavi-tests-first-opened-"))
    atexit.register(shutil.rmtree, root, True)
    home = KaviHome(root / "home").ensure()
    Ledger(home.ledger_path, lake=False).migrate()
    with exported({"DAGSTER_HOME": str(root / "dagster"), "KAVI_HOME": str(home.root)}):
        ensure_dagster_home(home)
        inst = instance()
        inst.get_dynamic_partitions("proposals")
        inst.dispose()
    return root


def as_first_opened(home: KaviHome, dagster_home: Path, *, ledger: bool = True) -> None:
    """`home`'s ledger and `dagster_home`'s storage as the first command would leave them, copied from files the
    forge's own code created once in this process: migrating a ledger and creating Dagster's SQLite storage cost
    each test about 0.3 s, and the result is the same files. With `ledger=False` the home keeps no ledger file (the
    ledger is elsewhere: the shared DuckLake)."""
    root = _first_opened()
    if ledger:
        shutil.copyfile(root / "home" / "ledger.duckdb", home.ledger_path)
    for name in _DAGSTER_STORAGE:
        shutil.copytree(root / "dagster" / name, dagster_home / name, dirs_exist_ok=True)


# -- the real CLI -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DemoRun:
    """One finished `kavi demo` run: its homes, its environment and what it printed."""

    home: Path
    dagster_home: Path
    env: dict[str, str]
    stdout: str
    returncode: int
    python: str = sys.executable  # the interpreter whose kavi ran it (the installed wheel's, for the shared demo)

    def kavi(self, args: list[str], env: dict[str, str] | None = None,
             timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """`kavi ARGS` as the kavi that ran the demo (its gate tools judge the same), with the demo's environment."""
        return run_kavi(args, self.env if env is None else env, timeout, python=self.python)


def run_kavi(args: list[str], env: dict[str, str], timeout: float = 600,
             python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    """The real `kavi` CLI in a subprocess of `python` (this interpreter), with `env` as its whole environment."""
    return subprocess.run([python, "-m", "kavi_assets.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


# -- ledger writers in processes of their own -------------------------------------------------------------------------
# argv: ledger path, writer number, units of work; prints the process's ledger-lock figures as JSON.
WRITER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger, lock_stats
    rec = ForgeRecords(Ledger(Path(sys.argv[1])))
    me, n = int(sys.argv[2]), int(sys.argv[3])
    for i in range(n):
        # a forge step's shape: read what routing needs, then write, in one transaction
        with rec.session():
            rec.outcome_counts("READ_ONLY/simple")
            rec.record_model_outcome(build_id=f"w{me}-{i}", name=f"p{me}", model="coder-a",
                                     task_type="READ_ONLY/simple", success=i % 2 == 0, failure_kind=None,
                                     latency_ms=None, tokens=None, cost_usd=None)
    print(json.dumps(lock_stats))
""")


def run_writers(path: Path, writers: int, units: int) -> list[dict[str, Any]]:
    """`writers` processes doing `units` units of work each on the ledger at `path`, all at once; each one's
    lock figures. Every process must end cleanly and say nothing about a lock."""
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(w), str(units)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    stats = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        assert "lock" not in err.lower(), err
        stats.append(json.loads(out))
    return stats


def require_gate_sandbox() -> None:
    """Skip the calling test where bubblewrap cannot build the gate sandbox; fail it where the sandbox is required
    (KAVI_REQUIRE_SANDBOX=1, as CI sets it)."""
    import os

    import pytest

    from kavi.sandbox import jail

    problem = jail.probe()
    if problem is not None:
        if os.environ.get("KAVI_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"the gate sandbox is required here but unavailable: {problem}")
        pytest.skip(f"the gate sandbox is unavailable here: {problem}")
