"""promtool (Debian's ``prometheus`` package) for the suite: found, or the test skips saying so."""
from __future__ import annotations

import shutil
import subprocess

import pytest

SKIP = "promtool not found: install Debian's `prometheus` package (apt-get install prometheus) to run this test"


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.skip(SKIP)
    return path


def run(*args: str, stdin: str | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    """promtool with ``args`` (bounded: 60 s), its output as text."""
    return subprocess.run([promtool(), *args], input=stdin, capture_output=True, text=True, timeout=60, cwd=cwd)
