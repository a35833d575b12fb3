"""Where the example proposals that `kavi demo` and `kavi scale-demo` forge live."""

from pathlib import Path


def examples_dir() -> Path:
    here = Path(__file__).resolve().parents[2] / "examples" / "proposals"
    return here
