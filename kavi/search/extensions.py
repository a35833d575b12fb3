"""DuckDB extensions from their PyPI packages, loaded by path: INSTALL would download, and the forge runs offline."""

import importlib
from pathlib import Path

import duckdb


class ExtensionMissing(RuntimeError):
    """The extension's package is not installed, or was built for another DuckDB."""


def extension_path(name: str) -> Path:
    """The `.duckdb_extension` file of package `duckdb-extension-NAME` built for the DuckDB in use."""
    package = f"duckdb_extension_{name}"
    try:
        module = importlib.import_module(package)
    except ImportError:
        raise ExtensionMissing(f"the DuckDB {name} extension is not installed: pip install "
                               f"'duckdb-extension-{name}=={duckdb.__version__}'") from None
    roots = [Path(p) for p in getattr(module, "__path__", [])]
    wanted = f"v{duckdb.__version__}"
    found = [f for root in roots for f in root.rglob(f"{name}.duckdb_extension")]
    for f in found:
        if f.parent.name == wanted:
            return f
    built = ", ".join(sorted({f.parent.name for f in found})) or "none"
    raise ExtensionMissing(f"duckdb-extension-{name} holds no build for DuckDB {duckdb.__version__} (it has: {built}); "
                           f"install duckdb-extension-{name}=={duckdb.__version__}")


def load_extension(con: duckdb.DuckDBPyConnection, name: str) -> None:
    path = extension_path(name)
    # The path comes from an installed package's own directory, never from a user; quote it for SQL all the same.
    con.execute(f"LOAD '{str(path).replace(chr(39), chr(39) * 2)}'")
