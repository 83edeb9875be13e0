"""The engine's layers (issue 10; product.md §3 "one engine, three feeds"): the import-linter
contracts in pyproject.toml hold for the code as it is, and they really fail when a lower layer
imports a higher one (checked on a copy of the tree with one upward import added)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.paths import REPO

ROOT = REPO


def _lint(root: Path) -> subprocess.CompletedProcess:
    code = ("import sys\nfrom importlinter.cli import lint_imports\n"
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True))\n")
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, timeout=120)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for name in ("engine", "tui"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def test_the_layer_contracts_hold():
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "broken" in out.stdout and " 0 broken" in out.stdout


@pytest.mark.parametrize("module, upward", [
    ("engine/queue/records.py", "from engine.router import throttle"),  # queue -> router
    ("engine/router/throttle.py", "from engine.feeds import demo"),  # router -> feeds
    ("engine/lang/macros.py", "from engine.queue import records"),  # lang -> queue (siblings)
    ("engine/router/stats.py", "from engine.schedd import history"),  # router -> schedd (siblings)
    ("engine/feeds/demo.py", "from engine.feeds.replay import stats"),  # demo -> replay
    ("engine/views/build.py", "import textual"),  # engine -> Textual
    ("engine/router/candidates.py", "import classad2"),  # only engine.classad reads ClassAds
    ("engine/hookrun.py", "from engine.router import hooks"),  # the shared runner -> router
    ("tui/widgets/job_model.py", "from engine.views import build"),  # widgets: only engine.contract / tui.engine_api
    ("tui/screens/ad.py", "from engine.feeds.replay import moment"),  # screens: only engine.contract / tui.engine_api
])
def test_an_upward_import_breaks_a_contract(tmp_path, module, upward):
    root = _copy(tmp_path)
    target = root / module
    text = target.read_text()
    marker = "from __future__ import annotations\n"
    assert marker in text
    target.write_text(text.replace(marker, marker + upward + "  # injected by the test\n", 1))
    out = _lint(root)
    assert out.returncode != 0, out.stdout
    assert "BROKEN" in out.stdout, out.stdout
