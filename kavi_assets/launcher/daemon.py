"""`python -m kavi_assets.launcher.daemon run ...`: Dagster's own `dagster-daemon` command, unchanged, with a
quicker exit.

The daemon a batch starts (`kavi forge --all`, `kavi demo --concurrency N`) is stopped when the batch's last run
has ended, and the command waits for it. Its daemon threads stop within milliseconds of SIGTERM, but the interpreter's
exit then walks everything the daemon loaded (Dagster, the workspace, gRPC) with its final garbage collections:
measured ~1.3 s of a batch's wall time, after its last run. As `kavi` itself does (kavi_assets/cli/main.py), one
collection runs the finalizers of unreachable cycles as an ordinary exit would, and the objects still alive are
frozen so that the exit's own collections skip them. The daemon's instance, workspace and code servers have been
shut down by Dagster's own context managers before this runs.
"""

import gc


def main() -> None:
    from dagster._daemon.cli import main as dagster_daemon  # the `dagster-daemon` console script

    try:
        dagster_daemon()
    finally:
        gc.collect()
        gc.freeze()


if __name__ == "__main__":
    main()
