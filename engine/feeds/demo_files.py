"""The demo's files: which files make a demo (:class:`DemoFiles`), the sites file's reader, and
the staged copy of the config the demo runs on (:func:`stage_config`, :func:`stage_execute`), with
the map from each copy back to the user's file that every message uses (:class:`CopyNames`; the
module docstring of :mod:`engine.feeds.demo` says why). Split from ``demo.py`` by responsibility:
that module builds and steps the simulation, this one finds, reads and copies its files."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from engine.schedd.sites import RunTime, SiteConfigError, SiteSpec

DEFAULT_CONFIG_DIR = Path(__file__).resolve().parents[2] / "sample_configs" / "demo"


class DemoError(ValueError):
    """A demo that cannot be built; ``unreadable``: because a file could not be read or written
    (not because a configuration file has errors)."""

    def __init__(self, message: str, unreadable: bool = False) -> None:
        super().__init__(message)
        self.unreadable = unreadable


def load_sites(path: str | Path) -> list[SiteSpec]:
    p = Path(path)
    if p.exists() and not p.is_file():
        raise DemoError(f"{p}: not a regular file", unreadable=True)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DemoError(f"{p}: cannot read: {exc.strerror}", unreadable=True) from None
    except UnicodeDecodeError as exc:
        raise DemoError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise DemoError(f"{p}: {exc}") from None
    known = {"name", "slots", "start_latency", "runtime", "failure_probability", "black_hole",
             "black_hole_after", "routes", "grid_resources", "local", "startd"}
    out = []
    for i, e in enumerate(data.get("site", []), 1):
        where = f"{p}: [[site]] #{i} {e.get('name', '')!r}"
        bad = set(e) - known
        if bad:
            raise DemoError(f"{where}: unknown key(s) {', '.join(sorted(bad))}")
        try:
            out.append(SiteSpec(
                name=str(e["name"]), slots=int(e.get("slots", 10)),
                start_latency=tuple(float(x) for x in e.get("start_latency", (5, 30))),
                runtime=RunTime.parse(e.get("runtime", "exponential 600")),
                failure_probability=float(e.get("failure_probability", 0.0)),
                black_hole=bool(e.get("black_hole", False)),
                black_hole_after=tuple(float(x) for x in e.get("black_hole_after", (2, 10))),
                routes=tuple(e.get("routes", ())), grid_resources=tuple(e.get("grid_resources", ())),
                local=bool(e.get("local", False)), startd=bool(e.get("startd", False))))
        except KeyError:
            raise DemoError(f"{where}: needs a name") from None
        except (SiteConfigError, TypeError, ValueError) as exc:
            raise DemoError(f"{where}: {exc}") from None
    return out


@dataclass(frozen=True)
class CopyNames:
    """The staged copies and the user's files they came from, for messages (module docstring).

    ``files``: (copy, source) of config files; a pair is dropped once the copy differs from the
    source (:meth:`refreshed`). ``dirs``: (copy directory, source directory) of the staged hook
    programs. ``root``: the directory every copy is in (a message without it needs no change)."""

    files: tuple[tuple[str, str], ...] = ()
    dirs: tuple[tuple[str, str], ...] = ()
    root: str = ""

    def path(self, path: str | None) -> str | None:
        """The user's name of ``path`` (a copy's source, or ``path`` itself)."""
        return self.text(path) if path else path

    def text(self, text: str) -> str:
        """``text`` with every copy's path replaced by its source's."""
        if not self.root or self.root not in text:
            return text
        for copy, source in self.files:
            text = re.sub(re.escape(copy) + r"(?![\w.-])", lambda _m, s=source: s, text)
        for copy, source in self.dirs:
            text = text.replace(copy + os.sep, source + os.sep)
        return text

    def refreshed(self) -> "CopyNames":
        """Only the config copies still equal to their source (after an edit in the demo)."""
        return dataclasses.replace(self, files=tuple((c, s) for c, s in self.files if _same_bytes(c, s)))


def _same_bytes(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).read_bytes() == Path(b).read_bytes()
    except OSError:
        return False


@dataclass
class DemoFiles:
    condor_config: Path
    sites: Path
    workload: Path
    classad_routes: Path | None = None
    extra: tuple[Path, ...] = ()  # read after the others (the staged execute sample's HOOK_DIR)
    names: CopyNames = CopyNames()  # the staged copies' sources, for messages (stage_config)

    @classmethod
    def in_dir(cls, d: str | Path, classad: bool = False) -> "DemoFiles":
        d = Path(d)
        return cls(d / "condor_config", d / "sites.toml", d / "workload.toml",
                   d / "routes-classad.conf" if classad else None)

    def config_paths(self) -> list[Path]:
        return ([self.condor_config] + ([self.classad_routes] if self.classad_routes else [])
                + list(self.extra))


SCRATCH_PREFIX = "routedeck-demo-config-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, owned by someone else
        return True
    return True


def remove_stale_scratch(tmp: Path) -> list[Path]:
    """Remove the config copies of demos that ended without cleaning up (killed by a signal:
    the finalizer that removes the copy never ran). A copy is named after its demo's process id
    and is stale once that process is gone; copies of running demos and other users' files are
    left alone. Returns what was removed."""
    removed = []
    try:
        entries = list(tmp.glob(SCRATCH_PREFIX + "*"))
    except OSError:
        return removed
    for d in entries:
        pid_text = d.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        try:
            if d.is_dir() and not d.is_symlink() and d.stat().st_uid == os.getuid():
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
        except OSError:
            continue
    return removed


def stage_config(files: DemoFiles, state_dir: str | Path | None) -> tuple[DemoFiles, Path | None]:
    """Copy the demo's config files into ``<state_dir>/config`` and use the copies (issue 11 item 7).

    The routing table is edited in RouteDeck; the edits must not land in the checkout's
    ``sample_configs/demo`` (the next demo would silently start from them). A copy that exists
    already is kept: it is this state directory's table, edits included, as the queue log is its
    queue. Without a state directory the copy goes to a temporary directory, returned as the
    second value for the caller to remove. The sites and workload files are only read: not copied.
    """
    scratch = None
    if state_dir is None:
        remove_stale_scratch(Path(tempfile.gettempdir()))
        scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
        target = scratch
    else:
        target = Path(state_dir) / "config"
    target.mkdir(parents=True, exist_ok=True)
    copies = []
    for src in files.config_paths():
        dst = target / src.name
        if not dst.exists():
            try:
                shutil.copyfile(src, dst)
            except OSError as exc:
                raise DemoError(f"{src}: cannot copy the demo configuration to {dst}: {exc.strerror or exc}",
                                unreadable=True) from None
        copies.append(dst)
    extra = stage_execute(files.condor_config.parent, target)
    hooks = files.condor_config.parent / "hooks"
    names = CopyNames(files=tuple((str(c), str(s)) for c, s in zip(copies, files.config_paths())),
                      dirs=((str(target / "hooks"), str(hooks)),) if extra else (), root=str(target)).refreshed()
    return dataclasses.replace(files, condor_config=copies[0],
                               classad_routes=copies[1] if files.classad_routes else None,
                               extra=extra, names=names), scratch


EXECUTE_DIRS = ("hooks", "queue")  # the execute sample's hook programs and its fetch-work queue


def stage_execute(src: Path, target: Path) -> tuple[Path, ...]:
    """An execute-node sample (``sample_configs/hooks``: a ``hooks/`` directory beside the config)
    is staged whole: ``hooks/`` and ``queue/`` are copied into ``target`` (FETCH_WORK moves the
    queue's files; the checkout must not change), the queue's ``Iwd = "OUTDIR"`` placeholders
    become ``target/output``, and ``target/execute.conf`` sets ``HOOK_DIR`` to the copy (read
    after ``condor_config``). Nothing to do for a config without ``hooks/``; a copy that exists
    is kept, as the config copy is."""
    if not (src / "hooks").is_dir():
        return ()
    try:
        for name in EXECUTE_DIRS:
            if (src / name).is_dir() and not (target / name).exists():
                shutil.copytree(src / name, target / name)
        out = target / "output"
        out.mkdir(exist_ok=True)
        for job in sorted((target / "queue").glob("*.job")) if (target / "queue").is_dir() else ():
            text = job.read_text(encoding="utf-8")
            if '"OUTDIR"' in text:
                job.write_text(text.replace('"OUTDIR"', '"' + str(out) + '"'), encoding="utf-8")
        conf = target / "execute.conf"
        if not conf.exists():
            conf.write_text("# written by RouteDeck: the staged copy of the sample's hook programs\n"
                            f"HOOK_DIR = {target / 'hooks'}\n", encoding="utf-8")
    except OSError as exc:
        raise DemoError(f"{src}: cannot stage the execute sample into {target}: {exc.strerror or exc}",
                        unreadable=True) from None
    return (conf,)
