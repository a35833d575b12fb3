"""The acceptance gate: the forge runs the proposal's examples and holdout examples against the built skill."""

import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from kavi_assets.gates.acceptance_runner import RESULT_PREFIX
from kavi_assets.gates.types import GATE_ACCEPTANCE, GateResult
from kavi_assets.lifecycle import Verdict
from kavi_assets.proposals.model import Proposal
from kavi_assets.sandbox.runner import Limits
from kavi_assets.sandbox.warm import run_warm


def _job(proposal: Proposal, skill_file: Path) -> dict[str, Any]:
    examples = [
        {"label": f"example[{i}]", "holdout": False, **ex.model_dump(mode="json")}
        for i, ex in enumerate(proposal.examples)
    ] + [
        {"label": f"holdout[{i}]", "holdout": True, **ex.model_dump(mode="json")}
        for i, ex in enumerate(proposal.holdout_examples)
    ]
    return {
        "skill_path": str(skill_file),
        "side_effect_class": proposal.side_effect_class.value,
        "declared_secrets": list(proposal.required_secrets),
        "examples": examples,
    }


def acceptance_gate(work: Path, proposal: Proposal, limits: Limits) -> GateResult:
    skill_file = work / "skills" / f"{proposal.name}.py"
    nonce = secrets.token_hex(16)
    job = json.dumps({**_job(proposal, skill_file), "nonce": nonce}).encode()
    t0 = time.monotonic()
    res = run_warm([sys.executable, "-m", "kavi_assets.gates.acceptance_runner"], cwd=work, limits=limits,
                        stdin=job)
    duration = time.monotonic() - t0
    details: dict[str, Any] = {"isolation": res.isolation}
    if res.timed_out:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, f"timed out after {limits.wall_s:.0f}s", duration, [],
                          details)
    marker = f"{RESULT_PREFIX}{nonce}:"
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(marker)), None)
    if line is None:
        tail = [ln for ln in (res.stdout + res.stderr).splitlines() if ln.strip()][-8:]
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, f"the acceptance run died (exit {res.returncode})",
                          duration, tail, details)
    out = json.loads(line[len(marker):])
    if "load_error" in out:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED, f"the skill could not be loaded: {out['load_error']}",
                          duration, [out["load_error"]], details)
    results = out["results"]
    shown = [r for r in results if not r["holdout"]]
    hidden = [r for r in results if r["holdout"]]
    messages = []
    for r in shown:
        if not r["ok"]:
            messages.append(f"{r['label']}: " + (r.get("error") or f"wrong output {json.dumps(r['mismatches'])}"))
    holdout_failed = sum(1 for r in hidden if not r["ok"])
    if holdout_failed:
        # The builder must not learn the holdout cases; it only learns how many failed.
        messages.append(f"{holdout_failed} of {len(hidden)} holdout example(s) failed")
    details.update(examples=len(shown), holdout=hidden, holdout_failed=holdout_failed,
                   examples_failed=sum(1 for r in shown if not r["ok"]))
    total_failed = details["examples_failed"] + holdout_failed
    if total_failed:
        return GateResult(GATE_ACCEPTANCE, Verdict.FAILED,
                          f"{total_failed} of {len(results)} examples failed ({holdout_failed} holdout)",
                          duration, messages, details)
    return GateResult(GATE_ACCEPTANCE, Verdict.PASSED,
                      f"all {len(shown)} examples and {len(hidden)} holdout examples passed", duration, [], details)
