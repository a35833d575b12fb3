"""The duplicate guard every door runs (`kavi propose`, the inbox's intake sensor, `kavi demo`): the trusted skills
close to a proposal, each with how its fields differ, and the one that does the proposal's task when the evidence
says so (kavi.search.same_task): a refusal only then."""

import json
from dataclasses import dataclass

from kavi.gates.boundary import canonical
from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.llm.client import LLMSettings
from kavi.proposals.model import Proposal
from kavi.search.documents import Hit, schema_difference
from kavi.search.index import SearchConfig, open_index
from kavi.search.same_task import SameTask, same_task, trusted_source

FORCE_HINT = "kavi propose --force"
# A close skill is worth a warning from this fraction of the refusal score (with embeddings, the calibrated scale
# puts a close relative of another task near 0.6 and the same task in other words near 1.0).
WARN_FRACTION = 0.75
SHOWN_EXAMPLE_CHARS = 160  # one of a duplicate's own examples, as a refusal shows it


def warn_score(threshold: float) -> float:
    return threshold * WARN_FRACTION


@dataclass(frozen=True)
class Close:
    """A trusted skill close to the proposal; `judged` is set for one at or above the refusal threshold."""

    hit: Hit
    difference: str
    judged: SameTask | None = None
    # One of the skill's own examples the proposal's do not ask (shown with a refusal, and with a skill that answers
    # every example of the proposal: examples that agree with the skill's are evidence only as far as they go, and
    # one it answers otherwise tells two tasks apart).
    own_example: str | None = None


@dataclass(frozen=True)
class GuardResult:
    proposal: str
    threshold: float
    close: list[Close]

    @property
    def duplicate(self) -> Close | None:
        return next((c for c in self.close if c.judged is not None and c.judged.same), None)

    def warnings(self) -> list[str]:
        """One line per close skill (with a second line for how it differs, and a third for the evidence)."""
        lines = []
        for c in self.close:
            line = (f"trusted skill {c.hit.ref} is close to {self.proposal} (score {c.hit.score:.2f}; "
                    f"{self.threshold:.2f} and the same task refuses): {c.hit.description}\n    {c.difference}")
            if c.judged is not None:
                line += f"\n    {'the same task' if c.judged.same else 'not the same task'}: {c.judged.why}"
                if not c.judged.same and c.own_example is not None:
                    line += f"\n    one of its own examples, to compare with what yours should answer: {c.own_example}"
            lines.append(line)
        return lines

    def refusal(self) -> str | None:
        """Why the proposal is refused as a duplicate, naming what matched; None when it is not."""
        dup = self.duplicate
        if dup is None or dup.judged is None:
            return None
        other = "" if dup.own_example is None else (
            f"; if yours is another task, add an example {dup.hit.name} answers otherwise (one of its own: "
            f"{dup.own_example})")
        return (f"{self.proposal} does the task of trusted skill {dup.hit.ref} (score {dup.hit.score:.2f} >= "
                f"KAVI_SEARCH_DUPLICATE_SCORE {self.threshold:.2f}; {dup.judged.why}); use it "
                f"(kavi run {dup.hit.name}), or propose anyway with {FORCE_HINT}{other}")


def check_duplicates(home: KaviHome, records: ForgeRecords, proposal: Proposal,
                     config: SearchConfig | None = None, *, limit: int = 3) -> GuardResult:
    """The guard's view of `proposal` (search errors propagate: a door that cannot search warns and goes on). The
    closest trusted skills, warned about or not, are recorded in the ledger with the spec's digest: the proposal
    asset shows them in the Dagster UI."""
    cfg = config or SearchConfig.from_env()
    index = open_index(home, records, cfg)
    hits = index.close_to(proposal, limit=limit)
    close = []
    found: list[dict[str, object]] = []
    for hit in hits:
        difference = schema_difference(proposal, hit)
        warned = hit.score >= warn_score(cfg.duplicate_score)
        judged: SameTask | None = None
        if warned:
            if hit.score >= cfg.duplicate_score:
                skill = trusted_source(home, records, hit)
                judged = same_task(proposal, skill) if skill is not None else SameTask(False, "it is not trusted now")
                if judged.answered and cfg.judge is not None:
                    judged = model_judged(cfg.judge, proposal, hit, judged)
            # One of its own examples, for a refusal and for a skill that answers every example of the proposal:
            # where the person means another task, that example is one their skill would answer otherwise.
            shown = own_example(records, proposal, hit.name) if judged is not None and (
                judged.same or judged.answered) else None
            close.append(Close(hit, difference, judged, shown))
        found.append({"ref": hit.ref, "score": round(hit.score, 4), "description": hit.description,
                      "difference": difference, "warned": warned,
                      "same_task": None if judged is None else judged.same,
                      "evidence": None if judged is None else judged.why})
    records.record_close_skills(proposal, index.describe, found)
    return GuardResult(proposal.name, cfg.duplicate_score, close)


def model_judged(endpoint: LLMSettings, proposal: Proposal, hit: Hit, judged: SameTask) -> SameTask:
    """The evidence once the configured model has judged two descriptions in other words of a skill that answers
    every example of the proposal: the same task (a refusal, with its reason), another, or not judged (a warning,
    with why)."""
    from kavi.search.judge import JudgeError, judge_same_task

    try:
        judgement = judge_same_task(endpoint, proposal, hit)
    except JudgeError as err:
        return SameTask(False, f"{judged.why}; the model did not judge them: {err}", judged.answered)
    if judgement.same:
        return SameTask(True, f"the same class, inputs and outputs, {judged.answered}, and the model "
                              f"{judgement.model} judged the two descriptions the same task: {judgement.reason}")
    return SameTask(False, f"{judged.why}; the model {judgement.model} judged them two tasks: {judgement.reason}",
                    judged.answered)


def own_example(records: ForgeRecords, proposal: Proposal, name: str) -> str | None:
    """One example of the trusted skill's own proposal whose input none of `proposal`'s examples has (its first
    example when every input is shared), as `name(field=value) -> {output}`; None when its proposal is gone."""
    row = records.get_proposal(name)
    if row is None:
        return None
    asked = {canonical(ex.input) for ex in (*proposal.examples, *proposal.holdout_examples)}
    examples = row.proposal.examples  # a proposal has at least one
    ex = next((e for e in examples if canonical(e.input) not in asked), examples[0])
    args = ", ".join(f"{k}={v!r}" for k, v in ex.input.items())
    text = f"{name}({args}) -> {json.dumps(ex.expected, sort_keys=True, default=str)}"
    return text if len(text) <= SHOWN_EXAMPLE_CHARS else text[:SHOWN_EXAMPLE_CHARS - 3] + "..."
