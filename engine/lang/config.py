"""HTCondor configuration reader (RouteDeck's own; ``htcondor2.param`` is never used).

Written from HTCondor's ``src/condor_utils/config.cpp`` (``Parse_macros``, ``insert_macro``,
``expand_self_macro``) and ``condor_config.cpp`` (``real_config``, ``process_locals``).

Design decisions and invariants:

- Values are stored *unexpanded*, except references to the knob itself, which are expanded when
  the line is read (``X = $(X) more``; HTCondor-CE appends ``JOB_ROUTER_DEFAULTS`` this way).
  :meth:`Config.get` expands like ``param()`` (empty → the default); :meth:`Config.get_raw` is
  ``param_unexpanded``. The router keeps route bodies raw until a job is transformed.
- Lines are trimmed; ``\\`` continues a line; ``#`` lines and blank lines are dropped everywhere,
  also inside ``NAME @=tag … @tag`` blocks (whose lines are therefore left-trimmed too).
  :meth:`Config.value_lines` maps each line of a value back to its file line.
- Names are case-insensitive; :meth:`names` reports the case of the winning definition.
- ``include [ifexist] : path`` reads a file or a directory (files in lexical order, skipping
  ``LOCAL_CONFIG_DIR_EXCLUDE_REGEXP``, HTCondor's default from param_info.in); a relative path is
  tried beside the including file first. Cycles and nesting deeper than 20 are errors. Commands
  (``include command :``, a source ending in ``|``, ``LOCAL_CONFIG_FILE = script|``) are never
  run: each gives a warning.
- A directory given to :meth:`Config.load` is read as a config directory, the way
  ``LOCAL_CONFIG_DIR`` is (``get_config_dir_file_list``: not its subdirectories); one that holds
  no file to read is an error naming it and what was skipped (RouteDeck decision: a directory
  given where a config file is expected, read as nothing, must not look like an empty config).
  In a directory, a symbolic link that loops or points nowhere is a warning naming it, at the
  include's ``file:line`` (HTCondor lists it and then fails to open it).
- Memory is bounded (RouteDeck decisions; HTCondor has no bound): a self reference expanded at
  definition time may not make a value longer than ``macros.MAX_SIZE`` characters, and values
  grown that way may not exceed ``MAX_SELF_GROWTH`` characters in all; past either bound the
  line is an error (``file:line``), the knob is left empty and loading goes on. Expansion at
  lookup time is bounded by the budgets of :mod:`engine.lang.macros`. A file over ``MAX_FILE_SIZE``
  bytes is not read (an error).
- After the given paths: ``LOCAL_CONFIG_DIR``, then ``LOCAL_CONFIG_FILE`` (re-read while it
  changes), then ``LOCAL_CONFIG_DIR`` again if it changed (``real_config``); files already read
  are not read twice. Then ``_CONDOR_<NAME>`` environment overrides.
- ``if/elif/else/endif`` with numbers, booleans, ``defined``, ``version``; ``use`` metaknobs are
  ignored with a warning; ``error :`` / ``warning :`` lines are honoured.
- A NUL byte ends its line (an error; a file with NULs in more than 5 lines is not read at all);
  bytes that are not UTF-8 are read as U+FFFD (a warning).
- Loading never raises: problems are collected in ``errors`` / ``warnings`` as
  :class:`ConfigError` (``file:line: message``) and parsing continues with the next line
  (HTCondor stops at the first error). Expanding a value can raise :class:`ConfigError`
  (a cycle or a bad macro function), located at the knob that failed.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from engine.lang import bounded_re
from engine.lang.bounded_re import BoundedPattern, compile_bounded
from engine.lang import macros as mx
from engine.lang import macro_cond as mc
from engine.lang.param import parse_bool, parse_number, split_list

# param_info.in LOCAL_CONFIG_DIR_EXCLUDE_REGEXP (HTCondor 25.x)
DEFAULT_EXCLUDE_REGEXP = (r"^((\..*)|(.*\.pl)|(.*\.py)|(.*\.sh)|(.*~)|(#.*)|(.*\.rpmsave)|(.*\.rpmnew)"
                          r"|(.*\.dpkg-old)|(.*\.dpkg-dist)|(.*\.cfsaved))$")
MAX_INCLUDE_DEPTH = 20  # CONFIG_MAX_NESTING_DEPTH (condor_config.h)
MAX_SELF_GROWTH = 4 * mx.MAX_SIZE  # characters added by definition-time self references, all knobs
MAX_REPLACED = 10_000  # names whose earlier definitions are remembered (bounded)
MAX_FILE_SIZE = 16 << 20  # bytes of one config file; real ones are kilobytes


class ConfigError(Exception):
    """A problem in a config source. ``str(e) == "file:line: message"``."""

    def __init__(self, file: str, line: int, message: str) -> None:
        super().__init__(f"{file}:{line}: {message}")
        self.file = file
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Source:
    file: str
    line: int


@dataclass
class _Entry:
    name: str
    raw: str
    source: Source
    value_lines: tuple[int, ...]
    growth: int = 0  # characters its own-name references added (MAX_SELF_GROWTH)


class Config:
    def __init__(self, *, env: Mapping[str, str] | None = None, defaults: Mapping[str, str] | None = None) -> None:
        self.env: Mapping[str, str] = os.environ if env is None else env
        self._defaults = {k.lower(): v for k, v in (defaults or {}).items()}
        self._entries: dict[str, _Entry] = {}
        self.files: list[str] = []
        self.errors: list[ConfigError] = []
        self.warnings: list[ConfigError] = []
        self._loaded: set[str] = set()
        self._growth = 0  # characters self references added to the values now held
        # name (lower case) -> where its earlier definitions stood, each replaced by a later one
        # that does not refer to its own name (``X = $(X) more`` extends, it does not replace):
        # the config reader keeps the last silently; a routing table's lints say so.
        self.replaced: dict[str, list[Source]] = {}
        self._edited: dict[str, str] = {}  # real path -> text read in place of the file's (Config.load's edited)

    # ---------------------------------------------------------------------------- construction

    @classmethod
    def load(
        cls,
        paths: Iterable[str | Path],
        *,
        env: Mapping[str, str] | None = None,
        defaults: Mapping[str, str] | None = None,
        follow_locals: bool = True,
        edited: Mapping[str, str] | None = None,
    ) -> "Config":
        """Read ``paths`` in order; a file named in ``edited`` (path → text, e.g. the editor's
        buffer) is read with that text in place of what it holds. ``CONFIG_ROOT`` is the directory of the first (the root config
        file; a directory given as the first path is its own root), as HTCondor detects it
        (``condor_config.cpp``: ``insert_macro("CONFIG_ROOT", condor_dirname(config_source))``),
        made absolute; a file may define it again."""
        paths = list(paths)
        if paths:
            first = Path(paths[0]).absolute()  # CONDOR_CONFIG is absolute on a schedd; a command line's may not be
            root = str(first if first.is_dir() else first.parent)
            defaults = {"CONFIG_ROOT": root, **(defaults or {})}
        cfg = cls(env=env, defaults=defaults)
        cfg._edited = {os.path.realpath(p): text for p, text in (edited or {}).items()}
        for path in paths:
            cfg._load_path(Path(path), 0, [], None, required=True)
        if follow_locals:
            cfg._process_locals()
        cfg._apply_env_overrides()
        return cfg

    @classmethod
    def from_text(cls, text: str, name: str = "<text>", **kw: Any) -> "Config":
        follow = kw.pop("follow_locals", True)
        cfg = cls(**kw)
        cfg.files.append(name)
        cfg._parse(text, name, 0, [])
        if follow:
            cfg._process_locals()
        cfg._apply_env_overrides()
        return cfg

    # ---------------------------------------------------------------------------- queries

    def get_raw(self, name: str) -> str | None:
        entry = self._entries.get(name.lower())
        if entry is not None:
            return entry.raw
        return self._defaults.get(name.lower())

    def get(self, name: str, default: str | None = None) -> str | None:
        raw = self.get_raw(name)
        if not raw:
            return default
        value = self._expand(raw, None, name)
        return value if value else default

    def location(self, name: str) -> Source | None:
        entry = self._entries.get(name.lower())
        return entry.source if entry else None

    def value_lines(self, name: str) -> tuple[int, ...]:
        """File line of each line of the raw value (for mapping route-relative lines)."""
        entry = self._entries.get(name.lower())
        return entry.value_lines if entry else ()

    def source_of_value_line(self, name: str, line: int) -> Source | None:
        entry = self._entries.get(name.lower())
        if entry is None:
            return None
        lines = entry.value_lines
        if 1 <= line <= len(lines):
            return Source(entry.source.file, lines[line - 1])
        return entry.source

    def names(self) -> list[str]:
        return [e.name for e in self._entries.values()]

    def with_prefix(self, prefix: str) -> list[str]:
        low = prefix.lower()
        return [e.name for k, e in self._entries.items() if k.startswith(low)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._entries

    def expand(self, text: str, extra: Mapping[str, str] | None = None) -> str:
        lowered = {k.lower(): v for k, v in (extra or {}).items()}
        return self._expand(text, lowered, None)

    def _expand(self, text: str, extra: Mapping[str, str] | None, knob: str | None) -> str:
        def lookup(name: str) -> str | None:
            if extra is not None and name.lower() in extra:
                return extra[name.lower()]
            return self.get_raw(name)

        try:
            return mx.expand(text, lookup, env=self.env)
        except mx.MacroError as exc:
            where = self.location(exc.name or "") or (self.location(knob) if knob else None)
            where = where or Source("<expand>", 0)
            raise ConfigError(where.file, where.line, mx.located(exc, self.where)) from None

    def where(self, name: str) -> str | None:
        """``file:line`` of the definition of ``name`` in effect (None: not defined in a file)."""
        entry = self._entries.get(name.lower())
        return f"{entry.source.file}:{entry.source.line}" if entry is not None else None

    def get_bool(self, name: str, default: bool) -> bool:
        result = self._read(name, parse_bool)
        return default if result is None else result

    def get_int(self, name: str, default: int) -> int:
        result = self._read(name, lambda value: parse_number(value, want_int=True))
        return default if result is None else int(result)

    def get_float(self, name: str, default: float) -> float:
        result = self._read(name, lambda value: parse_number(value, want_int=False))
        return default if result is None else float(result)

    def _read(self, name: str, parse: Callable[[str], Any]) -> Any:
        """``name``'s value read by ``parse`` (None: not defined, or ``parse`` cannot read it)."""
        value = self.get(name)
        return None if value is None else parse(value)

    # ---------------------------------------------------------------------------- loading

    def _error(self, file: str, line: int, message: str) -> None:
        self.errors.append(ConfigError(file, line, message))

    def _warn(self, file: str, line: int, message: str) -> None:
        self.warnings.append(ConfigError(file, line, message))

    def _load_path(self, path: Path, depth: int, stack: list[str], origin: Source | None, required: bool) -> None:
        where = origin or Source(str(path), 0)
        if path.is_dir():
            files, skipped = self._dir_files(path, where)
            if not files and origin is None and skipped is not None:
                self._error(where.file, where.line, f"config directory {str(path)!r} holds no config file to read: "
                            + (skipped or "it is empty"))
            for child in files:
                self._load_file(child, depth, stack, origin)
        elif path.is_file():
            self._load_file(path, depth, stack, origin)
        elif required:
            self._error(where.file, where.line, f"cannot open config source {str(path)!r}: {_why_missing(path)}")

    def _dir_files(self, path: Path, where: Source) -> tuple[list[Path], str | None]:
        """The files to read in a config directory, in lexical order, and a note of what was
        skipped (None when the directory cannot be read). Symlink loops and dangling links are
        warnings at ``where``."""
        exclude = self._exclude_regexp()
        try:
            children = sorted(os.listdir(path))
        except OSError as exc:
            self._error(str(path), 0, f"cannot read directory: {exc.strerror}")
            return [], None
        files: list[Path] = []
        excluded = subdirs = others = 0
        for c in children:
            child = path / c
            hit = exclude.search(c)
            if exclude.limited:
                exclude.limited.clear()
                self._warn(where.file, where.line, f"LOCAL_CONFIG_DIR_EXCLUDE_REGEXP ran out of time matching "
                           f"{c!r} (catastrophic backtracking?); read as no match, as HTCondor's PCRE2 match "
                           f"limit does")
            if hit:
                excluded += 1
            elif child.is_dir():
                subdirs += 1
            elif child.is_file():
                files.append(child)
            elif child.is_symlink():
                others += 1
                self._warn(where.file, where.line, f"{_why_missing(child)}, not read: {child}")
            else:
                others += 1  # a FIFO, socket or device: never read (a FIFO would block)
        notes = [f"{subdirs} subdirector{'y' if subdirs == 1 else 'ies'} (not read)" if subdirs else "",
                 f"{excluded} excluded by LOCAL_CONFIG_DIR_EXCLUDE_REGEXP" if excluded else "",
                 f"{others} not a regular file" if others else ""]
        return files, ", ".join(n for n in notes if n)

    def _exclude_regexp(self) -> BoundedPattern:
        try:
            pattern = self.get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP", DEFAULT_EXCLUDE_REGEXP) or DEFAULT_EXCLUDE_REGEXP
            return compile_bounded(pattern)
        except ConfigError as exc:
            self.errors.append(exc)
        except bounded_re.error as exc:  # HTCondor EXCEPTs; we say so and use the default
            where = self.location("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP") or Source("<LOCAL_CONFIG_DIR_EXCLUDE_REGEXP>", 0)
            self._error(where.file, where.line, f"LOCAL_CONFIG_DIR_EXCLUDE_REGEXP is not a valid regular "
                        f"expression ({exc}); the default is used")
        return compile_bounded(DEFAULT_EXCLUDE_REGEXP)

    def _load_file(self, path: Path, depth: int, stack: list[str], origin: Source | None) -> None:
        real = os.path.realpath(path)
        if real in stack:
            where = origin or Source(str(path), 0)
            chain = " -> ".join([*stack[stack.index(real):], real])
            self._error(where.file, where.line, f"include cycle: {chain}")
            return
        try:
            size = path.stat().st_size
            if size > MAX_FILE_SIZE:
                where = origin or Source(str(path), 0)
                self._error(where.file, where.line, f"config source {str(path)!r} is {size} bytes, more than "
                            f"{MAX_FILE_SIZE}: not read (is it a config file?)")
                return
            text = self._decode(path.read_bytes(), str(path))
            text = self._edited.get(real, text)
        except OSError as exc:
            where = origin or Source(str(path), 0)
            self._error(where.file, where.line, f"cannot open config source {str(path)!r}: {exc.strerror}")
            return
        self.files.append(str(path))
        self._loaded.add(real)
        self._parse(text, str(path), depth, [*stack, real])

    def _decode(self, data: bytes, filename: str) -> str:
        """File bytes to text. A NUL byte ends its line (HTCondor's C strings end there) and is an
        error; bytes that are not UTF-8 become U+FFFD with one warning. Both name the lines."""
        if b"\0" not in data:
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        lines = data.split(b"\n")
        nul, not_utf8 = [], []
        for i, raw in enumerate(lines):
            if b"\0" in raw:
                nul.append(i + 1)
                raw = lines[i] = raw.split(b"\0", 1)[0]
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                not_utf8.append(i + 1)
        if len(nul) > 5:
            self._error(filename, nul[0], f"not a text file (NUL bytes in {len(nul)} lines); not read")
            return ""
        for n in nul:
            self._error(filename, n, "NUL byte in the line: the rest of the line after it is ignored")
        if not_utf8:
            more = f" and {len(not_utf8) - 5} more" if len(not_utf8) > 5 else ""
            self._warn(filename, not_utf8[0], "bytes that are not UTF-8, read as U+FFFD, in line(s) "
                       + ", ".join(map(str, not_utf8[:5])) + more)
        return b"\n".join(lines).decode("utf-8", "replace")

    def _parse(self, text: str, filename: str, depth: int, stack: list[str]) -> None:
        tail = text.rstrip("\n").rsplit("\n", 1)[-1].strip()
        if tail.endswith("\\") and not tail.startswith("#"):  # HTCondor just stops; a cut file?
            self._warn(filename, text.rstrip("\n").count("\n") + 1,
                       "the last line continues ('\\') past the end of the file; was the file cut short?")
        ifs = mc.IfStack()
        here: tuple[str, str, int, list[str], list[int]] | None = None
        last = 0
        for lineno, line in mc.logical_lines(text):
            last = lineno
            if not line or line.startswith("#"):
                continue
            if here is not None:
                name, tag, start, body, body_lines = here
                if line == "@" + tag:
                    self._insert(name, "\n".join(body), Source(filename, start), tuple(body_lines))
                    here = None
                else:
                    body.append(line)
                    body_lines.append(lineno)
                continue
            if line.startswith(":") and (ifs.depth or re.match(r":if(\s|$)", line, re.IGNORECASE)):
                line = line[1:].lstrip()
            try:
                if ifs.handle(line, lambda e, n=lineno: self._test(e, filename, n)):
                    continue
            except mc.ConditionError as exc:
                self._error(filename, lineno, str(exc))
                continue
            if not ifs.enabled:
                continue
            started = self._statement(line, filename, lineno, depth, stack)
            if started is not None:
                here = (started[0], started[1], lineno, [], [])
        if here is not None:
            self._error(filename, here[2], f"end of file while scanning for '@{here[1]}' (started by {here[0]} @={here[1]})")
        if ifs.depth:
            self._error(filename, last, "endif(s) not found before end-of-file")

    def _test(self, expr: str, filename: str, lineno: int) -> bool:
        try:
            return mc.test_condition(expr, self.get_raw, lambda t: self._expand(t, None, None))
        except (mc.ConditionError, ConfigError) as exc:
            msg = exc.message if isinstance(exc, ConfigError) else str(exc)
            self._error(filename, lineno, f"{expr} is not a valid if condition because {msg}")
            return False

    def _statement(self, line: str, filename: str, lineno: int, depth: int, stack: list[str]) -> tuple[str, str] | None:
        """Handle one enabled line; returns (name, tag) when a ``@=`` block starts."""
        split = mc.split_statement(line)
        if split is None:
            if not line.startswith("["):  # a bare [section] line is a comment (Win32 .ini style)
                self._error(filename, lineno, f"syntax error, missing '=' or ':' in {line!r}")
            return None
        name, word, op, j = split
        if not op:
            self._error(filename, lineno, f"syntax error, missing '=' or ':' in {line!r}")
            return None
        rhs = line[j:].strip()
        keyword = (name[1:] if name.startswith("@") else name).lower()
        if op == ":" and keyword == "include":
            self._include(word, rhs, filename, lineno, depth, stack)
            return None
        if op == ":" and keyword == "use":
            self._warn(filename, lineno, f"'use {word} : {rhs}': metaknobs are not supported; line ignored")
            return None
        if op == ":" and keyword in ("error", "warning"):
            try:
                msg = self._expand(rhs, None, None)
            except ConfigError as exc:
                msg = f"{rhs} ({exc.message})"
            (self._error if keyword == "error" else self._warn)(filename, lineno, f"{keyword.capitalize()} : {msg}")
            return None
        if op == ":":
            self._warn(filename, lineno, f"obsolete use of ':' for parameter assignment at {name}")
        if word:
            self._warn(filename, lineno, f"text {word!r} between {name} and '{op}' is ignored")
        if "$" in name:
            try:
                name = self._expand(name, None, None)
            except ConfigError as exc:
                self._error(filename, lineno, exc.message)
                return None
        if not mx.is_valid_name(name):
            self._error(filename, lineno, f"illegal identifier <{name}>")
            return None
        if op == "@":
            return name, rhs
        self._insert(name, rhs, Source(filename, lineno), (lineno,))
        return None

    def _insert(self, name: str, raw: str, source: Source, value_lines: tuple[int, ...]) -> None:
        key = name.lower()
        try:
            value = mx.expand_self(raw, name, self.get_raw(name))
        except mx.MacroError as exc:
            self._error(source.file, source.line, f"{exc.message}; {name} is left empty")
            value = ""
        old = self._entries.get(key)
        if old is not None and value == raw and old.raw != raw and len(self.replaced) < MAX_REPLACED:
            self.replaced.setdefault(key, []).append(old.source)
        growth = max(0, len(value) - len(raw))
        self._growth += growth - (old.growth if old else 0)
        if growth and self._growth > MAX_SELF_GROWTH:
            self._error(source.file, source.line, f"{name}: values grown by expanding their own name hold more "
                        f"than {MAX_SELF_GROWTH} characters in all; {name} is left empty")
            self._growth -= growth
            value, growth = "", 0
        self._entries[key] = _Entry(name, value, source, value_lines, growth)

    def _include(self, word: str, rhs: str, filename: str, lineno: int, depth: int, stack: list[str]) -> None:
        opts = word.split()
        ifexist = bool(opts) and opts[0] in ("ifexist", "ifexists")
        if ifexist:
            opts = opts[1:]
        is_command = bool(opts) and opts[0] in ("command", "output")
        if is_command:
            opts = []
        if opts:
            self._error(filename, lineno, f"unexpected keyword(s) {' '.join(opts)!r} after include")
            return
        try:
            target = self._expand(rhs, None, None)
        except ConfigError as exc:
            self._error(filename, lineno, exc.message)
            return
        if not target:
            self._error(filename, lineno, "include needs a file name")
            return
        if is_command or "|" in target:
            self._warn(filename, lineno, f"include of command output is not run: {target}")
            return
        if depth + 1 >= MAX_INCLUDE_DEPTH:
            self._error(filename, lineno, "includes nested too deep")
            return
        path = Path(target)
        if not path.is_absolute():
            beside = Path(filename).parent / path
            if beside.exists() or beside.is_symlink():
                path = beside
        if not path.exists():
            if not ifexist:
                self._error(filename, lineno, f"cannot open included file {target!r}: {_why_missing(path)}")
            return
        self._load_path(path, depth + 1, stack, Source(filename, lineno), required=not ifexist)

    def _process_locals(self) -> None:
        def knob(name: str) -> str | None:
            try:
                return self.get(name)
            except ConfigError as exc:
                self.errors.append(exc)
                return None

        dirlist = knob("LOCAL_CONFIG_DIR")
        if dirlist:
            self._process_dirs(dirlist)
        done: list[str] = []
        while True:
            value = knob("LOCAL_CONFIG_FILE")
            if not value:
                break
            sources = [value] if "|" in value else split_list(value)
            pending = [s for s in sources if s not in done]
            if not pending:
                break
            src = pending[0]
            done.append(src)
            where = self.location("LOCAL_CONFIG_FILE") or Source("<LOCAL_CONFIG_FILE>", 0)
            if "|" in src:
                self._warn(where.file, where.line, f"LOCAL_CONFIG_FILE command is not run: {src}")
                continue
            if os.path.realpath(src) in self._loaded:
                continue
            required = self.get_bool("REQUIRE_LOCAL_CONFIG_FILE", True)
            self._load_path(Path(src), 0, [], where, required=required)
        newdirs = knob("LOCAL_CONFIG_DIR")
        if newdirs and newdirs != dirlist:
            self._process_dirs(newdirs)

    def _process_dirs(self, dirlist: str) -> None:
        where = self.location("LOCAL_CONFIG_DIR") or Source("<LOCAL_CONFIG_DIR>", 0)
        for d in split_list(dirlist):
            path = Path(d)
            if not path.is_dir():
                continue  # HTCondor skips a missing config directory silently
            for child in self._dir_files(path, where)[0]:
                if os.path.realpath(child) not in self._loaded:
                    self._load_file(child, 0, [], where)

    def _apply_env_overrides(self) -> None:
        for key, value in self.env.items():
            if key[:8].upper() == "_CONDOR_" and mx.is_valid_name(key[8:]):
                self._insert(key[8:], value, Source("<environment>", 0), (0,))


def _why_missing(path: Path) -> str:
    """Why ``path`` cannot be opened: a symbolic link loop, a dangling link, or nothing there."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
        if path.is_symlink():
            return "dangling symbolic link"
        return "no such file or directory"
    return "not a regular file or directory"
