"""`kavi doctor`: health checks of an installation, each with a fix; warnings do not fail the exit status."""

import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from kavi.home import KaviHome
from kavi.settings import read_setting
from kavi.settings_parsers import ConfigError
from kavi_assets.cli.health_check import Check


def _writable(home: KaviHome) -> Check:
    bad = []
    for d in (home.root, home.skills_dir, home.artifacts_dir, home.sandboxes_dir, home.vault_dir, home.inbox_dir):
        try:
            d.mkdir(parents=True, exist_ok=True)
            probe = d / ".kavi-doctor-probe"
            probe.write_text("ok")
            probe.unlink()
        except OSError as err:
            bad.append(f"{d} ({err.strerror})")
    if bad:
        return Check("home writable", "fail", "not writable: " + ", ".join(bad),
                     f"fix the permissions, or point KAVI_HOME at a writable directory (now {home.root})")
    return Check("home writable", "ok", str(home.root))


def _ledger(home: KaviHome) -> Check:
    from kavi.ledger.lake import ledger_present
    from kavi.ledger.schema import SCHEMA_VERSION
    from kavi.ledger.store import Ledger, LedgerCorruptError, LedgerLockedError

    if not ledger_present(home.ledger_path):
        return Check("ledger", "warn", f"{home.ledger_path} does not exist yet",
                     "run `kavi demo` or `kavi propose FILE`")
    try:
        version = Ledger(home.ledger_path, lock_timeout_s=10, migrate=False).schema_version()
    except LedgerLockedError as err:
        return Check("ledger", "fail", str(err), "stop the process holding the ledger open, then retry")
    except LedgerCorruptError as err:
        path = home.ledger_path
        return Check("ledger", "fail", f"{path} is corrupt or not a DuckDB database ({err.detail})",
                     f"move it aside (mv {path} {path}.corrupt) and restore it from a backup; without one, the next "
                     "kavi command starts an empty ledger and every skill must be proposed and forged again")
    except Exception as err:
        return Check("ledger", "fail", f"cannot open {home.ledger_path}: {err}",
                     "restore the ledger from a backup; it is the source of truth")
    if version != SCHEMA_VERSION:
        return Check("ledger", "fail", f"schema version {version}, expected {SCHEMA_VERSION}",
                     "run any kavi command that writes (e.g. `kavi status`) to migrate, or upgrade kavi-forge")
    return Check("ledger", "ok", f"{Ledger(home.ledger_path, migrate=False).label} (schema {version})")


def _trust(home: KaviHome) -> Check:
    from kavi.ledger.lake import ledger_present
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger
    from kavi.promotion.audit import audit

    if not ledger_present(home.ledger_path):
        return Check("registry and trusted files", "warn", "no ledger yet", "run `kavi demo`")
    try:
        report = audit(ForgeRecords(Ledger(home.ledger_path, lock_timeout_s=10)), home)
    except Exception as err:
        return Check("registry and trusted files", "fail", f"audit failed: {err}", "run `kavi verify` for details")
    if not report.ok:
        return Check("registry and trusted files", "fail", "; ".join(report.problems()[:5]),
                     "a changed trusted file must be re-forged (kavi forge NAME); a registry that disagrees with "
                     "the ledger is rewritten by `kavi registry rebuild`; a stray file in skills/ is removed; an "
                     "edited promotion record needs investigation")
    detail = f"{report.checked_skills} trusted skills match their hashes; {report.promotions} promotions chained"
    if report.registry_note:
        return Check("registry and trusted files", "warn", f"{detail}; {report.registry_note}",
                     "let the refresh_registry sensor run, or `kavi registry rebuild`, to regenerate registry.json")
    return Check("registry and trusted files", "ok", detail)


def _endpoint() -> Check:
    try:
        base = str(read_setting("llm_base_url")).rstrip("/")
    except ConfigError as err:
        return Check("model endpoint", "fail", str(err), "fix KAVI_LLM_BASE_URL, or unset it for the recorded model")
    if not base:
        from kavi.llm.recorded import default_cassette_dir

        n = len(list(default_cassette_dir().glob("*.yaml")))
        return Check("model endpoint", "ok" if n else "warn",
                     f"none configured: the recorded model (replay of {n} cassettes, not a live model)",
                     "set KAVI_LLM_BASE_URL to use a real model" if n else "reinstall: the cassettes are missing")
    try:
        with urllib.request.urlopen(base + "/models", timeout=3) as resp:
            return Check("model endpoint", "ok", f"{base} answered ({resp.status})")
    except OSError as err:
        return Check("model endpoint", "warn", f"{base} is not reachable: {err}",
                     "start the endpoint or fix KAVI_LLM_BASE_URL (forging will fail as LLM_UNAVAILABLE)")


def _tools() -> list[Check]:
    out = []
    from kavi.gates.tools import ruff_command

    for tool in ("ruff", "mypy", "pytest", "coverage"):
        # ruff as the gate runs it (its binary), the others as `python -m`
        argv = [*ruff_command(), "--version"] if tool == "ruff" else [sys.executable, "-m", tool, "--version"]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            out.append(Check(f"gate tool {tool}", "fail", str(err), "pip install -e '.[dev]'"))
            continue
        text = (proc.stdout or proc.stderr).strip().splitlines()
        if proc.returncode != 0 or not text:
            out.append(Check(f"gate tool {tool}", "fail", f"`{' '.join(argv)}` failed", "pip install -e '.[dev]'"))
        else:
            out.append(Check(f"gate tool {tool}", "ok", text[0]))
    return out


def _dagster_home(home: KaviHome) -> tuple[Path, str]:
    """DAGSTER_HOME when set, else the folder kavi uses in the home; and its raw value ("" when unset)."""
    raw = str(read_setting("dagster_home"))
    return (Path(raw).expanduser() if raw else home.root / "dagster"), raw


def _dagster(home: KaviHome) -> Check:
    path, raw = _dagster_home(home)
    note = "" if raw else " (DAGSTER_HOME not set; kavi uses this default)"
    if not path.is_dir():
        return Check("dagster instance", "fail", f"{path} does not exist{note}",
                     f"export DAGSTER_HOME={path} and run `kavi demo` (or mkdir it)")
    try:
        from dagster import DagsterInstance

        with DagsterInstance.from_config(str(path.resolve())) as inst:
            parts = inst.get_dynamic_partitions("proposals")
            runs = inst.get_runs_count()
    except Exception as err:
        return Check("dagster instance", "fail", f"{path}: {err}", "check $DAGSTER_HOME/dagster.yaml")
    return Check("dagster instance", "ok", f"{path}{note}: {len(parts)} proposal partitions, {runs} runs")


def _log(home: KaviHome) -> Check:
    from kavi.runtime.records import ExecutionLog

    if not home.executions_log.exists():
        return Check("execution log", "ok", f"{home.executions_log} (no runs yet)")
    try:
        records, stats = ExecutionLog(home.executions_log).read_with_stats()
    except OSError as err:
        return Check("execution log", "fail", str(err), "check the file's permissions")
    if stats.malformed:
        return Check("execution log", "warn", f"{len(records)} records, {stats.malformed} malformed lines skipped",
                     "malformed lines are kept and ignored; inspect them if unexpected")
    return Check("execution log", "ok", f"{len(records)} records")


def _config() -> Check:
    from kavi.settings import config_problems

    problems = config_problems()
    if problems:
        return Check("configuration", "fail", "; ".join(problems), "fix the named KAVI_* variables (see the README)")
    return Check("configuration", "ok", "every KAVI_* setting is usable")


FIX_SWEEP = "kavi doctor --fix"


def sweep_home(home: KaviHome, *, fix: bool) -> Any:
    """The stale-run sweep (sensors/sweep.py) against this home's Dagster instance, when it has one."""
    from sensors.sweep import sweep

    path, _ = _dagster_home(home)
    if not path.is_dir():  # no Dagster instance yet: only the ledger's attempts and the sandboxes
        return sweep(home, None, fix=fix)
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(path.resolve())) as inst:
        return sweep(home, inst, fix=fix)


def _sweep_checks(home: KaviHome) -> list[Check]:
    try:
        report = sweep_home(home, fix=False)
    except Exception as err:
        return [Check("stale runs", "warn", f"could not look for them: {err}", "check $DAGSTER_HOME/dagster.yaml")]
    runs, attempts, sandboxes = report.stale_runs, report.abandoned, report.leaked_sandboxes
    return [
        Check("stale runs", "fail", f"{len(runs)} run(s) STARTED whose process is gone, holding run slots: "
              + "; ".join(r.describe() for r in runs[:5]),
              f"{FIX_SWEEP} (marks them failed; the dagster-daemon's stale_run_sweep sensor does it too)")
        if runs else Check("stale runs", "ok", "no run is STARTED by a process that is gone"),
        Check("abandoned attempts", "warn", f"{len(attempts)} attempt(s) left open by a dead process: "
              + "; ".join(a.describe() for a in attempts[:5]),
              f"{FIX_SWEEP} (closes them as ABANDONED; the model is not charged), then kavi forge NAME")
        if attempts else Check("abandoned attempts", "ok", "no attempt is left open by a dead process"),
        Check("leaked sandboxes", "warn", f"{len(sandboxes)} sandbox(es) of abandoned or unknown builds: "
              + ", ".join(p.name for p in sandboxes[:5]), f"{FIX_SWEEP} (removes them)")
        if sandboxes else Check("leaked sandboxes", "ok", "none"),
    ]


def _sandbox() -> Check:
    from kavi.sandbox import jail

    problem = jail.probe()
    if problem is not None:
        return Check("gate sandbox", "warn", f"gates run without the bubblewrap sandbox: {problem}",
                     "install Debian's bubblewrap, libseccomp2 and util-linux (apt-get install bubblewrap)")
    off = sorted(jail.switched_off())
    if off:
        return Check("gate sandbox", "warn", f"layers switched off by {jail.OFF_VARIABLE}: {', '.join(off)}",
                     f"unset {jail.OFF_VARIABLE} (it exists for the containment tests)")
    return Check("gate sandbox", "ok", "bubblewrap: " + ", ".join(jail.LAYERS) + " layers active")


def _runtime_sandbox() -> Check:
    """Where trusted skills run: a sandboxed worker per call, or (without bubblewrap) what the setting decides."""
    from kavi.sandbox import jail
    from kavi.settings import read_setting

    problem = jail.probe()
    default, most = read_setting("run_timeout_s"), read_setting("run_max_timeout_s")
    deadline = f"deadline {default:g}s by default (at most {most:g}s)"
    if problem is None:
        return Check("skill runtime", "ok", f"each call in a sandboxed worker, {deadline}, "
                     f"{read_setting('run_workers')} workers for `kavi serve`")
    if read_setting("run_without_sandbox") == "allow":
        return Check("skill runtime", "warn", f"trusted skills run with the layers that remain, without bubblewrap: "
                     f"{problem}", "install Debian's bubblewrap; or unset KAVI_RUN_WITHOUT_SANDBOX to refuse")
    return Check("skill runtime", "fail", f"trusted skills are refused: no worker sandbox can be built ({problem})",
                 "install Debian's bubblewrap, libseccomp2 and util-linux; or set KAVI_RUN_WITHOUT_SANDBOX=allow "
                 "to run them with the layers that remain")


# The checks that read the ledger: with a ledger that cannot be read they say so and point at its line, instead of
# each repeating its error with a fix of its own that is not the cause (the stale runs pointed at dagster.yaml).
_LEDGER_READERS = ("registry and trusted files", "stale runs", "abandoned attempts", "leaked sandboxes",
                   "re-verification", "suspect versions")


def _search() -> Check:
    """How `kavi search` and the duplicate guard rank: by meaning and words, or by words alone (and why)."""
    from kavi.search import packaged
    from kavi.search.index import SearchConfig
    from kavi.settings_parsers import ConfigError

    try:
        config = SearchConfig.from_env()
    except ConfigError as err:
        return Check("search", "warn", f"not checked: {err}", "fix the named KAVI_* variable")
    if config.embeddings_url:
        return Check("search", "ok", f"BM25 and the embedding endpoint {config.embeddings_url} "
                                     f"({config.embeddings_model})")
    if config.embedder == "none":
        return Check("search", "ok", "BM25 only (KAVI_SEARCH_EMBEDDER=none)")
    why = packaged.unavailable()
    if why is not None:
        return Check("search", "warn", f"BM25 only: {why}",
                     "reinstall kavi-forge (its package data holds the model), or set KAVI_EMBEDDINGS_URL")
    return Check("search", "ok", f"BM25 and {packaged.MODEL} (packaged, in process)")


def run_checks(home: KaviHome) -> list[Check]:
    ledger = _ledger(home)
    if ledger.status == "fail" and "schema version" not in ledger.detail:
        skipped = {name: Check(name, "warn", "not checked: the ledger cannot be read (the ledger line says what "
                               "to do)") for name in _LEDGER_READERS}
        return [_config(), _writable(home), ledger, skipped["registry and trusted files"], _endpoint(), *_tools(),
                _sandbox(), _runtime_sandbox(), _search(), _dagster(home), skipped["stale runs"],
                skipped["abandoned attempts"], skipped["leaked sandboxes"], _log(home), skipped["re-verification"],
                skipped["suspect versions"]]
    return [_config(), _writable(home), ledger, _trust(home), _endpoint(), *_tools(), _sandbox(),
            _runtime_sandbox(), _search(), _dagster(home),
            *_sweep_checks(home), _log(home), *_ground_checks(home)]


def _ground_checks(home: KaviHome) -> list[Check]:
    from kavi_assets.cli.reverify_cmd import doctor_checks

    return doctor_checks(home)
