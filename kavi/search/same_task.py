"""Whether a trusted skill close to a proposal in words does the proposal's task: the evidence a refusal as a
duplicate needs. Words alone are not enough (a one-line skill shares its few words with many tasks): the two must
have the same side-effect class, the skill must take the proposal's inputs and give its outputs with the same
types, the skill, run in the gate sandbox on the proposal's examples and holdout examples (with their fixtures),
must answer every one as the proposal expects, and the two descriptions must say the same thing (the same content
words): a few examples that agree often cannot tell a left insertion point from a right one, and a description that
says "left" where the other says "right" can. Anything short of that is a warning, never a refusal (with a model
endpoint configured, the model may judge two descriptions in other words: kavi.search.guard)."""

import hashlib
import re
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
# Words that say nothing of a task ("Write a python function to ..."): the rest of a description must match.
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "given", "write", "function", "python", "program", "that", "which", "to", "of", "in", "from",
    "for", "by", "with", "is", "are", "be", "it", "its", "this"})
SHOWN_WORDS = 8  # of the words only one description has, as a warning shows them
_URL = re.compile(r"https?://\S+")
_WORD = re.compile(r"[^\W_]+")  # letters and digits, in any script


@dataclass(frozen=True)
class TrustedSource:
    """A trusted version as the check needs it: its name, class, declared secrets, fields and verified bytes."""

    name: str
    side_effect_class: str
    required_secrets: tuple[str, ...]
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    source: bytes | None  # None: the file no longer has the trusted hash (it is not run)
    description: str


@dataclass(frozen=True)
class SameTask:
    """The verdict (`same`) and, in words, what matched or the first thing that differs; `answered` says that the
    skill answers every example of the proposal when only the descriptions differ (a model may judge them)."""

    same: bool
    why: str
    answered: str = ""


def content_words(text: str) -> frozenset[str]:
    """A description's words that say what the task is: case folded, a plural's "s" dropped, links and
    FUNCTION_WORDS left out; numbers stay ("multiple of 11")."""
    words = set()
    for word in _WORD.findall(_URL.sub(" ", text.casefold())):
        if word in FUNCTION_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return frozenset(words)


def description_difference(mine: str, theirs: str) -> tuple[list[str], list[str]] | None:
    """The content words only `mine` has and those only `theirs` has, each sorted (both empty: they say the same);
    None when neither says anything of a task (no content word at all): then they do not say the same."""
    a, b = content_words(mine), content_words(theirs)
    if not a and not b:
        return None
    return sorted(a - b), sorted(b - a)


def descriptions_differ(mine: str, theirs: str) -> str | None:
    """How the proposal's description (`mine`) and the skill's differ, in words; None when they say the same."""
    difference = description_difference(mine, theirs)
    if difference is None:
        return "neither description says what the task is"
    only_mine, only_theirs = difference
    if not only_mine and not only_theirs:
        return None
    return (f"the descriptions differ (only the proposal's says {_shown(only_mine)}; only its says "
            f"{_shown(only_theirs)})")


def _shown(words: list[str]) -> str:
    quoted = ", ".join(f"'{w}'" for w in words[:SHOWN_WORDS])
    return quoted + (f" and {len(words) - SHOWN_WORDS} more" if len(words) > SHOWN_WORDS else "") if words \
        else "nothing"


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
    differ = descriptions_differ(proposal.description, skill.description)
    if not cases:
        if differ is not None:
            return SameTask(False, f"{differ}, and the proposal has no examples to run")
        return SameTask(True, "the same class, inputs, outputs and description (the proposal has no examples to run)")
    if skill.source is None:
        return SameTask(False, "its file no longer has the trusted hash, so it was not run on the examples")
    verdict = run_on_examples(proposal, skill, wall_s)
    if isinstance(verdict, str):
        return SameTask(False, f"it could not be run on the proposal's examples ({verdict})")
    if not verdict.ok:
        first = verdict.messages[0] if verdict.messages else verdict.reason
        return SameTask(False, f"it does not answer the proposal's examples as expected ({first[:300]})")
    answered = f"it answers all {len(cases)} of the proposal's examples as expected"
    if differ is not None:
        return SameTask(False, f"{answered}, but {differ}: examples that agree show the same task only as far as "
                               "they go", answered=answered)
    return SameTask(True, f"the same class, inputs and outputs, the same description in its content words, and "
                          f"{answered}")


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
                                 hit.outputs, verified_source(home.root / t.skill_path, t.source_sha256),
                                 hit.description)
    return None


def verified_source(path: Path, sha256: str) -> bytes | None:
    """The file's bytes when they still have the trusted hash, else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == sha256.lower() else None
