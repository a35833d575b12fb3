"""Kavi Forge's core: proposals, gates, the ledger, the runtime and the forge's steps, with no Dagster in it."""

__version__ = "0.1.0"
