"""Proposal intake: files dropped in the inbox become ledger records, partitions and forge runs.

Each file is handled on its own: whatever goes wrong with one file (a malformed or hostile proposal, a bad
encoding, a file that cannot be read or vanishes, an error while recording it) moves that file to
`inbox/rejected/` with a one-line reason, and never costs another file of the same tick its partition or run.
"""

import contextlib
import json
import shutil
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from kavi.forge.context import ForgeContext
from kavi.forge.intake import intake
from kavi.ledger.store import LedgerLockedError
from kavi.proposals.bounds import file_kind
from kavi.proposals.model import Proposal, ProposalError, load_proposal
from kavi.proposals.text import printable
from kavi.search.guard import check_duplicates
from kavi_assets.assets.jobs import forge_job
from kavi_assets.assets.partitions import PROPOSALS, proposals_partitions
from resources.gates import GateRunnerResource
from resources.home import SkillsHomeResource
from resources.llm import LLMResource

SUFFIXES = {".yaml", ".yml", ".json"}
MAX_REASON_CHARS = 1000


def reason_line(path: Path, err: BaseException) -> str:
    """One line saying why a file was rejected (no traceback): what a person reads beside the kept file."""
    name = printable(path.name)
    if isinstance(err, ProposalError):
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        text = lines[0] + (" " + "; ".join(line.lstrip("- ") for line in lines[1:]) if lines[1:] else "") \
            if lines else f"{name}: not a valid proposal"
    elif isinstance(err, DuplicateProposal):
        text = f"{name}: {err}"
    elif isinstance(err, RecursionError):
        text = f"{name}: nested too deeply to read as a proposal"
    elif isinstance(err, FileNotFoundError):
        text = f"{name}: vanished from the inbox before it could be read"
    elif isinstance(err, OSError):
        text = f"{name}: cannot be read: {err.strerror or err}"
    elif isinstance(err, MemoryError):
        text = f"{name}: too large to read as a proposal"
    else:
        detail = printable(" ".join(str(err).split()))
        text = f"{name}: could not be recorded ({type(err).__name__}{': ' + detail if detail else ''})"
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S")


def _move_aside(path: Path, rejected_dir: Path, error: str) -> Path:
    """Keep a bad file, with the reason beside it: nothing a person wrote is lost.

    A file that is already gone leaves only its reason."""
    rejected_dir.mkdir(parents=True, exist_ok=True)
    target = rejected_dir / f"{_stamp()}-{path.name}"
    with contextlib.suppress(FileNotFoundError):
        shutil.move(str(path), target)
    target.with_name(target.name + ".error.txt").write_text(error + "\n", encoding="utf-8")
    return target


def _archive(path: Path, done_dir: Path) -> None:
    done_dir.mkdir(parents=True, exist_ok=True)
    shutil.move(str(path), done_dir / f"{_stamp()}-{path.name}")


class NotARegularFile(ValueError):
    """An inbox entry that is not a regular file (a link, directory, pipe or device): refused unopened."""


class DuplicateProposal(ValueError):
    """A trusted skill does the proposal's task (kavi.search.guard): the file is set aside with what matched."""


def _guard(ctx: ForgeContext, prop: Proposal, log: Callable[[str], None]) -> None:
    """The duplicate guard `kavi propose` runs: close skills are logged, a duplicate is refused (no --force here:
    `kavi propose --force FILE` records it anyway). A search that cannot run is logged, never a refusal."""
    try:
        result = check_duplicates(ctx.home, ctx.records, prop)
    except Exception as err:  # a bad KAVI_SEARCH_* setting included: the environment's fault, not the file's
        log(f"{prop.name}: could not search for close trusted skills: {err}")
        return
    for line in result.warnings():
        log(line.replace("\n", " "))
    refusal = result.refusal()
    if refusal is not None:
        raise DuplicateProposal(refusal)


def _read(ctx: ForgeContext, path: Path, log: Callable[[str], None]) -> tuple[Proposal, str | None]:
    """Load, validate, check against the trusted skills and record one file: the proposal, and its spec hash when
    it is new or changed."""
    name = printable(path.name)
    mode = path.lstat().st_mode
    if stat.S_ISLNK(mode):
        raise NotARegularFile(f"{name} is a symbolic link; the inbox takes regular files only (copy the "
                              "proposal into it instead)")
    if not stat.S_ISREG(mode):
        raise NotARegularFile(f"{name} is {file_kind(mode)}; the inbox takes regular files only")
    prop = load_proposal(path)
    _guard(ctx, prop, log)
    changed = intake(ctx, prop, str(path), actor="proposal_intake sensor")
    return prop, ctx.records.require_proposal(prop.name).spec_sha256 if changed else None


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
    # Every entry with a proposal's suffix: one that is not a regular file (a link would make the sensor read, and
    # quote in an error, whatever it points at; a pipe would block it) is set aside unopened, with its reason.
    files = sorted(p for p in h.inbox_dir.iterdir() if p.suffix.lower() in SUFFIXES)
    if not files:
        return dg.SkipReason(f"no proposal files in {h.inbox_dir}")
    ctx = ForgeContext.open(h, llm.get_client, gates.settings())
    existing = set(context.instance.get_dynamic_partitions(PROPOSALS))
    new_keys: list[str] = []
    requests: list[dg.RunRequest] = []
    rejected: list[str] = []
    for path in files:
        try:
            prop, spec_sha256 = _read(ctx, path, context.log.info)
        except LedgerLockedError as err:
            # Not the file's fault: it stays in the inbox and is read again at the next tick.
            context.log.warning(f"{path.name}: left in the inbox for the next tick: {err}")
            continue
        except Exception as err:  # any error is this file's alone: it is set aside, the others go on
            reason = reason_line(path, err)
            try:
                moved = _move_aside(path, h.rejected_dir, reason)
            except OSError as move_err:
                context.log.error(f"{reason}; it could not be moved to {h.rejected_dir}: {move_err}")
                continue
            rejected.append(f"{path.name}: moved to {moved.name} ({reason})")
            context.log.warning(reason)
            continue
        try:
            _archive(path, h.inbox_dir / "accepted")
        except OSError as err:  # recorded already: a file left behind is read again as an identical spec
            context.log.warning(f"{path.name}: recorded, but not moved to accepted/: {err}")
        if prop.name not in existing and prop.name not in new_keys:
            new_keys.append(prop.name)
        if spec_sha256 is not None:
            requests.append(
                dg.RunRequest(
                    run_key=f"intake:{prop.name}:{spec_sha256[:16]}",
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
