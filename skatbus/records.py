"""``skat iss check | import | export``: ISS game records in and out of skatbus.

ISS archives hold millions of one-line records (``tests/data/iss/FORMAT.md``), so every command
streams: one line in, one verdict or one table out, nothing kept per record once it is done.
``check`` replays each record through the engine (``protocol.iss.check``) and says whether
our rules reproduce the published result; ``import`` turns records into our event logs
(the archive JSONL that ``services/tournament.py`` writes); ``export`` turns the deals of such
an archive back into ISS records, so our games can be read by ISS tools and re-checked.

Import and export are inverse on everything the record format and our events both model:
the cards as dealt, the moves (as engine commands) and the result fields ``check`` compares.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import sys
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any, Final, TextIO

import msgspec

from protocol.archive import encode_line
from protocol.events import (
    AllPassed,
    BidHeld,
    BidMade,
    CardPlayed,
    CardsShown,
    DealDealt,
    DealScored,
    Discarded,
    Event,
    GameDeclared,
    Passed,
    Resigned,
    SkatTaken,
    TableClosed,
    TableOpened,
    UnknownEvent,
)
from protocol.skat import cards as C
from protocol.skat.deal import DOUBLING, ENDED
from protocol.skat.dealing import deal_seats, dealer_seat
from protocol.skat.decide import Rejection, decide
from protocol.skat.ends import DEFENDERS_RESIGNED
from protocol.skat.iss import IssFormatError, IssRecord, Verdict, check, read_records
from protocol.skat.rules import Rules
from protocol.skat.scoring import DealResult
from protocol.skat.table import LogError, TableState, due

from .archive_reader import Damage, NotAnArchive, Warnings, entries

IMPORT_RULES: Final = Rules()
"""An imported table: plain ISkO (what ISS scores by), ``rounds=0`` (open-ended) and closed by
an explicit ``TableClosed`` after its one deal. ``rounds=1`` would promise three deals."""

IMPORT_CLOSE_REASON: Final = "imported one ISS deal"
TABLE_PREFIX: Final = "iss-"


# --- input -------------------------------------------------------------------------------


@contextlib.contextmanager
def open_text(path: str) -> Iterator[TextIO]:
    """A line source for ``path``: ``-`` is stdin, ``.bz2``/``.gz`` are decompressed on the fly
    (ISS archives ship compressed, and are too large to unpack first)."""
    if path == "-":
        yield sys.stdin
        return
    opener: Any = bz2.open if path.endswith(".bz2") else gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        yield f


def _check_line(item: tuple[int, str]) -> tuple[int, Verdict]:
    """One line's verdict; a top-level function so worker processes can run it."""
    n, line = item
    (record,) = read_records((line,))
    return n, verdict_for(record)


def verdicts(lines: Iterable[str], jobs: int = 1) -> Iterator[tuple[int, Verdict]]:
    """(line number, verdict) per non-blank line, in file order. With ``jobs`` > 1 the replays
    run in that many worker processes (the engine is pure Python: one core checks ~10,000
    records/s, a real archive holds millions); lines stream to them in chunks, so memory stays
    flat either way."""
    numbered = ((n, line) for n, line in enumerate(lines, 1) if line.strip())
    if jobs <= 1:
        yield from map(_check_line, numbered)
        return
    import multiprocessing

    # Not Pool.imap: it reads its whole input ahead. At most 4 chunks per worker in flight.
    pending: deque[Any] = deque()
    with multiprocessing.Pool(jobs) as pool:
        while chunk := list(islice(numbered, _CHUNK)):
            pending.append(pool.apply_async(_check_chunk, (chunk,)))
            if len(pending) >= 4 * jobs:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()


_CHUNK: Final = 512


def _check_chunk(chunk: list[tuple[int, str]]) -> list[tuple[int, Verdict]]:
    return [_check_line(item) for item in chunk]


def numbered_records(lines: Iterable[str]) -> Iterator[tuple[int, IssRecord | IssFormatError]]:
    """Each non-blank line's number and what ``read_records`` makes of it."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        for item in read_records((line,)):
            yield n, item


# --- check -------------------------------------------------------------------------------


def skip_kind(verdict: Verdict) -> str:
    """The classifier's word for why a record was skipped (``penalty``, ``timeout``, ...)."""
    return verdict.reason.partition(":")[0]


def verdict_for(item: IssRecord | IssFormatError) -> Verdict:
    """A verdict for anything ``read_records`` yields: a line that is no record is an error."""
    if isinstance(item, IssFormatError):
        return Verdict(game_id="", status="error", reason=str(item))
    return check(item)


def describe(lineno: int, v: Verdict) -> str:
    """One human line per record: game id, status, and what differs or why it was skipped."""
    gid = v.game_id or f"line {lineno}"
    if v.status == "differ":
        diffs = ", ".join(f"{f} {pub} vs {mine}" for f, (pub, mine) in v.differences.items())
        return f"{gid:>10}  differ   {diffs}  (published vs engine)"
    if v.status == "agree":
        return f"{gid:>10}  agree" + (f"    ({v.reason})" if v.reason else "")
    return f"{gid:>10}  {v.status:<7}  {v.reason}"


def verdict_json(lineno: int, v: Verdict) -> dict[str, Any]:
    """One machine line per record; differences as {field: {published, engine}}."""
    out: dict[str, Any] = {"line": lineno, "game_id": v.game_id, "status": v.status, "reason": v.reason}
    if v.status == "skipped":
        out["skip"] = skip_kind(v)
    if v.differences:
        out["differences"] = {f: {"published": p, "engine": m} for f, (p, m) in v.differences.items()}
    return out


@dataclass
class Tally:
    """Counts per status (and per skip reason) and the throughput of one run."""

    started: float = field(default_factory=time.perf_counter)
    statuses: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)

    def add(self, v: Verdict) -> None:
        self.statuses[v.status] += 1
        if v.status == "skipped":
            self.skipped[skip_kind(v)] += 1

    @property
    def records(self) -> int:
        return sum(self.statuses.values())

    @property
    def failed(self) -> bool:
        return bool(self.statuses["differ"] or self.statuses["error"])

    def summary(self) -> dict[str, Any]:
        elapsed = time.perf_counter() - self.started
        return {
            "records": self.records,
            **{s: self.statuses[s] for s in ("agree", "differ", "skipped", "error")},
            "skipped_by_reason": dict(sorted(self.skipped.items())),
            "elapsed_s": round(elapsed, 3),
            "records_per_s": round(self.records / elapsed, 1) if elapsed > 0 else 0.0,
        }

    def summary_line(self) -> str:
        s = self.summary()
        why = ", ".join(f"{k} {n}" for k, n in s["skipped_by_reason"].items())
        return (
            f"{s['records']} records: {s['agree']} agree, {s['differ']} differ, "
            f"{s['skipped']} skipped{f' ({why})' if why else ''}, {s['error']} error; "
            f"{s['records_per_s']:,.0f} records/s, {s['elapsed_s']:.2f} s"
        )


# --- the archive format ------------------------------------------------------------------


archive_line = encode_line


class ArchiveLine(msgspec.Struct):
    table: str
    index: int
    event: Event | UnknownEvent


def read_archive(
    lines: Iterable[str | bytes], warnings: Warnings | None = None, stopped: set[str] | None = None
) -> Iterator[ArchiveLine]:
    """The events of an archive, in file order. A line that does not decode costs only its
    table (``archive_reader``): it is named in ``warnings`` (one line each) and that table's
    later lines are dropped, so its unfinished deal is not exported; without ``warnings`` it
    raises ``ValueError`` with its number, as does a file that is no archive at all. The
    tables so cut short (the ones a damaged line names) are added to ``stopped``."""
    if stopped is None:
        stopped = set()
    try:
        for item in entries(lines):
            if isinstance(item, Damage):
                if warnings is None:
                    raise ValueError(f"archive {item.warning()}")
                warnings.add(f"archive {item.warning()}")
                if item.table is not None:
                    stopped.add(item.table)
            elif item.table not in stopped:
                yield ArchiveLine(item.table, item.index, item.event)
    except NotAnArchive as exc:
        raise ValueError(f"archive {exc}") from None


# --- import ------------------------------------------------------------------------------


class ImportFailed(ValueError):
    """The record's moves could not be turned into a log our rules accept."""


def table_id(record: IssRecord) -> str:
    return f"{TABLE_PREFIX}{record.game_id}"


def dealt_cards(record: IssRecord) -> list[str]:
    """The 32 cards in the record's own order (hands are sets in ``IssRecord``; keeping the
    order makes an exported record list the cards as ISS did)."""
    tokens = record.header["MV"].split()
    return [c.upper() for c in tokens[1].split(".")]


def record_events(record: IssRecord) -> list[Event]:
    """The event log of a one-deal table that plays ``record``: opened, dealt, every move as
    ``decide`` turns it into events, the derived events ``due`` owes, closed."""
    state = TableState()
    log: list[Event] = []

    def add(event: Event) -> None:
        state.apply(event)
        log.append(event)

    add(TableOpened(table=table_id(record), players=list(record.players), rules=IMPORT_RULES, seed=""))
    cards = dealt_cards(record)
    add(DealDealt(
        deal=1, dealer=dealer_seat(1, 3), seats=deal_seats(1, 3),
        hands=(cards[0:10], cards[10:20], cards[20:30]), skat=cards[30:32], seed="",  # type: ignore[arg-type]
    ))  # fmt: skip
    # Deal 1 at a 3-player table seats table seat i at position i, as ISS numbers them.
    for n, (pos, command) in enumerate(record.moves):
        _settle(state, add)
        assert state.deal is not None
        if state.deal.phase == ENDED:
            break  # ISS keeps logging moves after a deal is decided
        events = decide(state, pos, command)
        if isinstance(events, Rejection):
            raise ImportFailed(f"move {n} ({pos} {command}): {events.reason}")
        for event in events:
            add(event)
    _settle(state, add)
    if not state.scored:
        raise ImportFailed("the moves end before the deal does")
    add(TableClosed(reason=IMPORT_CLOSE_REASON))
    return log


def _settle(state: TableState, add: Any) -> None:
    """Append the derived events the table owes, up to the end of the current deal."""
    while not state.scored:
        owed = due(state)
        if owed is None:
            return
        add(owed)


# --- export ------------------------------------------------------------------------------


class NotExportable(ValueError):
    """A deal the ISS record format cannot say (a Ramsch, the classic profile)."""


RAMSCH: Final = "a Ramsch: ISS records have none"
CLASSIC: Final = "the classic profile: ISS scores by ISkO"
SKIPPED: Final[dict[str, str]] = {
    RAMSCH: "Ramsch deal{s} not exported: ISS records have no Ramsch",
    CLASSIC: (
        "deal{s} of the classic profile not exported: ISS records are ISkO's (its bids, values and results differ)"
    ),
}
"""Why a deal is not exported, and how the export says it once for all such deals."""
FOUR_PLAYERS: Final = (
    "4-player tables: the dealer sits each deal out and ISS records 3 seats, so each deal is "
    "exported with its 3 active seats"
)


def skipped_lines(skipped: Mapping[str, int]) -> list[str]:
    """One line per reason deals were not exported, with how many (``12 Ramsch deals not
    exported: ISS records have no Ramsch``), instead of one line per deal."""
    out = []
    for why, n in skipped.items():
        text = SKIPPED.get(why, "deal{s} not exported: " + why)
        out.append(f"{n} {text.format(s='s' if n != 1 else '')}")
    return out


@dataclass
class DealRecord:
    """The record of one deal being written while its events are folded."""

    deal: int
    players: list[str]
    moves: list[str]
    pos_of: dict[int, int]
    skat: list[str] = field(default_factory=list)
    """As dealt: ``SkatTaken`` lists the cards sorted, ISS shows them in the deal's order."""
    discard: list[str] = field(default_factory=list)
    problem: str = ""


@dataclass
class TableExport:
    state: TableState = field(default_factory=TableState)
    current: DealRecord | None = None


def declaration_token(e: GameDeclared, discard: list[str], declarer_cards: list[str]) -> str:
    """``G``, ``DHS``, ``CHZ``, ``NOH``, ``G.S8.C9``, ``NO.HA.HQ.<10 cards>``: the ISS spelling
    (suit and grand ouvert are written bare, ``GO``: ouvert implies hand and schwarz)."""
    g = e.game
    mods = "O" if g.ouvert else ""
    if not (g.ouvert and g.game != "N"):
        mods += "H" if g.hand else ""
        mods += "Z" if g.schwarz else "S" if g.schneider else ""
    parts = [g.game + mods, *discard]
    if g.ouvert:
        parts += declarer_cards
    return ".".join(parts)


def result_token(r: DealResult, pos_of: dict[int, int]) -> str:
    """The inside of ``R[...]``: the engine's result in ISS terms (``v`` is the signed game
    score before Kontra/Re and Bock, as ISS has neither; no penalties, no one left)."""
    if r.kind == "passed":
        return "passed"
    assert r.declarer is not None
    return (
        f"d:{pos_of[r.declarer]} {'win' if r.won else 'loss'} v:{r.game_score} m:{r.matadors} "
        f"{'overbid' if r.overbid else 'bidok'} p:{r.declarer_points} t:{r.declarer_tricks} "
        f"s:{int(r.schneider)} z:{int(r.schwarz)} p0:0 p1:0 p2:0 l:-1 to:-1 "
        f"r:{int(r.ended == DEFENDERS_RESIGNED)}"
    )


def _field(text: str) -> str:
    return text.replace("]", ")")  # a ']' would end the field early


def record_line(table: str, dr: DealRecord, result: DealResult, date: str, one_deal: bool) -> str:
    """One ISS record line for a scored deal."""
    gid = table[len(TABLE_PREFIX) :] if one_deal and table.startswith(TABLE_PREFIX) else f"{table}/{dr.deal}"
    players = "".join(f"P{i}[{_field(p)}]" for i, p in enumerate(dr.players))
    return (
        f"(;GM[Skat]PC[skatbus]CO[]SE[{_field(table)}]ID[{_field(gid)}]DT[{date}]{players}R0[]R1[]R2[]"
        f"MV[{' '.join(dr.moves)} ]R[{result_token(result, dr.pos_of)}] ;)"
    )


def iss_date(now: datetime | None = None) -> str:
    """ISS's ``DT`` spelling; our events carry no time, so an export is dated when written."""
    return (now or datetime.now(UTC)).strftime("%Y-%m-%d/%H:%M:%S/UTC")


def _move_tokens(t: TableExport, event: Event) -> list[str]:
    """The MV tokens of one event (empty for derived events and what ISS cannot say); must run
    before the event is applied, since a pass is read by the phase it is made in."""
    dr = t.current
    state = t.state
    kind = type(event)
    if dr is None or state.deal is None:
        return []
    pos = dr.pos_of.get(getattr(event, "seat", -1), -1)
    if kind is BidMade:
        return [str(pos), str(event.value)]  # type: ignore[attr-defined]
    if kind is BidHeld:
        return [str(pos), "y"]
    if kind is Passed:
        return [] if state.deal.phase == DOUBLING else [str(pos), "p"]  # no Kontra at ISS
    if kind is SkatTaken:
        return [str(pos), "s", "w", ".".join(dr.skat)]
    if kind is Discarded:
        dr.discard = list(event.cards)  # type: ignore[attr-defined]
        return []
    if kind is GameDeclared:
        deal = state.deal
        held = [] if not event.game.ouvert else _codes_of(deal.hands[pos], dr.discard)  # type: ignore[attr-defined]
        return [str(pos), declaration_token(event, dr.discard, held)]  # type: ignore[arg-type]
    if kind is CardPlayed:
        return [str(pos), event.card]  # type: ignore[attr-defined]
    if kind is CardsShown:
        return [str(pos), "SC"]
    if kind is Resigned:
        return [str(pos), "RE"]
    if kind is AllPassed and event.ramsch:  # type: ignore[attr-defined]
        dr.problem = RAMSCH
    return []


def _codes_of(hand: int, discard: list[str]) -> list[str]:
    """The declarer's cards at the declaration: the hand after the discard."""
    return C.codes(hand & ~C.parse(discard))


def export_events(
    items: Iterable[ArchiveLine], date: str, notes: list[str] | None = None, unfinished: list[str] | None = None
) -> Iterator[tuple[str, int, str | None, str]]:
    """(table, deal, record line or None, why not) for every scored deal of an archive.

    Tables are folded as their events come (interleaved tables are fine) and forgotten when
    closed, so an archive of any size streams through in constant memory per open table. A
    table whose log does not fold (it breaks the rules, or holds an event of a newer skatbus)
    is dropped from there, with one line in ``notes`` (raised as ``LogError`` without it); the
    other tables are exported. ``notes`` also says once that 4-player tables are exported with
    each deal's 3 active seats (``FOUR_PLAYERS``). ``unfinished`` gets, at the end, every table
    whose log stops with deals still to come (a deal begun and not scored, or the next deal
    owed): with a damaged line that is what tells deals lost from a lost closing line alone."""
    tables: dict[str, TableExport] = {}
    dropped: set[str] = set()
    for line in items:
        event = line.event
        if line.table in dropped:
            continue
        t = tables.setdefault(line.table, TableExport())
        tokens = _move_tokens(t, event) if isinstance(event, Event) else []
        try:
            t.state.apply(event)  # first: a deal of a table never opened (a newer table_opened) is refused here
        except LogError as exc:
            if notes is None:
                raise
            notes.append(f"table {line.table} not exported from event {exc.position} on: {exc.reason}")
            dropped.add(line.table)
            del tables[line.table]
            continue
        if type(event) is DealDealt:  # the players and rules it reads are not changed by the deal
            t.current = _start_deal(t.state, event)
            if notes is not None and t.state.n == 4 and FOUR_PLAYERS not in notes:
                notes.append(FOUR_PLAYERS)
        dr = t.current
        if dr is not None and tokens:
            dr.moves += tokens
        if type(event) is DealScored and dr is not None:
            yield _finish_deal(line.table, t, event, dr, date)
            t.current = None
        elif type(event) is TableClosed:
            del tables[line.table]
    if unfinished is not None:
        unfinished += [
            name
            for name, t in tables.items()
            if not t.state.closed and (t.current is not None or not isinstance(due(t.state), TableClosed))
        ]


def _start_deal(state: TableState, e: DealDealt) -> DealRecord:
    players = [state.players[s] for s in e.seats]
    cards = [*e.hands[0], *e.hands[1], *e.hands[2], *e.skat]
    problem = "" if state.rules.profile == "isko" else CLASSIC
    return DealRecord(
        deal=e.deal, players=players, moves=["w", ".".join(cards)],
        pos_of={seat: pos for pos, seat in enumerate(e.seats)}, skat=list(e.skat), problem=problem,
    )  # fmt: skip


def _finish_deal(
    table: str, t: TableExport, e: DealScored, dr: DealRecord, date: str
) -> tuple[str, int, str | None, str]:
    if dr.problem:
        return table, dr.deal, None, dr.problem
    one_deal = t.state.rules.rounds == 0 and dr.deal == 1
    return table, dr.deal, record_line(table, dr, e.result, date, one_deal), ""
