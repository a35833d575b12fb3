"""The skill runner: trusted lookup, confirmation, hash-checked load, validated run, one record per run."""

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from kavi.home import KaviHome
from kavi.lifecycle import Refusal
from kavi.runtime.composition import StepFailed, check_fields, parse_doc, run_composition
from kavi.runtime.context import context_for
from kavi.runtime.errors import ClassNotAllowed, ConfirmationRequired, RuntimeRefusal, SkillLoadError, SkillNotTrusted
from kavi.runtime.records import (
    ExecutionLog,
    ExecutionRecord,
    StartRecord,
    escape_text,
    input_sha256,
    new_id,
    to_json,
    utc_now_iso,
)
from kavi.runtime.trust import TrustedSkill, TrustError, TrustLoader, default_loader
from kavi.skills.base import BaseSkill, HttpHandle, ModelHandle, SideEffectClass

__all__ = [
    "CAPABILITIES",
    "ConfirmationRequired",
    "SkillInfo",
    "SkillNotTrusted",
    "SkillRunner",
    "closed_schema",
    "describe_validation_error",
    "input_schema_of",
    "list_skills",
    "needs_confirmation",
]

COMPOSITION_SUFFIX = ".composition.json"  # where a decomposed parent's trusted composition is promoted

CAPABILITIES: dict[SideEffectClass, str] = {
    SideEffectClass.READ_ONLY: "read the vault",
    SideEffectClass.FILE_WRITE: "write files in the vault",
    SideEffectClass.NETWORK: "make HTTP requests",
    SideEffectClass.SECRET_READ: "read its declared secrets",
}


def needs_confirmation(side_effect_class: SideEffectClass) -> bool:
    return side_effect_class is not SideEffectClass.READ_ONLY


def describe_validation_error(exc: ValidationError) -> str:
    """One clause per failing field: `field.path: message`."""
    clauses = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err.get("loc", ())) or "(whole input)"
        clauses.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(clauses)


def _confirmation_message(skill: TrustedSkill) -> str:
    return (
        f"skill {skill.name!r} is {skill.side_effect_class.value}: it can "
        f"{CAPABILITIES[skill.side_effect_class]}; confirm to run it"
    )


@dataclass(frozen=True)
class _RunContext:
    skill: TrustedSkill
    input_json: str
    session_id: str
    parent_execution_id: str | None
    replay_of: str | None
    caller: str | None = None  # who asked (an MCP client); None for the local CLI
    started_at: str = field(default_factory=utc_now_iso)
    t0: float = field(default_factory=time.perf_counter)
    execution_id: str = field(default_factory=new_id)  # known up front: a composition's steps name it as parent


class SkillRunner:
    """Runs trusted skills in process and appends an ExecutionRecord for every run, success or not."""

    def __init__(
        self,
        home: KaviHome,
        trusted: Callable[[str], TrustedSkill | None],
        log: ExecutionLog,
        environ: Mapping[str, str] | None = None,
        http: HttpHandle | None = None,
        *,
        llm: ModelHandle | None = None,
        loader: TrustLoader | None = None,
    ) -> None:
        self.home = home
        self._trusted = trusted
        self.log = log
        self._environ = environ
        self._http = http
        self._llm = llm
        self.loader = loader if loader is not None else default_loader
        self._roots = sorted({str(home.root), str(home.root.resolve())}, key=len, reverse=True)

    def lookup(self, skill_name: str) -> TrustedSkill:
        """The trusted record for `skill_name` (NAME, the latest version, or NAME@VERSION), or SkillNotTrusted."""
        skill = self._trusted(skill_name)
        if skill is None:
            raise SkillNotTrusted(
                f"skill {skill_name!r} is not trusted: only skills promoted into the registry can run"
            )
        return skill

    def check_confirmation(self, skill: TrustedSkill, confirmed: bool) -> None:
        if needs_confirmation(skill.side_effect_class) and not confirmed:
            raise ConfirmationRequired(_confirmation_message(skill))

    def run(
        self,
        skill_name: str,
        input_data: Mapping[str, Any],
        *,
        confirmed: bool,
        parent_execution_id: str | None = None,
        session_id: str | None = None,
        replay_of: str | None = None,
        caller: str | None = None,
        admit: Callable[[TrustedSkill], str | None] | None = None,
    ) -> ExecutionRecord:
        """Run one skill: the one door every run passes through.

        A refusal before the start (a version not trusted, revoked or suspect; `admit` naming why its class is not
        allowed here) leaves a REFUSED record and raises; an unconfirmed side effect raises before anything is
        written. Then a `started` line is made durable (if it cannot be, nothing runs), and the run ends in one
        record: a tampered file raises after its REFUSED record; an input the schema does not accept (a field it
        does not name included) is a REFUSED record; a load failure, a skill exception or a bad output is a
        FAILURE record."""
        try:
            skill = self.lookup(skill_name)
        except SkillNotTrusted as exc:
            raise self._refused_before_start(exc, input_data, session_id=session_id, caller=caller,
                                             parent_execution_id=parent_execution_id, replay_of=replay_of) from None
        self.check_confirmation(skill, confirmed)
        ctx = _RunContext(
            skill=skill,
            input_json=to_json(dict(input_data)),
            session_id=session_id or new_id(),
            parent_execution_id=parent_execution_id,
            replay_of=replay_of,
            caller=caller,
        )
        why_not = admit(skill) if admit is not None else None
        if why_not is not None:
            raise self._refuse(ctx, ClassNotAllowed(why_not), Refusal.CLASS_NOT_ALLOWED)
        self._start(ctx)
        if str(skill.path).endswith(COMPOSITION_SUFFIX):
            return self._run_composition(ctx, skill, input_data, confirmed=confirmed)
        try:
            cls = self.loader.load(skill)
        except SkillLoadError as exc:
            # The hash matched, so this is the skill's own top-level code failing: a run that failed.
            return self._finish(ctx, output=None, error=f"SkillLoadError: {exc}")
        except TrustError as exc:
            raise self._refuse(ctx, exc, Refusal.TAMPERED) from None
        try:
            # Fields the schema does not name are refused, in nested objects too: the published schemas say so.
            parsed = cls.input_model.model_validate(dict(input_data), extra="forbid")
        except ValidationError as exc:
            return self._finish(
                ctx,
                output=None,
                error=f"InputValidationError: input does not match the schema of {skill.name!r}: "
                f"{describe_validation_error(exc)}",
                refusal=Refusal.SCHEMA,
            )
        context = context_for(
            skill.side_effect_class,
            vault_root=self.home.vault_dir,
            declared_secrets=skill.required_secrets,
            environ=self._environ,
            http=self._http,
            llm=self._llm,
        )
        try:
            result = cls(context).execute(parsed)
        except (Exception, SystemExit) as exc:
            return self._finish(ctx, output=None, error=f"{type(exc).__name__}: {exc}")
        try:
            raw = result.model_dump() if isinstance(result, BaseModel) else result
            output = cls.output_model.model_validate(raw)
            output_json = _output_json(output)
        except ValidationError as exc:
            return self._finish(
                ctx,
                output=None,
                error=f"OutputValidationError: output of {skill.name!r} does not match its schema: "
                f"{describe_validation_error(exc)}",
            )
        except Exception as exc:
            return self._finish(ctx, output=None, error=f"OutputValidationError: {type(exc).__name__}: {exc}")
        return self._finish(ctx, output=output_json, error=None)

    def _run_composition(self, ctx: _RunContext, skill: TrustedSkill, input_data: Mapping[str, Any], *,
                         confirmed: bool) -> ExecutionRecord:
        """A decomposed parent: its trusted bytes (hash-checked like any skill's) are a composition, run as a chain of
        its children, each pinned to the version and hash the composition was verified with. Each child's run is a
        record of its own whose parent is this run's record."""
        try:
            doc = parse_doc(self.loader.verify(skill))
        except TrustError as exc:
            raise self._refuse(ctx, exc, Refusal.TAMPERED) from None
        if doc is None:
            return self._finish(ctx, output=None, error=f"SkillLoadError: {skill.path} is not a composition")
        problems = check_fields(doc.get("inputs") or [], dict(input_data), "input")
        if problems:
            return self._finish(ctx, output=None, error="InputValidationError: input does not match the schema of "
                                f"{skill.name!r}: {'; '.join(problems)}", refusal=Refusal.SCHEMA)
        pins: Mapping[str, Any] = doc.get("children") or {}

        def call(index: int, child: str, data: dict[str, Any]) -> dict[str, Any]:
            pin = pins.get(child) or {}
            ref = f"{child}@{pin.get('version')}"
            try:
                trusted = self.lookup(ref)
            except SkillNotTrusted as exc:
                raise StepFailed(f"step {index} ({child}): {exc}") from None
            if trusted.sha256.lower() != str(pin.get("sha256", "")).lower():
                raise StepFailed(f"step {index} ({child}): {ref} is not the version the composition was verified "
                                 "with (hash differs)")
            try:
                record = self.run(ref, data, confirmed=confirmed, parent_execution_id=ctx.execution_id,
                                  session_id=ctx.session_id, caller=ctx.caller)
            except RuntimeRefusal as exc:
                raise StepFailed(f"step {index} ({child}): {exc}") from None
            if not record.success:
                raise StepFailed(f"step {index} ({child}): {record.error}")
            out: dict[str, Any] = record.output_data()
            return out

        try:
            output = run_composition(doc, dict(input_data), call)
        except StepFailed as exc:
            return self._finish(ctx, output=None, error=f"CompositionError: {exc}")
        problems = check_fields(doc.get("outputs") or [], output, "output")
        if problems:
            return self._finish(ctx, output=None, error=f"OutputValidationError: output of {skill.name!r} does not "
                                f"match its schema: {'; '.join(problems)}")
        return self._finish(ctx, output=to_json(output), error=None)

    def record_failure(
        self,
        skill_name: str,
        input_data: Mapping[str, Any],
        error: str,
        *,
        parent_execution_id: str | None = None,
        session_id: str | None = None,
        replay_of: str | None = None,
    ) -> ExecutionRecord:
        """Append a FAILURE record for a run that was decided against before the skill was invoked."""
        ctx = _RunContext(
            skill=self.lookup(skill_name),
            input_json=to_json(dict(input_data)),
            session_id=session_id or new_id(),
            parent_execution_id=parent_execution_id,
            replay_of=replay_of,
        )
        return self._finish(ctx, output=None, error=error)

    def record_refusal(self, exc: SkillNotTrusted, input_data: Mapping[str, Any], *,
                       session_id: str | None = None, parent_execution_id: str | None = None,
                       caller: str | None = None) -> RuntimeRefusal:
        """Record a lookup refusal made outside `run` (a chain checks every step first) and return it to raise."""
        return self._refused_before_start(exc, input_data, session_id=session_id, caller=caller,
                                          parent_execution_id=parent_execution_id, replay_of=None)

    def relative(self, text: str) -> str:
        """`text` with the skills home's absolute path taken out: paths read relative to the home."""
        for root in self._roots:
            text = text.replace(root + os.sep, "").replace(root, ".")
        return text

    def _refused_before_start(self, exc: SkillNotTrusted, input_data: Mapping[str, Any], *,
                              session_id: str | None, parent_execution_id: str | None, replay_of: str | None,
                              caller: str | None) -> RuntimeRefusal:
        """A version the ledger knows but will not run (revoked, suspect, retired) leaves a REFUSED record; a name it
        never trusted leaves none (there is no skill to record)."""
        skill = exc.skill
        if not isinstance(skill, TrustedSkill):
            exc.args = (self.relative(str(exc)),)
            return exc
        ctx = _RunContext(skill=skill, input_json=to_json(dict(input_data)), session_id=session_id or new_id(),
                          parent_execution_id=parent_execution_id, replay_of=replay_of, caller=caller)
        return self._refuse(ctx, exc, exc.kind)

    def _refuse(self, ctx: _RunContext, exc: RuntimeRefusal, kind: Refusal) -> RuntimeRefusal:
        """Record a refusal (its message relative to the home) and return the exception to raise, carrying it."""
        exc.args = (self.relative(str(exc)),)
        exc.record = self._finish(ctx, output=None, error=f"{type(exc).__name__}: {exc}", refusal=kind)
        return exc

    def _start(self, ctx: _RunContext) -> None:
        """Make the start of the run durable before any of the skill's code runs; ExecutionLogError if it cannot be."""
        skill = ctx.skill
        self.log.append(StartRecord(
            execution_id=ctx.execution_id, parent_execution_id=ctx.parent_execution_id, replay_of=ctx.replay_of,
            session_id=ctx.session_id, skill_name=skill.name, skill_version=skill.version,
            source_hash=skill.sha256.lower(), side_effect_class=skill.side_effect_class,
            input_sha256=input_sha256(ctx.input_json), started_at=ctx.started_at, caller=ctx.caller))

    def _finish(self, ctx: _RunContext, *, output: str | None, error: str | None,
                refusal: Refusal | None = None) -> ExecutionRecord:
        record = ExecutionRecord(
            execution_id=ctx.execution_id,
            parent_execution_id=ctx.parent_execution_id,
            replay_of=ctx.replay_of,
            session_id=ctx.session_id,
            skill_name=ctx.skill.name,
            source_hash=ctx.skill.sha256.lower(),
            side_effect_class=ctx.skill.side_effect_class,
            skill_version=ctx.skill.version,
            input_json=ctx.input_json,
            output_json=output,
            success=error is None,
            error=None if error is None else escape_text(self.relative(error)),
            started_at=ctx.started_at,
            finished_at=utc_now_iso(),
            duration_ms=round((time.perf_counter() - ctx.t0) * 1000.0, 3),
            caller=ctx.caller,
            refusal=refusal,
        )
        self.log.append(record)
        return record


def _output_json(output: BaseModel) -> str:
    """The output as JSON text; one pydantic cannot encode (a lone surrogate) is written with its characters escaped."""
    try:
        return output.model_dump_json()
    except PydanticSerializationError:
        return escape_text(json.dumps(output.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False,
                                      default=str))


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with `additionalProperties: false` on every object that names its properties, nested and in `$defs`
    included: the input schema the runtime enforces (a field it does not name is refused), as published."""

    def close(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        out = dict(node)
        for key in ("properties", "$defs", "definitions", "patternProperties"):
            if isinstance(out.get(key), dict):
                out[key] = {name: close(sub) for name, sub in out[key].items()}
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            if isinstance(out.get(key), list):
                out[key] = [close(sub) for sub in out[key]]
        for key in ("items", "not", "additionalProperties"):
            if isinstance(out.get(key), dict):
                out[key] = close(out[key])
        if isinstance(out.get("properties"), dict) and not isinstance(out.get("additionalProperties"), dict):
            out["additionalProperties"] = False
        return out

    closed: dict[str, Any] = close(schema)
    return closed


def input_schema_of(cls: type[BaseSkill[Any, Any]]) -> dict[str, Any]:
    """The input schema a trusted skill is published with."""
    return closed_schema(cls.input_model.model_json_schema())


@dataclass(frozen=True)
class SkillInfo:
    """What `kavi skills` shows about one trusted skill; `error` is set when it could not be loaded."""

    name: str
    class_name: str | None
    description: str | None
    side_effect_class: SideEffectClass
    required_secrets: tuple[str, ...]
    source_hash: str
    input_schema: dict[str, Any] | None
    output_schema: dict[str, Any] | None
    error: str | None = None
    version: int | None = None  # the version described: the latest trusted one
    versions: tuple[int, ...] = ()  # every trusted version of the skill

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "versions": list(self.versions),
            "class": self.class_name,
            "description": self.description,
            "side_effect_class": self.side_effect_class.value,
            "required_secrets": list(self.required_secrets),
            "source_hash": self.source_hash,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "error": self.error,
        }


def list_skills(trusted: Iterable[TrustedSkill], *, loader: TrustLoader | None = None,
                versions: Mapping[str, Iterable[int]] | None = None) -> list[SkillInfo]:
    """Load each trusted skill (hash-checked) and describe it; a skill that fails to load is listed with
    its error rather than hiding the others. `versions` lists each skill's trusted versions."""
    known = {k: tuple(v) for k, v in (versions or {}).items()}
    active = loader if loader is not None else default_loader
    infos: list[SkillInfo] = []
    for skill in sorted(trusted, key=lambda s: s.name):
        if str(skill.path).endswith(COMPOSITION_SUFFIX):
            infos.append(_composition_info(active, skill, known.get(skill.name, ())))
            continue
        try:
            cls = active.load(skill)
        except TrustError as exc:
            infos.append(
                SkillInfo(
                    name=skill.name,
                    class_name=None,
                    description=None,
                    side_effect_class=skill.side_effect_class,
                    required_secrets=skill.required_secrets,
                    source_hash=skill.sha256,
                    input_schema=skill.input_schema,
                    output_schema=None,
                    error=f"{type(exc).__name__}: {exc}",
                    version=skill.version,
                    versions=known.get(skill.name, ()),
                )
            )
            continue
        infos.append(
            SkillInfo(
                name=skill.name,
                class_name=cls.__name__,
                description=str(getattr(cls, "description", "")),
                side_effect_class=skill.side_effect_class,
                required_secrets=skill.required_secrets,
                source_hash=skill.sha256,
                input_schema=input_schema_of(cls),
                output_schema=cls.output_model.model_json_schema(),
                version=skill.version,
                versions=known.get(skill.name, ()),
            )
        )
    return infos


def _composition_info(loader: TrustLoader, skill: TrustedSkill, versions: tuple[int, ...]) -> SkillInfo:
    """A decomposed parent as `kavi skills` shows it: the chain of its children, its fields from the composition."""
    error: str | None
    try:
        doc = parse_doc(loader.verify(skill))
    except TrustError as exc:
        doc, error = None, f"{type(exc).__name__}: {exc}"
    else:
        error = None if doc is not None else "SkillLoadError: not a composition"

    def schema(key: str) -> dict[str, Any] | None:
        if doc is None:
            return None
        return {"type": "object", "properties": {str(f["name"]): {"kavi_type": f["type"]} for f in doc.get(key, [])},
                **({"additionalProperties": False} if key == "inputs" else {})}

    steps = " → ".join(str(s.get("skill")) for s in (doc or {}).get("steps", []))
    return SkillInfo(name=skill.name, class_name="composition" if doc else None,
                     description=f"composition of its trusted children: {steps}" if doc else None,
                     side_effect_class=skill.side_effect_class, required_secrets=skill.required_secrets,
                     source_hash=skill.sha256, input_schema=schema("inputs"), output_schema=schema("outputs"),
                     error=error, version=skill.version, versions=versions)
