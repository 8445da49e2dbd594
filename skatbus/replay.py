"""``skat replay``: read a table's log back, step through its deals, verify it, render it.

A log is the only truth about a table, so a replay never trusts anything the log says that
can be derived: it folds the events itself (``protocol.table.fold`` checks every event,
derived ones included) and shows what the fold implies. The same fold is the verifier: the
first event that does not follow from the ones before it is reported with its position.

Sources: a JSONL archive as the tournament runner writes it (``{"table", "index", "event"}``
per line, many tables per file) or a table id read from the live JetStream store.

Every table is replayed with its own game (its first event names it, ``protocol.registry``):
this module reads logs and shows Skat; ``verify``, ``summary``, ``show_to`` and
``step_through`` hand a table of another game to that game's replay module (``GAME_REPLAYS``),
so one command replays an archive that holds several games.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TextIO

from protocol import registry
from protocol.events import (
    AllPassed,
    BiddingWon,
    BidHeld,
    BidMade,
    CardPlayed,
    CardsShown,
    DealDealt,
    DealEnded,
    DealScored,
    Discarded,
    Event,
    GameDeclared,
    KontraSaid,
    Passed,
    PlayerTimedOut,
    ReSaid,
    Resigned,
    SeatWithdrawn,
    SkatTaken,
    TableClosed,
    TableOpened,
    TableOpenedV2,
    TablePaused,
    TableResumed,
    TrickTaken,
    UnknownEvent,
)
from protocol.lifecycle import NewerEvent
from protocol.skat import cards as C
from protocol.skat.deal import POSITION_NAMES
from protocol.skat.scoring import DealResult
from protocol.skat.table import LogError, TableState, due
from services.connection import ENV_URL, ConnectionSettings, open_connection

from .archive_reader import NotAnArchive, entries, read_tables

AnyLogged = Event | UnknownEvent


# --- loading -------------------------------------------------------------------------------


@dataclass
class TableLog:
    """One table's events as read, plus the first problem met while reading (a line that does
    not decode, or a gap in the archive's indices): reading goes on to the end of the table so
    a replay can still show everything before the problem, and ``verify`` reports it."""

    table: str
    events: list[AnyLogged] = field(default_factory=list)
    problem: LogError | None = None

    def fail(self, position: int, reason: str) -> None:
        if self.problem is None:
            self.problem = LogError(position, reason)


def archive_tables(path: Path) -> list[str]:
    """The table ids of an archive in the order they first appear (a damaged line's table too,
    when the line still names it: ``archive_reader``)."""
    seen: dict[str, None] = {}
    with open(path, "rb") as f:
        try:
            for item in entries(f):
                if item.table is not None:
                    seen.setdefault(item.table, None)
        except NotAnArchive as exc:
            raise ValueError(f"{path}: {exc}") from None
    return list(seen)


def load_archive(path: Path, table: str | None = None, warnings: list[str] | None = None) -> TableLog:
    """One table's log from a JSONL archive (the first table unless ``table`` is given).

    Positions are the archive's ``index`` values: a missing line is a gap the reader reports
    at the index that is missing, not somewhere later where the fold happens to trip."""
    logs = read_archive(path, table, first_only=table is None, warnings=warnings)
    if not logs:
        raise ValueError(f"{path}: no table {table!r}" if table else f"{path}: no events")
    return next(iter(logs.values()))


def read_archive(
    path: Path, table: str | None = None, first_only: bool = False, warnings: list[str] | None = None
) -> dict[str, TableLog]:
    """The logs of an archive's tables in one pass, in the order they first appear (only
    ``table``'s if given, only the first table's with ``first_only``).

    A line that does not decode costs only its table (``archive_reader``): that table's log
    ends there with the damage as its problem, every other table is read whole, and one line
    per damaged line goes to ``warnings`` (``path:LINE: ...``). A file that is no archive at
    all raises ``ValueError``."""
    with open(path, "rb") as f:
        try:
            found = read_tables(f, table, first_only)
        except NotAnArchive as exc:
            raise ValueError(f"{path}: {exc}") from None
    if warnings is not None:
        warnings += [f"{path}: {line}" for line in found.warnings.lines()]
    logs: dict[str, TableLog] = {}
    for name, read in found.tables.items():
        log = logs[name] = TableLog(name, read.events)
        if read.problem is not None:
            log.fail(*read.problem)
    return logs


def breaks(exc: LogError) -> str:
    """Why a log stops, as every reader says it: ``the log breaks the rules at event N: ...``;
    a table with an event of a newer skatbus breaks no rule, it cannot be read here
    (``event N: card_played/7 was written by a newer skatbus ...; upgrade to read it``)."""
    if isinstance(exc, NewerEvent):
        return f"event {exc.position}: {exc.reason}"
    return f"the log breaks the rules at event {exc.position}: {exc.reason}"


def table_note(log: TableLog) -> str:
    """What the table list says of a table that cannot be read whole: an event of a newer
    skatbus in it, or a damaged or missing line (``  [read up to event 37: ...]``); else empty."""
    newer = next((e for e in log.events if isinstance(e, UnknownEvent)), None)
    if newer is not None:
        return f"  [has {newer.type}/{newer.version}: written by a newer skatbus]"
    if log.problem is not None:
        return f"  [read up to event {log.problem.position}: {log.problem.reason}]"
    return ""


def load_live(table: str, url: str | ConnectionSettings) -> TableLog:
    """One table's log from the live event store."""
    return asyncio.run(_load_live(table, ConnectionSettings.resolve(url)))


async def _load_live(table: str, settings: ConnectionSettings) -> TableLog:
    from nats.errors import Error as NatsError

    from services.store import EventStore

    try:
        nc = await open_connection(settings, connect_timeout=5, max_reconnect_attempts=1, allow_reconnect=False)
    except (OSError, NatsError, TimeoutError) as exc:
        raise ValueError(f"cannot connect to {settings.describe()}: {_reason(exc)}") from None
    try:
        stored = await EventStore(nc).read(table)
    finally:
        await nc.close()
    log = TableLog(table)
    for s in stored:
        position = len(log.events)
        if s.event is None or s.index != position:
            log.fail(position, f"stream sequence {s.seq} is not this table's event {position} (index {s.index})")
            if s.event is None:
                return log
        log.events.append(s.event)
    if not log.events:
        raise ValueError(f"no events for table {table!r} at {settings.describe()}")
    return log


def _reason(exc: BaseException) -> str:
    """A connection failure in a few words (nats-py's messages name no secret)."""
    text = str(exc).strip() or type(exc).__name__
    return text.removeprefix("nats: ")


def load(
    source: str,
    table: str | None,
    nats_url: str | None,
    creds: str | None = None,
    tls_ca: str | None = None,
    warnings: list[str] | None = None,
) -> TableLog:
    """An archive file if ``source`` is one, else a table id in the live store (the server,
    credentials and CA from the arguments or ``$SKAT_NATS_URL``, ``$SKAT_NATS_CREDS``,
    ``$SKAT_NATS_CA``)."""
    path = Path(source)
    if path.is_file():
        return load_archive(path, table, warnings)
    url = nats_url or os.environ.get(ENV_URL)
    if not url:
        raise ValueError(f"{source}: no such archive file (for a live table give --nats URL or set ${ENV_URL})")
    return load_live(source, ConnectionSettings.build(url, creds, tls_ca))


# --- which game ----------------------------------------------------------------------------

GAME_REPLAYS: Final[dict[str, str]] = {"thirty-one": "skatbus.replay_thirty_one"}
"""The replay module of each game other than Skat. Each has ``verify``, ``summary``,
``show_to``, ``step_through``, ``steps`` (this module's ``replay``), ``describe``, ``snapshot`` and
``render_state`` with the signatures of this module's Skat ones, and what the interactive replay
needs (``replay_nav``): ``DEAL_STARTS``, ``DEAL_SCORED``, ``STOPS``, ``STOP_WORDS`` and ``KEYS``."""

TITLES: Final[dict[str, str]] = {"skat": "Skat", "thirty-one": "Thirty-one"}


def log_game(log: TableLog) -> str:
    """The name of the table's game, as ``protocol.registry.game_of`` reads its first event
    (``table_opened/1``, or no opening at all, is Skat); a game this version does not know keeps
    the name its opening gives."""
    if not log.events:
        return registry.DEFAULT
    first = log.events[0]
    try:
        return registry.game_of(first).name
    except ValueError:
        return first.game if isinstance(first, TableOpenedV2) else registry.DEFAULT


def game_title(game: str) -> str:
    return TITLES.get(game, game)


class UnknownGame(ValueError):
    """A table of a game that has no replay here."""


def game_replay(log: TableLog) -> ModuleType | None:
    """The replay module of the table's game; None for Skat (this module). Raises
    ``UnknownGame`` for a game without one."""
    game = log_game(log)
    if game == registry.DEFAULT:
        return None
    module = GAME_REPLAYS.get(game)
    if module is None:
        raise UnknownGame(f"table {log.table} is a table of {game!r}, which this version cannot replay")
    return importlib.import_module(module)


# --- folding with snapshots ----------------------------------------------------------------


@dataclass
class Step:
    """One event and the table as it stands right after it (``state`` is a private copy only
    when the caller asked for snapshots; otherwise it is the live fold)."""

    position: int
    event: AnyLogged
    state: TableState


def replay(log: TableLog, keep: Callable[[int, AnyLogged], bool] = lambda i, e: False) -> Iterator[Step]:
    """Fold the log, yielding every step; raises ``LogError`` at the first bad event (or at
    the reader's problem, when the fold gets that far). ``keep(position, event)`` says which
    steps get a copied state (the rest share the live one, which moves on)."""
    state = TableState()
    for position, event in enumerate(log.events):
        if log.problem is not None and log.problem.position == position:
            raise log.problem
        state.apply(event)
        yield Step(position, event, state.copy() if keep(position, event) else state)
    if log.problem is not None:
        raise log.problem


@dataclass
class Verdict:
    ok: bool
    events: int
    deals: int
    message: str
    error: LogError | None = None


def verify(log: TableLog) -> Verdict:
    """Everything derivable, re-derived: the fold checks each event (tricks, ends and scores
    must equal the engine's own) and builds the score sheet from the checked scores. A table
    of another game is verified by its game's fold."""
    try:
        other = game_replay(log)
    except UnknownGame as exc:
        return Verdict(False, 0, 0, f"event 0: {exc}", LogError(0, str(exc)))
    if other is not None:
        verdict: Verdict = other.verify(log)
        return verdict
    state: TableState | None = None
    try:
        for step in replay(log):
            state = step.state
    except LogError as exc:
        return Verdict(False, exc.position, state.deal_no if state else 0, f"event {exc.position}: {exc.reason}", exc)
    assert state is not None
    deals = len(state.sheet)
    message = f"ok: {state.events} events, {deals} deals, the score sheet matches"
    if state.newer is not None:  # events a newer skatbus wrote that change nothing this one checks
        message += (
            f" ({state.unknown} unknown event{'s' * (state.unknown != 1)} skipped, the first at {state.newer[0]})"
        )
    if not state.closed:
        owed = due(state)
        waiting = type(owed).__name__ if owed is not None else f"seat {state.to_move}"
        message += f" (the table is not closed: it waits for {waiting})"
    return Verdict(True, state.events, deals, message)


# --- words ---------------------------------------------------------------------------------

RANK_LABELS = {"T": "10"}
SUIT_OF = dict(zip(C.SUITS, C.SUIT_SYMBOLS))


def card_label(code: str) -> str:
    """``"HT"`` -> ``"♥10"``: how a person reads a card."""
    return SUIT_OF[code[0]] + RANK_LABELS.get(code[1], code[1])


def cards_label(codes: list[str]) -> str:
    return " ".join(card_label(c) for c in codes)


def sort_kind(state: TableState) -> str:
    """The card order a player would sort by now: the declared game, Ramsch, or grand."""
    deal = state.deal
    if deal is None:
        return "G"
    if deal.declaration is not None:
        return deal.declaration.game
    return "R" if deal.ramsch else "G"


def sorted_codes(mask: int, kind: str) -> list[str]:
    return [C.CODES[c] for c in C.sorted_for(mask, kind)]


def name(state: TableState, seat: int) -> str:
    return state.players[seat] if 0 <= seat < len(state.players) else f"seat {seat}"


def describe(event: AnyLogged, state: TableState) -> str:
    """One line for an event, in the words of the table (``state`` may be before or after)."""

    def who() -> str:
        return name(state, event.seat)  # type: ignore[union-attr]

    if isinstance(event, TableOpened):
        return f"table {event.table} opened: {', '.join(event.players)}"
    if isinstance(event, DealDealt):
        return f"deal {event.deal} dealt by {name(state, event.dealer)}"
    if isinstance(event, BidMade):
        return f"{who()} bids {event.value}"
    if isinstance(event, BidHeld):
        return f"{who()} holds {event.value}"
    if isinstance(event, Passed):
        return f"{who()} passes"
    if isinstance(event, BiddingWon):
        return f"{who()} wins the bidding at {event.value}"
    if isinstance(event, AllPassed):
        return "all passed: " + ("a Ramsch is played" if event.ramsch else "the deal is passed in")
    if isinstance(event, SkatTaken):
        return f"{who()} takes the skat: {cards_label(list(event.cards))}"
    if isinstance(event, Discarded):
        return f"{who()} discards {cards_label(list(event.cards))}"
    if isinstance(event, GameDeclared):
        return f"{who()} declares {event.game}"
    if isinstance(event, KontraSaid):
        return f"{who()} says Kontra"
    if isinstance(event, ReSaid):
        return f"{who()} says Re"
    if isinstance(event, CardPlayed):
        return f"{who()} plays {card_label(event.card)}"
    if isinstance(event, TrickTaken):
        return f"trick {event.trick}: {cards_label(list(event.cards))} -> {who()} ({event.points} points)"
    if isinstance(event, CardsShown):
        return f"{who()} shows the cards: {cards_label(list(event.cards))}"
    if isinstance(event, Resigned):
        return f"{who()} resigns"
    if isinstance(event, DealEnded):
        return f"deal {event.deal} ended: {event.reason.replace('_', ' ')}"
    if isinstance(event, DealScored):
        return f"deal {event.deal} scored: {result_headline(event.result, state)}"
    if isinstance(event, PlayerTimedOut):
        return f"{who()} timed out"
    if isinstance(event, SeatWithdrawn):
        return f"{who()} is withdrawn after {event.missed} turns in a row timed out: the default action plays for it"
    if isinstance(event, TablePaused):
        return "table paused" + (f": {event.reason}" if event.reason else "")
    if isinstance(event, TableResumed):
        return "table resumed"
    if isinstance(event, TableClosed):
        return f"table closed: {event.reason}"
    if isinstance(event, UnknownEvent):
        return f"(an event this version does not know: {event.type}/{event.version})"
    return type(event).__name__


def result_headline(r: DealResult, state: TableState) -> str:
    if r.kind == "passed":
        return "passed in"
    if r.kind == "ramsch":
        assert r.ramsch is not None
        if r.ramsch.durchmarsch is not None:
            return f"Ramsch, Durchmarsch by {name(state, r.ramsch.durchmarsch)}"
        losers = ", ".join(name(state, s) for s in r.ramsch.losers)
        return f"Ramsch, {losers} lose{'s' if len(r.ramsch.losers) == 1 else ''} {-min(r.scores)}"
    assert r.declarer is not None
    outcome = "won" if r.won else ("lost (overbid)" if r.overbid else "lost")
    return f"{name(state, r.declarer)} {outcome} {r.game} with {r.declarer_points} points, {r.scores[r.declarer]:+d}"


def result_breakdown(r: DealResult, state: TableState) -> list[str]:
    """The DealResult as the lines a score sheet explains a deal with."""
    lines = [result_headline(r, state)]
    if r.kind == "game" and r.game is not None:
        if r.game.game == "N":
            lines.append(f"null value {r.value}, bid {r.bid}")
        else:
            mats = f"with {r.matadors}" if r.matadors > 0 else f"without {-r.matadors}"
            extras = [w for w, on in (("schneider", r.schneider), ("schwarz", r.schwarz)) if on]
            lines.append(
                f"{mats} + {r.multiplier - abs(r.matadors)} (game and steps"
                f"{'; reached: ' + ', '.join(extras) if extras else ''}) = {r.multiplier}: "
                f"{r.base} x {r.multiplier} = {r.value}, bid {r.bid}{' - overbid' if r.overbid else ''}"
            )
        lines.append(
            f"declarer: {r.declarer_points} card points in {r.declarer_tricks} tricks; game score {r.game_score:+d}"
            + "".join(f", {w}" for w, on in (("Kontra", r.kontra), ("Re", r.re), ("Bock", r.bock)) if on)
        )
    if r.kind == "ramsch" and r.ramsch is not None:
        pts = ", ".join(f"{name(state, s)} {p}" for s, p in enumerate(r.ramsch.points))
        lines.append(f"card points: {pts}; Jungfrau x{2**r.ramsch.jungfrau}" + (", Bock" if r.bock else ""))
    lines.append("scores: " + ", ".join(f"{name(state, s)} {v:+d}" for s, v in enumerate(r.scores)))
    lines.append("Seeger-Fabian: " + ", ".join(f"{name(state, s)} {v:+d}" for s, v in enumerate(r.seeger_fabian)))
    return lines


# --- the table at one moment, as data (terminal and HTML both draw this) -------------------


def snapshot(state: TableState, event: AnyLogged | None = None) -> dict[str, Any]:
    """What a viewer of the whole table sees right now, as JSON-ready data."""
    out: dict[str, Any] = {
        "table": state.table,
        "players": list(state.players),
        "deal": state.deal_no,
        "totals": list(state.totals),
        "seeger_fabian": list(state.sf_totals),
        "text": describe(event, state) if event is not None else "",
    }
    deal = state.deal
    if deal is None:
        return out
    kind = sort_kind(state)
    seats = state.seats
    out["phase"] = deal.phase
    out["dealer"] = state.dealer
    out["seats"] = [
        {
            "seat": seats[pos],
            "name": name(state, seats[pos]),
            "position": POSITION_NAMES[pos],
            "hand": sorted_codes(deal.hands[pos], kind),
            "tricks": deal.trick_counts[pos],
            "points": deal.points[pos],
            "declarer": pos == deal.declarer,
            "to_move": state.to_move == seats[pos],
        }
        for pos in range(3)
    ]
    if deal.picked_up:
        out["skat"] = {
            "label": "discarded" if deal.discard else "skat (taken up)",
            "cards": sorted_codes(deal.discard or deal.skat, kind),
        }
    else:
        out["skat"] = {"label": "skat", "cards": sorted_codes(deal.skat, kind)}
    out["bidding"] = _bidding_lines(state)
    out["declaration"] = str(deal.declaration) if deal.declaration is not None else ("Ramsch" if deal.ramsch else "")
    if deal.declarer is not None:
        out["declarer"] = name(state, seats[deal.declarer])
        out["bid"] = deal.bid
    out["kontra"], out["re"] = deal.kontra, deal.re
    out["trick"] = _trick(state, event)
    out["trick_no"] = len(deal.tricks) + (1 if deal.trick else 0)
    if state.scored and state.sheet and state.sheet[-1].deal == state.deal_no:
        out["score"] = result_breakdown(state.sheet[-1].result, state)
    return out


def _bidding_lines(state: TableState) -> list[str]:
    lines = []
    for e in state.deal_events:
        if isinstance(e, (BidMade, BidHeld, Passed, BiddingWon, AllPassed, KontraSaid, ReSaid)):
            text = describe(e, state)
            lines.append(
                text.replace(" passes", " says no") if isinstance(e, Passed) and _after_declare(state, e) else text
            )
    return lines


def _after_declare(state: TableState, passed: Passed) -> bool:
    """A pass after the declaration declines Kontra/Re rather than a bid."""
    for e in state.deal_events:
        if e is passed:
            return False
        if isinstance(e, GameDeclared):
            return True
    return False


def _trick(state: TableState, event: AnyLogged | None) -> dict[str, Any]:
    """The cards on the table: the trick in progress, or the one just completed (with its
    winner once the trick-taken event is in), so the last card of a trick is seen landing."""
    deal = state.deal
    assert deal is not None
    seats = state.seats
    if deal.trick:
        return {
            "cards": [
                {
                    "seat": seats[(deal.leader + i) % 3],
                    "name": name(state, seats[(deal.leader + i) % 3]),
                    "card": C.CODES[c],
                }
                for i, c in enumerate(deal.trick)
            ],
            "winner": None,
        }
    if deal.tricks and isinstance(event, (CardPlayed, TrickTaken)):
        t = deal.tricks[-1]
        return {
            "cards": [
                {"seat": seats[(t.leader + i) % 3], "name": name(state, seats[(t.leader + i) % 3]), "card": C.CODES[c]}
                for i, c in enumerate(t.cards)
            ],
            "winner": name(state, seats[t.winner]) if isinstance(event, TrickTaken) else None,
        }
    return {"cards": [], "winner": None}


# --- the terminal --------------------------------------------------------------------------


def _other(log: TableLog) -> ModuleType | int | None:
    """The replay module of a table of another game, None for Skat, or exit code 2 (said on
    stderr) for a game without a replay."""
    try:
        return game_replay(log)
    except UnknownGame as exc:
        print(f"skat replay: {exc}", file=sys.stderr)
        return 2


def render_state(snap: dict[str, Any]) -> list[str]:
    """The table at one moment as terminal lines."""
    lines = [f"table {snap['table']}, deal {snap['deal']}" + (f" ({snap['phase']})" if "phase" in snap else "")]
    if "seats" not in snap:
        return lines + [_totals_line(snap)]
    for s in snap["seats"]:
        marks = (" *declarer*" if s["declarer"] else "") + (" <- to move" if s["to_move"] else "")
        lines.append(
            f"  {s['name']:<16} {s['position']:<10} {cards_label(s['hand']):<40} "
            f"tricks {s['tricks']:2}  points {s['points']:3}{marks}"
        )
    lines.append(f"  {snap['skat']['label']:<27} {cards_label(snap['skat']['cards'])}")
    if snap["bidding"]:
        lines.append("  bidding: " + "; ".join(snap["bidding"]))
    if snap["declaration"]:
        lines.append(
            f"  game: {snap['declaration']}"
            + (f" by {snap['declarer']} (bid {snap['bid']})" if "declarer" in snap else "")
        )
    if snap["trick"]["cards"]:
        cards = ", ".join(f"{c['name']} {card_label(c['card'])}" for c in snap["trick"]["cards"])
        won = f" -> {snap['trick']['winner']}" if snap["trick"]["winner"] else ""
        lines.append(f"  trick {snap['trick_no']}: {cards}{won}")
    for line in snap.get("score", []):
        lines.append(f"  {line}")
    lines.append(_totals_line(snap))
    return lines


def _totals_line(snap: dict[str, Any]) -> str:
    pairs = zip(snap["players"], snap["totals"], snap["seeger_fabian"])
    return "  totals: " + ", ".join(f"{p} {t:+d} (SF {sf:+d})" for p, t, sf in pairs)


def show_to(log: TableLog, to: int, out: TextIO) -> int:
    """The table after event ``to``."""
    other = _other(log)
    if isinstance(other, int):
        return other
    if other is not None:
        code: int = other.show_to(log, to, out)
        return code
    if not 0 <= to < len(log.events):
        print(f"--to {to}: the log has events 0..{len(log.events) - 1}", file=sys.stderr)
        return 2
    last: Step | None = None
    try:
        for step in replay(log):
            last = step
            if step.position == to:
                break
    except LogError as exc:
        print(breaks(exc), file=out)
        return 1
    assert last is not None
    print(f"after event {to}: {describe(last.event, last.state)}", file=out)
    for line in render_state(snapshot(last.state, last.event)):
        print(line, file=out)
    return 0


def step_through(log: TableLog, deal: int | None, out: TextIO, pause: Callable[[], bool] | None) -> int:
    """Every event of one deal (or all deals) with the table drawn where it changes shape.
    ``pause`` waits for the viewer between events and returns False to stop."""
    other = _other(log)
    if isinstance(other, int):
        return other
    if other is not None:
        code: int = other.step_through(log, deal, out, pause)
        return code
    shown = False
    try:
        for step in replay(log):
            state, event = step.state, step.event
            if deal is not None and state.deal_no != deal:
                if shown and state.deal_no > deal:
                    break
                continue
            shown = True
            print(f"[{step.position:4}] {describe(event, state)}", file=out)
            if isinstance(event, (DealDealt, GameDeclared, AllPassed, DealScored)) or (
                isinstance(event, TrickTaken) and pause is not None
            ):
                for line in render_state(snapshot(state, event))[1:]:
                    print(line, file=out)
            if pause is not None and not pause():
                return 0
    except LogError as exc:
        print(breaks(exc), file=out)
        return 1
    if not shown:
        print(f"no deal {deal} in table {log.table}", file=sys.stderr)
        return 2
    return 0


def doublings(r: DealResult) -> str:
    """What doubled a deal's score ("Kontra Re Bock"): the summary marks them because they
    are why one deal's score can dwarf the others."""
    return " ".join(w for w, on in (("Kontra", r.kontra), ("Re", r.re), ("Bock", r.bock)) if on)


def summary(log: TableLog, out: TextIO, titled: bool = False) -> int:
    """One line per scored deal and the table's totals (a table of another game: its game's
    summary). ``titled`` names the game in the heading (an archive of several games)."""
    other = _other(log)
    if isinstance(other, int):
        return other
    if other is not None:
        done: int = other.summary(log, out)
        return done
    state: TableState | None = None
    code = 0
    passed: dict[int, list[str]] = {}
    """Per deal, who passed in the bidding, in turn."""
    try:
        for step in replay(log):
            state = step.state
            if isinstance(step.event, Passed) and not any(isinstance(e, BiddingWon) for e in state.deal_events):
                passed.setdefault(state.deal_no, []).append(name(state, step.event.seat))
    except LogError as exc:
        code = 1
        if state is None or not state.players:  # not even opened: no deals, no seats to list
            print(f"table {log.table}: cannot be read ({breaks(exc)})", file=out)
            return code
        print(f"({breaks(exc)}; deals up to there)", file=out)
    if state is None or not state.players:
        print(f"table {log.table}: cannot be read (its log does not open the table)", file=out)
        return 1
    print(f"table {state.table}{' (Skat)' if titled else ''}: {', '.join(state.players)}", file=out)
    print(
        f"{'deal':>4}  {'declarer':<16} {'game':<36} {'result':<15} {'doubled':<16} {'bid':>3} {'value':>5} "
        f"{'points':>6}  {'scores':<{6 * len(state.players) - 1}}  passed",
        file=out,
    )
    for row in state.sheet:
        r = row.result
        scores = " ".join(f"{v:+5d}" for v in r.scores)
        doubled = doublings(r)
        passes = ", ".join(passed.get(row.deal, []))
        if r.kind == "game":
            outcome = "won" if r.won else ("lost (overbid)" if r.overbid else "lost")
            who = name(state, r.declarer if r.declarer is not None else -1)
            print(
                f"{row.deal:>4}  {who:<16} {str(r.game):<36} {outcome:<15} {doubled:<16} {r.bid:>3} {r.value:>5} "
                f"{r.declarer_points:>6}  {scores}  {passes}",
                file=out,
            )
        else:
            print(
                f"{row.deal:>4}  {'-':<16} {r.kind:<36} {'':<15} {doubled:<16} {'':>3} {'':>5} {'':>6}  {scores}  "
                f"{passes}",
                file=out,
            )
    print(f"totals after {len(state.sheet)} deals:", file=out)
    for seat, player in enumerate(state.players):
        print(f"  {player:<16} list {state.totals[seat]:+6d}   Seeger-Fabian {state.sf_totals[seat]:+6d}", file=out)
    return code
