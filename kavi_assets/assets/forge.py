"""The forge's partitioned assets: proposal → build_packet → skill_build → verification_report/research_note →
registry_entry. Each asset calls one function of the core and returns metadata that explains it."""

import json
import warnings
from collections.abc import Iterator
from typing import Any

import dagster as dg

from kavi.forge.batch import routing_as_of
from kavi.forge.build import run_build
from kavi.forge.card import attested_card, card_markdown
from kavi.forge.ceremony import plan_markdown
from kavi.forge.context import ForgeContext
from kavi.forge.packet import prepare_packet
from kavi.forge.promote import NotVerified, PromotionRefused, promote
from kavi.forge.questions import open_questions
from kavi.forge.research import NOT_THE_MODELS, record_success, research
from kavi.forge.verify import evidence_markdown, verify
from kavi.forge.vetted import VET_TAG, prepare_vet_packet
from kavi.lifecycle import Verdict
from kavi.routing.thompson import NoModelAvailable
from kavi.verdicts import ALL_GATES, GATE_ADEQUACY, GateResult
from kavi_assets.assets.partitions import proposals_partitions
from resources.attempt_lock import AttemptLockResource
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource

GROUP = "forge"
PREFIX = ["forge"]
PROPOSAL_KEY = dg.AssetKey([*PREFIX, "proposal"])
PACKET_KEY = dg.AssetKey([*PREFIX, "build_packet"])
BUILD_KEY = dg.AssetKey([*PREFIX, "skill_build"])
REPORT_KEY = dg.AssetKey([*PREFIX, "verification_report"])
RESEARCH_KEY = dg.AssetKey([*PREFIX, "research_note"])
REGISTRY_ENTRY_KEY = dg.AssetKey([*PREFIX, "registry_entry"])

# Scoped to the proposals' partitions, so the Checks tab has a Partitions view and each evaluation names its skill
# (Dagster 1.13 marks a partitioned check as a preview feature: the warning says nothing a user can act on).
#
# Not `blocking=True`: Dagster raises DagsterAssetCheckFailedError for a failed blocking check, which puts a stack
# trace in the UI and fails the run for what is an expected verdict. Promotion is still blocked: `registry_entry`
# reads the attempt's verdict from the ledger and records nothing for an attempt that failed a gate (and
# `promote` refuses such a build whoever asks), so a failed gate is a failed check, not a crashed run.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)
    GATE_CHECKS = [
        dg.AssetCheckSpec(
            name=f"gate_{gate}",
            asset=REPORT_KEY,
            partitions_def=proposals_partitions,
            description=f"The {gate} gate passed on this build (run by the forge, independent of the builder). "
            "A failed gate blocks promotion: registry_entry records nothing for that attempt.",
        )
        for gate in ALL_GATES
    ]

FIRST_MESSAGES = 5  # the tool's first messages shown in a check's description, verbatim


def report_link(name: str) -> str:
    """The UI path of one partition's verification report (relative: it works on whatever host serves the UI)."""
    return f"/assets/{'/'.join(REPORT_KEY.path)}?view=partitions&partition={name}"


_MD_SPECIALS = str.maketrans({c: "\\" + c for c in "\\`*_[]<>#|~"})


def plain(text: str) -> str:
    """Text that markdown shows as it is (a check's description is rendered as markdown): `__init__` stays
    `__init__`, a `*` stays a star, and lines still wrap (a code block would not, and would widen the table)."""
    return text.translate(_MD_SPECIALS)


def check_description(name: str, attempt: int, build_id: str, gate: str, verdict: str, reason: str,
                      messages: list[str]) -> str:
    """What a check's history row says without a click: the verdict, which skill, attempt and build, a link to the
    partition's report, and the tool's first messages as plain text, one per line."""
    lines = [f"{gate} {verdict.upper()}: {plain(reason[:300])}".replace("\n", " "),
             f"{name}, attempt {attempt}, build {build_id} — [verification report]({report_link(name)})"]
    lines += [f"- {plain(m[:300])}".replace("\n", " ") for m in messages[:FIRST_MESSAGES]]
    if len(messages) > FIRST_MESSAGES:
        lines.append(f"- … {len(messages) - FIRST_MESSAGES} more (metadata: messages)")
    return lines[0] + "\n\n" + lines[1] + ("\n\n" + "\n".join(lines[2:]) if lines[2:] else "")


def forge_context(home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource) -> ForgeContext:
    return ForgeContext.open(home.home(), llm.get_client, gates.settings())


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def gate_table(results: list[GateResult]) -> str:
    rows = []
    for r in results:
        first = r.messages[0] if r.messages else ""
        rows.append([r.gate, r.effective_verdict.value, f"{r.duration_s:.2f}s", r.reason[:120], first[:120]])
    return _md_table(["gate", "verdict", "duration", "reason", "first message"], rows)


@dg.asset(
    key=PROPOSAL_KEY,
    partitions_def=proposals_partitions,
    group_name=GROUP,
    kinds={"python", "duckdb"},
    description="The validated SKILL_SPEC of one proposal, as recorded in the ledger.",
)
def proposal(
    context: dg.AssetExecutionContext, home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    ctx = forge_context(home, llm, gates)
    name = context.partition_key
    with ctx.records.session():  # one connection for the proposal, its open questions and its close skills
        row = ctx.records.get_proposal(name)
        asked = questions_metadata(ctx, name) if row is not None else {}
        close = ctx.records.close_skills(name, row.spec_sha256) if row is not None else None
    if row is None:
        raise dg.Failure(
            description=f"no proposal named {name!r} in the ledger at {ctx.home.ledger_path}; run `kavi propose FILE`",
        )
    spec = row.proposal
    return dg.MaterializeResult(
        metadata={
            "name": name,
            "status": row.status.value,
            "side_effect_class": spec.side_effect_class.value,
            "complexity": dg.MetadataValue.float(float(row.complexity or 0.0)),
            "spec_sha256": row.spec_sha256,
            "examples": dg.MetadataValue.int(len(spec.examples)),
            "holdout_examples": dg.MetadataValue.int(len(spec.holdout_examples)),
            "spec": dg.MetadataValue.json(spec.builder_view()),
            **asked,
            **close_skills_metadata(close),
        }
    )


def close_skills_metadata(close: tuple[str, list[dict[str, Any]]] | None) -> dict[str, Any]:
    """The closest trusted skills the duplicate guard found when this spec was proposed (none recorded: the
    proposal came in another way, or before the guard recorded them)."""
    if close is None:
        return {}
    ranking, found = close
    rows = [[c["ref"], f"{c['score']:.2f}", "the same task" if c.get("same_task") else
             ("warned" if c.get("warned") else "not close"), str(c.get("evidence") or c.get("difference") or "")]
            for c in found]
    table = _md_table(["trusted skill", "score", "guard", "what matched or differs"], rows) if rows else \
        "no trusted skill is close"
    return {"closest_trusted_skills": dg.MetadataValue.md(table), "search_ranking": ranking}


@dg.asset(
    key=PACKET_KEY,
    deps=[PROPOSAL_KEY],
    partitions_def=proposals_partitions,
    group_name=GROUP,
    kinds={"python"},
    description="The frozen BUILD_PACKET of the next attempt: spec, prior failures, hints and the routed model.",
)
def build_packet(
    context: dg.AssetExecutionContext, home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource,
    attempt_lock: AttemptLockResource,  # held for the whole run: one attempt of a proposal at a time
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    ctx = forge_context(home, llm, gates)
    try:
        as_of = routing_as_of(context.run.tags)  # a batch's runs route on what was known when it began
    except ValueError as err:
        raise dg.Failure(description=str(err)) from err
    try:
        vet = context.run.tags.get(VET_TAG)  # `kavi vet`: a third party's code in the builder's place
        out = (prepare_vet_packet(ctx, context.partition_key, context.run.run_id, vet) if vet
               else prepare_packet(ctx, context.partition_key, context.run.run_id, as_of))
    except NoModelAvailable as err:
        raise dg.Failure(description=str(err)) from err
    return dg.MaterializeResult(
        metadata={
            "build_id": out.build_id,
            "attempt": dg.MetadataValue.int(out.attempt),
            "parent_build_id": out.parent_build_id or "",
            "model": out.model,
            "routing": dg.MetadataValue.md(out.routing.get("reason", "")),
            "routing_samples": dg.MetadataValue.json(out.routing.get("samples", {})),
            "packet_sha256": out.packet_sha256,
            "prior_failures": dg.MetadataValue.int(out.prior_failures),
            "attempt_budget": dg.MetadataValue.int(out.budget),
            "hints": dg.MetadataValue.json(out.hints),
        }
    )


@dg.asset(
    key=BUILD_KEY,
    deps=[PACKET_KEY],
    partitions_def=proposals_partitions,
    group_name=GROUP,
    kinds={"python", "openai"},
    description="The model's files, checked by the diff allowlist and written to a fresh sandbox; the BUILD_LOG.",
)
def skill_build(
    context: dg.AssetExecutionContext, home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource,
    attempt_lock: AttemptLockResource,  # held for the whole run: one attempt of a proposal at a time
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    ctx = forge_context(home, llm, gates)
    out = run_build(ctx, context.partition_key, context.run.run_id)
    if out.recorded_model:
        context.log.info("model answers come from the RECORDED MODEL (replayed cassettes, not a live model)")
    meta: dict[str, Any] = {
        "build_id": out.build_id,
        "attempt": dg.MetadataValue.int(out.attempt),
        "model": out.model or "",
        "recorded_model": dg.MetadataValue.bool(out.recorded_model),
        "ok": dg.MetadataValue.bool(out.ok),
        "files": dg.MetadataValue.json(out.files),
        "build_log": dg.MetadataValue.md("\n".join(f"- {line}" for line in out.log)),
        "build_log_sha256": out.build_log_sha256 or "",
    }
    if out.latency_ms is not None:
        meta["latency_ms"] = dg.MetadataValue.float(out.latency_ms)
    if out.prompt_tokens is not None:
        meta["tokens"] = dg.MetadataValue.int((out.prompt_tokens or 0) + (out.completion_tokens or 0))
    if out.failure is not None:
        meta["failure"] = dg.MetadataValue.md(f"**{out.failure.stage}**: {out.failure.message}\n\n"
                                              + "\n".join(f"- {v}" for v in out.failure.violations))
        context.log.warning(f"build {out.build_id} failed at the {out.failure.stage} stage: {out.failure.message}")
    return dg.MaterializeResult(metadata=meta)


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            REPORT_KEY,
            deps=[BUILD_KEY],
            group_name=GROUP,
            kinds={"python"},
            description="Every gate's verdict, reason and duration for this attempt; gates are blocking checks.",
        ),
        dg.AssetSpec(
            RESEARCH_KEY,
            deps=[REPORT_KEY],
            group_name=GROUP,
            kinds={"python"},
            skippable=True,
            description="Failure kind, facts and escalation triggers — written only when the attempt failed.",
        ),
    ],
    check_specs=GATE_CHECKS,
    partitions_def=proposals_partitions,
    name="verify_and_research",
    # Subsettable so a check may go unreported: a gate that did not run is no evaluation (Dagster shows it skipped),
    # never a failed check.
    can_subset=True,
)
def verify_and_research(
    context: dg.AssetExecutionContext, home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource,
    attempt_lock: AttemptLockResource,  # held for the whole run: one attempt of a proposal at a time
) -> Any:
    ctx = forge_context(home, llm, gates)
    name = context.partition_key
    out = verify(ctx, name, context.run.run_id)
    by_gate = {r.gate: r for r in out.results}
    checks = []
    who = {"skill": name, "attempt": dg.MetadataValue.int(out.attempt), "build_id": out.build_id,
           "report": dg.MetadataValue.url(report_link(name))}
    selected_checks = context.selected_asset_check_keys
    for gate in ALL_GATES:
        r = by_gate.get(gate)
        if dg.AssetCheckKey(REPORT_KEY, f"gate_{gate}") not in selected_checks:
            continue
        if r is None or r.effective_verdict is Verdict.OMITTED:
            # Not run: no evaluation (the check shows as skipped for this run), and the reason in the run's log.
            why = (r.reason if r is not None else "the build failed before verification ("
                   + (out.build_failure.message[:300] if out.build_failure else "the gate did not report") + ")")
            context.log.info(f"{name} attempt {out.attempt}: gate {gate} not evaluated: {why}")
        else:
            checks.append(dg.AssetCheckResult(
                asset_key=REPORT_KEY,
                check_name=f"gate_{gate}",
                passed=r.ok,
                description=check_description(name, out.attempt, out.build_id, gate, r.effective_verdict.value,
                                              r.reason, r.messages),
                metadata={
                    **who,
                    "verdict": r.verdict.value,
                    "duration_s": dg.MetadataValue.float(round(r.duration_s, 4)),
                    # Plain text: shown as it is, never behind a "[Show Markdown]" button.
                    "messages": dg.MetadataValue.text("\n".join(r.messages[:20]) or "(none)"),
                },
            ))
    report_meta: dict[str, Any] = {
        "build_id": out.build_id,
        "attempt": dg.MetadataValue.int(out.attempt),
        "passed": dg.MetadataValue.bool(out.passed),
        "report_sha256": out.report_sha256,
        "duration_s": dg.MetadataValue.float(round(out.duration_s, 3)),
    }
    if out.results:
        report_meta["gates"] = dg.MetadataValue.md(gate_table(out.results))
        report_meta["isolation"] = dg.MetadataValue.json(out.isolation)
    else:
        report_meta["gates"] = dg.MetadataValue.md("not verified: the build failed before any gate could run")
    if out.evidence:
        ev = out.evidence
        report_meta["ceremony_level"] = str(ev["ceremony"]["level"])
        report_meta["evidence"] = dg.MetadataValue.md(evidence_markdown(ev))
        report_meta["generated_inputs"] = dg.MetadataValue.int(int(ev.get("generated") or 0))
        if ev.get("agreement_rate") is not None:
            report_meta["agreement_rate"] = dg.MetadataValue.float(float(ev["agreement_rate"]))
        report_meta["counterexamples"] = dg.MetadataValue.json(ev.get("counterexamples") or [])
    adequacy = by_gate.get(GATE_ADEQUACY)
    if adequacy is not None and adequacy.details.get("tried"):
        d = adequacy.details
        report_meta["adequacy"] = dg.MetadataValue.md(adequacy_markdown(adequacy))
        for figure in ("tried", "killed", "surviving", "equivalent"):
            report_meta[f"mutants_{figure}"] = dg.MetadataValue.int(int(d.get(figure) or 0))
        report_meta["open_questions"] = dg.MetadataValue.int(len(d.get("questions") or []))
    if out.ceremony:  # the level, its reason, and what it skipped
        report_meta["ceremony_level"] = str(out.ceremony["level"])
        report_meta["ceremony"] = dg.MetadataValue.md(plan_markdown(out.ceremony))
        report_meta["ceremony_skipped"] = dg.MetadataValue.json(out.ceremony.get("skipped") or [])
    observation = None
    if out.passed:
        with ctx.records.session():  # the outcome and the status it leaves: one connection
            record_success(ctx, name, out.build_id)
            observation = status_observation(ctx, name)
    failing = [r.gate for r in out.results if not r.ok]
    report_meta["verdict"] = ("PASSED" if out.passed else f"FAILED ({', '.join(failing)})" if failing
                              else "FAILED (the build failed before any gate could run)")
    if REPORT_KEY in context.selected_asset_keys:
        yield dg.MaterializeResult(asset_key=REPORT_KEY, metadata=report_meta, check_results=checks)
    else:  # a subset without the report (the research note alone): its checks still report
        yield from checks
    if observation is not None:
        context.log.info(f"{name} attempt {out.attempt} (build {out.build_id}): every gate passed")
        yield observation
        return
    note = research(ctx, name, out)
    failed = failing or [f"none ran, the build failed ({note.kind.value})"]
    note_path = ctx.store.path_for(note.note_sha256)
    # The verdict, for a person reading the run's log: which gates, what happens next, where the research note is.
    verdict = (f"was not judged: {note.facts['not_judged']}" if note.facts.get("not_judged")
               else f"failed verification: {', '.join(failed)}")
    context.log.warning(
        f"{name} attempt {note.attempt} (build {note.build_id}) {verdict} → "
        f"{note.status.value} ({note.kind.value}); "
        + (f"escalated ({', '.join(note.triggers)}): it waits for a person (kavi retry {name} --by WHO)"
           if note.escalated else "the retry sensor requests the next attempt")
        + f"; research note: {note_path}"
    )
    facts_md = json.dumps(note.facts, indent=2)[:6000]
    if RESEARCH_KEY in context.selected_asset_keys:
        yield dg.MaterializeResult(
            asset_key=RESEARCH_KEY,
            metadata={
                "build_id": note.build_id,
                "attempt": dg.MetadataValue.int(note.attempt),
                "failure_kind": note.kind.value,
                # INFRASTRUCTURE (a missing tool, a full disk...) is not the model's outcome: the router learns nothing.
                "counts_against_model": dg.MetadataValue.bool(note.kind.value not in NOT_THE_MODELS),
                "fingerprint": note.fingerprint,
                "escalated": dg.MetadataValue.bool(note.escalated),
                "triggers": dg.MetadataValue.json(note.triggers),
                "status": note.status.value,
                "attempt_budget": dg.MetadataValue.int(note.budget),
                "facts": dg.MetadataValue.md(f"```json\n{facts_md}\n```"),
                "note_sha256": note.note_sha256,
                "note_path": dg.MetadataValue.path(str(note_path)),
            },
        )
    yield status_observation(ctx, name)


def questions_metadata(ctx: ForgeContext, name: str) -> dict[str, Any]:
    """The questions the latest verification's evidence leaves open, as the proposal's metadata."""
    asked = open_questions(ctx, name)
    return {"open_questions": dg.MetadataValue.int(len(asked)),
            "questions": dg.MetadataValue.md("\n".join(f"{q.number}. {plain(q.ask())}" for q in asked)
                                             or "none open")}


def adequacy_markdown(result: GateResult) -> str:
    """The adequacy section of the report: the mutants and what became of them, and the questions asked."""
    d = result.details
    lines = [f"**{plain(result.reason)}**", "",
             _md_table(["killed by", "mutants"], [[k, str(v)] for k, v in (d.get("killed_by") or {}).items()])]
    for q in d.get("questions") or []:
        lines.append(f"- question {q.get('number')}: input `{json.dumps(q.get('input'), sort_keys=True)[:160]}`, "
                     f"the skill `{json.dumps(q.get('candidate'), sort_keys=True, default=str)[:120]}`")
    return "\n".join(lines)


def status_line(ctx: ForgeContext, name: str) -> str:
    """The skill's status as the ledger has it now, with its latest attempt's failure kind: one short line."""
    with ctx.records.session():  # one connection for both reads
        row = ctx.records.require_proposal(name)
        build = ctx.records.latest_build(name)
    kind = (f" ({build.failure_kind})" if build is not None and build.failure_kind
            and build.failure_kind != row.status.value else "")  # not "GATE_VIOLATION (GATE_VIOLATION)"
    attempt = f" after attempt {build.attempt_number}" if build is not None else ""
    trusted = f"; {name}@{row.trusted_version} is trusted" if row.trusted_version else ""
    return f"{row.status.value}{kind}{attempt}{trusted}"


def status_observation(ctx: ForgeContext, name: str) -> dg.AssetObservation:
    """The proposal partition's status after this step. A materialized partition is not a trusted skill: each
    partition of `proposal` carries its TRUSTED / VERIFIED / FAILED / ESCALATED status as its latest event, which
    the asset page's partition view shows, and the `kavi/status` tag makes the event list readable at a glance."""
    with ctx.records.session():  # one connection for the status and the open questions
        line = status_line(ctx, name)
        asked = questions_metadata(ctx, name)
    return dg.AssetObservation(asset_key=PROPOSAL_KEY, partition=name,
                               metadata={"status": line, **asked},
                               tags={"kavi/status": line.split(" ", 1)[0]})


@dg.asset(
    key=REGISTRY_ENTRY_KEY,
    deps=[REPORT_KEY],
    partitions_def=proposals_partitions,
    group_name=GROUP,
    kinds={"python"},
    # Nothing is materialized for an attempt that failed verification: the gate checks' verdict blocks promotion
    # here (see GATE_CHECKS), the step succeeds, and the run's log says why.
    output_required=False,
    description="Promotion: the approval record, the source hash, and the copy into the skills home.",
)
def registry_entry(
    context: dg.AssetExecutionContext, home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource
) -> Iterator[dg.MaterializeResult | dg.AssetObservation]:  # type: ignore[type-arg]
    ctx = forge_context(home, llm, gates)
    name = context.partition_key
    try:
        out = promote(ctx, name)
    except NotVerified as err:
        context.log.info(f"not promoted: {err}")
        return
    except PromotionRefused as err:
        raise dg.Failure(description=str(err)) from err
    meta: dict[str, Any] = {
        "promoted": dg.MetadataValue.bool(out.promoted),
        "reason": out.reason,
        "build_id": out.build_id or "",
    }
    if out.source_sha256:
        meta["source_sha256"] = out.source_sha256
    if out.approved_by:
        meta["approved_by"] = out.approved_by
    if out.skill_path:
        meta["skill_path"] = dg.MetadataValue.path(str(ctx.home.root / out.skill_path))
    with ctx.records.session():  # the card and the status the promotion left: one connection
        if out.promotion_seq is not None:
            meta["promotion_seq"] = dg.MetadataValue.int(out.promotion_seq)
            promo = ctx.records.promotion_for_build(out.build_id) if out.build_id else None
            if promo is not None:  # the skill card its attestation hashes
                meta["card"] = dg.MetadataValue.md(card_markdown(attested_card(ctx, promo)[0]))
        observation = status_observation(ctx, name)
    yield dg.MaterializeResult(metadata=meta)
    yield observation
