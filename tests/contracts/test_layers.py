"""The engine's layers (issue 10; product.md §3 "one engine, three feeds"): the import-linter
contracts in pyproject.toml hold for the code as it is, and they really fail when a lower layer
imports a higher one (checked on a copy of the tree with one upward import added)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.paths import REPO

ROOT = REPO


# One interpreter lints every tree: importing import-linter was ~0.35 of the ~0.55 s of CPU each
# lint took in an interpreter of its own (11 lints). Each tree is still linted on its own, with its
# own directory first on sys.path and no cache, and what it reports is its own: a mutant's report
# must name the module the import was injected into (a report carried over from another tree would not).
_LINT_MANY = """
import contextlib, importlib, io, json, os, sys
from importlinter.cli import lint_imports
out = []
for root in sys.argv[1:]:
    os.chdir(root)
    sys.path.insert(0, root)
    importlib.invalidate_caches()
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        code = lint_imports(config_filename="pyproject.toml", no_cache=True)
    sys.path.remove(root)
    out.append((code, text.getvalue()))
print(json.dumps(out))
"""


def _lint_many(roots: list[Path]) -> list[tuple[int, str]]:
    """``lint-imports`` (pyproject.toml's contracts) in each of ``roots``: [(exit status, report)]."""
    done = subprocess.run([sys.executable, "-c", _LINT_MANY, *map(str, roots)], cwd=roots[0], capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin"}, timeout=300)
    assert done.returncode == 0, done.stderr
    return [tuple(x) for x in json.loads(done.stdout.splitlines()[-1])]


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for name in ("engine", "tui"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


UPWARD = [
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
]


@pytest.fixture(scope="module")
def lints(tmp_path_factory) -> dict:
    """The repository's own tree and, for each of UPWARD, a copy of it with that one upward
    import added, linted in one interpreter: {None or (module, upward): (exit status, report)}."""
    roots, keys = [ROOT], [None]
    for n, (module, upward) in enumerate(UPWARD):
        root = _copy(tmp_path_factory.mktemp(f"upward-{n}"))
        target = root / module
        text = target.read_text()
        marker = "from __future__ import annotations\n"
        assert marker in text
        target.write_text(text.replace(marker, marker + upward + "  # injected by the test\n", 1))
        roots.append(root)
        keys.append((module, upward))
    return dict(zip(keys, _lint_many(roots)))


def test_the_layer_contracts_hold(lints):
    code, out = lints[None]
    assert code == 0, out
    assert "broken" in out and " 0 broken" in out


@pytest.mark.parametrize("module, upward", UPWARD)
def test_an_upward_import_breaks_a_contract(lints, module, upward):
    code, out = lints[(module, upward)]
    assert code != 0, out
    assert "BROKEN" in out, out
    assert module.removesuffix(".py").replace("/", ".") in out, out  # this tree's report, naming the import
