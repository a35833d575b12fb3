"""Expected failures the CLI reports as one clear message and an exit status, never a traceback."""

import errno
import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.text import Text

from kavi.infrastructure import DISK_FULL_FIX
from kavi_assets.cli.console import make_console
from kavi_assets.cli.outcome import EXIT_ENVIRONMENT

err_console = make_console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


# The errors the CLI reports as one line, each named by the module that defines it. Only modules already imported
# are looked at: an error of a module nothing imported cannot have been raised, so reporting one never imports the
# model client, the gates or the forge's steps (README, figures behind design choices).
EXPECTED_ERRORS: tuple[tuple[str, str], ...] = (
    ("kavi.proposals.model", "ProposalError"),
    ("kavi.ledger.record_base", "LedgerRecordError"),
    ("kavi.ledger.store", "LedgerLockedError"),
    ("kavi.ledger.store", "LedgerSchemaError"),
    ("kavi.ledger.store", "LedgerCorruptError"),
    ("kavi.ledger.store", "LedgerCommitConflict"),  # the shared ledger (KAVI_LEDGER_URL)
    ("kavi.forge.promote", "PromotionRefused"),
    ("kavi.home", "HomePathError"),
    ("kavi.build.sandbox_dir", "SandboxExistsError"),
    ("kavi.proposals.bounds", "BoundsError"),
    ("kavi.settings_parsers", "ConfigError"),
    ("kavi.llm.client", "LLMError"),
    ("kavi.llm.recorded", "CassetteError"),
    ("kavi.policy.policy", "PolicyError"),
    ("kavi.routing.thompson", "NoModelAvailable"),
    # another attempt of the proposal is running: the message names its pid and run
    ("kavi.forge.locks", "ProposalBusy"),
    ("kavi.lake_config", "LakeConfigError"),
    ("kavi.ledger.lake", "LakeUnavailableError"),
    ("kavi.runtime.errors", "RuntimeRefusal"),
    ("kavi.runtime.errors", "ChainMappingError"),
    ("kavi.runtime.vault", "VaultPathError"),
    ("kavi.runtime.http_client", "HttpHandleError"),
    ("kavi.runtime.declared_secrets", "SecretsError"),
    ("kavi.runtime.records", "AmbiguousPrefix"),
    ("kavi.runtime.records", "RecordNotFound"),
)


def _imported(module: str, name: str) -> Any:
    found = sys.modules.get(module)
    return None if found is None else getattr(found, name, None)


def expected_errors() -> tuple[type[BaseException], ...]:
    """The expected errors of the modules imported so far (see EXPECTED_ERRORS)."""
    return tuple(cls for cls in (_imported(m, n) for m, n in EXPECTED_ERRORS) if cls is not None)


def is_environment(err: BaseException) -> bool:
    """An expected error that is the environment's, not the person's usage: the ledger file corrupt, locked or of a
    newer forge, the shared ledger unreachable, the model endpoint down (exit status 3)."""
    llm_error = _imported("kavi.llm.client", "LLMError")
    if llm_error is not None and isinstance(err, llm_error):
        return err.kind in _imported("kavi.llm.client", "ENDPOINT_KINDS")
    kinds = tuple(cls for cls in (_imported("kavi.ledger.store", "LedgerCorruptError"),
                                  _imported("kavi.ledger.store", "LedgerLockedError"),
                                  _imported("kavi.ledger.store", "LedgerSchemaError"),
                                  _imported("kavi.ledger.lake", "LakeUnavailableError")) if cls is not None)
    return isinstance(err, kinds)


_FIXES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"File too large|\[Errno 27\]"),
     "a file-size limit stopped a write: raise the limit (ulimit -f) or free space, then run the command again"),
    (re.compile(r"Read-only file system|\[Errno 30\]"),
     "the file system is read-only: point KAVI_HOME and DAGSTER_HOME at a writable directory"),
)


def fix_for(text: str) -> str | None:
    """What to do about an environmental failure named in `text` (a full disk, a file-size limit...), or None."""
    from kavi.infrastructure import is_disk_full

    if is_disk_full(text):  # one recogniser of a full disk for every door, in any library's wording
        return f"the disk is full: {DISK_FULL_FIX}"
    for pattern, fix in _FIXES:
        if pattern.search(text):
            return fix
    return None


def _environment_message(err: BaseException) -> str | None:
    """One line for a failure of the machine rather than of kavi: a full disk, a quota, a read-only home."""
    if isinstance(err, OSError) and err.errno in (errno.EACCES, errno.EPERM) and err.filename:
        return (f"permission denied on {err.filename}: fix its permissions, or point KAVI_HOME at a directory you "
                "can write")
    from kavi.infrastructure import is_disk_full
    from kavi.settings import read_setting

    homes = [Path(p) for p in (read_setting("home"), read_setting("dagster_home")) if p]
    if is_disk_full(err, homes):  # in any library's wording: the OS's, DuckDB's, SQLite's (Dagster's storage)
        return f"the disk is full: {DISK_FULL_FIX}"
    import duckdb

    if not isinstance(err, OSError | duckdb.Error):
        return None
    fix = fix_for(str(err))
    if fix is None:
        return None
    where = f" ({err.filename})" if isinstance(err, OSError) and err.filename else ""
    return f"{fix}{where}"


def cli_errors(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from kavi.infrastructure import EnvironmentFailure

        try:
            return fn(*args, **kwargs)
        except EnvironmentFailure as err:
            err_console.print(Text.assemble(("error: ", "bold red"), str(err)), soft_wrap=True)
            raise typer.Exit(EXIT_ENVIRONMENT) from None
        except expected_errors() as err:
            message = str(err)
            if is_environment(err):  # the ledger file, the shared ledger, the model endpoint: exit 3, not 2
                err_console.print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
                raise typer.Exit(EXIT_ENVIRONMENT) from None
            if type(err).__name__ == "ConfirmationRequired":
                message += " (pass --yes, or run it in a terminal and answer 'yes')"
            err_console.print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
            raise typer.Exit(2) from None
        except Exception as err:
            line = _environment_message(err)
            if line is None:
                raise
            err_console.print(Text.assemble(("error: ", "bold red"), line), soft_wrap=True)
            raise typer.Exit(EXIT_ENVIRONMENT) from None

    return wrapper  # type: ignore[return-value]


def root_cause(error: Any, user_failure_data: Any = None) -> str:
    """The innermost exception of a Dagster error (its type and message, not Dagster's wrapper), on one line,
    redacted, with what to do when it is a known environmental failure."""
    from kavi.redact import Redactor

    description = getattr(user_failure_data, "description", None)
    inner = error
    while inner is not None and getattr(inner, "cause", None) is not None:
        inner = inner.cause
    if description and (inner is None or inner.cls_name in ("Failure", "DagsterExecutionStepExecutionError")):
        text = str(description)
    elif inner is not None:
        text = str(inner.message)
        name = str(inner.cls_name)
        if not text.startswith(name):
            text = f"{name}: {text}"
    else:
        text = "the step failed without an error"
    line = " ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    line = Redactor.for_proposal(None).message(line, 600)
    fix = fix_for(line)
    return f"{line} — {fix}" if fix and fix not in line else line
