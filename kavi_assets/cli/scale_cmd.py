"""`kavi scale-demo`: the scale-out configuration on one machine, on loopback. PostgreSQL (Dagster's instance
storage and the DuckLake catalog of the shared ledger), Redis (the Celery broker) and two Celery workers are started,
the example proposals are forged through the workers (each run is a Celery task, executed whole by one worker), and
everything started is stopped by pid before the command returns.

`scale_forge` is the same thing as a function (the benchmark's two-worker configuration calls it).
"""

import contextlib
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors

console = make_console()
_TERMINAL = ("SUCCESS", "FAILURE", "CANCELED")
_SETTING = re.compile(r"^KAVI_[A-Z0-9_]{1,60}$")
MAX_WORKERS = 8
MAX_ROUNDS = 10


@dataclass
class RunInfo:
    name: str
    run_id: str
    status: str
    worker_pid: int | None
    worker_host: str
    job: str = "forge"
    # The kavi/pid tag a forge run's attempt lock records (None for jobs that take no lock, e.g. promote).
    tag_pid: int | None = None
    # The pids Dagster recorded for the run's step events: with the in-process executor, the worker's own.
    step_pids: list[int] = field(default_factory=list)


@dataclass
class ScaleResult:
    elapsed_s: float
    # proposal name -> its status in the shared ledger after the last round (VERIFIED, FAILED, ...)
    verdicts: dict[str, str]
    runs: list[RunInfo]
    worker_pids: dict[str, int]
    ledger: dict[str, Any] = field(default_factory=dict)
    service_pids: dict[str, int] = field(default_factory=dict)  # postgres, redis
    # `kavi verify --json` and `kavi lineage NAME --json` run against the shared ledger before the services stop:
    # command -> (exit code, parsed JSON output or None)
    cli_checks: dict[str, tuple[int, Any]] = field(default_factory=dict)
    # Seconds from the first run launched to the last forge run finished (no service start-up, no promotion).
    forge_s: float = 0.0

    def runs_per_worker(self) -> dict[str, int]:
        by_pid = {pid: name for name, pid in self.worker_pids.items()}
        counts: dict[str, int] = {}
        for r in self.runs:
            key = by_pid.get(r.worker_pid or -1, f"pid {r.worker_pid}")
            counts[key] = counts.get(key, 0) + 1
        return counts


def _proposal_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.y*ml")) + sorted(folder.glob("*.json"))


def _launch(instance: Any, recon_job: Any, job_def: Any, name: str, tags: dict[str, str]) -> str:
    import warnings

    run = instance.create_run_for_job(job_def, tags={"dagster/partition": name, **tags},
                                      job_code_origin=recon_job.get_python_origin())
    with warnings.catch_warnings():
        # dagster_celery registers its task again at each launch; Celery keeps the first (the same callable).
        warnings.filterwarnings("ignore", message="Task name 'execute_job' is already registered")
        # The CeleryRunLauncher only reads the run's code origin: no workspace (code server) is needed to launch.
        instance.launch_run(run.run_id, workspace=None)
    return str(run.run_id)


def executed_by(instance: Any, run_id: str) -> int | None:
    """The pid of the process that executed the run, from Dagster's own record: the run worker's engine event
    "Started process for run (pid: N)" (a forge run's kavi/pid tag, set by its attempt lock, must agree)."""
    import dagster as dg

    for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = record.dagster_event
        data = event.engine_event_data if event is not None else None
        pid = data.metadata.get("pid") if data is not None else None
        if pid is not None and str(pid.value).isdigit():
            return int(str(pid.value))
    return None


def step_pids(instance: Any, run_id: str) -> list[int]:
    import dagster as dg

    pids = {r.dagster_event.pid for r in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_START)
            if r.dagster_event is not None and r.dagster_event.pid is not None}
    return sorted(int(p) for p in pids)


def _cli_json(args: list[str], env: dict[str, str]) -> tuple[int, Any]:
    """Run a kavi command in a process of its own (as a user would, against the shared settings)."""
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "kavi_assets.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        return proc.returncode, None


def _wait_runs(instance: Any, run_ids: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    pending = set(run_ids)
    while pending:
        for run_id in list(pending):
            run = instance.get_run_by_id(run_id)
            if run is not None and run.status.value in _TERMINAL:
                pending.discard(run_id)
        if not pending:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(pending)} run(s) did not finish within {timeout_s:.0f}s")
        time.sleep(0.3)


def ledger_summary(records: Any) -> dict[str, Any]:
    """What the shared ledger holds: proposals by status, attempts, and whether any attempt is recorded twice."""
    with records.ledger.connect() as con:
        by_status = dict(con.execute("SELECT status, count(*) FROM proposals GROUP BY status ORDER BY status")
                         .fetchall())
        builds = con.execute("SELECT count(*), count(DISTINCT build_id), "
                             "count(DISTINCT concat(proposal_name, '#', attempt_number)) FROM builds").fetchone()
        gates = con.execute("SELECT count(*) FROM gate_results").fetchone()
        run_ids = [r[0] for r in con.execute("SELECT DISTINCT run_id FROM builds WHERE run_id IS NOT NULL "
                                             "ORDER BY run_id").fetchall()]
    return {"proposals": by_status, "builds": int(builds[0]) if builds else 0,
            "distinct_builds": int(builds[1]) if builds else 0, "distinct_attempts": int(builds[2]) if builds else 0,
            "gate_results": int(gates[0]) if gates else 0, "run_ids": run_ids,
            "promotion_chain_problems": records.verify_promotion_chain()}


def scale_forge(proposals: Path, *, workdir: Path | None = None, workers: int = 2, timeout_s: float = 600.0,
                settings: dict[str, str] | None = None, promote: bool = True, cli_checks: bool = True,
                say: Callable[[str], None] = lambda _: None, retry_rounds: int = MAX_ROUNDS) -> ScaleResult:
    """Start PostgreSQL, Redis and `workers` Celery workers on loopback, forge every proposal in `proposals` through
    them (first attempts, then the retry sensor's requests, as `kavi demo` does), approve and promote what verified
    (`promote`; `retry_rounds=0` forges the first attempts only, as `kavi forge --all` does), run `kavi verify` and
    `kavi lineage` against the shared ledger (`cli_checks`), and stop everything
    started. `settings` are extra environment variables for this process and the workers (e.g. the recorded model's
    speed or latency). A benchmark compares `forge_s` (and the verdicts) with a sequential run."""
    from kavi.ledger.lake import close_lakes
    from kavi.scale.services import ServiceError, Services, missing_binaries
    from kavi.scale.workers import start_worker, wait_ready, worker_env, write_celery_config, write_dagster_home

    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be between 1 and {MAX_WORKERS}")
    for var, text in (settings or {}).items():
        if not _SETTING.match(var) or len(text) > 1000 or "\n" in text:
            raise ValueError(f"setting {var[:40]!r}: only KAVI_* variables, one line of at most 1000 characters")
    from kavi.process_env import exported
    from kavi.settings import child_environment, validate_config

    validate_config(child_environment(settings))  # a bad KAVI_* setting: one line, before anything starts
    files = _proposal_files(proposals)
    if not files:
        raise ValueError(f"no proposal files in {proposals}")
    missing = missing_binaries()
    if missing:
        raise ServiceError(f"the scale configuration needs {', '.join(missing)} (Debian: apt-get install "
                           "postgresql redis-server)")
    made = workdir is None
    root = Path(tempfile.mkdtemp(prefix="kavi-scale-")) if workdir is None else workdir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    svc = Services(root / "services")
    svc.workdir.mkdir(parents=True, exist_ok=True)
    # The shared settings hold in this process (its Dagster instance, its in-process forge context) until the end.
    shared_settings = contextlib.ExitStack()
    started = time.monotonic()
    try:
        svc.start_postgres()
        svc.start_redis()
        say(f"postgres      pid {svc.pids()['postgres']} on 127.0.0.1:{svc.pg_port} (instance storage, ledger "
            "catalog)")
        say(f"redis         pid {svc.pids()['redis']} on 127.0.0.1:{svc.redis_port} (Celery broker)")
        shared = root / "shared"
        env_settings = {
            "KAVI_HOME": str(shared / "home"),
            "DAGSTER_HOME": str(write_dagster_home(shared / "dagster", svc.pg_url, svc.broker_url, svc.backend_url)),
            "KAVI_LEDGER_URL": f"ducklake:postgres:{svc.pg_dsn}",
            "KAVI_LEDGER_DATA": str(shared / "ledger-data"),
            **(settings or {}),
        }
        shared_settings.enter_context(exported(env_settings))
        config_dir = write_celery_config(root / "celery", svc.broker_url, svc.backend_url)
        wenv = worker_env(child_environment(), config_dir, env_settings)
        procs: dict[str, tuple[Any, Path]] = {}
        for i in range(1, workers + 1):
            name = f"kavi-worker-{i}"
            log = svc.workdir / f"{name}.log"
            proc = start_worker(name, wenv, log, cwd=root)
            svc.add(name, proc)
            procs[name] = (proc, log)
        wait_ready(procs)
        worker_pids = {name: p.pid for name, (p, _) in procs.items()}
        say("workers       " + ", ".join(f"{n} pid {pid}" for n, pid in worker_pids.items()))
        verdicts, runs, summary, forge_s = _forge_all(files, timeout_s, say, promote, retry_rounds)
        elapsed = time.monotonic() - started
        checks: dict[str, tuple[int, Any]] = {}
        if cli_checks:
            checks["verify"] = _cli_json(["verify", "--json"], child_environment())
            first = sorted(verdicts)[0]
            checks[f"lineage {first}"] = _cli_json(["lineage", first, "--json"], child_environment())
        services = {k: v for k, v in svc.pids().items() if k not in worker_pids}
        return ScaleResult(elapsed, verdicts, runs, worker_pids, summary, services, checks, forge_s)
    finally:
        close_lakes()
        forced = svc.stop()
        for line in forced:
            say(f"warning: {line}")
        shared_settings.close()
        if made:
            shutil.rmtree(root, ignore_errors=True)


def _forge_all(files: list[Path], timeout_s: float, say: Callable[[str], None], promote: bool,
               retry_rounds: int = MAX_ROUNDS) -> tuple[dict[str, str], list[RunInfo], dict[str, Any], float]:
    import dagster as dg

    from kavi.forge.context import ForgeContext
    from kavi.forge.intake import intake
    from kavi.home import KaviHome
    from kavi.process_owner import HOST_TAG, PID_TAG
    from kavi.proposals.model import load_proposal
    from resources.gates import GateRunnerResource
    from resources.home import SkillsHomeResource
    from resources.llm import LLMResource

    home = KaviHome.from_env().ensure()
    ctx = ForgeContext.open(home, LLMResource().get_client)
    instance = dg.DagsterInstance.get()
    names: list[str] = []
    for path in files:
        prop = load_proposal(path)
        intake(ctx, prop, str(path), actor="kavi scale-demo")
        if not instance.has_dynamic_partition("proposals", prop.name):
            instance.add_dynamic_partitions("proposals", [prop.name])
        names.append(prop.name)
    say(f"proposed      {len(names)}: {', '.join(names)}")
    from kavi_assets.definitions import forge_job_definition

    recon_job = dg.reconstructable(forge_job_definition)
    job_def = recon_job.get_definition()
    forge_started = time.monotonic()
    launched: list[tuple[str, str]] = [
        (name, _launch(instance, recon_job, job_def, name, {"kavi/trigger": "scale-demo"})) for name in names]
    _wait_runs(instance, [r for _, r in launched], timeout_s)
    from kavi_assets.cli.retry_sensor import retry_requests

    home_res = SkillsHomeResource(root=str(home.root))
    gates_res = GateRunnerResource(retry_backoff_s=0.0)
    cursor: str | None = None
    for _ in range(max(0, min(retry_rounds, MAX_ROUNDS))):
        requests, cursor = retry_requests(home_res, gates_res, cursor)
        if not requests:
            break
        batch = [(str(req.partition_key), _launch(instance, recon_job, job_def, str(req.partition_key),
                                                  {**req.tags, "dagster/run_key": req.run_key or ""}))
                 for req in requests]
        say(f"retries       {len(batch)}: {', '.join(n for n, _ in batch)} (requested by the retry sensor)")
        _wait_runs(instance, [r for _, r in batch], timeout_s)
        launched += batch
    forge_s = time.monotonic() - forge_started
    # What verified is approved here (as `kavi demo` does) and promoted by a run on the workers.
    from kavi.forge.promote import approve
    from kavi_assets.definitions import promote_job_definition

    recon_promote = dg.reconstructable(promote_job_definition)
    promote_def = recon_promote.get_definition()
    promotions = []
    for name in names if promote else []:
        if ctx.records.require_proposal(name).status.value == "VERIFIED":
            approve(ctx, name, "scale-demo (via kavi scale-demo)")
            promotions.append((name, _launch(instance, recon_promote, promote_def, name,
                                             {"kavi/trigger": "scale-demo-approval"})))
    if promotions:
        say(f"promotions    {len(promotions)}: {', '.join(n for n, _ in promotions)} (approved, promoted on the "
            "workers)")
        _wait_runs(instance, [r for _, r in promotions], timeout_s)
        launched += promotions
    from kavi.promotion.registry import refresh_registry_file

    refresh_registry_file(ctx.records, home.registry_path)
    runs: list[RunInfo] = []
    for name, run_id in launched:
        run = instance.get_run_by_id(run_id)
        tags = run.tags if run is not None else {}
        pid = tags.get(PID_TAG, "")
        runs.append(RunInfo(name, run_id, run.status.value if run is not None else "?",
                            executed_by(instance, run_id), tags.get(HOST_TAG, ""),
                            run.job_name if run is not None else "?", int(pid) if pid.isdigit() else None,
                            step_pids(instance, run_id)))
    verdicts = {name: ctx.records.require_proposal(name).status.value for name in names}
    return verdicts, runs, ledger_summary(ctx.records), forge_s


def scale_demo(
    examples: Annotated[Path | None, typer.Option("--examples", help="a folder of proposal files")] = None,
    workers: Annotated[int, typer.Option("--workers", help=f"Celery workers to start (1-{MAX_WORKERS})")] = 2,
    workdir: Annotated[Path | None, typer.Option("--workdir", help="keep the services' data and logs here "
                                                 "(default: a temporary folder, removed at the end)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as one JSON document instead")] = False,
) -> None:
    """Start PostgreSQL, Redis and Celery workers on loopback, forge the example proposals through the workers into
    one shared (DuckLake) ledger, print where each run executed, and stop everything started."""
    from kavi.scale.services import ServiceError
    from kavi.settings import read_setting
    from kavi_assets.cli.example_proposals import examples_dir

    say_to = make_console(stderr=True) if as_json else console
    # SIGTERM ends the command through its `finally` (which stops every service and worker), not in mid-air.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    say_to.rule("[bold]Kavi Forge scale demo (PostgreSQL + Celery workers + DuckLake ledger, on loopback)")
    folder = examples or examples_dir()
    if not read_setting("llm_base_url"):
        say_to.print("[yellow]The model is the RECORDED MODEL (replayed completions, on loopback in each worker), "
                     "not a live model.[/]")
    try:
        result = scale_forge(folder, workdir=workdir, workers=workers,
                             say=lambda line: say_to.print(line, highlight=False, markup=False))
    except (ServiceError, TimeoutError, ValueError) as err:
        make_console(stderr=True).print(f"error: {err}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    if as_json:
        import dataclasses
        import json

        typer.echo(json.dumps(dataclasses.asdict(result), default=str))
        return
    console.print("\nwhere each run executed (Dagster's record of the run worker's pid, and of its steps'):",
                  highlight=False)
    by_pid = {pid: name for name, pid in result.worker_pids.items()}
    for r in result.runs:
        where = by_pid.get(r.worker_pid or -1, "not a worker started here")
        host = f" on {r.worker_host}" if r.worker_host else ""
        steps = "same process" if r.step_pids == [r.worker_pid] else f"pids {r.step_pids}"
        console.print(f"  {r.job:8} {r.name:22} run {r.run_id[:8]}  {r.status:8} pid {r.worker_pid}{host} ({where}; "
                      f"steps: {steps})", highlight=False, markup=False)
    console.print("runs per worker: " + ", ".join(f"{k} {v}" for k, v in sorted(result.runs_per_worker().items())),
                  highlight=False, markup=False)
    led = result.ledger
    console.print(f"shared ledger: proposals {led['proposals']}, {led['builds']} attempts recorded "
                  f"({led['distinct_attempts']} distinct), {led['gate_results']} gate results, "
                  f"from {len(led['run_ids'])} runs, promotion chain "
                  f"{'ok' if not led['promotion_chain_problems'] else led['promotion_chain_problems']}",
                  highlight=False, markup=False)
    for cmd, (code, _) in result.cli_checks.items():
        console.print(f"kavi {cmd} against the shared ledger: exit {code}", highlight=False, markup=False)
    console.print(f"finished in {result.elapsed_s:.1f}s (forge runs {result.forge_s:.1f}s); every service and worker "
                  "started was stopped.", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("scale-demo")(cli_errors(scale_demo))
