"""Kavi Forge: a governed skill forge on Dagster with a DuckDB ledger."""

__version__ = "0.1.0"
