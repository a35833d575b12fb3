"""Proposal intake: files dropped in the inbox become ledger records, partitions and forge runs."""

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from kavi_assets.assets.jobs import forge_job
from kavi_assets.assets.partitions import PROPOSALS, proposals_partitions
from kavi_assets.forge.context import ForgeContext
from kavi_assets.forge.pipeline import intake
from kavi_assets.proposals.model import ProposalError, load_proposal
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource

SUFFIXES = {".yaml", ".yml", ".json"}


def _move_aside(path: Path, rejected_dir: Path, error: str) -> Path:
    """Keep a bad file, with the reason beside it: nothing a person wrote is lost."""
    rejected_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = rejected_dir / f"{stamp}-{path.name}"
    shutil.move(str(path), target)
    target.with_name(target.name + ".error.txt").write_text(error + "\n", encoding="utf-8")
    return target


def _archive(path: Path, done_dir: Path) -> None:
    done_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    shutil.move(str(path), done_dir / f"{stamp}-{path.name}")


@dg.sensor(
    name="proposal_intake",
    job=forge_job,
    minimum_interval_seconds=5,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Validates proposal files in KAVI_HOME/inbox, records them, adds partitions and requests forge runs.",
)
def proposal_intake(
    context: dg.SensorEvaluationContext, home: SkillsHomeResource, llm: LLMResource, gates: GateRunnerResource
) -> dg.SensorResult | dg.SkipReason:
    h = home.home()
    files = sorted(p for p in h.inbox_dir.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)
    if not files:
        return dg.SkipReason(f"no proposal files in {h.inbox_dir}")
    ctx = ForgeContext.open(h, llm.get_client, gates.settings())
    existing = set(context.instance.get_dynamic_partitions(PROPOSALS))
    new_keys: list[str] = []
    requests: list[dg.RunRequest] = []
    rejected: list[str] = []
    for path in files:
        try:
            prop = load_proposal(path)
        except ProposalError as err:
            moved = _move_aside(path, h.rejected_dir, str(err))
            rejected.append(f"{path.name}: moved to {moved.name} ({str(err).splitlines()[-1].strip()})")
            context.log.warning(str(err))
            continue
        changed = intake(ctx, prop, str(path), actor="proposal_intake sensor")
        _archive(path, h.inbox_dir / "accepted")
        if prop.name not in existing and prop.name not in new_keys:
            new_keys.append(prop.name)
        if changed:
            row = ctx.records.require_proposal(prop.name)
            requests.append(
                dg.RunRequest(
                    run_key=f"intake:{prop.name}:{row.spec_sha256[:16]}",
                    partition_key=prop.name,
                    tags={"kavi/trigger": "intake", "kavi/proposal": prop.name},
                )
            )
    context.update_cursor(json.dumps({"last_scan": datetime.now(UTC).isoformat(), "rejected": rejected[-5:]}))
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[proposals_partitions.build_add_request(new_keys)] if new_keys else [],
        skip_reason=None if requests else dg.SkipReason(
            "no new or changed proposals" + (f"; rejected: {'; '.join(rejected)}" if rejected else "")),
    )
