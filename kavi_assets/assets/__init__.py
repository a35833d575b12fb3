"""Dagster assets: thin wrappers that call the forge core and explain the result in the UI."""
