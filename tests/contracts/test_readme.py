"""The README says how to run the suite and where things are (issue 26): CI runs exactly the README's test
command, and the "Layout" section names every package of engine/ and tui/ and every folder of tests/."""

from __future__ import annotations

import re

from tests.helpers.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def _readme_test_command() -> str:
    block = re.search(r"# 2\. run the tests[^\n]*\n(?P<cmd>[^\n]+)\n", README)
    assert block, "the README's set-up section lost its second command"
    return block.group("cmd").strip()


def test_ci_runs_the_readmes_test_command():
    command = _readme_test_command()
    assert "--durations=15" in command
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert command in ci, f".ci/run does not run the README's test command:\n{command}"


def test_the_layout_section_names_every_folder():
    layout = README.split("## Layout", 1)[1].split("\n## ", 1)[0]
    folders = [p for top in ("engine", "tui") for p in sorted((REPO / top).iterdir())
               if p.is_dir() and (p / "__init__.py").exists()]
    folders += [p for p in sorted((REPO / "tests").iterdir()) if p.is_dir() and not p.name.startswith((".", "__"))]
    missing = [p.relative_to(REPO).as_posix() for p in folders
               if f"`{p.relative_to(REPO).as_posix()}/`" not in layout and f"`{p.name}/`" not in layout]
    assert not missing, f"README's Layout does not name: {missing}"
