"""Sequential matches through the services: a remote candidate (``skat match --remote A B``).

A remote player (a bot that connects by itself as player ``A``, as ``skat tournament --remote``
seats one) cannot be played by the pure engine, so its pairs are played at real tables: for
pair *i*, one table with the baseline in every seat and one with the candidate in each seat in
turn, all opened with the cards the pure engine's pair ``i`` deals (``skatbus.match``:
``{seed}/table-{i}`` at Skat, ``{seed}/pair-{i}`` at Thirty-one), through
``skatbus.tournament.open_table``. The baseline's seats are built-in bots seated in this
process as ``skatbus.player.RemotePlayer`` (as ``run_tournament`` seats its bots). When the
pair's tables have closed, their logs are read from the store (``services.store.EventStore``)
and the pair's difference is computed from them exactly as the pure engine computes it from
its states: candidate in its seat minus baseline in that seat, averaged over the seats.

Every one of a pair's tables, the all-baseline one too, is played through the services: the
cards and every baseline choice are then the same ones the pure engine would make (checked by
tests/skatbus/test_match_services.py), but so are the clocks, which the pure engine has not.

Why the baseline bots are shown another table name: a built-in bot draws its random choices
from (its seed, the table's name, the log position, the seat) (``skatbus.seeding``), and the
pure engine plays a pair's four tables under one name, so that the baseline makes the very
same choices at the all-baseline table and at the candidate's tables wherever the game is the
same (what makes a bot against itself differ by nothing). The services need a name per table;
``AsInEngine`` hands each bot its table under the pure engine's name, and a bot of its own per
table (seeded ``match.bot_seed``), so the baseline plays exactly as in the pure engine. The
remote sees the real names.

The remote's turns have ``turn_seconds`` each; a turn it misses is played by the default
action and charged to it, as in tournaments. ``max_timeouts`` missed turns in a row at a
table withdraw its seat there (the table plays its moves by default at once); the pair still
counts, and the match ends after it: a remote that stopped answering would otherwise be
measured, pair after pair, by the default moves played for it. A remote that never connects
thus ends the match after about ``max_timeouts * turn_seconds``.

``run_match`` (synchronous, the plug-in point of ``skatbus.match``) runs in a worker thread
and takes the pairs from ``ServicesPairs.pairs``, which hands the event loop one pair at a
time (or ``jobs`` pairs ahead); ``play_services_match`` is the whole of it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import secrets
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.events import MSGPACK, Event, SeatWithdrawn, TableClosed
from protocol.subjects import check_token, hello_subject, public_subject
from protocol.tournament import place_points, table_finished, turn_of
from protocol.wire import OpenTable
from services.store import EventStore

from .bots import make_bot
from .match import SKAT, Match, MatchResult, Pair, bot_seed, run_match
from .player import RemotePlayer
from .tournament import open_table, set_paused

DEFAULT_TURN_SECONDS = 10.0
"""Seconds the remote has for a move: a match measures its play, not its patience."""
DEFAULT_MAX_TIMEOUTS = 3
"""Missed turns in a row at one table that withdraw the remote there and end the match."""
BASELINE_PLAY = "b"
"""The play of a pair with the baseline in every seat; ``c0``, ``c1``, ... have the candidate
in seat 0, 1, ..."""
POLL_SECONDS = 1.0
"""How often the store is asked whether a pair's tables have closed, besides the public feed
(which is best effort)."""
STOP_WAIT_SECONDS = 5.0
"""Seconds a stopped match gives the pairs it was playing to notice, before pausing their tables."""


def new_run() -> str:
    """A match's own id, ``m-<12 random hex>``: the prefix of its tables' and seats' ids, so
    that two matches (or a tournament) on one server never share a table or a seat. Nothing in
    it comes from the seed."""
    return f"m-{secrets.token_hex(6)}"


def table_id(run: str, index: int, play: str) -> str:
    """The table of pair ``index``'s ``play`` (``b``, ``c0``, ``c1``, ...)."""
    return check_token("table", f"{run}-{index}-{play}")


def pair_of(table: str) -> tuple[int, str]:
    """The pair index and the play of one of a match's tables (``ValueError`` for another)."""
    _, index, play = table.rsplit("-", 2)
    if not index.isdigit() or not (play == BASELINE_PLAY or (play[:1] == "c" and play[1:].isdigit())):
        raise ValueError(f"{table!r} is not a table of a match")
    return int(index), play


def baseline_player(run: str, seat: int) -> str:
    """The player id of the baseline's seat ``seat`` (the same bot name in every seat)."""
    return check_token("player", f"{run}-b{seat}")


def engine_table(game: str, index: int) -> str:
    """The name the pure engine plays pair ``index``'s tables under (``match.skat_pair``,
    ``match.thirty_one_pair``)."""
    return f"dup-{index}" if game == SKAT else f"match-{index}"


def cards_seed(game: str, seed: str, index: int) -> str:
    """The seed of pair ``index``'s cards, as the pure engine deals them."""
    return f"{seed}/table-{index}" if game == SKAT else f"{seed}/pair-{index}"


def table_rules(match: Match, turn_seconds: float, max_timeouts: int) -> Any:
    """The rules every table of the match is opened with: the pure engine's (Skat: one round,
    Seeger-Fabian; Thirty-one: the defaults) with the clock's."""
    if match.game == SKAT:
        from .duplicate import RULES

        return msgspec.structs.replace(RULES, turn_seconds=turn_seconds, max_timeouts=max_timeouts)
    from protocol.thirty_one import ThirtyOneRules

    return ThirtyOneRules(turn_seconds=turn_seconds, max_timeouts=max_timeouts)


class AsInEngine:
    """The built-in bot ``name`` playing each table of a match as the pure engine's pair plays
    it: a bot of its own per table, seeded as ``match.bot_seed`` seeds that seat of that pair,
    shown the table under the pure engine's name (see the module docstring for why). Its moves
    are computed in a worker thread, so a slow bot does not hold up the event loop.

    The baseline's seats are played by it; so may a remote's brain be
    (``skatbus.sdk.play(AsInEngine(...), player)``), which then plays exactly as the pure
    engine's candidate: what the tests compare with ``match.skat_pair``."""

    def __init__(self, name: str, game: str, seed: str, candidate: bool = False, reseed: bool = False) -> None:
        make_bot(name, "", game)  # a ValueError naming the bots there are
        self.name, self.game, self.seed = name, game, seed
        self.candidate, self.reseed = candidate, reseed
        self._bots: dict[tuple[str, int], Any] = {}

    async def act(self, obs: Any) -> Any:
        table, seat = obs.view.table, obs.view.seat
        index, _ = pair_of(table)
        bot = self._bots.get((table, seat))
        if bot is None:  # one per seat too: the baseline's seats of a table share this object
            seed = bot_seed(self.seed, index, seat, self.candidate, self.reseed)
            bot = self._bots[table, seat] = make_bot(self.name, seed, self.game)
        shown = msgspec.structs.replace(
            obs, view=msgspec.structs.replace(obs.view, table=engine_table(self.game, index))
        )
        return await asyncio.to_thread(bot.act, shown)

    def forget(self, tables: Sequence[str]) -> None:
        """Drop the bots of tables that are over (a long match would keep thousands)."""
        gone = set(tables)
        for key in [k for k in self._bots if k[0] in gone]:
            del self._bots[key]


@dataclass(frozen=True)
class PlayedPair:
    """One pair as the services played it: the ``Pair`` the test takes, and how the remote's
    turns went."""

    index: int
    pair: Pair
    tables: dict[str, str]
    """Play (``b``, ``c0``, ...) -> table id."""
    candidate_moves: int
    """The candidate's turns answered in time."""
    candidate_timeouts: int
    """The candidate's turns timed out (each played by the default action)."""
    baseline_timeouts: int
    """The baseline's turns timed out: a machine too busy for the clock (the pair still counts)."""
    withdrawn: list[str]
    """Tables at which the candidate's seat was withdrawn (``max_timeouts`` missed in a row)."""


def pair_from_logs(match: Match, index: int, tables: dict[str, str], logs: dict[str, list[Any]]) -> PlayedPair:
    """Pair ``index``'s difference from its closed tables' logs (play -> events), as the pure
    engine computes it (``match.skat_pair``, ``match.thirty_one_pair``), with the candidate's
    moves, time-outs and withdrawals read from the same logs."""
    seats = match.players
    finished = {play: table_finished(log) for play, log in logs.items()}
    base = finished[BASELINE_PLAY]
    if match.game == SKAT:
        from .duplicate import RULES

        diffs = [finished[f"c{s}"].seeger_fabian[s] - base.seeger_fabian[s] for s in range(seats)]
        diff = sum(diffs) / seats / RULES.deals
    else:
        diffs = [
            place_points(finished[f"c{s}"].places[s], seats) - place_points(base.places[s], seats) for s in range(seats)
        ]
        diff = sum(diffs) / seats
    moves = timeouts = baseline_timeouts = 0
    withdrawn = []
    for play in tables:  # in play order, however the tables closed
        log, at = logs[play], (int(play[1:]) if play != BASELINE_PLAY else None)
        previous: Event | None = None
        for event in log:
            if not isinstance(event, Event):
                continue
            turn = turn_of(previous, event)
            previous = event
            if isinstance(event, SeatWithdrawn) and event.seat == at:
                withdrawn.append(tables[play])
            if turn is None:
                continue
            if turn[0] == at:
                moves += turn[1]
                timeouts += not turn[1]
            else:
                baseline_timeouts += not turn[1]
    pair = Pair(diff=diff, games=len(logs), deals=sum(f.deals for f in finished.values()))
    return PlayedPair(index, pair, dict(tables), moves, timeouts, baseline_timeouts, withdrawn)


class ServicesFailed(RuntimeError):
    """The services could not play a pair (a table refused, the store gone): the match ends."""


@dataclass
class ServicesReport:
    """What the services' side of a match did, for the text and the JSON."""

    run: str
    candidate: str
    turn_seconds: float
    max_timeouts: int
    played: list[PlayedPair] = field(default_factory=list)
    stopped: str = ""
    """Why no more pairs were played before the test decided: a withdrawal, a failure."""
    failed: bool = False
    """The services failed (``stopped`` says how)."""
    paused: list[str] = field(default_factory=list)
    """Tables left open when the match ended (pairs played ahead, or interrupted), paused."""
    unpaused: list[str] = field(default_factory=list)
    """Tables left open that did not answer the pause (their clocks run on)."""

    @property
    def candidate_moves(self) -> int:
        return sum(p.candidate_moves for p in self.played)

    @property
    def candidate_timeouts(self) -> int:
        return sum(p.candidate_timeouts for p in self.played)

    @property
    def baseline_timeouts(self) -> int:
        return sum(p.baseline_timeouts for p in self.played)

    @property
    def withdrawn(self) -> list[str]:
        return [t for p in self.played for t in p.withdrawn]

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "remote": self.candidate,
            "turn_seconds": self.turn_seconds,
            "max_timeouts": self.max_timeouts,
            "candidate_moves": self.candidate_moves,
            "candidate_timeouts": self.candidate_timeouts,
            "baseline_timeouts": self.baseline_timeouts,
            "withdrawn": self.withdrawn,
            "stopped": self.stopped or None,
            "paused": self.paused,
            "unpaused": self.unpaused,
            "tables": [p.tables for p in self.played],
        }


class ServicesPairs:
    """A match's pairs, played through the services on ``nc`` (see the module docstring).

    ``start`` seats the baseline; ``pairs`` is the source ``run_match`` takes (from a worker
    thread); ``interrupt`` stops it (from the event loop: the test then ends "interrupted");
    ``stop`` pauses whatever tables are still open and unseats the baseline."""

    def __init__(
        self,
        nc: Client,
        match: Match,
        turn_seconds: float = DEFAULT_TURN_SECONDS,
        max_timeouts: int = DEFAULT_MAX_TIMEOUTS,
        run: str | None = None,
        request_timeout: float = 1.5,
    ) -> None:
        self.nc = nc
        self.match = match
        self.run = run or new_run()
        self.rules = table_rules(match, turn_seconds, max_timeouts)
        self.store = EventStore(nc)
        self.report = ServicesReport(self.run, match.candidate, turn_seconds, max_timeouts)
        self.baseline = AsInEngine(match.baseline, match.game, match.seed, reseed=match.reseed)
        self.players = [
            RemotePlayer(nc, baseline_player(self.run, s), self.baseline, request_timeout=request_timeout)
            for s in range(match.players)
        ]
        self.open: set[str] = set()
        """Tables opened (or being opened) and not yet seen closed."""
        self._interrupted = threading.Event()
        self._running: set[asyncio.Task[PlayedPair]] = set()
        self._opening: set[asyncio.Future[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def plays(self) -> list[str]:
        return [BASELINE_PLAY, *(f"c{s}" for s in range(self.match.players))]

    def seating(self, play: str) -> list[str]:
        """Player ids in seat order at one play of a pair."""
        seats = [baseline_player(self.run, s) for s in range(self.match.players)]
        if play != BASELINE_PLAY:
            seats[int(play[1:])] = self.match.candidate
        return seats

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self.store.ensure_stream()
        for player in self.players:
            await player.start()
        await self.nc.flush()

    @property
    def interrupted(self) -> bool:
        return self._interrupted.is_set()

    def interrupt(self) -> None:
        """Stop the match (Ctrl-C, SIGTERM): the pairs being played are abandoned."""
        self._interrupted.set()
        for task in list(self._running):
            task.cancel()

    async def stop(self, reason: str = "") -> None:
        """Give the pairs still being played (ahead of the test, or interrupted) a moment to
        stop, pause every table of the match still open (``reason`` is shown to its players),
        and unseat the baseline."""
        for task in list(self._running):
            task.cancel()
        if self._running:
            await asyncio.wait(list(self._running), timeout=STOP_WAIT_SECONDS)
        if self._opening:  # tables being opened: once opened (or not), they can be paused
            await asyncio.wait(list(self._opening), timeout=STOP_WAIT_SECONDS)
            for opening in list(self._opening):
                opening.cancel()
        try:
            left = await self._still_open(sorted(self.open))
            if left:
                replies = await set_paused(self.nc, left, True, reason or f"match {self.run} ended", patience=2.0)
                for table, reply in replies.items():
                    if reply is not None and reply.ok:
                        self.report.paused.append(table)
                    elif reply is None or reply.code not in ("table_closed", "no_table"):
                        self.report.unpaused.append(table)
        finally:
            for player in self.players:
                await player.stop()

    async def _still_open(self, tables: list[str]) -> list[str]:
        """Those of ``tables`` whose logs hold no ``table_closed`` (a store that does not
        answer: all of them, to be paused to be safe)."""
        left = []
        for table in tables:
            try:
                closed = await self.store.has_event(table, "table_closed")
            except Exception:
                closed = False
            if not closed:
                left.append(table)
        return left

    async def play_pair(self, index: int) -> PlayedPair:
        """Open pair ``index``'s tables, wait until every one has closed, and read the pair
        from their logs."""
        task = asyncio.current_task()
        assert task is not None
        self._running.add(task)
        tables = {play: table_id(self.run, index, play) for play in self.plays}
        changed = asyncio.Event()

        async def on_public(msg: Msg) -> None:  # a hint only: the store has the word
            try:
                closing = isinstance(MSGPACK.decode(msg.data), TableClosed)
            except Exception:
                closing = True
            if closing:
                changed.set()

        subs = [await self.nc.subscribe(public_subject(t), cb=on_public) for t in tables.values()]
        try:
            # Opened whole even if the pair is stopped meanwhile: a table opened by a request
            # whose answer was not awaited would be one that nobody pauses.
            opening = asyncio.ensure_future(self._open(index, tables))
            self._opening.add(opening)
            opening.add_done_callback(self._opened)
            await asyncio.shield(opening)
            logs = await self._closed_logs(tables, changed)
        finally:
            for sub in subs:
                with contextlib.suppress(Exception):
                    await sub.unsubscribe()
            self._running.discard(task)
        self.baseline.forget(list(tables.values()))
        return pair_from_logs(self.match, index, tables, logs)

    def _opened(self, opening: asyncio.Future[None]) -> None:
        self._opening.discard(opening)
        if not opening.cancelled():
            opening.exception()  # retrieved: the pair, if still waiting, raises it itself

    async def _open(self, index: int, tables: dict[str, str]) -> None:
        for play, table in tables.items():
            request = OpenTable(
                table=table,
                players=self.seating(play),
                rules=self.rules,
                game=self.match.game,
                seed=cards_seed(self.match.game, self.match.seed, index),
            )
            self.open.add(table)  # before asking: stopped now, it is paused (or found never opened)
            reply = await open_table(self.nc, request, patience=30.0)
            if not reply.ok:  # "exists" too: a table of a fresh run id is never there already
                raise ServicesFailed(f"the dealer did not open {table}: {reply.code}: {reply.reason}")

    async def _closed_logs(self, tables: dict[str, str], changed: asyncio.Event) -> dict[str, list[Any]]:
        """Each table's log once it holds ``table_closed``: looked for whenever the public feed
        says one of them closed, and every ``POLL_SECONDS`` anyway (the feed is best effort)."""
        logs: dict[str, list[Any]] = {}
        while len(logs) < len(tables):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), POLL_SECONDS)
            changed.clear()
            for play, table in tables.items():
                if play in logs or not await self.store.has_event(table, "table_closed"):
                    continue
                logs[play] = [s.event for s in await self.store.read(table)]
                self.open.discard(table)
        return logs

    def pairs(self, jobs: int = 1) -> Iterator[Pair]:
        """Pairs 0, 1, ... ``max_pairs - 1`` in order, for ``run_match`` in a worker thread
        (the event loop is the one ``start`` ran on). ``jobs`` pairs are played at once, the
        later ones ahead of the test, which takes them in order: a verdict, the pair it comes
        at and every figure are the same whatever ``jobs`` (as long as every move is made in
        time). The source ends after a pair at which the remote was withdrawn, or the services
        failed (``report.stopped`` says so); ``interrupt`` makes it raise ``KeyboardInterrupt``,
        which ``run_match`` reports as an interrupted match."""
        loop = self._loop
        assert loop is not None, "start() first"
        ahead: deque[concurrent.futures.Future[PlayedPair]] = deque()
        submitted = 0
        try:
            while submitted < self.match.max_pairs or ahead:
                while submitted < self.match.max_pairs and len(ahead) < jobs:
                    ahead.append(asyncio.run_coroutine_threadsafe(self.play_pair(submitted), loop))
                    submitted += 1
                try:
                    played = self._wait(ahead.popleft())
                except ServicesFailed as exc:
                    self.report.stopped, self.report.failed = str(exc), True
                    return
                except (KeyboardInterrupt, concurrent.futures.CancelledError):
                    raise KeyboardInterrupt from None
                except Exception as exc:  # the bus or the store: the pairs so far still count
                    self.report.stopped, self.report.failed = f"the services failed: {type(exc).__name__}: {exc}", True
                    return
                self.report.played.append(played)
                yield played.pair
                if played.withdrawn:
                    self.report.stopped = (
                        f"{self.match.candidate} was withdrawn at {', '.join(played.withdrawn)} "
                        f"({self.report.max_timeouts} turns missed in a row); pair {played.index + 1} counts, "
                        "its missed moves played by default, and no more pairs are played"
                    )
                    return
        finally:
            for future in ahead:
                future.cancel()

    def _wait(self, future: concurrent.futures.Future[PlayedPair]) -> PlayedPair:
        """The pair, once played; ``KeyboardInterrupt`` as soon as the match is interrupted
        (checked four times a second: a cancelled request may not end its pair at once)."""
        while True:
            if self._interrupted.is_set():
                future.cancel()
                raise KeyboardInterrupt
            try:
                return future.result(timeout=0.25)
            except concurrent.futures.TimeoutError:
                continue


async def heard_from(
    nc: Client,
    player: str,
    seconds: float,
    tick: Callable[[float], None] | None = None,
    listening: Callable[[], None] | None = None,
) -> bool:
    """Wait up to ``seconds`` for ``player`` to say hello (``skat.hello.<player>``: every SDK
    bot, ``skat bot`` among them, does when it connects); whether it did. ``listening`` is
    called once the server has our subscription (say then how to connect: a hello sent after
    it is not missed); ``tick`` is told the seconds left, once a second."""
    heard = asyncio.Event()

    async def on_hello(msg: Msg) -> None:
        heard.set()

    sub = await nc.subscribe(hello_subject(player), cb=on_hello)
    await nc.flush()
    if listening is not None:
        listening()
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    try:
        while not heard.is_set() and loop.time() < end:
            if tick is not None:
                tick(end - loop.time())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(heard.wait(), min(1.0, max(end - loop.time(), 0.0)))
    finally:
        with contextlib.suppress(Exception):
            await sub.unsubscribe()
    return heard.is_set()


@dataclass
class ServicesMatchResult:
    """A match played through the services: the test's result and the services' report."""

    result: MatchResult
    report: ServicesReport


async def play_services_match(
    nc: Client,
    match: Match,
    turn_seconds: float = DEFAULT_TURN_SECONDS,
    max_timeouts: int = DEFAULT_MAX_TIMEOUTS,
    jobs: int = 1,
    every: int = 10,
    on_progress: Callable[[MatchResult], None] | None = None,
    stop: asyncio.Event | None = None,
    run: str | None = None,
    on_start: Callable[[ServicesPairs], None] | None = None,
) -> ServicesMatchResult:
    """Play ``match`` (a remote candidate, a built-in baseline) through the services on ``nc``
    until its test decides, and pause whatever tables are left open (there are some only
    when pairs were played ahead, or the match was stopped). Setting ``stop`` ends it as Ctrl-C
    does: outcome "interrupted", the pairs so far reported. ``on_start`` is given the pairs'
    source once the baseline is seated (its ``run`` names every table)."""
    source = ServicesPairs(nc, match, turn_seconds, max_timeouts, run)
    try:
        await source.start()
    except BaseException:
        await source.stop()  # the baseline's seats started so far
        raise
    if on_start is not None:
        on_start(source)
    stop = stop or asyncio.Event()

    async def watch() -> None:
        await stop.wait()
        source.interrupt()

    watcher = asyncio.ensure_future(watch())
    testing = asyncio.ensure_future(asyncio.to_thread(run_match, match, source.pairs(jobs), every, on_progress))
    try:
        try:
            result = await asyncio.shield(testing)
        except asyncio.CancelledError:  # the thread cannot be cancelled: stop its pairs, then wait
            source.interrupt()
            await testing
            raise
    finally:
        watcher.cancel()
        interrupted = stop.is_set() or source.interrupted
        await source.stop(f"match {source.run} {'interrupted' if interrupted else 'ended'}")
    return ServicesMatchResult(result, source.report)
