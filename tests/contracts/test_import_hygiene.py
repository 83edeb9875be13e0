"""The engine stays headless: importing every engine module must not pull in textual, rich or tui
(product.md §3 "engine/ pure Python; never imports textual or rich"), and engine code must not read
the wall clock or sleep outside engine/clock.py and the runtime loop (product.md §3 "Time is injected")."""

import pkgutil
import re
import subprocess
import sys

from tests.helpers.paths import REPO
import engine

ROOT = REPO


def _engine_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(engine.__path__, prefix="engine."))


def test_engine_imports_no_ui_code():
    modules = _engine_modules()
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'rich', 'tui'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "", f"engine pulled in UI modules: {out.stdout.strip()}"


# Modules allowed to read real time or wait: the clocks, and the runtime loop / file watcher that
# wait on events with timeouts.
_ALLOWED = {"engine/clock.py", "engine/runtime.py", "engine/queue/filewatch.py"}
_WALL_CLOCK = re.compile(r"time\.time\(|datetime\.now\(|datetime\.utcnow\(|time\.sleep\(|date\.today\(|time\.monotonic\(")


def test_engine_does_not_read_the_wall_clock():
    offenders = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in _ALLOWED:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            if _WALL_CLOCK.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "wall clock read outside the clock/runtime:\n" + "\n".join(offenders)


def test_only_the_classad_layer_imports_classad2():
    offenders = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "engine/classad.py":
            continue
        if re.search(r"^\s*(from|import)\s+(classad2|htcondor2|classad|htcondor)\b", path.read_text(), re.M):
            offenders.append(rel)
    assert not offenders, f"import classad2 only through engine.classad: {offenders}"
