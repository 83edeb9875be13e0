"""Launching a mode: the runtime of the demo, of watch and of replay, built for a screen.

The TUI (``tui.shell.launch``) and the tests call these; the CLI's headless forms open their
inputs through the same functions. Modules:

- :mod:`engine.launch.demo`: :func:`~engine.launch.demo.demo_runtime`, the simulation on a virtual clock.
- :mod:`engine.launch.watch`: :func:`~engine.launch.watch.watch_runtime` and
  :class:`~engine.launch.watch.WatchRuntime`, a live log followed with its file watcher.
- :mod:`engine.launch.replay`: :func:`~engine.launch.replay.replay_runtime` and opening a
  recording (shared with ``routedeck replay`` and ``routedeck why``).
- :mod:`engine.launch.options`: what each takes (``DemoOptions``, ``WatchOptions``,
  ``ReplayOptions``: frozen dataclasses; the CLI's ``engine.cli.<mode>.options`` makes them from
  its parsed arguments).
- :mod:`engine.launch.metrics`: the ``--metrics`` server a runtime starts and stops with it.
"""
