"""Ledger queries at scale: seed 10,000 proposals × 3 attempts, with everything a real attempt leaves behind
(packet, answer, build log, skill, tests, report and research artifacts with their lineage edges, 7 gate results
per attempt, status events, research notes, model outcomes, approvals and a hash-chained promotion each), then time
`kavi status`, `kavi status NAME`, `kavi lineage NAME` and the posterior query, in process and through the CLI.

Run: python benchmarks/ledger_scale.py [--proposals 10000] [--attempts 3] [--runs 9]
In-process figures are the query functions the CLI calls, in an already-started Python; CLI figures are whole
processes (interpreter start and imports included), shown beside `kavi --help` so the difference is the query.
"""

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kavi.ledger.records import GENESIS_HASH, ForgeRecords, promotion_hash
from kavi.ledger.schema import LATEST_BUILD_SET, LATEST_BUILDS
from kavi.ledger.store import Ledger
from kavi.verdicts import ALL_GATES

SPEC = {
    "name": "__NAME__", "description": "A seeded proposal for the ledger scale benchmark.",
    "side_effect_class": "READ_ONLY", "inputs": [{"name": "text", "type": "str"}],
    "outputs": [{"name": "n", "type": "int"}],
    "examples": [{"input": {"text": "a"}, "expected": {"n": 1}}],
    "holdout_examples": [{"input": {"text": "ab"}, "expected": {"n": 2}}],
}
ROLES = [  # (role, artifact kind, parent role, relation); research only on failed attempts
    ("packet", "build_packet", "spec", "packet_of"),
    ("llm_answer", "llm_answer", "packet", "answer_to"),
    ("build_log", "build_log", "packet", "log_of"),
    ("skill", "skill_source", "llm_answer", "file_of"),
    ("tests", "skill_tests", "llm_answer", "file_of"),
    ("report", "verification_report", "skill", "report_of"),
    ("research", "research_note", "report", "research_of"),
]


def seed(path: Path, n: int, k: int) -> float:
    """Bulk-insert with set-based SQL (the forge writes row by row; seeding 30,000 attempts that way takes hours),
    each table in time order, as a ledger the forge appended to over time has its rows."""
    from kavi.proposals.model import parse_proposal

    t0 = time.perf_counter()
    ledger = Ledger(path)
    ledger.migrate()
    spec_json = parse_proposal({**SPEC, "name": "skill_00000"}).canonical_json().replace("skill_00000", "__NAME__")
    gates = ", ".join(f"'{g}'" for g in ALL_GATES)
    roles = ", ".join(f"('{r}', '{kind}', '{parent}', '{rel}', {i})" for i, (r, kind, parent, rel) in enumerate(ROLES))
    with ledger.connect() as con:
        con.execute(f"""CREATE TEMP TABLE att AS
            SELECT p.i, a.a, printf('skill_%05d', p.i) AS name, printf('skill_%05d-a%d-seed', p.i, a.a) AS bid,
                   TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(p.i * 60 + a.a * 10) AS t
            FROM range({n}) p(i), range(1, {k + 1}) a(a)""")
        con.execute("CREATE TEMP TABLE roles (role VARCHAR, kind VARCHAR, parent VARCHAR, rel VARCHAR, o INT)")
        con.execute(f"INSERT INTO roles VALUES {roles}")
        con.execute(f"""INSERT INTO proposals
            SELECT printf('skill_%05d', i), replace(?, '__NAME__', printf('skill_%05d', i)),
                   sha256(replace(?, '__NAME__', printf('skill_%05d', i))), 'READ_ONLY', 0.2, 'TRUSTED', NULL,
                   TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i * 60),
                   TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i * 60 + 59), 0, NULL, NULL, NULL, NULL, 1, 1
            FROM range({n}) r(i)""", [spec_json, spec_json])
        # Each spec is its proposal's revision 1 (schema 6).
        con.execute("""INSERT INTO proposal_revisions SELECT name, 1, spec_json, spec_sha256, side_effect_class, NULL,
                       '[]', 'kavi', NULL, created_at FROM proposals""")
        con.execute(f"""INSERT INTO builds
            SELECT bid, name, a, CASE WHEN a > 1 THEN printf('skill_%05d-a%d-seed', i, a - 1) END,
                   'run-' || bid, CASE WHEN a % 2 = 1 THEN 'recorded-coder-a' ELSE 'recorded-coder-b' END,
                   'recorded model', sha256('packet:' || bid),
                   CASE WHEN a = {k} THEN 'VERIFIED' ELSE 'VERIFY_FAILED' END,
                   CASE WHEN a = {k} THEN NULL ELSE 'VERIFY_TEST' END, 900, 700, 5.0, NULL,
                   sha256('skill:' || bid), sha256('tests:' || bid), t, t + INTERVAL 5 SECOND, 1
            FROM att ORDER BY t""")
        # Each proposal row mirrors its latest build, as the forge keeps it (schema 4).
        con.execute(f"UPDATE proposals SET {LATEST_BUILD_SET} FROM ({LATEST_BUILDS}) b WHERE b.proposal_name = name")
        con.execute(f"""INSERT INTO gate_results
            SELECT bid, g, v, v, CASE WHEN v = 'passed' THEN 'ok' ELSE '1 of 3 tests failed' END, 40.0,
                   CASE WHEN v = 'passed' THEN '[]' ELSE '["test_example_1 failure: assert 2 == 3"]' END, '{{}}',
                   t + INTERVAL 4 SECOND
            FROM (SELECT *, unnest([{gates}]) AS g FROM att) x,
                 LATERAL (SELECT CASE WHEN x.a < {k} AND x.g = 'pytest' THEN 'failed' ELSE 'passed' END AS v)
            ORDER BY x.t, x.g""")
        con.execute(f"""CREATE TEMP TABLE arts AS
            SELECT att.*, roles.*, sha256(roles.role || ':' || bid) AS sha,
                   CASE WHEN roles.parent = 'spec'
                        THEN (SELECT spec_sha256 FROM proposals WHERE proposals.name = att.name)
                        ELSE sha256(roles.parent || ':' || bid) END AS parent_sha
            FROM att, roles WHERE roles.role <> 'research' OR att.a < {k}""")
        con.execute("UPDATE arts SET sha = sha256('packet:' || bid) WHERE role = 'packet'")
        con.execute("UPDATE arts SET sha = sha256('skill:' || bid) WHERE role = 'skill'")
        con.execute("UPDATE arts SET sha = sha256('tests:' || bid) WHERE role = 'tests'")
        con.execute("UPDATE arts SET parent_sha = sha256('packet:' || bid) WHERE parent = 'packet'")
        con.execute("UPDATE arts SET parent_sha = sha256('skill:' || bid) WHERE parent = 'skill'")
        con.execute("""INSERT INTO artifacts
            SELECT sha, kind, 2048, 'artifacts/sha256/' || substr(sha, 1, 2) || '/' || sha, t + to_seconds(o)
            FROM arts ORDER BY t, o""")
        con.execute("INSERT INTO build_artifacts SELECT bid, role, sha FROM arts ORDER BY t, o")
        con.execute("INSERT INTO lineage (parent_sha256, child_sha256, relation, build_id, proposal_name, created_at, "
                    "child_kind, child_size) SELECT parent_sha, sha, rel, bid, name, t + to_seconds(o), kind, 2048 "
                    "FROM arts ORDER BY t, o")
        con.execute(f"""INSERT INTO research_notes
            SELECT bid, name, a, 'VERIFY_TEST', sha256('fp:' || name), '{{"gates": {{"pytest": {{"messages":
                   ["test_example_1 failure: assert 2 == 3"]}}}}}}', '[]', NULL, false, sha256('research:' || bid),
                   t + INTERVAL 6 SECOND
            FROM att WHERE a < {k} ORDER BY t""")
        con.execute(f"""INSERT INTO status_events
            SELECT printf('skill_%05d', i), NULL, 'PROPOSED', NULL, 'proposed', 'kavi',
                   TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i * 60) FROM range({n}) r(i)
            UNION ALL
            SELECT name, 'PROPOSED', 'BUILT', bid, 'files written to sandbox', 'forge', t + INTERVAL 1 SECOND FROM att
            UNION ALL
            SELECT name, 'BUILT', CASE WHEN a = {k} THEN 'VERIFIED' ELSE 'FAILED' END, bid, 'verify', 'forge',
                   t + INTERVAL 6 SECOND FROM att
            UNION ALL
            SELECT name, 'VERIFIED', 'TRUSTED', bid, 'promoted', 'auto', t + INTERVAL 9 SECOND FROM att WHERE a = {k}
            ORDER BY 7""")
        con.execute(f"""INSERT INTO model_outcomes
            SELECT bid, name, CASE WHEN a % 2 = 1 THEN 'recorded-coder-a' ELSE 'recorded-coder-b' END,
                   'READ_ONLY/simple', a = {k}, CASE WHEN a = {k} THEN NULL ELSE 'VERIFY_TEST' END, 5.0, 1600, NULL,
                   t + INTERVAL 7 SECOND
            FROM att ORDER BY t""")
        con.execute(f"""INSERT INTO approvals SELECT name, bid, 'auto-approve policy (READ_ONLY)', 'auto_approve',
                        t + INTERVAL 8 SECOND FROM att WHERE a = {k}""")
        rows = con.execute(f"SELECT i, name, bid, t + INTERVAL 9 SECOND FROM att WHERE a = {k} ORDER BY i").fetchall()
    # The promotions are a hash chain: computed here, inserted in batches.
    prev = GENESIS_HASH
    promos: list[list[Any]] = []
    for i, name, bid, at in rows:
        payload = {"seq": i + 1, "proposal_name": name, "build_id": bid, "from_status": "VERIFIED",
                   "to_status": "TRUSTED", "approved_by": "auto-approve policy (READ_ONLY)",
                   "source_sha256": hashlib.sha256(f"skill:{bid}".encode()).hexdigest(),
                   "test_sha256": hashlib.sha256(f"tests:{bid}".encode()).hexdigest(),
                   "skill_path": f"skills/{name}.py", "prev_hash": prev, "created_at": at.isoformat()}
        digest = promotion_hash(payload)
        # Version 1 of each skill, hashed as records written before schema 6 were (record format 1).
        promos.append([payload["seq"], name, bid, "VERIFIED", "TRUSTED", payload["approved_by"],
                       payload["source_sha256"], payload["test_sha256"], payload["skill_path"], prev, digest, at,
                       1, 1, None, "READ_ONLY", 1])
        prev = digest
    with ledger.connect() as con:
        for start in range(0, len(promos), 500):
            chunk = promos[start:start + 500]
            con.execute("INSERT INTO promotions VALUES " + ", ".join(["(" + ", ".join(["?"] * 17) + ")"] * len(chunk)),
                        [v for row in chunk for v in row])
    with ledger.connect() as con:
        con.execute("CHECKPOINT")
    return time.perf_counter() - t0


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    fn()  # the first call warms the process (imports, caches): the figures are steady-state
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def counts(path: Path) -> dict[str, int]:
    with Ledger(path).connect() as con:
        return {t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
                for t in ("proposals", "builds", "gate_results", "artifacts", "lineage", "status_events",
                          "research_notes", "model_outcomes", "promotions")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proposals", type=int, default=10_000)
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the seeded home (deleted by default)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="kavi-scale-"))
    path = home / "ledger.duckdb"
    took = seed(path, args.proposals, args.attempts)
    c = counts(path)
    print(f"seeded in {took:.1f}s: " + ", ".join(f"{v:,} {k}" for k, v in c.items()))
    print(f"ledger file: {path.stat().st_size / 1e6:.1f} MB; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}\n")

    from kavi.promotion.registry import write_registry
    from kavi.routing.posteriors import Outcome, OutcomeCounts, compute_posteriors, posteriors_from_counts
    from kavi_assets.cli.lineage_document import lineage_doc

    records = ForgeRecords(Ledger(path))
    mid = f"skill_{args.proposals // 2:05d}"

    def posteriors() -> None:
        """The baseline: posteriors from every outcome row (what the learning asset did before it read sums)."""
        rows = records.model_outcomes()
        compute_posteriors([Outcome(r["model"], r["task_type"], bool(r["success"]), r["latency_ms"] or 0.0,
                                    r["tokens"] or 0, r["cost_usd"]) for r in rows],
                           models=["recorded-coder-a", "recorded-coder-b"], task_types=["READ_ONLY/simple"])

    def learner_sums() -> None:
        """What the learning asset does now: outcomes summed per (model, task type) in SQL."""
        posteriors_from_counts([OutcomeCounts(*r) for r in records.outcome_summary()],
                               models=["recorded-coder-a", "recorded-coder-b"])

    def registry_mark() -> None:
        """What the refresh_registry sensor reads at each tick."""
        records.registry_mark()

    def posterior_counts() -> None:
        """What routing reads before every attempt (prepare_packet): outcome counts of the attempt's task type."""
        records.outcome_counts("READ_ONLY/simple")

    rows: list[tuple[str, Callable[[], object], str]] = [
        ("kavi status: every proposal", lambda: records.list_status(), "< 50"),
        ("kavi status NAME", lambda: records.list_status(mid), "< 50"),
        ("kavi lineage NAME (3 attempts)", lambda: lineage_doc(records, mid), "< 50"),
        ("posterior query before an attempt (counts, SQL)", posterior_counts, "< 50"),
        ("learning asset: posteriors from sums in SQL", learner_sums, ""),
        ("  baseline: posteriors from every outcome row", posteriors, ""),
        ("registry sensor tick: the ledger mark", registry_mark, ""),
        ("registry.json regenerated (10k trusted; not per promotion)",
         lambda: write_registry(records, home / "registry.json"), ""),
    ]
    print(f"in process ({args.proposals:,} proposals; median and worst of {args.runs} after one warm-up call)")
    print(f"{'query':60} {'p50 ms':>8} {'max ms':>8} {'target ms':>10}")
    for label, fn, target in rows:
        p50, worst = timed(fn, args.runs)
        print(f"{label:60} {p50:8.1f} {worst:8.1f} {target:>10}")

    env = dict(os.environ, KAVI_HOME=str(home), DAGSTER_HOME=str(home / "dagster"))
    kavi = [sys.executable, "-m", "kavi_assets.cli"]
    print(f"\nthrough the CLI (whole processes; median and worst of {args.cli_runs})")
    print(f"{'command':52} {'p50 ms':>8} {'max ms':>8} {'- --help':>10}")
    base = None
    for label, argv in (("kavi --help (interpreter start + CLI imports)", ["--help"]),
                        ("kavi status --json", ["status", "--json"]),
                        ("kavi status NAME --json", ["status", mid, "--json"]),
                        ("kavi lineage NAME --json", ["lineage", mid, "--json"]),
                        ("kavi lineage NAME (rich tree)", ["lineage", mid])):
        def run(argv: list[str] = argv) -> None:
            subprocess.run([*kavi, *argv], env=env, capture_output=True, check=True)

        p50, worst = timed(run, args.cli_runs)
        base = p50 if base is None else base
        print(f"{label:52} {p50:8.0f} {worst:8.0f} {p50 - base:10.0f}")
    print(f"\nload average (1 min) after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs shared with other work")
    if args.keep:
        print(f"the seeded home is kept at {home}")
    else:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
