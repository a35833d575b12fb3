"""Escalation triggers: when a failed attempt must wait for a person instead of retrying on its own."""

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from kavi.lifecycle import FailureKind
from kavi.skills.base import SideEffectClass


class Trigger(StrEnum):
    REPEATED_FAILURE = "REPEATED_FAILURE"
    PERMISSION_WIDENING = "PERMISSION_WIDENING"
    SECURITY_CLASS = "SECURITY_CLASS"
    LARGE_DIFF = "LARGE_DIFF"
    AMBIGUOUS = "AMBIGUOUS"
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    TERMINAL_LLM_ERROR = "TERMINAL_LLM_ERROR"
    # An infrastructure failure that another try cannot clear (the prompt is over the bound before any failure
    # facts are added): a person changes the spec or the bound.
    PROMPT_TOO_LONG = "PROMPT_TOO_LONG"
    # The model endpoint has failed this many attempts in a row (kavi.forge.research): a sustained outage waits for
    # a person, who is told the endpoint and its last status.
    ENDPOINT_OUTAGE = "ENDPOINT_OUTAGE"
    # A third party's code was rejected by the gates (`kavi vet`): no model retries it; a person decides.
    VETTED_REJECTED = "VETTED_REJECTED"


REPEAT_THRESHOLD = 3
LARGE_DIFF_RATIO = 0.5

_SECURITY_KINDS = {FailureKind.VERIFY_POLICY, FailureKind.VERIFY_INVARIANT, FailureKind.GATE_VIOLATION}
_AMBIGUOUS_KINDS = {FailureKind.UNKNOWN, FailureKind.LLM_UNAVAILABLE}
_WIDENING = re.compile(
    r"\b(FILE_WRITE|NETWORK|SECRET_READ|side[_ ]effect[_ ]class|network access|internet|api[_ ]key|secret|"
    r"credential|password|payment|money|billing|send (an )?(email|e-mail|sms|message)|messaging|webhook)\b",
    re.IGNORECASE,
)
_CLASS_RANK = {
    SideEffectClass.READ_ONLY: 0,
    SideEffectClass.FILE_WRITE: 1,
    SideEffectClass.NETWORK: 2,
    SideEffectClass.SECRET_READ: 3,
}


@dataclass(frozen=True)
class EscalationInput:
    kind: FailureKind
    fingerprint: str
    previous_fingerprints: Sequence[str]  # oldest first, attempts before this one
    attempt: int
    budget: int
    declared_class: SideEffectClass
    requested_class: SideEffectClass | None = None  # what the build claimed, when it differs
    advice: str | None = None
    packet_text: str | None = None
    previous_packet_text: str | None = None
    llm_terminal: bool = False


def changed_ratio(before: str, after: str) -> float:
    """Share of lines changed between two packets (0 = same, 1 = all different)."""
    a, b = before.splitlines(), after.splitlines()
    if not a and not b:
        return 0.0
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    return 1.0 - same / max(len(a), len(b))


def _widening_in(text: str | None, declared: SideEffectClass) -> bool:
    if not text:
        return False
    for hit in _WIDENING.finditer(text):
        word = hit.group(0).upper()
        if word in SideEffectClass.__members__ and _CLASS_RANK[SideEffectClass(word)] <= _CLASS_RANK[declared]:
            continue
        return True
    return False


def triggers_for(inp: EscalationInput) -> list[Trigger]:
    found: list[Trigger] = []
    recent = [*inp.previous_fingerprints[-(REPEAT_THRESHOLD - 1) :], inp.fingerprint]
    if len(recent) >= REPEAT_THRESHOLD and len(set(recent)) == 1:
        found.append(Trigger.REPEATED_FAILURE)
    if (
        inp.requested_class is not None
        and _CLASS_RANK[inp.requested_class] > _CLASS_RANK[inp.declared_class]
    ) or _widening_in(inp.advice, inp.declared_class):
        found.append(Trigger.PERMISSION_WIDENING)
    if inp.kind in _SECURITY_KINDS:
        found.append(Trigger.SECURITY_CLASS)
    if (
        inp.packet_text is not None
        and inp.previous_packet_text is not None
        and changed_ratio(inp.previous_packet_text, inp.packet_text) > LARGE_DIFF_RATIO
    ):
        found.append(Trigger.LARGE_DIFF)
    if inp.kind in _AMBIGUOUS_KINDS and not inp.llm_terminal:
        found.append(Trigger.AMBIGUOUS)
    if inp.llm_terminal:
        found.append(Trigger.TERMINAL_LLM_ERROR)
    if inp.attempt >= inp.budget:
        found.append(Trigger.BUDGET_EXHAUSTED)
    return found
