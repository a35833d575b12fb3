"""The parent's acceptance through its composition: the parent's own examples and holdouts, run in the gate sandbox
against the trusted children chained as the composition says, judged outside the sandbox by the acceptance gate's
own judge (so a holdout's values never reach a message)."""

import hashlib
import json
import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kavi.build.sandbox_dir import write_files
from kavi.gates.acceptance import _cases, job_case, judge_examples
from kavi.gates.acceptance_runner import RESULT_PREFIX
from kavi.lifecycle import Verdict
from kavi.proposals.model import Proposal
from kavi.sandbox.runner import Limits
from kavi.sandbox.warm import run_warm
from kavi.verdicts import GATE_ACCEPTANCE, GATE_CHILDREN, GateResult


def children_gate(pins: Mapping[str, Mapping[str, Any]], not_served: Sequence[str] = ()) -> GateResult:
    """The `children` gate of a composition: passed when every child it pins is a served trusted version, else
    failed naming those that are not (`not_served`)."""
    if not_served:
        return GateResult(GATE_CHILDREN, Verdict.FAILED, "a child is no longer trusted: " + "; ".join(not_served),
                          0.0, list(not_served), {"children": dict(pins)})
    return GateResult(GATE_CHILDREN, Verdict.PASSED, "every child is trusted: " + ", ".join(
        f"{c}@{p.get('version')}" for c, p in pins.items()), 0.0, [], {"children": dict(pins)})


def composition_acceptance(work: Path, parent: Proposal, doc: Mapping[str, Any], child_bytes: Mapping[str, bytes],
                           limits: Limits) -> GateResult:
    """Run every example and holdout example of `parent` through the composition in a fresh sandbox (`work`, an
    empty directory) holding pristine copies of the children's trusted bytes; the acceptance verdict on them."""
    pins = doc.get("children") or {}
    files: dict[str, bytes] = {}
    children: dict[str, dict[str, Any]] = {}
    for name, data in child_bytes.items():
        digest = hashlib.sha256(data).hexdigest()
        pin = pins.get(name) or {}
        if pin.get("sha256") != digest:
            return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, f"child {name}: its bytes are not the pinned trusted "
                              "version", 0.0)
        rel = f"skills/{name}.py"
        files[rel] = data
        children[name] = {"skill_file": rel, "sha256": digest, "side_effect_class": pin.get("side_effect_class"),
                          "declared_secrets": list(pin.get("required_secrets") or [])}
    write_files(work, files)
    cases = _cases(parent)
    nonce = secrets.token_hex(16)
    job = {"composition": dict(doc), "children": children, "nonce": nonce,
           "cases": [job_case(i, ex) for i, (_label, _holdout, ex) in enumerate(cases)]}
    res = run_warm([sys.executable, "-m", "kavi.gates.composition_runner"], cwd=work, limits=limits,
                   stdin=json.dumps(job).encode(), scratch=True)
    marker = f"{RESULT_PREFIX}{nonce}:"
    results: dict[int, dict[str, Any]] = {}
    load_error = ""
    for ln in res.stdout.splitlines():
        if not ln.startswith(marker):
            continue
        try:
            payload = json.loads(ln[len(marker):])
        except json.JSONDecodeError:
            continue
        if isinstance(payload, dict) and "load_error" in payload:
            load_error = str(payload["load_error"])[:500]
        elif isinstance(payload, dict) and isinstance(payload.get("result"), dict):
            entry = payload["result"]
            if isinstance(entry.get("id"), int) and entry["id"] not in results:
                results[entry["id"]] = entry
    if load_error or len(results) < len(cases):
        why = (f"a child could not be loaded: {load_error}" if load_error
               else "timed out" if res.timed_out else f"the composition run died (exit {res.returncode})")
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, f"the composition did not run: {why}", 0.0,
                          [load_error] if load_error else [], {"isolation": res.isolation})
    verdict = judge_examples(parent, [results[i] for i in range(len(cases))])
    verdict.details["isolation"] = res.isolation
    verdict.details["through"] = "composition"
    return verdict
