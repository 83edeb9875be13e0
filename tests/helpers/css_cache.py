"""Textual's parsed CSS shared by every app a test process starts.

Each Pilot test starts a new ``RouteDeckApp``; its new ``Stylesheet`` parsed the app's and every
widget's CSS again (``Stylesheet._parse_rules``, whose cache lives and dies with one stylesheet;
``refresh_css`` makes yet another). The parse is a pure function of the CSS text, where it was
read from, its scope and tie-breaker and the stylesheet's variables (the theme), so the result is
kept per process under all of them: the rules any app gets are the ones its own parse would have
made, whatever ran before (Textual already reuses one parse's rules between a stylesheet's
``parse`` calls). Measured on tests/tui/test_tui_handling.py, serial: 46.7/41.7 s of CPU without,
41.2 s with (12%; with the prewarm off as well, 38.8 -> 31.2 s).
"""

from __future__ import annotations

from textual.css.stylesheet import Stylesheet

_RULES: dict[tuple, list] = {}


def share_parsed_css(monkeypatch) -> None:
    """For one test: ``Stylesheet._parse_rules`` answers from the process's parses."""
    parse_rules = Stylesheet._parse_rules

    def shared(self, css, read_from, is_default_rules=False, tie_breaker=0, scope=""):
        key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(sorted(self._variables.items())))
        rules = _RULES.get(key)
        if rules is None:
            rules = _RULES[key] = parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
        return rules

    monkeypatch.setattr(Stylesheet, "_parse_rules", shared)
