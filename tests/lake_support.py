"""A PostgreSQL cluster for tests of the shared (DuckLake) ledger, and a fresh lake per test.

`KAVI_TEST_LEDGER=ducklake python -m pytest tests/core/...` runs the ledger's own tests against DuckLake: every test
gets its own catalog database and data folder through KAVI_LEDGER_URL / KAVI_LEDGER_DATA (tests/conftest.py)."""

import importlib.util
import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kavi.scale.services import PG_USER, Services, missing_binaries

_counter = itertools.count(1)


def lake_skip_reason() -> str | None:
    missing = [b for b in missing_binaries() if b != "redis-server"]
    if missing:
        return (f"the shared ledger needs PostgreSQL's binaries: missing {', '.join(missing)} "
                "(apt-get install postgresql)")
    for pkg in ("duckdb_extension_ducklake", "duckdb_extension_postgres", "psycopg2"):
        if importlib.util.find_spec(pkg) is None:
            return f"the shared ledger needs {pkg.replace('_', '-')}: pip install -e '.[scale]'"
    return None


def start_cluster() -> Iterator[Services]:
    reason = lake_skip_reason()
    if reason:
        pytest.skip(reason)
    svc = Services(Path(tempfile.mkdtemp(prefix="kavi-lake-test-")))
    try:
        svc.start_postgres()
        yield svc
    finally:
        from kavi.ledger.lake import close_lakes

        close_lakes()
        svc.stop()


def new_lake(svc: Services, data_root: Path) -> dict[str, str]:
    """A new, empty lake: its own catalog database in the cluster and its own data folder."""
    import psycopg2

    dbname = f"lake_{next(_counter)}"
    con = psycopg2.connect(host="127.0.0.1", port=svc.pg_port, user=PG_USER, dbname="postgres")
    try:
        con.autocommit = True
        with con.cursor() as cur:
            cur.execute(f"CREATE DATABASE {dbname}")
    finally:
        con.close()
    return {"KAVI_LEDGER_URL": f"ducklake:postgres:host=127.0.0.1 port={svc.pg_port} user={PG_USER} dbname={dbname}",
            "KAVI_LEDGER_DATA": str(data_root / f"{dbname}-data")}
