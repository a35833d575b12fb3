"""The build step: the routed model's answer, checked against the allowlist and written to a fresh sandbox."""

import dataclasses
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kavi.build.allowlist import check_allowlist, skill_path, test_path
from kavi.build.sandbox_dir import create_sandbox, write_files
from kavi.forge.attempt import BUILD_FAILED, BUILD_OK, canonical, now
from kavi.forge.context import ForgeContext
from kavi.forge.packet import load_packet
from kavi.forge.verify import hold_gates, prepare_verification
from kavi.forge.vetted import VET_PACKET, vetted_files
from kavi.gates.runner import release_gate_jobs
from kavi.infrastructure import describe_oserror, is_infra_oserror
from kavi.ledger.artifacts import ArtifactRef
from kavi.ledger.records import LedgerRecordError
from kavi.lifecycle import ProposalStatus
from kavi.llm.answer import BadAnswerError, parse_build_answer
from kavi.llm.client import LLMError, LLMErrorKind
from kavi.llm.prompts import build_headers
from kavi.redact import Redactor
from kavi.research.classifier import AttemptFailure, classify


@dataclass(frozen=True)
class BuildOutcome:
    build_id: str
    attempt: int
    model: str | None
    ok: bool
    failure: AttemptFailure | None
    files: dict[str, str] = field(default_factory=dict)  # path -> sha256
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    recorded_model: bool = False
    log: list[str] = field(default_factory=list)
    build_log_sha256: str | None = None


def _failure_dict(f: AttemptFailure) -> dict[str, Any]:
    return {
        "stage": f.stage,
        "message": f.message,
        "llm_error_kind": f.llm_error_kind,
        "llm_terminal": f.llm_terminal,
        "llm_status": f.llm_status,
        "violations": list(f.violations),
    }


def run_build(ctx: ForgeContext, name: str, run_id: str | None, build_id: str | None = None) -> BuildOutcome:
    """Ask the routed model for the files, check them against the allowlist, write the fresh sandbox."""
    with ctx.records.session():
        build = ctx.records.get_build(build_id) if build_id else None
        if build is None:
            build = ctx.records.build_for_run(name, run_id) if run_id else ctx.records.latest_build(name)
        row = ctx.records.get_proposal(name)
    if build is None:
        raise LedgerRecordError(f"no packet for {name!r}; materialize forge/build_packet first")
    packet = load_packet(ctx, build)
    client = ctx.llm_factory()
    redactor = Redactor.for_proposal(row.proposal if row else None, extra_secrets=[client.settings.api_key])
    log: list[str] = [f"{now()} build {build.build_id} attempt {build.attempt_number} model {build.model}",
                      f"endpoint: {client.endpoint_label}"]
    failure: AttemptFailure | None = None
    files: dict[str, bytes] = {}
    completion = None
    answer_ref: ArtifactRef | None = None
    held_in: Path | None = None
    if row is not None:
        log += prepare_verification(ctx, name, build, row)
        held_in, held_log = hold_gates(ctx, name, build)
        log += held_log
    try:
        if packet.get("kind") == VET_PACKET:
            answer_files, bundle_digest = vetted_files(ctx, packet)
            answer_ref = ctx.store.put(ctx.store.get(bundle_digest), "vet_bundle")
            log.append(f"vetted: the third party's code from a {packet.get('origin')} (digest set "
                       f"{str(packet.get('digest_set'))[:12]}), wrapped in the skill contract by the forge; no model")
        else:
            completion = client.complete(
                packet["messages"],
                model=str(build.model),
                json_mode=True,
                headers=build_headers(name, build.attempt_number, "build"),
            )
            log.append(f"model answered in {completion.latency_ms:.0f} ms "
                       f"({completion.prompt_tokens}+{completion.completion_tokens} tokens)"
                       + (" [recorded model replay]" if completion.recorded else ""))
            answer_ref = ctx.store.put(completion.text.encode(), "llm_answer")
            answer_files = [(f.path, f.content) for f in parse_build_answer(completion.text).files]
        allow = check_allowlist(name, answer_files)
        if not allow.ok:
            failure = AttemptFailure("allowlist", "the answer writes outside the allowlist",
                                     violations=allow.violations)
            log += [f"allowlist violation: {v}" for v in allow.violations]
        else:
            files = allow.files
    except LLMError as err:
        failure = AttemptFailure("llm", str(err), llm_error_kind=str(err.kind), llm_terminal=err.terminal,
                                 llm_status=err.status, endpoint=client.endpoint_label)
        log.append(f"model call failed ({err.kind}): {err}")
        if err.kind in (LLMErrorKind.MODEL_NOT_FOUND, LLMErrorKind.AUTH):
            # Set aside until the configuration (endpoint or model list) changes; routing says so.
            ctx.records.set_model_aside(client.config_fingerprint, str(build.model), f"{err.kind}: {err}"[:300],
                                        build.build_id)
            log.append(f"model {build.model} set aside for this configuration ({err.kind})")
    except BadAnswerError as err:
        failure = AttemptFailure("answer", str(err))
        log.append(f"the answer is not usable: {err}")
    except OSError as err:
        if not is_infra_oserror(err):
            raise
        ctx.home.release_reserve()  # the room set aside lets the attempt still be closed and recorded
        failure = AttemptFailure("infrastructure", describe_oserror(err))
        log.append(f"the forge could not store the answer: {failure.message}")

    file_refs: dict[str, ArtifactRef] = {}
    if failure is None:
        try:
            sandbox = held_in or create_sandbox(ctx.home.sandboxes_dir, build.build_id)
            write_files(sandbox / "work", files)
            log.append(f"wrote {len(files)} files to a fresh sandbox {sandbox.name}")
            for path, data in files.items():
                file_refs[path] = ctx.store.put(data, "skill_source" if path.startswith("skills/") else "skill_tests")
        except OSError as err:
            if not is_infra_oserror(err):
                raise
            # The forge's own writes failed (full disk, file-size limit): not the model's outcome.
            ctx.home.release_reserve()
            failure = AttemptFailure("infrastructure", describe_oserror(err))
            file_refs = {}
            shutil.rmtree(ctx.home.sandboxes_dir / build.build_id, ignore_errors=True)
            log.append(f"the forge's own writes failed: {failure.message}")
    if failure is not None:
        if held_in is not None:  # the jobs held for its verification are released, their folder removed
            release_gate_jobs(held_in)
            shutil.rmtree(held_in, ignore_errors=True)
        log.append("nothing reached the sandbox or the skills home")
    # What the endpoint or the answer parser said may quote a key or a holdout value: neither is stored.
    log = [redactor.message(line, 2000) for line in log]
    if failure is not None:
        failure = dataclasses.replace(failure, message=redactor.message(failure.message, 2000),
                                      violations=tuple(redactor.message(v) for v in failure.violations))

    log_doc = {
        "kind": "BUILD_LOG",
        "build_id": build.build_id,
        "proposal": name,
        "attempt": build.attempt_number,
        "model": build.model,
        "endpoint": client.endpoint_label,
        "recorded_model": bool(completion.recorded) if completion else client.settings.recorded,
        "files": {p: r.sha256 for p, r in file_refs.items()},
        "answer_sha256": answer_ref.sha256 if answer_ref else None,
        "failure": _failure_dict(failure) if failure else None,
        "log": log,
    }
    log_ref = ctx.store.put(canonical(log_doc), "build_log")
    artifacts: list[tuple[str, ArtifactRef, str, str]] = [("build_log", log_ref, str(build.packet_sha256), "log_of")]
    if answer_ref is not None:
        role = "vet_bundle" if packet.get("kind") == VET_PACKET else "llm_answer"
        artifacts.append((role, answer_ref, str(build.packet_sha256), "answer_to"))
    for path, ref in file_refs.items():
        role = "skill" if path.startswith("skills/") else "tests"
        artifacts.append((role, ref, answer_ref.sha256 if answer_ref else str(build.packet_sha256), "file_of"))
    kind = classify(failure).kind.value if failure else None
    with ctx.records.session():  # the step's writes, together
        ctx.records.finish_build(
            build.build_id,
            status=BUILD_OK if failure is None else BUILD_FAILED,
            failure_kind=kind,
            artifacts=artifacts,
            prompt_tokens=completion.prompt_tokens if completion else None,
            completion_tokens=completion.completion_tokens if completion else None,
            latency_ms=completion.latency_ms if completion else None,
            cost_usd=completion.cost_usd if completion else None,
            skill_sha256=file_refs[skill_path(name)].sha256 if skill_path(name) in file_refs else None,
            test_sha256=file_refs[test_path(name)].sha256 if test_path(name) in file_refs else None,
        )
        if failure is None:
            ctx.records.set_status(name, ProposalStatus.BUILT, build_id=build.build_id,
                                   reason="files written to sandbox")
    return BuildOutcome(
        build.build_id, build.attempt_number, build.model, failure is None, failure,
        {p: r.sha256 for p, r in file_refs.items()},
        completion.latency_ms if completion else None,
        completion.prompt_tokens if completion else None,
        completion.completion_tokens if completion else None,
        bool(completion.recorded) if completion else client.settings.recorded,
        log, log_ref.sha256,
    )



def cleanup_sandbox(ctx: ForgeContext, build_id: str) -> None:
    shutil.rmtree(ctx.home.sandboxes_dir / build_id, ignore_errors=True)
