"""The prompts the forge sends: the build prompt (the skill contract plus the packet) and the research advice."""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kavi.settings import KaviSettings, read_setting

DEFAULT_MAX_PROMPT_CHARS = 24000  # as LLMSettings and the LLM resource
PROMPT_BOUND_ENV = "KAVI_LLM_MAX_PROMPT_CHARS"
MAX_HINT_CHARS = 2000
# Room a proposal's spec must leave in the prompt at intake for what later attempts add: a person's hint and the
# notes of earlier failures (which are cut to fit whatever room is left).
PROMPT_RESERVE_CHARS = MAX_HINT_CHARS + 1000


class PromptTooLarge(ValueError):
    """A build prompt that would exceed the prompt bound even before any earlier failure is added."""


def max_prompt_chars_from_env(settings: KaviSettings | None = None) -> int:
    """The prompt bound configured by KAVI_LLM_MAX_PROMPT_CHARS (default 24000), checked by the settings: of
    `settings`, else the variable alone."""
    value: int = settings.llm_max_prompt_chars if settings is not None else read_setting("llm_max_prompt_chars")
    return value

ALLOWED_IMPORTS = (
    "re, math, json, datetime, collections, itertools, functools, string, textwrap, statistics, decimal, "
    "fractions, dataclasses, enum, typing, unicodedata, hashlib, base64, difflib, heapq, bisect, operator, html, "
    "calendar; pydantic; kavi_assets.skills.base"
)

SYSTEM = """You write one Python skill for Kavi Forge and its pytest tests. Independent gates will check your files:
ruff, mypy --strict, pytest (at least 3 tests; zero tests fail), coverage of the skill file >= 80%, a policy scan,
AST invariants, and acceptance examples you cannot see.

The contract:
- Write exactly two files: `skills/{name}.py` and `tests/test_skill_{name}.py`. Any other path fails the attempt.
- The skill module defines pydantic input/output models and exactly one class:
  `class {cls}(BaseSkill[{cls}Input, {cls}Output])` with class attributes `name = "{name}"`, `description`,
  `input_model`, `output_model`, `side_effect_class = SideEffectClass.{side_effect}`, and
  `def execute(self, input_data: {cls}Input) -> {cls}Output`.
  Import it as `from kavi_assets.skills.base import BaseSkill, SideEffectClass`.
- Touch the world only through handles: `self.vault.read_text/exists/list_files` (vault paths are relative),
  `self.vault.write_text` (FILE_WRITE only), `self.http.get_json/get_text` (NETWORK only),
  `self.secrets.get("NAME")` (SECRET_READ only, declared names, string literals),
  `self.llm.can_complete()/complete(prompt)/can_embed()/embed(texts)` (any class; often unavailable, and always
  unavailable in the gates: check first and fall back to a deterministic method).
  Never use open, os, sys, pathlib, subprocess, socket, urllib, eval/exec, getattr with computed names,
  dunder attributes, or code at module level beyond imports, classes, functions and constants.
- Allowed imports: {imports}.
- Tests import `from skills.{name} import {cls}` and may build handles with
  `from kavi_assets.runtime.handles import Vault, FixtureHttp, DeclaredSecrets` (e.g. `Vault(tmp_path,
  writable=True)`) and pass them as `{cls}(SkillContext(vault=..., http=..., secrets=..., llm=...))`, with
  `from kavi_assets.skills.base import SkillContext`.
Answer ONLY with JSON: {{"files": [{{"path": "...", "content": "..."}}], "notes": "..."}}"""


def fenced(text: str, lang: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it: quoted text cannot close its fence."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


_WHOLE_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(?P<body>.*)\n```\Z", re.DOTALL)


def unfenced(text: str) -> str:
    """A model's answer without the one ```json fence some models put around the whole of it (stripped)."""
    body = text.strip()
    whole = _WHOLE_FENCE.match(body)
    return whole.group("body").strip() if whole else body


def build_headers(skill: str, attempt: int, kind: str) -> dict[str, str]:
    """Metadata headers: real endpoints ignore them; the recorded model replays by them."""
    return {"X-Kavi-Skill": skill, "X-Kavi-Attempt": str(attempt), "X-Kavi-Kind": kind}


def _failure_text(f: Mapping[str, Any]) -> str:
    facts = f.get("facts") or {}
    if facts.get("not_judged"):  # the reviewer failed, not the builder: nothing in the code to fix
        return f"Attempt {f.get('attempt')} was not judged: {facts['not_judged']}."
    lines = [f"Attempt {f.get('attempt')} failed: {f.get('failure_kind')}"]
    for gate, info in (facts.get("gates") or {}).items():
        lines.append(f"- gate {gate}: {info.get('reason', '')}")
        lines += [f"    {m}" for m in info.get("messages", [])[:12]]
        if info.get("holdout_failed"):
            lines.append(f"    {info['holdout_failed']} hidden acceptance example(s) failed")
        if gate == "resource" and info.get("shapes"):
            lines.append("    The forge timed your skill on inputs growing up to the largest input a caller may send: "
                         "rewrite it so its time grows linearly with the input (a linear-time algorithm).")
    for v in facts.get("violations", []) or []:
        lines.append(f"- {v}")
    if facts.get("error"):
        lines.append(f"- {facts['error']}")
    if f.get("advice"):
        lines.append(f"Advice: {f['advice']}")
    return "\n".join(lines)


def render_build_messages(
    spec_view: Mapping[str, Any],
    *,
    attempt: int,
    skill_name: str,
    class_name: str,
    prior_failures: Sequence[Mapping[str, Any]],
    hint: str | None,
    max_chars: int,
) -> list[dict[str, str]]:
    """The system and user messages of a build attempt, at most `max_chars` characters together.

    The spec (and a person's hint, cut to MAX_HINT_CHARS) must fit: otherwise PromptTooLarge, before any model
    call. Earlier failures fill the room that is left, the most recent first.
    """
    system = SYSTEM.format(name=skill_name, cls=class_name, side_effect=spec_view.get("side_effect_class"),
                           imports=ALLOWED_IMPORTS)
    head = [f"Skill spec (attempt {attempt}):", json.dumps(dict(spec_view), indent=2)]
    tail: list[str] = []
    if hint:
        if len(hint) > MAX_HINT_CHARS:
            hint = hint[:MAX_HINT_CHARS] + "\n[hint truncated]"
        tail.append(f"A person's hint for this attempt: {hint}")
    fixed = len(system) + len("\n\n".join([*head, *tail]))
    if fixed > max_chars:
        raise PromptTooLarge(
            f"the build prompt for {skill_name!r} would be {fixed} characters, over the bound of {max_chars} "
            f"({PROMPT_BOUND_ENV}); shorten the proposal's description or examples")
    failures = [_failure_text(f) for f in prior_failures]
    # What the failures may use: the separators, the header line and the omission note are counted too.
    budget = max_chars - fixed - len("\n\nEarlier attempts failed; fix these problems:") - 40
    # Keep the most recent failures; drop the oldest first when the prompt would exceed its bound.
    kept: list[str] = []
    for text in reversed(failures):
        if len(text) + 2 > budget:
            text = text[: max(0, budget - 20)] + "\n[truncated]" if budget > 200 else ""
        if not text:
            break
        kept.insert(0, text)
        budget -= len(text) + 2
    if kept:
        head.append("Earlier attempts failed; fix these problems:")
        head += kept
        if len(kept) < len(failures):
            head.append(f"({len(failures) - len(kept)} older failure(s) omitted)")
    user = "\n\n".join([*head, *tail])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


INDEPENDENT_SYSTEM = """You write one Python skill for Kavi Forge from its spec. Another model writes the same skill
separately; the forge runs both on the same inputs and compares their outputs, so follow the spec's description and
examples exactly, and reject input the spec does not cover with ValueError.

The contract:
- Write exactly one file: `skills/{name}.py`. No tests, no other path.
- The module defines pydantic input/output models and exactly one class:
  `class {cls}(BaseSkill[{cls}Input, {cls}Output])` with class attributes `name = "{name}"`, `description`,
  `input_model`, `output_model`, `side_effect_class = SideEffectClass.{side_effect}`, and
  `def execute(self, input_data: {cls}Input) -> {cls}Output`.
  Import it as `from kavi_assets.skills.base import BaseSkill, SideEffectClass`.
- Touch the world only through handles: `self.vault.read_text/exists/list_files` (vault paths are relative),
  `self.vault.write_text` (FILE_WRITE only), `self.http.get_json/get_text` (NETWORK only),
  `self.secrets.get("NAME")` (SECRET_READ only, declared names, string literals), `self.llm` (always unavailable
  here: use a deterministic method). Never use open, os, sys, subprocess, socket, eval/exec or dunder attributes.
- Allowed imports: {imports}.
Answer ONLY with JSON: {{"files": [{{"path": "skills/{name}.py", "content": "..."}}], "notes": "..."}}"""


def render_independent_messages(spec_view: Mapping[str, Any], *, skill_name: str, class_name: str, max_chars: int
                                ) -> list[dict[str, str]]:
    """The request for an independent implementation: the builder's view of the spec and nothing else (never the
    holdouts, the builder's code, its tests or its failures), so the second version shares no mistake but the
    spec's own. PromptTooLarge when it does not fit `max_chars`."""
    system = INDEPENDENT_SYSTEM.format(name=skill_name, cls=class_name,
                                       side_effect=spec_view.get("side_effect_class"), imports=ALLOWED_IMPORTS)
    user = "Skill spec:\n" + json.dumps(dict(spec_view), indent=2)
    size = len(system) + len(user)
    if size > max_chars:
        raise PromptTooLarge(f"the independent implementation prompt for {skill_name!r} would be {size} characters, "
                             f"over the bound of {max_chars} ({PROMPT_BOUND_ENV})")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def check_spec_prompt(spec_view: Mapping[str, Any], *, skill_name: str, class_name: str, max_chars: int) -> int:
    """At intake: the spec's build prompt must fit the bound with PROMPT_RESERVE_CHARS to spare for later
    attempts (a hint, earlier failures). Returns the prompt's size; PromptTooLarge when it does not fit."""
    messages = render_build_messages(spec_view, attempt=1, skill_name=skill_name, class_name=class_name,
                                     prior_failures=[], hint=None, max_chars=max_chars)
    size = sum(len(m["content"]) for m in messages)
    allowed = max(0, max_chars - PROMPT_RESERVE_CHARS)
    if size > allowed:
        raise PromptTooLarge(
            f"the build prompt for {skill_name!r} would be {size} characters; the bound of {max_chars} "
            f"({PROMPT_BOUND_ENV}) keeps {PROMPT_RESERVE_CHARS} for retries, so at most {allowed} may hold the spec; "
            "shorten the proposal's description or examples")
    return size


ADVICE_SYSTEM = ("You review a failed attempt to build a small Python skill. In at most 5 sentences, say what to "
                 "change. Do not ask for more permissions than the spec's side-effect class. Plain text only.")


def render_advice_messages(note_facts: Mapping[str, Any], *, failure_kind: str, max_chars: int = 4000
                           ) -> list[dict[str, str]]:
    body = json.dumps(dict(note_facts), indent=1, default=str)
    body = body[: max(0, max_chars - len(ADVICE_SYSTEM) - 100)]
    return [{"role": "system", "content": ADVICE_SYSTEM},
            {"role": "user", "content": f"Failure kind: {failure_kind}\nFacts:\n{body}"}]
