"""JSON values compared as the contract means it (acceptance, the differential gate and the mutation analysis
all compare this way)."""

import json
import math
from typing import Any


def equal(a: Any, b: Any) -> bool:
    """JSON values equal as the contract means it: bools are not numbers, numbers compare with a tolerance."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return bool(a == b)


FIXTURE_FIELDS = ("vault_files", "http_responses", "secrets")
# Past this many characters of JSON a case's fixtures are not copied into a report (it says they were left out).
MAX_KEPT_FIXTURE_CHARS = 20_000


def case_fixtures(case: dict[str, Any]) -> dict[str, Any] | None:
    """The handle fixtures a case ran with, the non-empty ones: what a holdout made from its input needs to get the
    same answer. {} when it has none; None when they are too large to keep in a report."""
    found = {k: case[k] for k in FIXTURE_FIELDS if case.get(k)}
    if found and len(json.dumps(found, default=str)) > MAX_KEPT_FIXTURE_CHARS:
        return None
    return found


def with_fixtures(entry: dict[str, Any], case: dict[str, Any] | None) -> dict[str, Any]:
    """A report's question or counterexample `entry` with the handle fixtures `case` ran with, when it had any (a
    holdout made from its input needs them)."""
    fixtures = case_fixtures(case) if case is not None else {}
    return entry if fixtures == {} else {**entry, "fixtures": fixtures}
