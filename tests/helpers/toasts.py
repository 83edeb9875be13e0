"""Every notification an app raised during a test, kept until the test ends.

Textual drops a toast from ``App._notifications`` once its timeout (5 s of wall time by default)
has passed, when the next one is added or when the list is read. On a loaded machine a test's
steps can take longer than that between a command and the check of what it told (CI, session 12:
two checks read an empty list at load 15), so tests read what was told from here, not from the
live list. The live list stays what tests of *showing* toasts read (help clears it, say).
"""

from __future__ import annotations

from textual.notifications import Notifications


def keep_every_notification(monkeypatch) -> None:
    """Make each ``Notifications`` collection also keep everything added to it (``told``)."""
    add = Notifications.add

    def add_and_keep(self, notification):
        self.__dict__.setdefault("told", []).append(notification)
        return add(self, notification)

    monkeypatch.setattr(Notifications, "add", add_and_keep)


def told(app) -> list[str]:
    """The messages of every notification ``app`` raised, in order, expired or not."""
    return [n.message for n in getattr(app._notifications, "told", ())]


def told_notes(app) -> list:
    """The notifications themselves (title, message, severity), in order, expired or not."""
    return list(getattr(app._notifications, "told", ()))
