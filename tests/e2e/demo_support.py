"""Helpers for the end-to-end tests: run the real `kavi` CLI in a subprocess."""

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DemoRun:
    home: Path
    dagster_home: Path
    env: dict[str, str]
    stdout: str
    returncode: int


def kavi(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kavi_assets.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


