"""Dagster's run launcher for the forge: run workers forked from a preloaded host (see prefork.py)."""

from kavi_assets.launcher.prefork import PreforkRunLauncher

__all__ = ["PreforkRunLauncher"]
