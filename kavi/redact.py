"""Nothing secret leaves through messages: a Redactor removes configured keys, key-shaped strings and a proposal's
holdout values from text, and bounds it, before anything the gates or the endpoint said is stored or forwarded
(ledger rows, artifacts, research notes, the next packet, Dagster metadata).

It is applied where such text is created or turned into records: `LLMClient` errors, the build log, and the gate
results right after `run_gates` (kavi.forge.verify); everything downstream reads the redacted copies."""

import dataclasses
import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kavi.settings import (
    EXPLICIT_KEY_VARS,
    MIN_CONFIGURED_KEY_CHARS,
    MIN_ENV_SECRET_CHARS,
    PLACEHOLDER_KEYS,
    KaviSettings,
    read_setting,
)
from kavi.verdicts import GateResult

__all__ = ["EXPLICIT_KEY_VARS", "MIN_ENV_SECRET_CHARS", "PLACEHOLDER_KEYS"]

if TYPE_CHECKING:
    from kavi.proposals.model import Proposal

REDACTED = "[REDACTED]"
MIN_HOLDOUT_CHARS = 4  # shorter holdout values ("3", "a b") would blank out ordinary text
# PLACEHOLDER_KEYS, EXPLICIT_KEY_VARS and the secret-looking names: with the settings, which gather the values.

_KEY_SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),  # OpenAI-style keys, sk-proj-… included
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
)
# A long hex/base64 value after a key-ish name: `api_key=…`, `"token": "…"`, `X-Api-Key: …`. A bare hash is kept.
_KEYISH_VALUE = re.compile(
    r"(?i)\b([a-z0-9_\-]*(?:api[_\-]?key|apikey|secret|token|password|passwd|credential|auth)[a-z0-9_\-]*"
    r"[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9\-._~+/]{16,}=*)"
)


# The API keys this process has given an SDK client (kavi.llm.client tells them here: no import back up).
_GIVEN_KEYS: set[str] = set()
_KEYS_LOCK = threading.Lock()


def remember_key(key: str) -> None:
    """A key this process gave an SDK client: redacted from messages like a configured one."""
    with _KEYS_LOCK:
        _GIVEN_KEYS.add(key)


def configured_secrets(settings: KaviSettings | None = None) -> list[str]:
    """The values of the configured keys (KAVI_LLM_API_KEY, OPENAI_API_KEY, any *_KEY/*_TOKEN/*_SECRET variable,
    gathered by the settings) and, without settings (the process's own), every key this process has given an SDK
    client."""
    found: set[str] = set(read_setting("env_secrets") if settings is None else settings.env_secrets)
    if settings is None:
        with _KEYS_LOCK:
            given = set(_GIVEN_KEYS)
        found.update(k for k in given if k not in PLACEHOLDER_KEYS and len(k) >= MIN_CONFIGURED_KEY_CHARS)
    return sorted(found)


def _forms(value: Any, out: set[str], *, keys: bool) -> None:
    """`value`'s string forms as they may show in output: itself, escaped (JSON, repr), its lines, JSON dumps."""
    if isinstance(value, bool) or value is None:
        return
    forms: set[str] = set()
    if isinstance(value, int | float):
        forms |= {str(value), repr(value), json.dumps(value)}
    elif isinstance(value, str):
        forms |= {value, json.dumps(value), json.dumps(value)[1:-1], repr(value)[1:-1]}
        forms |= {line.strip() for line in value.splitlines()}
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if keys:
                _forms(k, out, keys=True)
            _forms(v, out, keys=True)
        forms |= _dumps(value)
    elif isinstance(value, list | tuple):
        for v in value:
            _forms(v, out, keys=True)
        forms |= _dumps(list(value))
    out.update(f for f in forms if len(f) >= MIN_HOLDOUT_CHARS)


def _dumps(value: Any) -> set[str]:
    out = {repr(value)}
    for sort in (False, True):
        out.add(json.dumps(value, sort_keys=sort, default=str))
        out.add(json.dumps(value, sort_keys=sort, default=str, separators=(",", ":")))
    return out


def holdout_strings(proposal: "Proposal") -> set[str]:
    """The string forms (≥ 4 characters) of every holdout input, expected output and fixture of a proposal."""
    out: set[str] = set()
    for ex in proposal.holdout_examples:
        data = ex.model_dump(mode="json")
        for part in ("input", "expected"):
            # The field names are public (they are the skill's schema); their values are not.
            for v in data[part].values():
                _forms(v, out, keys=True)
            out.update(f for f in _dumps(data[part]) if len(f) >= MIN_HOLDOUT_CHARS)
        for part in ("vault_files", "http_responses", "secrets"):
            if data.get(part):
                _forms(data[part], out, keys=True)
    return out


class Redactor:
    """Redacts and bounds text. Build it with `for_proposal` (configured keys and the proposal's holdouts)."""

    def __init__(
        self,
        secrets: Iterable[str] = (),
        holdouts: Iterable[str] = (),
        *,
        max_message_chars: int = 400,
        max_messages: int = 40,
        max_total_chars: int = 20_000,
        max_reason_chars: int = 500,
        max_list_items: int = 200,
    ) -> None:
        literals = {s for s in secrets if s and s not in PLACEHOLDER_KEYS and len(s) >= MIN_CONFIGURED_KEY_CHARS}
        literals |= {h for h in holdouts if len(h) >= MIN_HOLDOUT_CHARS}
        self._literal: re.Pattern[str] | None = None
        if literals:
            ordered = sorted(literals, key=lambda x: (-len(x), x))  # the longest form first
            self._literal = re.compile("|".join(re.escape(x) for x in ordered))
        self._numbers = {x for x in literals if _is_number(x)}
        self.max_message_chars = max_message_chars
        self.max_messages = max_messages
        self.max_total_chars = max_total_chars
        self.max_reason_chars = max_reason_chars
        self.max_list_items = max_list_items

    @classmethod
    def for_proposal(cls, proposal: "Proposal | None", settings: KaviSettings | None = None,
                     extra_secrets: Iterable[str] = (), **bounds: int) -> "Redactor":
        holdouts = holdout_strings(proposal) if proposal is not None else set()
        return cls([*configured_secrets(settings), *extra_secrets], holdouts, **bounds)

    # -- text ---------------------------------------------------------------------------------------

    def text(self, value: str) -> str:
        """`value` with every secret and holdout form replaced by [REDACTED] (not bounded)."""
        if self._literal is not None:
            value = self._literal.sub(REDACTED, value)
        for shape in _KEY_SHAPES:
            value = shape.sub(REDACTED, value)
        return _KEYISH_VALUE.sub(lambda m: m.group(1) + REDACTED, value)

    def message(self, value: object, limit: int | None = None) -> str:
        """Redacted first (so a cut cannot leave half a key behind), then bounded."""
        bound = limit or self.max_message_chars
        text = self.text(str(value))
        return text if len(text) <= bound else text[: bound - 1] + "…"

    def messages(self, values: Sequence[object], budget: int | None = None) -> list[str]:
        """At most `max_messages` messages of at most `max_message_chars`, and at most `budget` characters."""
        left = self.max_total_chars if budget is None else budget
        out: list[str] = []
        for i, value in enumerate(values):
            if i >= self.max_messages or left <= 0:
                out.append(f"… {len(values) - i} more message(s) not kept (output bounded)")
                break
            msg = self.message(value, min(self.max_message_chars, max(left, 2)))
            out.append(msg)
            left -= len(msg)
        return out

    def value(self, data: Any, depth: int = 0) -> Any:
        """A JSON-like structure with every string redacted and bounded, lists shortened, holdout numbers hidden."""
        if isinstance(data, str):
            return self.message(data, self.max_reason_chars)
        if isinstance(data, bool) or data is None:
            return data
        if isinstance(data, int | float):
            return REDACTED if self._numbers and _number_forms(data) & self._numbers else data
        if depth > 12:
            return "… (nested too deep; not kept)"
        if isinstance(data, Mapping):
            return {self.message(k, 120): self.value(v, depth + 1) for k, v in data.items()}
        if isinstance(data, list | tuple):
            items = [self.value(v, depth + 1) for v in list(data)[: self.max_list_items]]
            if len(data) > self.max_list_items:
                items.append(f"… {len(data) - self.max_list_items} more item(s) not kept")
            return items
        return self.message(data, self.max_reason_chars)

    # -- gate results: the choke point --------------------------------------------------------------

    def gate_result(self, result: GateResult, budget: int | None = None) -> GateResult:
        return dataclasses.replace(
            result,
            reason=self.message(result.reason, self.max_reason_chars),
            messages=self.messages(result.messages, budget),
            details=self.value(result.details),
        )

    def gate_results(self, results: Sequence[GateResult]) -> list[GateResult]:
        """Every gate's reason, messages and details redacted; all messages together within max_total_chars."""
        left = self.max_total_chars
        out: list[GateResult] = []
        for r in results:
            red = self.gate_result(r, left)
            left -= sum(len(m) for m in red.messages)
            out.append(red)
        return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _number_forms(value: float) -> set[str]:
    return {str(value), repr(value), json.dumps(value)}
