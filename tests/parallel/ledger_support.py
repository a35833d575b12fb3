"""What the ledger tests of issue 13 share: a writer process doing a forge step's reads and writes."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

# argv: ledger path, writer number, units of work; prints the process's ledger-lock figures as JSON.
WRITER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger, lock_stats
    rec = ForgeRecords(Ledger(Path(sys.argv[1])))
    me, n = int(sys.argv[2]), int(sys.argv[3])
    for i in range(n):
        # a forge step's shape: read what routing needs, then write, in one transaction
        with rec.session():
            rec.outcome_counts("READ_ONLY/simple")
            rec.record_model_outcome(build_id=f"w{me}-{i}", name=f"p{me}", model="coder-a",
                                     task_type="READ_ONLY/simple", success=i % 2 == 0, failure_kind=None,
                                     latency_ms=None, tokens=None, cost_usd=None)
    print(json.dumps(lock_stats))
""")


def run_writers(path: Path, writers: int, units: int) -> list[dict[str, Any]]:
    """`writers` processes doing `units` units of work each on the ledger at `path`, all at once; each one's
    lock figures. Every process must end cleanly and say nothing about a lock."""
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(w), str(units)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    stats = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        assert "lock" not in err.lower(), err
        stats.append(json.loads(out))
    return stats
