"""The linter means something (issue 26): ``ruff check`` with the rules in pyproject.toml ([tool.ruff]) finds
nothing in engine/, tui/, tests/ or bench/, and every deferred import outside tui/ and engine/cli/ (where they
keep start-up cheap) says in its ``noqa`` why it is deferred."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO

CHECKED = ("engine", "tui", "tests", "bench")


def _ruff() -> list[str]:
    try:
        import ruff  # noqa: F401, PLC0415 - only to tell "not installed" from a finding
    except ImportError:
        found = shutil.which("ruff")
        if found is None:
            pytest.skip("ruff is not installed (the `test` extra installs it: pip install -e '.[test]')")
        return [found]
    return [sys.executable, "-m", "ruff"]


def test_ruff_check_is_clean():
    out = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", *CHECKED],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"ruff check found problems:\n{out.stdout}{out.stderr}"


_DEFERRED = re.compile(r"#\s*noqa:[^#\n]*\bPLC0415\b(?P<rest>.*)$")


def test_deferred_imports_outside_the_start_up_path_say_why():
    """A ``noqa: PLC0415`` in tui/ or engine/cli/ needs no reason (deferral keeps ``routedeck --help`` and the
    first paint cheap); anywhere else the comment goes on to say what the deferral buys."""
    bare = []
    for top in CHECKED:
        for path in sorted((REPO / top).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith(("tui/", "engine/cli/")) or "/__snapshots__/" in rel or rel.startswith("tests/data/"):
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = _DEFERRED.search(line)
                if m and len(m.group("rest").strip(" -–—:()")) < 10:
                    bare.append(f"{rel}:{n}: {line.strip()}")
    assert not bare, "deferred imports without a reason:\n" + "\n".join(bare)
