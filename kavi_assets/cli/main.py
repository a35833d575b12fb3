"""`kavi`: propose, forge, inspect, approve and run skills. Every command honours KAVI_HOME and DAGSTER_HOME.
This module only builds the app from the command groups' modules: `main` registers the one group a command needs,
`app` (as tests import it) all of them."""

import contextlib
from typing import TYPE_CHECKING, Annotated, NoReturn

if TYPE_CHECKING:
    import typer

_app: "typer.Typer | None" = None  # built on first use: `kavi run` starts its worker before importing typer


def _the_app() -> "typer.Typer":
    global _app
    if _app is None:
        _app = _build_app()
    return _app


def _build_app() -> "typer.Typer":
    import typer

    from kavi_assets.cli.outcome import EXIT_STATUS_HELP

    app = typer.Typer(
        name="kavi",
        help="Kavi Forge: models write skills, independent gates decide, the DuckDB ledger records every step.",
        epilog=EXIT_STATUS_HELP,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )

    def _version(value: bool) -> None:
        if value:
            from kavi_assets import __version__

            typer.echo(f"kavi {__version__}")
            raise typer.Exit()

    @app.callback()
    def _main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                    help="print the version and exit")] = False) -> None:
        """Kavi Forge: models write skills, independent gates decide, the DuckDB ledger records every step."""

    return app


# Which module registers each command: `kavi NAME ...` imports only NAME's module (a command's start does not pay for
# every other command's imports); help, completion and anything unknown register them all.
COMMAND_MODULES: dict[str, str] = {
    **dict.fromkeys(("propose", "forge", "status", "lineage", "approve", "retry", "schema"), "lifecycle_cmd"),
    "check": "check_cmd",
    "demo": "demo_cmd",
    "policy": "policy_cmd",
    **dict.fromkeys(("skills", "run", "chain", "replay", "tail", "session", "verify", "doctor", "registry"),
                    "runtime_cmd"),
    "holdout": "holdout_cmd",
    **dict.fromkeys(("questions", "answer"), "questions_cmd"),
    "ceremony": "ceremony_cmd",
    **dict.fromkeys(("serve", "tools", "search"), "serve_cmd"),
    **dict.fromkeys(("tree", "decompose"), "decompose_cmd"),
    **dict.fromkeys(("reverify", "reinstate", "economics", "attest"), "reverify_cmd"),
    "scale-demo": "scale_cmd",
    "vet": "vet_cmd",
    "diff": "diff_cmd",
    **dict.fromkeys(("card", "export"), "card_cmd"),
}
_registered: set[str] = set()


def _register_groups(only: str | None = None) -> None:
    """Register every command group, or only the one module `only` names."""
    import importlib

    for module in dict.fromkeys(COMMAND_MODULES.values()):
        if (only is not None and module != only) or module in _registered:
            continue
        try:
            importlib.import_module(f"kavi_assets.cli.{module}").register(_the_app())
        except ImportError:
            if module != "check_cmd":  # the policy checker's command is optional
                raise
        _registered.add(module)


def _command_of(argv: list[str]) -> str | None:
    """The module of the command `argv` names, when it names one and asks nothing of the others."""
    words = [a for a in argv[1:] if a.startswith("-") is False]
    if not words or any(a in ("--help", "--install-completion", "--show-completion") for a in argv[1:2]):
        return None
    return COMMAND_MODULES.get(words[0]) if argv[1:2] == words[:1] else None


def __getattr__(name: str) -> object:
    """`app`: the whole CLI, every command registered (what tests and embedders import)."""
    if name == "app":
        _register_groups()
        return _the_app()
    raise AttributeError(name)


def main() -> None:
    """The `kavi` command: the app, then one collection (finalizers run as at any exit) and a freeze, then the exit
    of _leave."""
    import gc
    import sys

    from kavi.process_env import export_defaults

    # No pydantic plugins unless a person asks for them: finding them reads every installed distribution's entry
    # points, in this process and in each child it starts (the gate jobs' environment says the same).
    export_defaults({"PYDANTIC_DISABLE_PLUGINS": "__all__"})
    command = _command_of(sys.argv)
    if command == "runtime_cmd" and sys.argv[1:2] == ["run"] and "--help" not in sys.argv[2:]:
        _start_call_worker()
    _register_groups(command)
    try:
        _the_app()()
        code: object = 0
    except SystemExit as done:
        code = done.code
    finally:
        gc.collect()
        gc.freeze()
    _leave(code)


def _start_call_worker() -> None:
    """`kavi run`: its contained worker starts first, beside the imports of the command and the ledger."""
    try:
        from kavi.runtime.worker import one_call_pool

        one_call_pool()
    except Exception:  # the command starts its worker again and reports what stops it
        return


def _leave(code: object) -> NoReturn:
    """End the process once the command is done: the exit handlers run (workers killed and reaped, logs flushed,
    temporary folders removed), the streams are flushed, and the process exits without the interpreter's teardown
    of the native libraries it loaded. That teardown (DuckDB's, gRPC's and SQLite's threads and static objects
    destroyed in whatever order the C runtime picks) made about one `kavi demo` in twenty on a loaded machine end
    with SIGSEGV after it had printed its last line, past the point where faulthandler can say where."""
    import atexit
    import os
    import sys

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # SystemExit("message"): printed, status 1, as the interpreter does
        print(code, file=sys.stderr)
        status = 1
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)
