"""The one writer of this process's environment, for what cannot be handed a value.

kavi.settings reads the environment and gives a child process its environment as a value (`env=`); this module
sets it where a reader in this process takes nothing else: Dagster opens the instance of DAGSTER_HOME, a command's
in-process runs read their settings when they start, and a forked sandbox child takes its job's environment whole.
It imports nothing but the standard library (the sandbox's server imports it).
"""

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


def export(variables: Mapping[str, str]) -> None:
    """Set `variables` in this process's environment (seen by what reads it here and by children given no `env=`)."""
    os.environ.update(variables)


def export_defaults(variables: Mapping[str, str]) -> None:
    """Set each of `variables` that this process's environment does not already hold (a person's value wins)."""
    for name, value in variables.items():
        os.environ.setdefault(name, value)


@contextmanager
def exported(variables: Mapping[str, str]) -> Iterator[None]:
    """`variables` set in this process's environment for the block, each restored (or unset again) after it."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def replace_environment(variables: Mapping[str, str]) -> None:
    """This process's environment becomes exactly `variables`: nothing it held before remains."""
    os.environ.clear()
    os.environ.update(variables)
