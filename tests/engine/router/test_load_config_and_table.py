"""One loader of "config + routing table" (issue 26): :func:`engine.router.loader.load_config_and_table`
reads the config and builds its table, with the problems of both; the editor's buffer is read in
place of its file through ``Config.load(edited=...)`` (no subclass overriding the reader's privates)."""

from __future__ import annotations

from engine.lang.config import Config
from engine.router.loader import load_config_and_table
from engine.views.queries.lint import load_config
from tests.helpers.router_fixtures import TWO_ROUTES


def test_the_loader_gives_the_config_the_table_and_both_kinds_of_problem(tmp_path):
    conf = tmp_path / "routes.conf"
    conf.write_text(TWO_ROUTES + "foo bar\nJOB_ROUTER_ROUTE_NAMES = A B C\nJOB_ROUTER_ROUTE_C @=jrt\n"
                    "  REQUIREMENTS (Owner ==\n@jrt\n")
    loaded = load_config_and_table([str(conf)], env={})
    assert [r.name for r in loaded.table.routes] == ["A", "B"]
    assert loaded.problems[: len(loaded.config.errors)] == [str(e) for e in loaded.config.errors]
    assert loaded.config.errors and loaded.table.errors  # `foo bar`; route C does not parse
    assert loaded.problems == [str(e) for e in loaded.config.errors] + [str(d) for d in loaded.table.errors]


def test_an_edited_file_is_read_with_the_editors_text_and_the_files_around_it(tmp_path):
    """The edited route file is read with the files around it (a route file linted alone would not
    know ``$(SITE_REQS)``); the file on disk is not what is read."""
    base = tmp_path / "00-base.conf"
    base.write_text('SITE_REQS = Owner == "alice"\n')
    routes = tmp_path / "10-routes.conf"
    routes.write_text(TWO_ROUTES)
    edited = TWO_ROUTES.replace("JOB_ROUTER_ROUTE_NAMES = A B", "JOB_ROUTER_ROUTE_NAMES = B A") + "REQS_SEEN = $(SITE_REQS)\n"
    files = (str(base), str(routes))
    loaded = load_config_and_table(files, env={}, edited={str(routes): edited})
    assert [r.name for r in loaded.table.routes] == ["B", "A"] and not loaded.problems
    assert [r.name for r in load_config_and_table(files, env={}).table.routes] == ["A", "B"]
    cfg = load_config(edited, str(routes), files)  # the editor's lint reads the same
    assert type(cfg) is Config and cfg.get("JOB_ROUTER_ROUTE_NAMES") == "B A"
    assert loaded.config.get("REQS_SEEN") == 'Owner == "alice"' 
