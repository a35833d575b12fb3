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


def test_kavi_run_starts_its_worker_before_the_commands_imports(kavi_home: KaviHome) -> None:
    # The process as the console script runs it: the worker's start is the first thing `main` does, before typer,
    # the command's module and the ledger are imported (their time overlaps the worker's start), and the answer
    # and its record are the same as ever.
    import json
    import os
    import subprocess
    import sys

    trust_example(kavi_home, "word_count")
    probe = (
        "import sys\n"
        "import kavi.runtime.worker as w\n"
        "real = w.one_call_pool\n"
        "def traced():\n"
        "    print('typer imported at start:', 'typer' in sys.modules, file=sys.stderr)\n"
        "    return real()\n"
        "w.one_call_pool = traced\n"
        "sys.argv = ['kavi', 'run', 'word_count', '--json', '{\"text\": \"a b\"}', '--output-json']\n"
        "from kavi_assets.cli.main import main\n"
        "main()\n"
    )
    env = {**os.environ, "KAVI_HOME": str(kavi_home.root)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == "typer imported at start: False"
    record = json.loads(done.stdout)
    assert record["success"] and record["output"] == {"words": 2, "lines": 1, "characters": 3}
