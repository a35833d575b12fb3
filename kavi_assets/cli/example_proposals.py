"""Where the example proposals that `kavi demo` and `kavi scale-demo` forge live: package data of the core."""

from importlib.resources import files
from pathlib import Path


def examples_dir() -> Path:
    """kavi/examples/proposals, in a checkout and in an installed wheel alike."""
    return Path(str(files("kavi").joinpath("examples", "proposals"))).resolve()
