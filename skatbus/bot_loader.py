"""In-process bots: a Python class seated by its spec, ``module:Class`` or ``path/to/file.py:Class``.

A spec names the class a bot is made of, wherever a built-in bot's name is taken
(``skat tournament --bots``, ``python -m skatbus.evaluate``, ``python -m skatbus.thirty_one_eval
--bots``, ``skat match A B``, ``python -m skatbus.duplicate``); ``skatbus.bots.make_bot`` makes
either. ``NAME=SPEC`` names the entrant (``alice=my_bot.py:MyBot``); without it the entrant is
called after the class. The rules, checked when the spec is read so that a mistake is one line
before anything is played (``BotLoadError``, a ``UsageError``: exit 2 from every command):

- ``module:Class`` imports ``module`` as Python would, from ``sys.path`` and the current
  directory (which ``skat``, a console script, does not have on its path); ``file.py:Class``
  (any spec whose left part ends in ``.py`` or holds a ``/``) runs that file as a module of
  its own (``skatbus_bot_<stem>_<hash of the path>``). The file's directory is on ``sys.path``
  while it is imported, so it can import its neighbours, and taken off again after.
- ``Class`` must be a class with an ``act`` method: ``act(observation) -> command``, the same
  ``Bot`` API remote bots use (``skatbus.bots.Bot``; ``async def act`` too, except where the
  pure engine plays, which has no event loop: ``pure_engine=True`` refuses it).
- The game a class plays is its class attribute ``game`` (``"skat"`` or ``"thirty-one"``),
  ``"skat"`` when it has none: a class is only seated at its own game's tables, since a Skat
  bot cannot read a Thirty-one view.
- It is made as the built-in bots are (``skatbus.bots.make_bot``): with the seat's seed when
  its constructor takes a parameter called ``seed`` (``Class(seed=...)``; a string, the same
  one a built-in bot in that seat would get), else with no argument. A constructor that needs
  any other argument is refused.
- The bot it makes is ``skatbus.bot_guard.Guarded``: a turn it fails (``act`` raises, or
  answers with something illegal) is played by the default move, logged once and counted.
- Where an event loop plays it (the tournament runner, which plays all its bots on one loop),
  a plain ``act`` runs in a thread of the bot's own (``skatbus.bot_thread``), one call at a
  time, so a slow one costs its own seat its clock and nobody else's; ``blocking = False`` on
  the class keeps it on the loop. Where the pure engine plays (no loop), ``act`` is a plain
  call. Built-in bots are not loaded here and run as they always have.

docs/in-process-bots.md is the user's guide.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from protocol.subjects import check_token

from .bot_guard import Guarded
from .errors import UsageError

SKAT = "skat"
THIRTY_ONE = "thirty-one"
GAMES = (SKAT, THIRTY_ONE)
"""The games a class may declare (``game = ...``)."""
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
"""A module's or a class's dotted name."""


class BotLoadError(UsageError, ValueError):
    """A spec that makes no bot, in one line (a ``UsageError``: exit 2 from every command; a
    ``ValueError``, as ``make_bot``'s unknown names are)."""


def is_spec(text: str) -> bool:
    """Whether ``text`` names a class (``module:Class``, ``file.py:Class``, with or without
    ``NAME=``) rather than a built-in bot (whose names have no ``:``)."""
    return ":" in text


@dataclass(frozen=True)
class Spec:
    """A parsed spec: ``name`` (given with ``NAME=``, else ""), the ``target`` (a module or a
    file) and the ``attr`` (the class, dotted for a nested one)."""

    name: str
    target: str
    attr: str

    @property
    def is_file(self) -> bool:
        return self.target.endswith(".py") or "/" in self.target or os.sep in self.target

    @property
    def bot(self) -> str:
        """The spec without its name: what is stored as the entrant's bot."""
        return f"{self.target}:{self.attr}"

    @property
    def entrant(self) -> str:
        """The entrant's name: the one given, else the class's (its last part)."""
        return self.name or self.attr.rpartition(".")[2]


def parse(text: str) -> Spec:
    """``[NAME=]TARGET:CLASS`` as a ``Spec``; ``BotLoadError`` for a malformed one."""
    raw = text.strip()
    name, eq, rest = raw.partition("=")
    if not eq or ":" in name or "/" in name:
        name, rest = "", raw
    target, colon, attr = rest.rpartition(":")
    if not colon or not target or not attr:
        raise BotLoadError(f"{text!r}: want MODULE:CLASS or PATH.py:CLASS (e.g. examples/my_bot.py:MyBot)")
    if not _DOTTED.fullmatch(attr):
        raise BotLoadError(f"{text!r}: {attr!r} is not a class name")
    spec = Spec(name.strip(), target.strip(), attr)
    if not spec.is_file and not _DOTTED.fullmatch(spec.target):
        raise BotLoadError(f"{text!r}: {spec.target!r} is neither a module name nor a .py file")
    try:
        check_token("player", spec.entrant)
    except ValueError:
        raise BotLoadError(
            f"{text!r}: the entrant name {spec.entrant!r} must be 1-64 letters, digits, '_' or '-' "
            "(name it with NAME=, e.g. mybot=" + spec.bot + ")"
        ) from None
    return spec


@contextlib.contextmanager
def _on_path(folder: str) -> Iterator[None]:
    """``folder`` first on ``sys.path`` while importing, as ``python file.py`` would have it,
    and off again after (unless it was there before)."""
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added:
            with contextlib.suppress(ValueError):
                sys.path.remove(folder)


def _where(exc: BaseException) -> str:
    """`` (file.py line 12)``: where an import's exception came from, innermost frame first
    found outside the import machinery."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" ({Path(exc.filename).name} line {exc.lineno})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
    if not frames:
        return ""
    last = frames[-1]
    return f" ({Path(last.filename).name} line {last.lineno})"


def _raised(what: str, exc: BaseException) -> BotLoadError:
    message = " ".join(str(exc).split())[:300]
    return BotLoadError(f"{what} raised {type(exc).__name__}{': ' + message if message else ''}{_where(exc)}")


def _file_module(spec: Spec, text: str) -> ModuleType:
    path = Path(spec.target).expanduser()
    if not path.is_file():
        why = "is a directory" if path.is_dir() else "no such file"
        raise BotLoadError(f"{text!r}: {spec.target}: {why}")
    if path.suffix != ".py":
        raise BotLoadError(f"{text!r}: {spec.target}: not a .py file")
    resolved = path.resolve()
    digest = hashlib.blake2b(str(resolved).encode(), digest_size=4).hexdigest()
    stem = re.sub(r"\W", "_", resolved.stem)
    name = f"skatbus_bot_{stem}_{digest}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    module_spec = importlib.util.spec_from_file_location(name, resolved)
    if module_spec is None or module_spec.loader is None:
        raise BotLoadError(f"{text!r}: {spec.target}: cannot be loaded as a module")
    module = importlib.util.module_from_spec(module_spec)
    # In sys.modules while it runs (dataclasses and pickle look a class's module up there),
    # and after, so that a second spec of the same file gets the same module.
    sys.modules[name] = module
    try:
        with _on_path(str(resolved.parent)):
            module_spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _raised(f"{text!r}: importing {spec.target}", exc) from None
    return module


def _import(spec: Spec, text: str) -> ModuleType:
    try:
        with _on_path(os.getcwd()):
            return importlib.import_module(spec.target)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (spec.target == missing or spec.target.startswith(missing + ".")):
            raise BotLoadError(
                f"{text!r}: no module named {missing!r} (looked for on sys.path and in the current directory; "
                f"a file is given as path/to/{spec.target.rpartition('.')[2]}.py:{spec.attr})"
            ) from None
        raise _raised(f"{text!r}: importing {spec.target}", exc) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise _raised(f"{text!r}: importing {spec.target}", exc) from None


def load_class(text: str) -> type:
    """The class ``text`` names, imported and checked to be a bot class (``act``)."""
    spec = parse(text)
    module = _file_module(spec, text) if spec.is_file else _import(spec, text)
    found: Any = module
    for part in spec.attr.split("."):
        if not hasattr(found, part):
            classes = sorted(
                n for n, v in vars(module).items() if inspect.isclass(v) and v.__module__ == module.__name__
            )
            has = f"; its classes: {', '.join(classes)}" if classes else "; it defines no class"
            raise BotLoadError(f"{text!r}: {spec.target} has no {spec.attr!r}{has}")
        found = getattr(found, part)
    if not inspect.isclass(found):
        raise BotLoadError(f"{text!r}: {spec.attr} is not a class but of type {type(found).__name__}")
    if not callable(getattr(found, "act", None)):
        raise BotLoadError(f"{text!r}: {spec.attr} has no act method (a bot implements act(observation) -> command)")
    return found


def game_of(cls: type) -> str:
    """The game a bot class plays: its ``game`` class attribute, else Skat."""
    return str(getattr(cls, "game", SKAT))


def takes_seed(cls: type) -> bool:
    """Whether the constructor takes ``seed`` (``BotLoadError`` if it needs anything else)."""
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):  # no signature to read (a C type): made without arguments
        return False
    seed = any(p.name == "seed" and p.kind is not p.POSITIONAL_ONLY for p in params)
    needed = [
        p.name
        for p in params
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "seed"
    ]
    if needed:
        raise BotLoadError(
            f"{cls.__qualname__}'s constructor needs {', '.join(needed)}: a bot class is made with seed=... "
            "(when it takes seed) or with no argument"
        )
    return seed


def check(text: str, game: str = SKAT, pure_engine: bool = False, construct: bool = False) -> type:
    """The class of ``text``, checked to play ``game`` (and, for the pure engine, to have a
    plain ``act``; with ``construct``, to be made once, so that a constructor that raises is
    found before anything is played); ``BotLoadError`` naming the first thing wrong."""
    cls = load_class(text)
    plays = game_of(cls)
    if plays not in GAMES:
        raise BotLoadError(f"{text!r}: its class attribute game = {plays!r} is no game; games: {', '.join(GAMES)}")
    if plays != game:
        declare = "" if plays != SKAT or hasattr(cls, "game") else f' (a {game} bot says so: game = "{game}")'
        raise BotLoadError(f"{text!r}: {cls.__qualname__} plays {plays}, not {game}{declare}")
    takes_seed(cls)
    if pure_engine and inspect.iscoroutinefunction(cls.act):  # type: ignore[attr-defined]
        raise BotLoadError(
            f"{text!r}: {cls.__qualname__}.act is async; the pure engine (evaluate, match, duplicate) needs a "
            "plain def act (async bots play in tournaments)"
        )
    if construct:
        _construct(cls, text, "")
    return cls


def _construct(cls: type, text: str, seed: str) -> Any:
    """``cls`` made with ``seed`` if it takes one, else with nothing; ``BotLoadError`` if its
    constructor raises."""
    seeded = takes_seed(cls)
    try:
        return cls(seed=seed) if seeded else cls()
    except Exception as exc:
        raise _raised(f"{text!r}: {cls.__qualname__}({'seed' if seeded else ''})", exc) from None


def make(text: str, seed: str = "", game: str = SKAT, player: str = "") -> Guarded:
    """A bot of the class ``text`` names, for ``game``, made with ``seed`` (see the module
    docstring), guarded: its failed turns fall to the default move, logged and counted. A
    constructor that raises is a ``BotLoadError`` too."""
    cls = check(text, game)
    return Guarded(_construct(cls, text, seed), player, parse(text).entrant, threaded=runs_in_thread(cls))


def runs_in_thread(cls: type) -> bool:
    """Whether a class's plain ``act`` is played in a thread of its own where an event loop
    plays it (the tournament's bots): always, unless the class says ``blocking = False`` (an
    ``act`` known to answer at once: it then runs on the loop, and a slow one would hold up
    every bot of the runner). The SDK reads ``blocking`` the same way, only its default is
    False: a remote bot's loop serves that bot alone."""
    return bool(getattr(cls, "blocking", True))


def entrant_name(text: str) -> str:
    """The name a spec's entrant plays under (``NAME=``, else the class's)."""
    return parse(text).entrant


def bot_of(text: str) -> str:
    """A spec without its ``NAME=``: the bot as an entrant's configuration stores it."""
    return parse(text).bot
