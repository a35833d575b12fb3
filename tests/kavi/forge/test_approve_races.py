"""Approving a version that is already trusted says so and records nothing; of two concurrent
approvals one wins and the other is told who; the promotion hash chain stays linear across processes."""

import os
import subprocess
import sys
import textwrap
from typing import Any

from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi_assets.cli.main import app
from tests.factories import WORD_COUNT_SOURCE, forge_ctx, run_kavi, trust_version, verified_candidate, word_count_spec

runner = CliRunner()


def _counts(home: KaviHome) -> tuple[int, int]:
    with forge_ctx(home).records.ledger.connect() as con:
        approvals = con.execute("SELECT count(*) FROM approvals").fetchone()
        promotions = con.execute("SELECT count(*) FROM promotions").fetchone()
    assert approvals is not None and promotions is not None
    return int(approvals[0]), int(promotions[0])


def test_approving_a_trusted_version_says_so_and_records_nothing(kavi_home: KaviHome) -> None:
    trust_version(kavi_home, word_count_spec(), WORD_COUNT_SOURCE, approver="alice")
    before = _counts(kavi_home)
    res = runner.invoke(app, ["approve", "word_count", "--by", "bob"])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    assert "word_count@1 is already trusted" in res.output and "alice" in res.output
    assert "nothing recorded" in res.output
    assert _counts(kavi_home) == before


def _env(home: KaviHome) -> dict[str, str]:
    return {**os.environ, "KAVI_HOME": str(home.root), "KAVI_RECORDED_SPEED": "0"}


def test_two_concurrent_approvals_one_wins_and_the_other_is_told(kavi_home: KaviHome) -> None:
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home

    build_id = verified_candidate(kavi_home, word_count_spec(), WORD_COUNT_SOURCE)
    # The Dagster instance exists before the race (two processes creating a fresh DAGSTER_HOME's storage at once
    # collide in Dagster's own schema set-up, which is not what this test is about).
    ensure_dagster_home(kavi_home)
    add_partition("word_count")
    env = _env(kavi_home)
    procs = {who: subprocess.Popen([sys.executable, "-m", "kavi_assets.cli", "approve", "word_count", "--by", who],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for who in ("alice", "bob")}
    outputs = {who: p.communicate(timeout=300)[0] for who, p in procs.items()}
    records = forge_ctx(kavi_home).records
    promotions = records.promotions("word_count")
    assert [(p.build_id, p.version) for p in promotions] == [(build_id, 1)], outputs
    assert records.verify_promotion_chain() == []
    winner = promotions[0].approved_by
    loser = "bob" if winner == "alice" else "alice"
    assert procs[winner].returncode == 0 and procs[loser].returncode == 0, outputs
    assert "word_count@1 is TRUSTED" in outputs[winner] and "Traceback" not in outputs[winner]
    assert winner in outputs[loser] and "Traceback" not in outputs[loser], outputs[loser]
    assert ("approved it first" in outputs[loser] or "already trusted" in outputs[loser]), outputs[loser]
    with records.ledger.connect() as con:
        assert con.execute("SELECT approved_by FROM approvals").fetchall() == [(winner,)]
    assert run_kavi(["verify"], env).returncode == 0


_PROMOTE = textwrap.dedent("""
    import sys
    from kavi.forge.context import ForgeContext
    from kavi.forge.promote import PromotionRefused, approve, promote
    from kavi.home import KaviHome

    def no_llm():
        raise AssertionError
    ctx = ForgeContext.open(KaviHome.from_env(), no_llm)
    name, who = sys.argv[1], sys.argv[2]
    try:
        outcome = approve(ctx, name, who)
    except PromotionRefused as err:
        print("refused:", err)
    out = promote(ctx, name)
    print(name, who, out.promoted, out.reason, out.approved_by)
""")


def test_the_promotion_chain_stays_linear_across_processes(kavi_home: KaviHome) -> None:
    names = ["alpha_skill", "beta_skill", "gamma_skill", "delta_skill"]
    for name in names:
        source = WORD_COUNT_SOURCE.replace('name = "word_count"', f'name = "{name}"')
        verified_candidate(kavi_home, {**word_count_spec(), "name": name}, source)
    env = _env(kavi_home)
    jobs = [(name, "ana") for name in names] + [("alpha_skill", "bo"), ("alpha_skill", "cy")]
    procs = [subprocess.Popen([sys.executable, "-c", _PROMOTE, name, who], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for name, who in jobs]
    outs: list[Any] = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    records = forge_ctx(kavi_home).records
    chain = records.promotions()
    assert [p.seq for p in chain] == [1, 2, 3, 4], outs
    assert sorted(p.proposal_name for p in chain) == sorted(names)
    assert all(p.version == 1 for p in chain)
    assert records.verify_promotion_chain() == []
