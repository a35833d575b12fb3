"""RIVA: decomposition answers are validated, bounded and recorded; a parent verifies only through
its trusted children and its own examples and holdouts; a failing child fails the parent; `kavi tree` shows it."""

import copy
import json
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from kavi.decompose.answer import DecomposeLimits, DecompositionError, parse_decomposition
from kavi.decompose.forge import advance, decompose, trigger_for
from kavi.decompose.records import FAILED, REFUSED, VERIFIED, WAITING, DecompositionRecords
from kavi.forge.ceremony import ceremony_for
from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.forge.promote import approve, promote
from kavi.forge.reverify import history, reverify_version, stale_versions
from kavi.home import KaviHome
from kavi.ledger.verification_records import VerificationRecords
from kavi.lifecycle import ProposalStatus, Verdict
from kavi.proposals.model import Proposal, load_proposal, parse_proposal
from kavi.verdicts import ALL_GATES, GateResult
from tests.factories import REPO

ROOT = REPO
ANSWERS = ROOT / "kavi" / "examples" / "answers"
PARENT_FILE = ROOT / "kavi" / "examples" / "proposals" / "email_domain_report.yaml"
ANSWER = json.loads((ANSWERS / "email_domain_report" / "decomposition.json").read_text())
SOURCES = {name: (ANSWERS / name / "1" / "skill.py").read_text() for name in ("find_addresses", "domains_of_addresses")}


class FakeClient:
    """An LLM client that answers every request with one text (and records what it was asked)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.settings = SimpleNamespace(models=["fake-model"], max_prompt_chars=1_000_000, recorded=False,
                                        api_key=None)
        self.endpoint_label = "fake endpoint"
        self.asked: list[Any] = []

    def complete(self, messages: Any, **kwargs: Any) -> Any:
        self.asked.append(messages)
        return SimpleNamespace(text=self.text, recorded=False)


def answer_text(**changes: Any) -> str:
    data = copy.deepcopy(ANSWER)
    data.update(changes)
    return json.dumps(data)


def parent() -> Proposal:
    return load_proposal(PARENT_FILE)


def _parse(text: str, **kw: Any) -> Any:
    args: dict[str, Any] = {"existing": set(), "depth": 0, "tree_nodes": 1, "limits": DecomposeLimits()}
    args.update(kw)
    return parse_decomposition(text, parent(), **args)


# -- validation --------------------------------------------------------------------------------------


def test_the_shipped_answer_is_valid() -> None:
    d = _parse(answer_text())
    assert d.names == ["find_addresses", "domains_of_addresses"]
    assert [s.skill for s in d.composition.steps] == d.names


def test_bad_child_spec_is_refused_with_one_line() -> None:
    children = copy.deepcopy(ANSWER["children"])
    del children[1]["examples"]
    with pytest.raises(DecompositionError) as err:
        _parse(answer_text(children=children))
    msg = str(err.value)
    assert "\n" not in msg and "child 1 (domains_of_addresses)" in msg and "examples" in msg


def test_a_child_whose_examples_disagree_with_its_schema_is_refused() -> None:
    children = copy.deepcopy(ANSWER["children"])
    children[0]["examples"][0]["expected"] = {"emails": []}
    with pytest.raises(DecompositionError, match="unknown fields: emails"):
        _parse(answer_text(children=children))


def test_side_effect_widening_is_refused() -> None:
    children = copy.deepcopy(ANSWER["children"])
    children[0]["side_effect_class"] = "NETWORK"
    with pytest.raises(DecompositionError, match="NETWORK is wider than the parent's READ_ONLY"):
        _parse(answer_text(children=children))


@pytest.mark.parametrize("bad", ["Find_Addresses", "os", "email_domain_report", "word_count"])
def test_invalid_or_colliding_child_names_are_refused(bad: str) -> None:
    children = copy.deepcopy(ANSWER["children"])
    children[0]["name"] = bad
    with pytest.raises(DecompositionError) as err:
        _parse(answer_text(children=children), existing={"word_count", "email_domain_report"})
    assert "\n" not in str(err.value)


def test_too_few_and_too_many_children_are_refused() -> None:
    one = copy.deepcopy(ANSWER["children"][:1])
    with pytest.raises(DecompositionError, match="has 1 children; a decomposition has 2 to 5"):
        _parse(answer_text(children=one))
    many = []
    for i in range(6):
        c = copy.deepcopy(ANSWER["children"][0])
        c["name"] = f"part_{i}"
        many.append(c)
    with pytest.raises(DecompositionError, match="has 6 children"):
        _parse(answer_text(children=many))


def test_composition_must_name_known_children_and_fields() -> None:
    comp = copy.deepcopy(ANSWER["composition"])
    comp["steps"][1]["skill"] = "nobody"
    with pytest.raises(DecompositionError, match="'nobody' is not one of the children"):
        _parse(answer_text(composition=comp))
    comp = copy.deepcopy(ANSWER["composition"])
    comp["steps"][1]["from_prev"] = {"addresses": "steps.0.emails"}
    with pytest.raises(DecompositionError, match="names no output field of step 0"):
        _parse(answer_text(composition=comp))
    comp = copy.deepcopy(ANSWER["composition"])
    comp["steps"][0]["from_prev"] = {"text": "input.body"}
    with pytest.raises(DecompositionError, match="names no input field of the parent"):
        _parse(answer_text(composition=comp))
    comp = copy.deepcopy(ANSWER["composition"])
    comp["steps"][1]["from_prev"] = {}
    with pytest.raises(DecompositionError, match="leaves required inputs of the child unset: addresses"):
        _parse(answer_text(composition=comp))
    comp = copy.deepcopy(ANSWER["composition"])
    del comp["output"]["count"]
    with pytest.raises(DecompositionError, match="leaves required outputs of the parent unset: count"):
        _parse(answer_text(composition=comp))


def test_depth_node_budget_and_size_bounds_hold() -> None:
    with pytest.raises(DecompositionError, match="beyond the maximum depth 2"):
        _parse(answer_text(), depth=2)
    with pytest.raises(DecompositionError, match="beyond the budget of 12"):
        _parse(answer_text(), tree_nodes=11)
    with pytest.raises(DecompositionError, match="at most 200000 are allowed"):
        _parse(" " * 200_001)
    with pytest.raises(DecompositionError, match="not JSON"):
        _parse("I would rather not.")


def test_limits_come_from_the_environment() -> None:
    lim = DecomposeLimits.from_env({"KAVI_DECOMPOSE_ABOVE": "3", "KAVI_DECOMPOSE_MAX_DEPTH": "1",
                                    "KAVI_DECOMPOSE_MAX_NODES": "5"})
    assert (lim.above, lim.max_depth, lim.max_nodes) == (3, 1, 5)
    from kavi.settings_parsers import ConfigError

    with pytest.raises(ConfigError, match="KAVI_DECOMPOSE_MAX_DEPTH"):
        DecomposeLimits.from_env({"KAVI_DECOMPOSE_MAX_DEPTH": "0"})


def test_no_shipped_proposal_is_decomposed_by_complexity_by_default() -> None:
    above = DecomposeLimits().above
    scales = {p.stem: ceremony_for(load_proposal(p)).scale for p in (ROOT / "kavi/examples/proposals").glob("*.yaml")}
    assert scales and all(s <= above for s in scales.values()), scales


# -- the forge: intake, records, the tree's states -----------------------------------------------------


def _ctx(home: KaviHome, client: FakeClient | None = None) -> ForgeContext:
    def no_llm() -> Any:
        raise AssertionError("no model call expected here")

    return ForgeContext.open(home, (lambda: client) if client is not None else no_llm)  # type: ignore[return-value]


def _trust(ctx: ForgeContext, name: str, source: str) -> None:
    """A verified attempt building `source` for an intaken child, approved and promoted (as the usual path would)."""
    packet = ctx.store.put(b'{"kind": "BUILD_PACKET"}', "build_packet")
    skill = ctx.store.put(source.encode(), "skill_source")
    tests = ctx.store.put(b"def test_x() -> None: ...\n", "skill_tests")
    build_id = f"{name}-a1-test"
    ctx.records.start_build(name, run_id=None, model="m", endpoint="e", packet=packet, build_id=build_id, attempt=1,
                            parent_build_id=None, lineage_parent="0" * 64)
    ctx.records.finish_build(build_id, status="VERIFIED", failure_kind=None, skill_sha256=skill.sha256,
                             test_sha256=tests.sha256)
    ctx.records.record_gate_results(build_id, [GateResult(g, Verdict.PASSED, "ok", 0.1) for g in ALL_GATES])
    ctx.records.set_status(name, ProposalStatus.VERIFIED, build_id=build_id, reason="every gate passed")
    approve(ctx, name, "tester")
    assert promote(ctx, name).promoted


def _decomposed(home: KaviHome, proposal: Proposal | None = None) -> ForgeContext:
    ctx = _ctx(home, FakeClient(answer_text()))
    intake(ctx, proposal or parent(), None)
    out = decompose(ctx, "email_domain_report", "REPEATED_FAILURE")
    assert out.accepted, out.reason
    return ctx


def test_an_accepted_decomposition_intakes_children_and_records_edges(kavi_home: KaviHome) -> None:
    ctx = _decomposed(kavi_home)
    dec = DecompositionRecords(ctx.records)
    d = dec.active("email_domain_report")
    assert d is not None and d.status == WAITING and d.children == ("find_addresses", "domains_of_addresses")
    spec = ctx.records.require_proposal("email_domain_report").spec_sha256
    assert d.composition is not None and d.spec_sha256 == spec
    assert ctx.records.require_proposal("email_domain_report").status is ProposalStatus.DECOMPOSED
    for child in d.children:
        assert ctx.records.require_proposal(child).status is ProposalStatus.PROPOSED
        assert dec.parent_of(child) == ("email_domain_report", 0, "email_domain_report")
    assert [e["child"] for e in dec.edges("email_domain_report")] == list(d.children)
    assert advance(ctx, "email_domain_report") is not None
    assert advance(ctx, "email_domain_report").status == WAITING  # type: ignore[union-attr]
    # The model was never shown the parent's holdouts.
    asked = json.dumps(ctx.llm_factory().asked)  # type: ignore[attr-defined]
    assert "x@B.io" not in asked and "first.last+tag" not in asked


def test_a_refused_answer_is_recorded_and_nothing_is_intaken(kavi_home: KaviHome) -> None:
    children = copy.deepcopy(ANSWER["children"])
    children[1]["side_effect_class"] = "FILE_WRITE"
    ctx = _ctx(kavi_home, FakeClient(answer_text(children=children)))
    intake(ctx, parent(), None)
    out = decompose(ctx, "email_domain_report", "REPEATED_FAILURE")
    assert not out.accepted and "FILE_WRITE is wider" in out.reason
    rows = DecompositionRecords(ctx.records).of_parent("email_domain_report")
    assert [r.status for r in rows] == [REFUSED] and "FILE_WRITE is wider" in str(rows[0].reason)
    assert ctx.records.get_proposal("find_addresses") is None
    # Not asked again for the same spec: a person changes the spec (or forges it).
    ctx.records.set_status("email_domain_report", ProposalStatus.ESCALATED, build_id=None, reason="test")
    assert trigger_for(ctx, "email_domain_report") is None


def test_complexity_above_the_threshold_triggers(kavi_home: KaviHome) -> None:
    ctx = _ctx(kavi_home)
    intake(ctx, parent(), None)
    assert trigger_for(ctx, "email_domain_report") is None
    assert trigger_for(ctx, "email_domain_report", DecomposeLimits(above=1)) == "COMPLEXITY 2/10 > 1"


def test_a_child_beyond_the_depth_limit_is_not_decomposed(kavi_home: KaviHome) -> None:
    ctx = _decomposed(kavi_home)
    out = decompose(ctx, "find_addresses", "REPEATED_FAILURE", DecomposeLimits(max_depth=1))
    assert not out.accepted and "beyond the maximum depth 1" in out.reason
    assert ctx.llm_factory().asked.__len__() == 1  # type: ignore[attr-defined]  # only the parent's request


def test_the_node_budget_holds_across_the_tree(kavi_home: KaviHome) -> None:
    ctx = _decomposed(kavi_home)
    out = decompose(ctx, "find_addresses", "REPEATED_FAILURE", DecomposeLimits(max_nodes=4))
    assert not out.accepted and "holds 3 proposals; 2 more would pass the budget of 4" in out.reason


def test_a_parent_with_one_failing_child_fails_naming_it(kavi_home: KaviHome) -> None:
    ctx = _decomposed(kavi_home)
    _trust(ctx, "find_addresses", SOURCES["find_addresses"])
    ctx.records.set_status("domains_of_addresses", ProposalStatus.GATE_VIOLATION, build_id=None, reason="test")
    out = advance(ctx, "email_domain_report")
    assert out is not None and out.status == FAILED
    assert out.reason == "child domains_of_addresses failed: GATE_VIOLATION"
    row = ctx.records.require_proposal("email_domain_report")
    assert row.status is ProposalStatus.FAILED
    assert DecompositionRecords(ctx.records).active("email_domain_report").status == FAILED  # type: ignore[union-attr]


def test_the_composition_verifies_on_the_parents_examples_and_runs_as_the_trusted_parent(kavi_home: KaviHome
                                                                                          ) -> None:
    ctx = _decomposed(kavi_home)
    for name, source in SOURCES.items():
        _trust(ctx, name, source)
    out = advance(ctx, "email_domain_report")
    assert out is not None and out.status == VERIFIED, out.reason
    acceptance = out.gates[1]
    assert acceptance.verdict is Verdict.PASSED and "2 holdout examples passed" in acceptance.reason
    assert acceptance.details.get("through") == "composition"
    assert ctx.records.require_proposal("email_domain_report").status is ProposalStatus.VERIFIED
    # Promoted by the usual path: an approval, then the hash-checked copy of the composition.
    approve(ctx, "email_domain_report", "tester")
    promo = promote(ctx, "email_domain_report")
    assert promo.promoted and str(promo.skill_path).endswith(".composition.json")
    assert ctx.records.require_proposal("email_domain_report").status is ProposalStatus.TRUSTED

    from kavi_assets.cli.runtime_cmd import _runner

    runner, log, _ = _runner(kavi_home, fsync=False)
    record = runner.run("email_domain_report", {"text": "a@X.org b@y.org a@x.org"}, confirmed=False)
    assert record.success, record.error
    assert record.output_data() == {"domains": ["x.org", "y.org"], "count": 3}
    steps = [r for r in log.read_all() if r.parent_execution_id == record.execution_id]
    assert [r.skill_name for r in steps] == ["find_addresses", "domains_of_addresses"]
    # Served to agents like any trusted skill: its schemas from the composition's fields, calls through the runner.
    from kavi.serve.server import SkillToolServer

    server = SkillToolServer(kavi_home, _runner, None)
    tools = {t.name: t for t in server.tools()}
    assert "email_domain_report" in tools, server.catalog.withheld
    schema = tools["email_domain_report"].inputSchema
    assert schema["properties"]["text"]["type"] == "string" and schema["required"] == ["text"]
    out_schema = tools["email_domain_report"].outputSchema
    assert out_schema is not None and out_schema["properties"]["domains"]["type"] == "array"
    called = server.call("email_domain_report", {"text": "a@X.org b@y.org"}, "mcp:t/1")
    assert not called.isError and called.structuredContent == {"domains": ["x.org", "y.org"], "count": 2}
    refused = server.call("email_domain_report", {"text": 3}, "mcp:t/1")
    assert refused.isError
    # The trusted file is hash-checked like any skill's: an edit refuses the run before any child runs.
    target = kavi_home.root / str(promo.skill_path)
    target.chmod(0o644)
    target.write_text(target.read_text().replace('"steps.1.count"', '"steps.0.addresses"'))
    from kavi.runtime.errors import TrustError

    with pytest.raises(TrustError, match="hash mismatch"):
        runner.run("email_domain_report", {"text": "a@x.org"}, confirmed=False)


def test_a_trusted_composition_is_judged_under_a_fingerprint_and_reverified_through_its_children(
        kavi_home: KaviHome) -> None:
    """The composition's verification records what judged it, as a skill's does (so it is not "never verified"
    after the demo), and re-verification judges it again as it was forged: each pinned child still trusted, and
    the parent's examples and holdouts through the chain. A child that became SUSPECT fails it, naming the child."""
    ctx = _decomposed(kavi_home)
    for name, source in SOURCES.items():
        _trust(ctx, name, source)
    out = advance(ctx, "email_domain_report")
    assert out is not None and out.status == VERIFIED, out.reason
    approve(ctx, "email_domain_report", "tester")
    assert promote(ctx, "email_domain_report").promoted
    stale = {s.ref: s for s in stale_versions(ctx)}
    assert "email_domain_report@1" not in stale, stale["email_domain_report@1"].changes
    (composition,) = ctx.records.trusted("email_domain_report")
    from kavi_assets.cli.main import app

    shown = CliRunner().invoke(app, ["lineage", "email_domain_report", "--home", str(kavi_home.root)])
    assert shown.exit_code == 0 and f"{composition.build_id}  composition  → VERIFIED" in shown.output, shown.output

    again = reverify_version(ctx, composition, actor="tester")
    assert again.ran and again.passed and not again.marked_suspect, again
    assert [(g["gate"], g["verdict"]) for g in again.gates] == [("children", "passed"), ("acceptance", "passed")]
    report = json.loads(ctx.store.get(str(again.report_sha256)))
    assert report["through"] == "composition" and report["composition_sha256"] == composition.source_sha256
    assert [v.kind for v in history(ctx, "email_domain_report")][-1] == "reverify"

    g = VerificationRecords(ctx.records.ledger)
    assert g.mark_suspect("find_addresses", 1, reason="re-verification failed", actor="tester")
    failed = reverify_version(ctx, composition, actor="tester")
    assert failed.ran and not failed.passed and failed.marked_suspect
    assert failed.failing[0]["gate"] == "children" and "find_addresses@1 is SUSPECT" in failed.failing[0]["reason"]
    assert ctx.records.version_status("email_domain_report", 1)[0] == "SUSPECT"


def test_a_composition_that_passes_the_children_but_not_a_parent_holdout_does_not_verify(kavi_home: KaviHome
                                                                                          ) -> None:
    data = load_proposal(PARENT_FILE).model_dump(mode="json")
    # The parent wants the domains as written, not lowercased: every child passes its own examples, the chain
    # passes the parent's examples, and one holdout of the parent fails.
    data["holdout_examples"][0]["expected"] = {"domains": ["B.io", "a.io", "b.io"], "count": 3}
    ctx = _decomposed(kavi_home, parse_proposal(data))
    for name, source in SOURCES.items():
        _trust(ctx, name, source)
    out = advance(ctx, "email_domain_report")
    assert out is not None and out.status == FAILED
    assert "1 of 4 examples failed (1 holdout)" in out.reason
    assert "B.io" not in out.reason  # a holdout's values never reach a message
    assert ctx.records.require_proposal("email_domain_report").status is ProposalStatus.FAILED


def test_kavi_tree_shows_each_node_and_the_composition(kavi_home: KaviHome) -> None:
    from kavi_assets.cli.main import app

    ctx = _decomposed(kavi_home)
    _trust(ctx, "find_addresses", SOURCES["find_addresses"])
    runner = CliRunner()
    res = runner.invoke(app, ["tree", "email_domain_report", "--home", str(kavi_home.root), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["state"] == "DECOMPOSED" and doc["decomposition"]["status"] == WAITING
    assert [(c["name"], c["state"]) for c in doc["children"]] == [("find_addresses", "TRUSTED"),
                                                                  ("domains_of_addresses", "PROPOSED")]
    res = runner.invoke(app, ["tree", "email_domain_report", "--home", str(kavi_home.root)])
    assert res.exit_code == 0, res.output
    for text in ("email_domain_report", "DECOMPOSED", "find_addresses @1 TRUSTED", "domains_of_addresses PROPOSED",
                 "composition: find_addresses → domains_of_addresses"):
        assert text in res.output, res.output
    res = runner.invoke(app, ["lineage", "find_addresses", "--home", str(kavi_home.root), "--json"])
    assert res.exit_code == 0, res.output
    edges = json.loads(res.output)["decomposition_edges"]
    assert [(e["parent"], e["child"], e["decomposition_status"]) for e in edges] == [
        ("email_domain_report", "find_addresses", WAITING)]
    res = runner.invoke(app, ["lineage", "email_domain_report", "--home", str(kavi_home.root)])
    assert res.exit_code == 0 and "email_domain_report → child domains_of_addresses" in res.output
    res = runner.invoke(app, ["tree", "nobody", "--home", str(kavi_home.root)])
    assert res.exit_code != 0 and "nobody" in res.output


def test_the_sensor_requests_decomposition_children_and_advance(kavi_home: KaviHome) -> None:
    from sensors.decompose import decomposition_requests

    ctx = _ctx(kavi_home, FakeClient(answer_text()))
    intake(ctx, parent(), None)
    assert decomposition_requests(ctx, DecomposeLimits()) == []
    first = decomposition_requests(ctx, DecomposeLimits(above=1))
    assert [(r.job_name, r.partition_key) for r in first] == [("decompose", "email_domain_report")]
    assert decompose(ctx, "email_domain_report", "COMPLEXITY 2/10 > 1").accepted
    children = decomposition_requests(ctx, DecomposeLimits())
    assert sorted((r.job_name, r.partition_key) for r in children) == [("forge", "domains_of_addresses"),
                                                                        ("forge", "find_addresses")]
    for name, source in SOURCES.items():
        _trust(ctx, name, source)
    settled = decomposition_requests(ctx, DecomposeLimits())
    assert [(r.job_name, r.partition_key) for r in settled] == [("decompose", "email_domain_report")]
    assert str(settled[0].run_key).startswith("advance:")


def test_kavi_decompose_runs_the_step_through_dagster(kavi_home: KaviHome, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kavi decompose NAME` on the recorded model: the decomposition step as a run of the `decompose` job."""
    from kavi_assets.cli.main import app

    monkeypatch.setenv("KAVI_DECOMPOSE_ABOVE", "1")
    intake(_ctx(kavi_home), parent(), None)
    res = CliRunner().invoke(app, ["decompose", "email_domain_report", "--home", str(kavi_home.root)])
    assert res.exit_code == 0, res.output
    assert "decomposition WAITING (COMPLEXITY 2/10 > 1" in res.output and "find_addresses PROPOSED" in res.output
    res = CliRunner().invoke(app, ["decompose", "nobody", "--home", str(kavi_home.root)])
    assert res.exit_code == 2 and "no proposal named 'nobody'" in res.output


@pytest.mark.parametrize("triggers,expected", [(["REPEATED_FAILURE", "BUDGET_EXHAUSTED"], "REPEATED_FAILURE"),
                                               (["AMBIGUOUS"], "AMBIGUOUS"), (["SECURITY_CLASS"], None)])
def test_an_escalation_triggers_only_for_repeated_failure_or_ambiguity(kavi_home: KaviHome, triggers: list[str],
                                                                       expected: str | None) -> None:
    ctx = _ctx(kavi_home)
    intake(ctx, parent(), None)
    note = ctx.store.put(b'{"kind": "RESEARCH_NOTE"}', "research_note")
    ctx.records.record_research(build_id="email_domain_report-a3-x", name="email_domain_report", attempt=3,
                                failure_kind="LLM_BAD_OUTPUT", fingerprint="f", facts={}, triggers=triggers,
                                advice=None, escalated=True, note=note, lineage_parent=None)
    ctx.records.set_status("email_domain_report", ProposalStatus.ESCALATED, build_id=None, reason="test")
    assert trigger_for(ctx, "email_domain_report") == expected


def test_a_decomposed_parent_is_not_forged_again(kavi_home: KaviHome) -> None:
    """While its children forge, the parent takes no attempt of its own: neither `kavi forge` nor a packet step (the
    retry sensor, `dagster asset materialize`) starts one, and each says why in one line."""
    from kavi.forge.packet import ProposalDecomposed, prepare_packet
    from kavi_assets.cli.main import app

    ctx = _decomposed(kavi_home)
    builds_before = len(ctx.records.builds("email_domain_report"))
    res = CliRunner().invoke(app, ["forge", "email_domain_report", "--home", str(kavi_home.root)])
    assert res.exit_code == 2, res.output
    assert "DECOMPOSED" in res.output and "kavi tree email_domain_report" in res.output
    assert "Traceback" not in res.output
    with pytest.raises(ProposalDecomposed, match="kavi tree email_domain_report"):
        prepare_packet(ctx, "email_domain_report", None)
    assert len(ctx.records.builds("email_domain_report")) == builds_before
    assert ctx.records.require_proposal("email_domain_report").status is ProposalStatus.DECOMPOSED
