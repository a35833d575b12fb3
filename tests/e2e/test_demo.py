"""The README's main command, run for real: example proposals forged end to end on the recorded model."""

import json

import pytest

from tests.factories import REPO, DemoRun, run_kavi

pytestmark = pytest.mark.slow


def _status(run: DemoRun) -> dict[str, dict[str, object]]:
    proc = run.kavi(["status", "--json"])
    assert proc.returncode == 0, proc.stderr
    return {r["name"]: r for r in json.loads(proc.stdout)}


def test_demo_forges_examples(demo_run: DemoRun) -> None:
    assert demo_run.returncode == 0, demo_run.stdout[-4000:]
    assert "RECORDED MODEL" in demo_run.stdout
    rows = _status(demo_run)
    trusted = [n for n, r in rows.items() if r["status"] == "TRUSTED"]
    assert len(trusted) >= 3, rows
    assert rows["extract_emails"]["status"] == "GATE_VIOLATION"
    # It ends with the trusted skills as agent tools and how to serve them.
    tail = demo_run.stdout[demo_run.stdout.index("Trusted skills as agent tools"):]
    assert "  slugify_title  READ_ONLY  v" in tail and "kavi serve --home" in tail.splitlines()[-1]
    assert "  email_domain_report  READ_ONLY  v1" in tail, tail  # the decomposed parent is a tool like the others
    assert "not served (" not in tail, tail  # nothing the demo trusted fails to load


def test_second_attempt_after_real_ruff_failure(demo_run: DemoRun) -> None:
    proc = demo_run.kavi(["lineage", "slugify_title", "--json"])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "TRUSTED"
    first, second = doc["attempts"][0], doc["attempts"][1]
    assert first["failure_kind"] == "VERIFY_LINT"
    ruff_msgs = first["research"]["facts"]["gates"]["ruff"]["messages"]
    assert any("F401" in m for m in ruff_msgs), ruff_msgs
    assert second["status"] == "VERIFIED"
    # slugify_title is at ceremony low: every deterministic gate passed, and the coach is omitted.
    assert all(v == "passed" for g, v in second["gates"].items() if g != "coach"), second["gates"]
    assert second["gates"]["coach"] == "omitted"
    assert doc["promotions"] and doc["promotions"][0]["build_id"] == second["build_id"]


@pytest.mark.parametrize(("name", "kinds"), [("find_addresses", ["VERIFY_RESOURCE", None]),
                                            ("parse_duration", ["LLM_BAD_OUTPUT", "VERIFY_RESOURCE", None])])
def test_quadratic_answers_fail_the_resource_gate_and_the_linear_retry_is_trusted(
        demo_run: DemoRun, name: str, kinds: list[str | None]) -> None:
    """The first recorded code of each backtracks from every start position of a long run of letters or digits: every
    other gate passes, the resource gate fails it with the input shape, sizes, times and growth in the research
    note; the recorded answer to the next packet is linear and is trusted."""
    doc = json.loads(demo_run.kavi(["lineage", name, "--json"]).stdout)
    assert doc["status"] == "TRUSTED"
    assert [a["failure_kind"] for a in doc["attempts"]] == kinds
    slow, fast = doc["attempts"][-2], doc["attempts"][-1]
    assert slow["gates"]["resource"] == "failed"
    assert all(v == "passed" for g, v in slow["gates"].items() if g not in ("resource", "coach", "adequacy")), \
        slow["gates"]
    # Like the coach, the mutation analysis is judged only once every other gate passed.
    assert slow["gates"]["adequacy"] == "omitted", slow["gates"]
    shapes = slow["research"]["facts"]["gates"]["resource"]["shapes"]
    assert shapes and all(s["at_bound_s"] > 10 and len(s["sizes"]) == len(s["ms"]) >= 2 for s in shapes), shapes
    assert max(s["growth"] for s in shapes) > 1.5, shapes
    assert any(s["shape"] == "text: digits ('1' repeated)" for s in shapes)
    assert fast["gates"]["resource"] == "passed" and fast["status"] == "VERIFIED"
    assert doc["promotions"] and doc["promotions"][0]["build_id"] == fast["build_id"]


def test_the_coach_rejects_one_attempt_and_the_next_passes(demo_run: DemoRun) -> None:
    """read_notes_by_tag (ceremony standard) passes every deterministic gate at attempt 1 with a test that
    asserts nothing; the coach asks for changes, its finding reaches the research note, and attempt 2 passes."""
    doc = json.loads(demo_run.kavi(["lineage", "read_notes_by_tag", "--json"]).stdout)
    assert doc["status"] == "TRUSTED"
    first, second = doc["attempts"][0], doc["attempts"][1]
    assert first["failure_kind"] == "COACH_CHANGES_REQUESTED"
    assert first["gates"]["coach"] == "failed"
    assert all(v == "passed" for g, v in first["gates"].items() if g != "coach"), first["gates"]
    findings = first["research"]["facts"]["gates"]["coach"]["findings"]
    assert findings[0]["kind"] == "test_asserts_nothing" and "test_limit_and_count" in findings[0]["where"]
    assert second["gates"]["coach"] == "passed" and second["status"] == "VERIFIED"
    assert doc["promotions"] and doc["promotions"][0]["build_id"] == second["build_id"]
    level = json.loads(demo_run.kavi(["ceremony", "read_notes_by_tag", "--json"]).stdout)
    assert level["level"] == "standard" and level["coach"] is True


def test_gate_violation_never_touches_skills_home(demo_run: DemoRun) -> None:
    assert not (demo_run.home / "skills" / "extract_emails.py").exists()
    assert not (demo_run.home / "skills" / "extract_emails").exists()
    assert not list(demo_run.home.rglob("escape.py"))
    doc = json.loads(demo_run.kavi(["lineage", "extract_emails", "--json"]).stdout)
    assert doc["attempts"][0]["failure_kind"] == "GATE_VIOLATION"
    assert doc["attempts"][0]["skill_sha256"] is None


def test_trusted_files_match_ledger_hashes(demo_run: DemoRun) -> None:
    import hashlib

    registry = json.loads((demo_run.home / "registry.json").read_text())
    assert registry["skills"]
    for s in registry["skills"]:
        data = (demo_run.home / s["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == s["source_sha256"]
        # Each trusted version has its own file; the entry names the latest and lists them all. A decomposed parent's
        # trusted artifact is its composition, not code.
        suffix = ".composition.json" if s["name"] == "email_domain_report" else ".py"
        assert s["path"] == f"skills/{s['name']}/v{s['latest']}{suffix}"
        assert [v["version"] for v in s["versions"]] == list(range(1, s["latest"] + 1))
    verify = demo_run.kavi(["verify"])
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_dagster_materialize_after_propose(demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> None:
    """`dagster asset materialize ... --partition NAME` works after `kavi propose`."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    src = REPO / "kavi" / "examples" / "proposals" / "word_count.yaml"
    data = yaml.safe_load(src.read_text())
    data["description"] = data["description"] + " (materialized from the dagster CLI)"
    tmp = tmp_path_factory.mktemp("cli")
    prop = tmp / "word_count.yaml"
    prop.write_text(yaml.safe_dump(data))
    # One recorded model, whose first answer for word_count passes every gate.
    env = dict(demo_run.env, KAVI_HOME=str(tmp / "home"), DAGSTER_HOME=str(tmp / "dh"),
               KAVI_LLM_MODELS="recorded-coder-a")
    (tmp / "dh").mkdir()
    assert run_kavi(["propose", str(prop)], env).returncode == 0
    dagster = shutil.which("dagster", path=str(Path(sys.executable).parent)) or "dagster"
    proc = subprocess.run(
        [dagster, "asset", "materialize", "-m", "kavi_assets.definitions", "--select", "group:forge",
         "--partition", "word_count"],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = _status(DemoRun(tmp / "home", tmp / "dh", env, "", 0))
    assert rows["word_count"]["status"] == "VERIFIED"
    # The run carries the forge's tags, though that command takes none: its trigger, and the process that ran it.
    import dagster as dg

    with dg.DagsterInstance.from_config(str(tmp / "dh")) as instance:
        [run] = instance.get_runs()
        assert run.tags["kavi/trigger"] == "dagster" and run.tags["dagster/partition"] == "word_count"
        assert "kavi/pid" in run.tags, run.tags


def test_doctor_passes_after_the_main_command(demo_run: DemoRun) -> None:
    proc = demo_run.kavi(["doctor", "--json"])
    checks = {c["name"]: c["status"] for c in json.loads(proc.stdout)}
    assert proc.returncode == 0, checks
    assert "fail" not in checks.values()
    # Every version the demo trusted, the decomposed parent's composition included, was judged under today's
    # fingerprint: nothing for `kavi reverify --stale` to do.
    assert checks["re-verification"] == "ok", proc.stdout


SHIPPED = ("write_note", "read_notes_by_tag", "create_daily_note", "search_notes", "summarize_note", "http_get_json")


def test_shipped_skills_trusted_and_runnable(demo_run: DemoRun) -> None:
    rows = _status(demo_run)
    for name in SHIPPED:
        assert rows[name]["status"] == "TRUSTED", (name, rows.get(name))
        doc = json.loads(demo_run.kavi(["lineage", name, "--json"]).stdout)
        assert doc["promotions"] and doc["attempts"][-1]["report_sha256"]
    res = demo_run.kavi(["run", "write_note", "--yes", "--output-json", "--json",
                         '{"title": "Demo note", "body": "Written by the e2e test.", "tags": ["e2e"]}'])
    assert res.returncode == 0, res.stdout + res.stderr
    record = json.loads(res.stdout)
    written = demo_run.home / "vault" / record["output"]["path"]
    assert written.is_file() and "Written by the e2e test." in written.read_text()
    tail = json.loads(demo_run.kavi(["tail", "--json"]).stdout)
    assert tail[-1]["execution_id"] == record["execution_id"]
    session = demo_run.kavi(["session", "--latest"])
    assert session.returncode == 0 and record["execution_id"][:8] in session.stdout
    replay = demo_run.kavi(["replay", record["execution_id"][:8], "--yes"])
    assert replay.returncode == 0, replay.stdout + replay.stderr
    refused = demo_run.kavi(["run", "write_note", "--json", '{"title": "x", "body": "y", "tags": []}'])
    assert refused.returncode == 2 and "--yes" in refused.stderr


def test_a_trusted_demo_skill_survives_reproposal_and_forging_with_the_endpoint_down(
        demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> None:
    """After `kavi demo`: in a copy of the demo's home (the shared one stays as the demo left it),
    re-propose a trusted skill with a changed class and forge it against an endpoint that is down: the trusted
    version keeps running, and nothing is promoted."""
    import shutil
    import socket

    import yaml

    tmp = tmp_path_factory.mktemp("versioned")
    home = tmp / "home"
    shutil.copytree(demo_run.home, home, ignore=shutil.ignore_patterns("dagster", "sandboxes"))
    (tmp / "dh").mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(demo_run.env, KAVI_HOME=str(home), DAGSTER_HOME=str(tmp / "dh"),
               KAVI_LLM_BASE_URL=f"http://127.0.0.1:{port}/v1", KAVI_LLM_MODELS="offline-model",
               KAVI_LLM_TIMEOUT_S="5")
    src = REPO / "kavi" / "examples" / "proposals" / "write_note.yaml"
    data = yaml.safe_load(src.read_text())
    data["side_effect_class"] = "NETWORK"
    prop = tmp / "write_note.yaml"
    prop.write_text(yaml.safe_dump(data))
    proposed = demo_run.kavi(["propose", str(prop)], env)
    assert proposed.returncode == 0 and "FILE_WRITE → NETWORK" in proposed.stdout, proposed.stdout
    demo_run.kavi(["forge", "write_note"], env)
    res = demo_run.kavi(["run", "write_note", "--yes", "--output-json", "--json",
                         '{"title": "Still trusted", "body": "The endpoint is down.", "tags": []}'], env)
    assert res.returncode == 0, res.stdout + res.stderr
    record = json.loads(res.stdout)
    assert record["side_effect_class"] == "FILE_WRITE" and record["skill_version"] == 1
    assert demo_run.kavi(["verify"], env).returncode == 0


def test_decomposed_proposal_trusted_through_its_children(demo_run: DemoRun) -> None:
    """The demo's email_domain_report repeats one failure, is decomposed (recorded answer), its two
    children are forged and trusted, and it ends TRUSTED through them; `kavi run` runs its composition."""
    rows = _status(demo_run)
    for name in ("email_domain_report", "find_addresses", "domains_of_addresses"):
        assert rows[name]["status"] == "TRUSTED", (name, rows.get(name))
    assert "decomposition VERIFIED (REPEATED_FAILURE" in demo_run.stdout
    tree = json.loads(demo_run.kavi(["tree", "email_domain_report", "--json"]).stdout)
    assert tree["state"] == "TRUSTED" and tree["decomposition"]["status"] == "VERIFIED"
    assert [(c["name"], c["state"]) for c in tree["children"]] == [("find_addresses", "TRUSTED"),
                                                                   ("domains_of_addresses", "TRUSTED")]
    doc = json.loads(demo_run.kavi(["lineage", "email_domain_report", "--json"]).stdout)
    assert [a["failure_kind"] for a in doc["attempts"][:3]] == ["LLM_BAD_OUTPUT"] * 3
    assert doc["attempts"][3]["gates"] == {"children": "passed", "acceptance": "passed"}
    assert [e["child"] for e in doc["decomposition_edges"]] == ["find_addresses", "domains_of_addresses"]
    res = demo_run.kavi(["run", "email_domain_report", "--output-json", "--json",
                         '{"text": "ann@Example.org, bob@mail.example.com and ann@example.org"}'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads(res.stdout)["output"] == {"domains": ["example.org", "mail.example.com"], "count": 3}
