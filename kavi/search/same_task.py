"""Whether a trusted skill close to a proposal in words does the proposal's task: the evidence a refusal as a
duplicate needs. Words alone are not enough (a one-line skill shares its few words with many tasks): the two must
have the same side-effect class, the skill must take the proposal's inputs and give its outputs with the same
types, and the skill, run in the gate sandbox on the proposal's examples and holdout examples (with their
fixtures), must answer every one as the proposal expects. Anything short of that is a warning, never a refusal."""

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kavi.gates.acceptance import judge_examples, run_cases
from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.proposals.model import Proposal
from kavi.sandbox.runner import Limits
from kavi.search.documents import Hit
from kavi.skills.base import SideEffectClass
from kavi.verdicts import GateResult

# A check on the person's own examples: far below a gate's wall time.
SAME_TASK_WALL_S = 20.0


@dataclass(frozen=True)
class TrustedSource:
    """A trusted version as the check needs it: its name, class, declared secrets, fields and verified bytes."""

    name: str
    side_effect_class: str
    required_secrets: tuple[str, ...]
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    source: bytes | None  # None: the file no longer has the trusted hash (it is not run)


@dataclass(frozen=True)
class SameTask:
    """The verdict (`same`) and, in words, what matched or the first thing that differs."""

    same: bool
    why: str


def field_mismatch(proposal: Proposal, skill: TrustedSource) -> str | None:
    """What keeps the skill from standing in for the proposal's fields, or None: it must take exactly the
    proposal's inputs and give at least its outputs, each with the same type."""
    mine_in = {f.name: f.type for f in proposal.inputs}
    theirs_in = dict(skill.inputs)
    if mine_in != theirs_in:
        return f"its inputs ({_fields(theirs_in)}) are not the proposal's ({_fields(mine_in)})"
    theirs_out = dict(skill.outputs)
    missing = {n: t for n, t in ((f.name, f.type) for f in proposal.outputs) if theirs_out.get(n) != t}
    if missing:
        return f"it does not give the proposal's outputs {_fields(missing)} (it gives {_fields(theirs_out)})"
    return None


def _fields(fields: dict[str, str]) -> str:
    return ", ".join(f"{n}: {t}" for n, t in sorted(fields.items())) or "none"


def same_task(proposal: Proposal, skill: TrustedSource, *, wall_s: float = SAME_TASK_WALL_S) -> SameTask:
    """Does `skill` do `proposal`'s task? (see the module's note)."""
    if proposal.side_effect_class.value != skill.side_effect_class:
        return SameTask(False, f"its class is {skill.side_effect_class}, the proposal's "
                               f"{proposal.side_effect_class.value}")
    mismatch = field_mismatch(proposal, skill)
    if mismatch is not None:
        return SameTask(False, mismatch)
    cases = [*proposal.examples, *proposal.holdout_examples]
    if not cases:
        return SameTask(True, "the same class, inputs and outputs (the proposal has no examples to run)")
    if skill.source is None:
        return SameTask(False, "its file no longer has the trusted hash, so it was not run on the examples")
    verdict = run_on_examples(proposal, skill, wall_s)
    if isinstance(verdict, str):
        return SameTask(False, f"it could not be run on the proposal's examples ({verdict})")
    if not verdict.ok:
        first = verdict.messages[0] if verdict.messages else verdict.reason
        return SameTask(False, f"it does not answer the proposal's examples as expected ({first[:300]})")
    return SameTask(True, f"the same class, inputs and outputs, and it answers all {len(cases)} of the proposal's "
                          "examples as expected")


def run_on_examples(proposal: Proposal, skill: TrustedSource, wall_s: float) -> GateResult | str:
    """The acceptance verdict of the trusted skill's bytes on the proposal's examples and holdout examples, in a
    fresh gate sandbox (the proposal's fixtures; nothing reaches the real vault or network); a string says why
    the run gave nothing to judge."""
    assert skill.source is not None
    # The runner loads the skill by its own name and runs it with its own class and secrets; the examples, their
    # fixtures and what they expect are the proposal's.
    view = proposal.model_copy(update={"name": skill.name, "side_effect_class": SideEffectClass(
        skill.side_effect_class), "required_secrets": list(skill.required_secrets)})
    examples = [ex.model_dump(mode="json") for ex in (*proposal.examples, *proposal.holdout_examples)]
    with tempfile.TemporaryDirectory(prefix="kavi-same-task-") as tmp:
        work = Path(tmp) / "run"
        work.mkdir()
        run = run_cases(work, view, skill.source, examples, Limits(wall_s=wall_s))
    if run.failure is not None:
        return run.describe("the trusted skill's")
    return judge_examples(view, [run.results.get(i, {"id": i}) for i in range(len(examples))])


def trusted_source(home: KaviHome, records: ForgeRecords, hit: Hit) -> TrustedSource | None:
    """The trusted version a search hit names, as the check needs it (None: it is trusted no longer)."""
    for t in records.trusted_versions(hit.name):
        if t.version == hit.version:
            return TrustedSource(t.name, t.side_effect_class.value, tuple(t.required_secrets), hit.inputs,
                                 hit.outputs, verified_source(home.root / t.skill_path, t.source_sha256))
    return None


def verified_source(path: Path, sha256: str) -> bytes | None:
    """The file's bytes when they still have the trusted hash, else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == sha256.lower() else None
