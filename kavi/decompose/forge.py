"""If you can't verify it, decompose it (RIVA): the forge's decomposition steps, free of Dagster.

`trigger_for` says whether a proposal should be decomposed (its attempts repeat the same failure, its spec was
judged ambiguous, or its complexity is above KAVI_DECOMPOSE_ABOVE); `decompose` asks the model for child proposals
and a composition, checks the answer (kavi.decompose.answer) and intakes the children as ordinary proposals;
`advance` moves an accepted decomposition on: a child that failed past its budget fails the parent, naming it, and
once every child is trusted the composition is run on the parent's own examples and holdouts in the gate sandbox.
A passing composition becomes the parent's verified attempt, promoted by the usual path (approval, hash-checked copy).
"""

import json
import time
from dataclasses import dataclass, field
from typing import Any

from kavi.decompose.answer import (
    MAX_CHILDREN,
    MIN_CHILDREN,
    DecomposeLimits,
    DecompositionError,
    parse_decomposition,
)
from kavi.decompose.composition import composition_doc, doc_bytes
from kavi.decompose.records import FAILED, REFUSED, VERIFIED, WAITING, DecompositionRecords, DecompositionRow
from kavi.forge.attempt import VERIFIED as BUILD_VERIFIED
from kavi.forge.attempt import VERIFY_FAILED
from kavi.forge.ceremony import ceremony_for
from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.reverify import fingerprint_for, record_forge_verification
from kavi.gates.composition import children_gate, composition_acceptance
from kavi.ledger.records import new_build_id
from kavi.lifecycle import ProposalStatus
from kavi.llm.client import LLMError
from kavi.llm.prompts import build_headers
from kavi.proposals.model import Proposal
from kavi.redact import Redactor
from kavi.research.escalation import Trigger
from kavi.runtime.composition import parse_composition
from kavi.sandbox.runner import Limits
from kavi.verdicts import GateResult

DECOMPOSE_KIND = "decompose"
_TRIGGERS = (Trigger.REPEATED_FAILURE.value, Trigger.AMBIGUOUS.value)
# A child in one of these states has failed past its budget: the forge will not try it again on its own.
_CHILD_FAILED = (ProposalStatus.GATE_VIOLATION, ProposalStatus.REVOKED)


def _records(ctx: ForgeContext) -> DecompositionRecords:
    return DecompositionRecords(ctx.records)


def trigger_for(ctx: ForgeContext, name: str, limits: DecomposeLimits | None = None) -> str | None:
    """Why NAME should be decomposed now, or None. Never for a proposal already decomposed, verified or trusted,
    nor again for a spec whose decomposition the forge refused (a person changes the spec or forges it)."""
    lim = limits or DecomposeLimits.from_env()
    row = ctx.records.require_proposal(name)
    if row.status in (ProposalStatus.VERIFIED, ProposalStatus.TRUSTED, ProposalStatus.DECOMPOSED,
                      ProposalStatus.REVOKED):
        return None
    dec = _records(ctx)
    earlier = dec.of_parent(name)
    if any(d.spec_sha256 == row.spec_sha256 for d in earlier):
        return None
    if row.status is ProposalStatus.ESCALATED:
        notes = ctx.records.research_notes(name)
        if notes:
            hit = [t for t in notes[-1]["triggers"] if t in _TRIGGERS]
            if hit:
                return str(hit[0])
    if row.status in (ProposalStatus.PROPOSED, ProposalStatus.FAILED, ProposalStatus.ESCALATED):
        scale = ceremony_for(row.proposal).scale
        if scale > lim.above:
            return f"COMPLEXITY {scale}/10 > {lim.above}"
    return None


def render_decompose_messages(parent: Proposal, reason: str, *, depth: int, limits: DecomposeLimits
                              ) -> list[dict[str, str]]:
    """The request: the parent's builder view (never its holdouts), why it is decomposed, and the answer's form."""
    form = {
        "children": [{"name": "snake_case", "description": "...", "inputs": [{"name": "x", "type": "str"}],
                      "outputs": [{"name": "y", "type": "int"}], "side_effect_class": "READ_ONLY",
                      "examples": [{"input": {"x": "..."}, "expected": {"y": 1}}],
                      "holdout_examples": [{"input": {"x": "..."}, "expected": {"y": 2}}]}],
        "composition": {"steps": [{"skill": "child_name", "from_prev": {"x": "input.text"}},
                                  {"skill": "other_child", "from_prev": {"z": "steps.0.y"}}],
                        "output": {"parent_output_field": "steps.1.field"}},
    }
    system = (
        "You split a skill the forge could not verify into smaller skills it can. Answer with one JSON object, "
        f"nothing else: `children`, {MIN_CHILDREN} to {MAX_CHILDREN} complete skill proposals (name, description, "
        "inputs, outputs, side_effect_class, examples, holdout_examples), each no wider in side effects than the "
        "parent and named with a new snake_case name; and `composition`: `steps`, a chain of the children (each "
        "step's input mapped with from_prev / input_template from `input.FIELD` (the parent's input) or "
        "`steps.N.FIELD` (an earlier step's output), or literal `input`), and `output`, each parent output field "
        f"mapped from such a path. The tree may be at most {limits.max_depth} levels deep; this request is at depth "
        f"{depth}. Form:\n{json.dumps(form)}"
    )
    user = (f"Why: {reason}.\nThe parent proposal (as the builder sees it):\n"
            f"{json.dumps(parent.builder_view(), sort_keys=True)}")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class DecomposeOutcome:
    name: str
    accepted: bool
    reason: str
    decomposition_id: str | None = None
    children: list[str] = field(default_factory=list)
    model: str | None = None


def _place(dec: DecompositionRecords, name: str) -> tuple[int, str]:
    """(depth, root) of NAME: a child of an accepted decomposition is one deeper than its parent."""
    up = dec.parent_of(name)
    return (up[1] + 1, up[2]) if up is not None else (0, name)


def decompose(ctx: ForgeContext, name: str, trigger: str, limits: DecomposeLimits | None = None) -> DecomposeOutcome:
    """Ask the model for a decomposition of NAME and, when the answer holds, intake its children. A refused answer
    (or a model error) is recorded as the decomposition's failure, with its one-line reason; nothing is intaken."""
    lim = limits or DecomposeLimits.from_env()
    dec = _records(ctx)
    row = ctx.records.require_proposal(name)
    depth, root = _place(dec, name)

    def refuse(reason: str, model: str | None, endpoint: str | None, answer: str | None) -> DecomposeOutcome:
        reason = Redactor.for_proposal(row.proposal).message(reason, 600)
        did = dec.record(parent=name, spec_sha256=row.spec_sha256, root=root, depth=depth, trigger=trigger,
                         model=model, endpoint=endpoint, status=REFUSED, reason=reason, composition=None,
                         answer_sha256=answer, children=[])
        ctx.records.set_status(name, row.status, build_id=None, reason=f"decomposition refused: {reason}")
        return DecomposeOutcome(name, False, reason, did, [], model)

    if depth + 1 > lim.max_depth:
        return refuse(f"its children would be at depth {depth + 1}, beyond the maximum depth {lim.max_depth} "
                      "(KAVI_DECOMPOSE_MAX_DEPTH)", None, None, None)
    size = dec.tree_size(root)
    if size + MIN_CHILDREN > lim.max_nodes:
        return refuse(f"the tree of {root} holds {size} proposals; {MIN_CHILDREN} more would pass the budget of "
                      f"{lim.max_nodes} (KAVI_DECOMPOSE_MAX_NODES)", None, None, None)
    client = ctx.llm_factory()
    latest = ctx.records.latest_build(name)
    model = latest.model if latest is not None and latest.model in client.settings.models else client.settings.models[0]
    messages = render_decompose_messages(row.proposal, trigger, depth=depth, limits=lim)
    try:
        completion = client.complete(messages, model=model, json_mode=True,
                                     headers=build_headers(name, 1, DECOMPOSE_KIND))
    except LLMError as err:
        return refuse(f"the model could not answer ({err.kind}): {err}", model, client.endpoint_label, None)
    answer_ref = ctx.store.put(completion.text.encode(), "decomposition_answer")
    ctx.records.record_artifact(answer_ref)
    existing = {r["name"] for r in ctx.records.list_status()}
    try:
        parsed = parse_decomposition(completion.text, row.proposal, existing=existing, depth=depth, tree_nodes=size,
                                     limits=lim)
    except DecompositionError as err:
        return refuse(str(err), model, client.endpoint_label, answer_ref.sha256)
    with ctx.records.session():
        for child in parsed.children:
            intake(ctx, child, f"decomposition of {name}", actor=f"kavi decompose ({name})")
        did = dec.record(parent=name, spec_sha256=row.spec_sha256, root=root, depth=depth, trigger=trigger,
                         model=model, endpoint=client.endpoint_label, status=WAITING,
                         reason=f"waits for its children: {', '.join(parsed.names)}",
                         composition=parsed.composition.model_dump(mode="json", exclude_none=True),
                         answer_sha256=answer_ref.sha256, children=parsed.names)
        ctx.records.set_status(name, ProposalStatus.DECOMPOSED, build_id=None,
                               reason=f"decomposed ({trigger}) into {', '.join(parsed.names)}: waits for them")
    return DecomposeOutcome(name, True, f"decomposed into {', '.join(parsed.names)}", did, parsed.names, model)


@dataclass(frozen=True)
class AdvanceOutcome:
    name: str
    status: str  # the decomposition's status after this step
    reason: str
    build_id: str | None = None
    gates: list[GateResult] = field(default_factory=list)


def child_failure(ctx: ForgeContext, child: str, limits: DecomposeLimits | None = None) -> str | None:
    """Why a child has failed past its budget, or None while it may still become trusted. A child that escalated
    may still be decomposed in its turn (then it waits on its own children); otherwise it has failed."""
    row = ctx.records.require_proposal(child)
    latest = ctx.records.latest_build(child)
    kind = f" ({latest.failure_kind})" if latest is not None and latest.failure_kind else ""
    if row.status in _CHILD_FAILED:
        return f"{row.status.value}{kind}"
    if row.status is ProposalStatus.FAILED and not ctx.records.builds(child):
        return "FAILED"  # failed as a parent in its turn (no attempt of its own to retry)
    if row.status is ProposalStatus.FAILED:
        own = _records(ctx).active(child)
        if own is not None and own.status == FAILED:
            return f"FAILED: {own.reason}"
    if row.status is ProposalStatus.ESCALATED and trigger_for(ctx, child, limits) is None:
        notes = ctx.records.research_notes(child)
        why = ", ".join(notes[-1]["triggers"]) if notes else "escalated"
        return f"ESCALATED{kind}: {why}"
    return None


def advance(ctx: ForgeContext, name: str, run_id: str | None = None, limits: DecomposeLimits | None = None
            ) -> AdvanceOutcome | None:
    """Move NAME's decomposition on, when it waits: fail it on a failed child, verify it when every child is
    trusted. None when NAME has no decomposition waiting."""
    dec = _records(ctx)
    d = dec.active(name)
    if d is None or d.status != WAITING:
        return None
    for child in d.children:
        why = child_failure(ctx, child, limits)
        if why is not None:
            reason = f"child {child} failed: {why}"[:600]
            dec.set_status(d.decomposition_id, FAILED, reason)
            ctx.records.set_status(name, ProposalStatus.FAILED, build_id=None, reason=f"decomposition failed: {reason}")
            return AdvanceOutcome(name, FAILED, reason)
    waiting = [c for c in d.children if ctx.records.require_proposal(c).status is not ProposalStatus.TRUSTED]
    if waiting:
        return AdvanceOutcome(name, WAITING, f"waits for {', '.join(waiting)}")
    return _verify_composition(ctx, name, d, run_id)


def _verify_composition(ctx: ForgeContext, name: str, d: DecompositionRow, run_id: str | None) -> AdvanceOutcome:
    dec = _records(ctx)
    row = ctx.records.require_proposal(name)
    pins: dict[str, dict[str, Any]] = {}
    child_bytes: dict[str, bytes] = {}
    for child in d.children:
        t = ctx.records.trusted(child)[0]
        pins[child] = {"version": t.version, "sha256": t.source_sha256, "side_effect_class": t.side_effect_class.value,
                       "required_secrets": list(t.required_secrets)}
        child_bytes[child] = ctx.store.get(t.source_sha256)
    comp = parse_composition(d.composition)
    doc = composition_doc(row.proposal, comp, pins)
    doc_ref = ctx.store.put(doc_bytes(doc), "composition")
    spec_ref = ctx.store.put(row.proposal.canonical_json().encode(), "proposal_spec")
    ctx.records.record_artifact(spec_ref)
    builds = ctx.records.builds(name)
    attempt = builds[-1].attempt_number + 1 if builds else 1
    parent_build = builds[-1].build_id if builds else None
    build_id = new_build_id(name, attempt, row.spec_sha256, parent_build)
    ctx.records.start_build(name, run_id=run_id, model=None, endpoint="composition", packet=doc_ref,
                            build_id=build_id, attempt=attempt, parent_build_id=parent_build,
                            lineage_parent=spec_ref.sha256)
    children = children_gate(pins)
    work = ctx.home.sandboxes_dir / build_id / "composition"
    work.mkdir(parents=True, exist_ok=True)
    limits = Limits(wall_s=ctx.settings.gate_wall_s)
    t0 = time.monotonic()
    acceptance = composition_acceptance(work, row.proposal, doc, child_bytes, limits)
    acceptance = Redactor.for_proposal(row.proposal).gate_results([acceptance])[0]
    duration = time.monotonic() - t0
    passed = acceptance.ok
    report = {"kind": "VERIFICATION_REPORT", "build_id": build_id, "proposal": name, "attempt": attempt,
              "ran": True, "passed": passed, "through": "composition", "composition_sha256": doc_ref.sha256,
              "duration_s": round(duration, 3), "gates": [children.to_dict(), acceptance.to_dict()],
              "fingerprint": fingerprint_for(ctx).to_dict()}  # what judged it (stale when it moves)
    report_ref = ctx.store.put(json.dumps(report, sort_keys=True, indent=2, default=str).encode(),
                               "verification_report")
    with ctx.records.session():
        ctx.records.record_gate_results(build_id, [children, acceptance])
        ctx.records.finish_build(build_id, status=BUILD_VERIFIED if passed else VERIFY_FAILED,
                                 failure_kind=None if passed else "VERIFY_ACCEPTANCE",
                                 artifacts=[("skill", doc_ref, spec_ref.sha256, "composition_of"),
                                            ("report", report_ref, doc_ref.sha256, "report_of")],
                                 skill_sha256=doc_ref.sha256)
        record_forge_verification(ctx, build_id=build_id, name=name, results=[children, acceptance],
                                  passed=passed, report_sha256=report_ref.sha256, duration_s=duration)
        if passed:
            reason = (f"the composition of {', '.join(d.children)} passed the parent's examples and holdouts "
                      f"({acceptance.reason})")
            dec.set_status(d.decomposition_id, VERIFIED, reason, composition_sha256=doc_ref.sha256, build_id=build_id)
            ctx.records.set_status(name, ProposalStatus.VERIFIED, build_id=build_id, reason=reason)
        else:
            reason = f"the composition failed the parent's acceptance: {acceptance.reason}"
            dec.set_status(d.decomposition_id, FAILED, reason, composition_sha256=doc_ref.sha256, build_id=build_id)
            ctx.records.set_status(name, ProposalStatus.FAILED, build_id=build_id, reason=reason)
    return AdvanceOutcome(name, VERIFIED if passed else FAILED, reason, build_id, [children, acceptance])


def step(ctx: ForgeContext, name: str, run_id: str | None = None, limits: DecomposeLimits | None = None
         ) -> DecomposeOutcome | AdvanceOutcome | None:
    """Whatever NAME's decomposition needs next: ask for one (when triggered), or advance the one that waits."""
    waiting = advance(ctx, name, run_id, limits)
    if waiting is not None:
        return waiting
    trigger = trigger_for(ctx, name, limits)
    if trigger is not None:
        return decompose(ctx, name, trigger, limits)
    return None


def tree(ctx: ForgeContext, name: str, _depth: int = 0) -> dict[str, Any]:
    """NAME's tree: each node's state, its decomposition (status, reason, composition) and its children's trees."""
    row = ctx.records.require_proposal(name)
    node: dict[str, Any] = {"name": name, "state": row.status.value, "trusted_version": row.trusted_version,
                            "side_effect_class": row.proposal.side_effect_class.value}
    d = _records(ctx).active(name)
    refused = [r for r in _records(ctx).of_parent(name) if r.status == REFUSED]
    if refused:
        node["refused"] = [{"reason": r.reason, "at": r.created_at} for r in refused]
    if d is not None:
        node["decomposition"] = {"id": d.decomposition_id, "status": d.status, "reason": d.reason,
                                 "trigger": d.trigger, "model": d.model, "composition": d.composition,
                                 "composition_sha256": d.composition_sha256, "build_id": d.build_id}
        node["children"] = [tree(ctx, c, _depth + 1) for c in d.children] if _depth < 8 else []
    return node


def tree_markdown(node: dict[str, Any], indent: int = 0) -> str:
    """The tree as nested markdown: parent → children → composition, for the Dagster UI."""
    pad = "  " * indent
    lines = [f"{pad}- **{node['name']}** — {node['state']}"
             + (f" (v{node['trusted_version']})" if node.get("trusted_version") else "")]
    d = node.get("decomposition")
    if d:
        lines.append(f"{pad}  - decomposition {d['status']} ({d['trigger']}): {d.get('reason') or ''}")
        for child in node.get("children", []):
            lines.append(tree_markdown(child, indent + 2))
        steps = (d.get("composition") or {}).get("steps") or []
        chain = " → ".join(str(s.get("skill")) for s in steps)
        lines.append(f"{pad}  - composition: {chain} ⇒ {json.dumps((d.get('composition') or {}).get('output'))}")
    for r in node.get("refused", []):
        lines.append(f"{pad}  - decomposition refused: {r['reason']}")
    return "\n".join(lines)
