"""Three `kavi forge` of one proposal at once make one attempt: the two that wait report the attempt they waited for
(its verdict and exit status) instead of paying for another; `--again` asks for a new attempt after it."""

import json
import os
import subprocess
import sys

import pytest

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from tests.factories import PROPOSALS, run_kavi

pytestmark = pytest.mark.slow


def test_three_concurrent_forges_make_one_attempt(kavi_home: KaviHome) -> None:
    env = dict(os.environ)
    assert run_kavi(["propose", str(PROPOSALS / "word_count.yaml")], env).returncode == 0
    forges = [subprocess.Popen([sys.executable, "-m", "kavi_assets.cli", "forge", "word_count", "--json"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    done = [(f.communicate(timeout=600), f.returncode) for f in forges]
    outcomes = [json.loads(out) for (out, _), _ in done]
    builds = ForgeRecords(Ledger(kavi_home.ledger_path)).builds("word_count")
    assert len(builds) == 1, [b.build_id for b in builds]
    assert {o["build_id"] for o in outcomes} == {builds[0].build_id}
    waited = [o for o in outcomes if "waited_for" in o]
    assert len(waited) == 2 and all(o["waited_for"] == builds[0].run_id for o in waited)
    assert len({code for _, code in done}) == 1, [(code, err[-3000:]) for (_, err), code in done]  # same exit status
    told = [err for (_, err), _ in done if "waiting:" in err]
    assert len(told) == 2 and all("reports that attempt's verdict" in err for err in told)
    again = run_kavi(["forge", "word_count", "--again", "--json"], env)
    assert json.loads(again.stdout).get("waited_for") is None  # nobody was forging: --again changes nothing
