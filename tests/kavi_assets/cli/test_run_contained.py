"""The demo's write_note, trusted and run as `kavi run` and `kavi serve` run it: twenty callers creating one note at
once without overwrite get exactly one `written=true`, and the note holds the winner's text."""

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from kavi.home import KaviHome
from kavi.runtime.worker import sandbox_problem
from kavi_assets.cli.runtime_cmd import _runner
from tests.factories import trust_example

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no worker sandbox here: {sandbox_problem()}")


def test_twenty_concurrent_creates_of_one_note_write_once(kavi_home: KaviHome) -> None:
    trust_example(kavi_home, "write_note")
    runner, _, _ = _runner(kavi_home)

    def create(i: int) -> Any:
        return runner.run("write_note", {"title": "Shared", "body": f"from caller {i}", "overwrite": False},
                          confirmed=True)

    with ThreadPoolExecutor(max_workers=20) as threads:
        records = list(threads.map(create, range(20)))
    written = [r for r in records if r.success and r.output_data()["written"]]
    refused = [r for r in records if not r.success]
    assert len(written) == 1
    assert len(refused) == 19 and all("holds a different note" in str(r.error) for r in refused)
    winner = written[0].input_data()["body"]
    assert (kavi_home.vault_dir / "notes" / "shared.md").read_text().endswith(f"{winner}\n")
    writes = [e for r in records for e in (r.effects or []) if e["effect"] == "vault.write"]
    assert len(writes) == 20 and sum(e["ok"] for e in writes) == 1
