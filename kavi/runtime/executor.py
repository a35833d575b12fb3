"""The skill runner: trusted lookup, confirmation, hash-checked load, validated run, one record per run."""

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kavi.home import KaviHome
from kavi.lifecycle import Refusal
from kavi.runtime.broker import Broker
from kavi.runtime.composition import StepFailed, check_fields, parse_doc, run_composition
from kavi.runtime.context import context_for
from kavi.runtime.errors import (
    ClassNotAllowed,
    ConfirmationRequired,
    ExecutionLogError,
    NoSandbox,
    RuntimeRefusal,
    SkillNotTrusted,
    WorkersBusy,
)
from kavi.runtime.records import (
    ExecutionLog,
    ExecutionRecord,
    StartRecord,
    input_sha256,
    new_id,
    to_json,
    utc_now_iso,
)
from kavi.runtime.skill_io import closed_schema, describe_validation_error, input_schema_of
from kavi.runtime.text import escape_text
from kavi.runtime.trust import TrustedSkill, TrustError, TrustLoader, default_loader, sha256_hex
from kavi.runtime.worker import (
    Outcome,
    PoolBusy,
    Worker,
    WorkerError,
    WorkerPool,
    describe_contained,
    run_contained,
    sandbox_problem,
)
from kavi.settings import read_setting
from kavi.skills.base import HttpHandle, ModelHandle, SideEffectClass

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
        workers: WorkerPool | None = None,
    ) -> None:
        self.home = home
        self._trusted = trusted
        self.log = log
        self._environ = environ
        self._http = http
        self._llm = llm
        self.loader = loader if loader is not None else default_loader
        # Where calls run: workers from this pool, or a worker started for each call.
        self.workers = workers
        home.keep_reserve()  # room to finish the record of a call that ran when the disk fills up meanwhile
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
        cancelled: threading.Event | None = None,
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
        over = over_bound(skill, input_data)
        if over is not None:
            # A value over its field's declared max_size: refused like any input the schema does not accept, and
            # before any worker sees it (the resource gate judged the skill up to that size, no further).
            self._start(ctx)
            return self._finish(ctx, output=None, error=f"InputValidationError: {over}", refusal=Refusal.SCHEMA)
        if str(skill.path).endswith(COMPOSITION_SUFFIX):
            self._start(ctx)
            return self._run_composition(ctx, skill, input_data, confirmed=confirmed)
        try:
            data = self.loader.verify(skill)
        except TrustError as exc:
            self._start(ctx)
            raise self._refuse(ctx, exc, Refusal.TAMPERED) from None
        allow_without = read_setting("run_without_sandbox") == "allow"
        problem = sandbox_problem(quick=True)
        if problem is not None and not allow_without:
            raise self._no_sandbox(ctx, skill, problem)
        try:
            worker = self._take_worker()
        except PoolBusy as exc:
            raise self._refuse(ctx, WorkersBusy(f"{exc}: {skill.ref!r} was not run"), Refusal.BUSY) from None
        try:
            context = context_for(
                skill.side_effect_class,
                vault_root=self.home.vault_dir,
                declared_secrets=skill.required_secrets,
                environ=self._environ,
                http=self._http,
                llm=self._llm,
                private_hosts=read_setting("run_private_hosts"),
            )
            broker = Broker(context)
            # The start is durable before the worker is handed its input; if it cannot be written, nothing runs.
            self._start(ctx)
            outcome = run_contained(worker, name=skill.name, data=data, digest=sha256_hex(data),
                                    side_effect_class=skill.side_effect_class.value, input_data=input_data,
                                    broker=broker, deadline_s=self.deadline_of(skill), cancelled=cancelled)
        finally:
            worker.close()
            if self.workers is not None:
                self.workers.give_back(refill=False)
        try:
            return self._record_outcome(ctx, skill, outcome, allow_without)
        finally:
            if self.workers is not None:
                self.workers.replenish()  # once the record is written: the replacement's start is not the call's cost

    def _record_outcome(self, ctx: _RunContext, skill: TrustedSkill, outcome: Outcome,
                        allow_without: bool) -> ExecutionRecord:
        effects = outcome.effects or None
        if outcome.kind == "unstarted" and not allow_without:
            problem = sandbox_problem()
            if problem is not None:
                raise self._no_sandbox(ctx, skill, problem)
        if outcome.ok:
            return self._finish(ctx, output=outcome.output, error=None, effects=effects)
        if outcome.kind == "tampered":
            raise self._refuse(ctx, TrustError(outcome.error or "refused"), Refusal.TAMPERED) from None
        return self._finish(ctx, output=None, error=outcome.error, effects=effects,
                            refusal=Refusal.SCHEMA if outcome.kind == "schema" else None,
                            timed_out=True if outcome.kind == "timeout" else None)

    def _no_sandbox(self, ctx: _RunContext, skill: TrustedSkill, problem: str) -> RuntimeRefusal:
        return self._refuse(ctx, NoSandbox(
            f"no sandbox can be built here ({problem}), so {skill.ref!r} was not run; set "
            "KAVI_RUN_WITHOUT_SANDBOX=allow to run skills with the layers that remain"), Refusal.NO_SANDBOX)

    def deadline_of(self, skill: TrustedSkill) -> float:
        """The skill's deadline: its proposal's timeout_s, else the default, never above the configured maximum."""
        wanted = skill.timeout_s if skill.timeout_s is not None else read_setting("run_timeout_s")
        return float(min(wanted, read_setting("run_max_timeout_s")))

    def _take_worker(self) -> Worker:
        if self.workers is not None:
            return self.workers.take()
        return Worker()

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
                refusal: Refusal | None = None, effects: list[dict[str, Any]] | None = None,
                timed_out: bool | None = None) -> ExecutionRecord:
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
            effects=effects,
            timed_out=timed_out,
        )
        try:
            self.log.append(record)
            return record
        except ExecutionLogError as err:
            failed = err
        # The call has run: its outcome is the caller's whatever the log says. Give back the room set aside and write
        # the record once more; if that fails too, the record says why it is not in the log.
        if self.home.release_reserve():
            try:
                self.log.append(record)
                return record
            except ExecutionLogError as err:
                failed = err
        return record.model_copy(update={"log_error": str(failed)})


def with_bounds(schema: Any, skill: TrustedSkill) -> Any:
    """The skill's input schema with its declared bounds (maxLength of a string field, maxItems of a list field),
    so an agent reading the tool list knows them before the runtime refuses a larger value."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not skill.input_bounds or not isinstance(properties, dict):
        return schema
    bounded = {**properties}
    for field_name, bound in skill.input_bounds:
        prop = bounded.get(field_name)
        if isinstance(prop, dict):
            key = "maxItems" if prop.get("type") == "array" else "maxLength"
            bounded[field_name] = {**prop, key: bound}
    return {**schema, "properties": bounded}


def over_bound(skill: TrustedSkill, input_data: Mapping[str, Any]) -> str | None:
    """Why `input_data` is over one of the skill's declared input bounds (its proposal's max_size), or None."""
    for field_name, bound in skill.input_bounds:
        value = input_data.get(field_name)
        if isinstance(value, str | list) and len(value) > bound:
            unit = "characters" if isinstance(value, str) else "items"
            return (f"input field {field_name!r} has {len(value)} {unit}, over its bound of {bound} (the "
                    f"proposal's max_size for {skill.name})")
    return None


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
    """Describe each trusted skill: its bytes hash-checked here, its module loaded in a contained worker (never in
    this process). A skill that fails to load is listed with its error rather than hiding the others. `versions`
    lists each skill's trusted versions."""
    known = {k: tuple(v) for k, v in (versions or {}).items()}
    active = loader if loader is not None else default_loader
    infos: dict[str, SkillInfo] = {}
    modules: list[TrustedSkill] = []
    for skill in sorted(trusted, key=lambda s: s.name):
        if str(skill.path).endswith(COMPOSITION_SUFFIX):
            infos[skill.name] = _composition_info(active, skill, known.get(skill.name, ()))
        else:
            modules.append(skill)
    for skill, described in zip(modules, describe_trusted(modules, active), strict=True):
        failed = "error" in described
        infos[skill.name] = SkillInfo(
            name=skill.name, side_effect_class=skill.side_effect_class, required_secrets=skill.required_secrets,
            source_hash=skill.sha256, version=skill.version, versions=known.get(skill.name, ()),
            class_name=None if failed else str(described["class"]),
            description=None if failed else str(described["description"]),
            input_schema=skill.input_schema if failed else with_bounds(described["input_schema"], skill),
            output_schema=None if failed else described["output_schema"],
            error=str(described["error"]) if failed else None)
    return [infos[name] for name in sorted(infos)]


_DESCRIBED: dict[tuple[str, str, str], dict[str, Any]] = {}
_DESCRIBED_LOCK = threading.Lock()


def describe_trusted(skills: list[TrustedSkill], loader: TrustLoader | None = None) -> list[dict[str, Any]]:
    """For each skill, what a contained worker says of it (class, description, input and output schema) or
    {"error": ...}: hash-checked here first (a mismatch is a TrustError line), loaded in one worker for all of them,
    remembered by content for the life of this process."""
    active = loader if loader is not None else default_loader
    out: list[dict[str, Any] | None] = []
    pending: list[tuple[int, tuple[str, str, str], tuple[str, bytes, str, str]]] = []
    for i, skill in enumerate(skills):
        try:
            data = active.verify(skill)
        except TrustError as exc:
            out.append({"error": f"{type(exc).__name__}: {exc}"})
            continue
        digest = sha256_hex(data)
        key = (skill.name, digest, skill.side_effect_class.value)
        with _DESCRIBED_LOCK:
            cached = _DESCRIBED.get(key)
        out.append(cached)
        if cached is None:
            pending.append((i, key, (skill.name, data, digest, skill.side_effect_class.value)))
    if pending:
        problem = sandbox_problem(quick=True)
        if problem is not None and read_setting("run_without_sandbox") != "allow":
            for i, _, _ in pending:
                out[i] = {"error": f"NoSandbox: no sandbox can be built here ({problem}); its code was not loaded"}
        else:
            try:
                described = describe_contained([item for _, _, item in pending])
            except WorkerError as exc:
                described = [{"error": f"WorkerError: {exc}"}] * len(pending)
            for (i, key, _), found in zip(pending, described, strict=True):
                out[i] = found
                if "error" not in found:
                    with _DESCRIBED_LOCK:
                        _DESCRIBED[key] = found
    return [d if d is not None else {"error": "not described"} for d in out]


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
