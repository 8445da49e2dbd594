"""Game records of Thirty-one: read one, replay it through the engine, compare; write one from a
table's log; turn one into a log (docs/records.md has the format).

A record is one JSON object (one line of a JSON Lines file) holding everything needed to replay a
whole game without the project's seeds: the players, the rules by the rules page's names, and per
deal the deck as dealt from, the restocks (T28) and the actions as ``"<seat> <action>"``. The
checker opens a table with ``table_opened/2`` (seed ``""``), deals each deal as an imported
``t31_dealt`` (the record's deck, the dealer the rules derive), turns every action into events
with ``decide`` (so an action is refused exactly as a live player's command would be), appends
what the rules derive (``due``) and takes each new stock from ``restocks`` when the deal waits for
one (T42). Then it compares ``dealer``, each deal's ``result`` and the game's ``result`` with what
the rules gave, field by field.

Positions in words count from 1 (``deal 3, action 5``, as a person counts and as the engine
numbers deals); field paths count from 0 as JSON does (``deals[2].result.coins`` is deal 3).

The first part of this module is not about Thirty-one (the verdict, its differences, the error
type, field comparison): a second game's records module (the rummy) can use it as it is, and the
``skat records`` commands (``skatbus.game_records``) only rely on it and on each game module's
``GAME``, ``check``, ``records_of`` and ``events_of``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec

from ..events import Event, TableClosed, TableOpenedV2, UnknownEvent
from ..lifecycle import LogError
from .cards import PACK, PACK_SET
from .commands import Command, parse_action
from .decide import Rejection, decide
from .events import (
    T31DealScored,
    T31Dealt,
    T31Discarded,
    T31Knocked,
    T31Looked,
    T31Restocked,
    T31Threw,
    T31Took,
)
from .rules import ThirtyOneRules, rules_from_record
from .state import GAME as NAME
from .state import SheetRow, ThirtyOneState, due

__all__ = [
    "CUT_SHORT", "GAME", "MISSING", "DealRecord", "Difference", "RecordError", "Replayed", "ThirtyOneRecord",
    "Verdict", "check", "compare", "events_of", "parse_line", "read_record", "records_of", "replay", "same", "show",
]  # fmt: skip

# --- what every game's records share ----------------------------------------------------------


class _Missing:
    """The value of a field a record leaves out (distinct from ``null``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "(missing)"


MISSING: Final = _Missing()


class RecordError(ValueError):
    """A record that cannot be replayed. ``reason`` is one line that names where: the deal, the
    action's position and text, or the key."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def show(value: Any) -> str:
    """A compared value as a difference line shows it: compact JSON, ``(missing)`` for a field
    the record leaves out."""
    if value is MISSING:
        return "(missing)"
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def same(a: Any, b: Any) -> bool:
    """Whether a record's value equals the rules' value. Numbers compare by value (``3`` equals
    ``3.0``), but ``true`` is not ``1``: a checker must not pass a record that writes the wrong
    type. ``(missing)`` equals only ``(missing)`` (the caller decides where it equals null)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


@dataclass(frozen=True)
class Difference:
    """One compared field whose value in the record is not the rules' value."""

    field: str
    """Its path: ``deals[2].result.coins`` (deals count from 0, as in JSON), ``result.places``."""
    record: Any
    rules: Any

    def __str__(self) -> str:
        return f"{self.field}: record {show(self.record)}, rules {show(self.rules)}"

    def to_json(self) -> dict[str, Any]:
        """``{"field", "record", "rules"}``; ``record`` is left out where the record has no value."""
        out: dict[str, Any] = {"field": self.field}
        if self.record is not MISSING:
            out["record"] = self.record
        out["rules"] = self.rules
        return out


Status = Literal["agree", "differ", "error"]


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking one record: ``agree`` (every compared field equal), ``differ``
    (with the differing fields), ``error`` (with the reason it cannot be replayed)."""

    status: Status
    reason: str = ""
    differences: tuple[Difference, ...] = ()
    deals: int = 0
    """How many of the record's deals were replayed."""
    complete: bool = False
    """Whether the rules say the game ended (T27, T29), whatever the record says."""
    stopped: str = ""
    """Where the last deal stops when it stops in the middle (it is then not scored)."""

    def note(self) -> str:
        """``incomplete: ...`` for a last deal stopping mid-way, ``cut short after deal N`` for a
        record that ends between deals before the game does; empty otherwise or on an error."""
        if self.status == "error":
            return ""
        if self.stopped:
            return f"incomplete: {self.stopped}, not scored"
        if not self.complete:
            return f"cut short after deal {self.deals}" if self.deals else "cut short before deal 1"
        return ""

    def describe(self) -> str:
        """The verdict in one line: ``agree``, ``differs: <field>: record .., rules ..; ...``,
        ``error: <reason>``, with the note in brackets."""
        if self.status == "error":
            return f"error: {self.reason}"
        text = "agree" if self.status == "agree" else "differs: " + "; ".join(map(str, self.differences))
        note = self.note()
        return f"{text} ({note})" if note else text

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.status == "error":
            out["reason"] = self.reason
            return out
        if self.differences:
            out["differences"] = [d.to_json() for d in self.differences]
        out["deals"] = self.deals
        out["complete"] = self.complete
        if self.stopped:
            out["incomplete"] = self.stopped
        return out


def parse_line(line: str | bytes) -> Any:
    """A record line's JSON value; raises ``RecordError`` if it is not JSON (or not UTF-8)."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return msgspec.json.decode(line.lstrip("\ufeff"))
    except msgspec.DecodeError as exc:  # ValidationError too: a number out of range
        raise RecordError(f"not JSON: {exc}") from None
    except RecursionError:
        raise RecordError("not JSON that can be read: nested too deeply") from None


def _quote(text: str) -> str:
    return _brief(json.dumps(text, ensure_ascii=False))


def _brief(text: str, width: int = 80) -> str:
    """A value as an error message quotes it: at most ``width`` characters."""
    return text if len(text) <= width else text[: width - 3] + "..."


# --- Thirty-one records -----------------------------------------------------------------------

GAME: Final = NAME
"""The ``game`` of the records this module reads."""

CUT_SHORT: Final = "record cut short"
"""The reason of the ``table_closed`` that ends the log of a record that stops before its game
does: the table will not go on, but nobody won it by the rules (``complete`` stays false)."""

_ACTION: Final = re.compile(r"\s*([0-9]{1,9})\s+(\S.*?)\s*", re.DOTALL)


@dataclass(frozen=True)
class DealRecord:
    """One deal of a record, read and checked for form (not yet for the rules)."""

    number: int
    """1-based."""
    dealer: Any
    """As written (compared, not trusted); ``MISSING`` if left out."""
    deck: list[str]
    restocks: list[list[str]]
    actions: list[tuple[int, Command, str]]
    """(seat, command, the text as written)."""
    result: Any
    """As written; ``MISSING`` if left out."""

    def where(self, k: int) -> str:
        """``deal 3, action 5 "1 discard S7"`` for the k-th action (1-based)."""
        return f"deal {self.number}, action {k} {_quote(self.actions[k - 1][2])}"


@dataclass(frozen=True)
class ThirtyOneRecord:
    """A record read and checked for form: players, rules, deals, and the game's result as
    written (``MISSING`` if left out)."""

    players: list[str]
    rules: ThirtyOneRules
    deals: list[DealRecord]
    result: Any
    table: str = ""
    """skatbus's own key ``table``: the table id a record was exported from (others ignore it)."""


def read_record(obj: Any) -> ThirtyOneRecord:
    """A record's JSON value read into a ``ThirtyOneRecord``; unknown keys are ignored. Raises
    ``RecordError`` for anything that is not a well-formed Thirty-one record (a known rules
    option with an impossible value too, T44)."""
    if not isinstance(obj, dict):
        raise RecordError(f"a record is a JSON object, not {_kind(obj)}")
    game = obj.get("game", MISSING)
    if game != GAME:
        raise RecordError(f"game: expected {_quote(GAME)}, not {_brief(show(game))}")
    players = obj.get("players", MISSING)
    if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
        raise RecordError(f"players: a list of names (non-empty strings), not {_brief(show(players))}")
    if not 2 <= len(players) <= 9:
        raise RecordError(f"players: a game of Thirty-one has 2 to 9 players, not {len(players)}")
    twice = sorted({p for p in players if players.count(p) > 1})
    if twice:
        raise RecordError(f"players: {', '.join(twice)} sits twice")
    raw_rules = obj.get("rules", {})
    if not isinstance(raw_rules, dict):
        raise RecordError(f"rules: an object of options by their names, not {_kind(raw_rules)}")
    try:
        rules = rules_from_record(raw_rules)
    except (ValueError, TypeError, msgspec.ValidationError) as exc:
        raise RecordError(f"rules: {exc}") from None
    deals = obj.get("deals", MISSING)
    if not isinstance(deals, list):
        raise RecordError(f"deals: a list of deals, not {_kind(deals)}")
    table = obj.get("table")
    return ThirtyOneRecord(
        players=list(players),
        rules=rules,
        deals=[_read_deal(i, d, len(players)) for i, d in enumerate(deals, 1)],
        result=obj.get("result", MISSING),
        table=table if isinstance(table, str) else "",
    )


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return _brief(show(value))


def _read_deal(number: int, d: Any, n: int) -> DealRecord:
    where = f"deal {number}"
    if not isinstance(d, dict):
        raise RecordError(f"{where}: a deal is an object, not {_kind(d)}")
    deck = d.get("deck", MISSING)
    if not isinstance(deck, list):
        raise RecordError(f"{where}: deck: the 52 cards in the order dealt from, not {_kind(deck)}")
    _check_cards(f"{where}: deck", deck, PACK)
    restocks = d.get("restocks", [])
    if not isinstance(restocks, list) or not all(isinstance(r, list) for r in restocks):
        raise RecordError(
            f"{where}: restocks: a list of stocks (each a list of cards, top first), not {_kind(restocks)}"
        )
    for k, stock in enumerate(restocks, 1):
        bad = [c for c in stock if not isinstance(c, str) or c not in PACK_SET]
        if bad:
            raise RecordError(f"{where}, restock {k}: not a card: {_kind(bad[0])}")
    texts = d.get("actions", MISSING)
    if not isinstance(texts, list):
        raise RecordError(f'{where}: actions: a list of "<seat> <action>" texts, not {_kind(texts)}')
    actions: list[tuple[int, Command, str]] = []
    for k, text in enumerate(texts, 1):
        if not isinstance(text, str):
            raise RecordError(f'{where}, action {k}: an action is a text "<seat> <action>", not {_kind(text)}')
        m = _ACTION.fullmatch(text)
        if m is None:
            raise RecordError(
                f'{where}, action {k} {_quote(text)}: an action is "<seat> <action>", the seat 0 to {n - 1}'
            )
        try:
            command = parse_action(m.group(2))
        except ValueError as exc:
            raise RecordError(f"{where}, action {k} {_quote(text)}: {exc}") from None
        actions.append((int(m.group(1)), command, text))
    return DealRecord(
        number=number,
        dealer=d.get("dealer", MISSING),
        deck=list(deck),
        restocks=[list(r) for r in restocks],
        actions=actions,
        result=d.get("result", MISSING),
    )


def _check_cards(where: str, cards: list[Any], pack: Iterable[str]) -> None:
    """Every card of ``pack`` exactly once."""
    bad = [c for c in cards if not isinstance(c, str) or c not in PACK_SET]
    if bad:
        raise RecordError(f"{where}: not a card: {_kind(bad[0])}")
    twice = sorted({c for c in cards if cards.count(c) > 1})
    missing = [c for c in pack if c not in cards]
    if twice or missing:
        what = [f"{', '.join(twice)} twice" if twice else "", f"{', '.join(missing)} missing" if missing else ""]
        raise RecordError(f"{where}: the 52 cards, each once ({'; '.join(w for w in what if w)})")


# --- replaying --------------------------------------------------------------------------------


@dataclass
class Replayed:
    """What the rules make of a record: the log, and the compared values as the rules give them."""

    log: list[Event]
    state: ThirtyOneState
    dealers: list[int] = dataclasses.field(default_factory=list)
    results: list[dict[str, Any] | None] = dataclasses.field(default_factory=list)
    """Per replayed deal, its ``result`` (None for a last deal that stops mid-way)."""
    stopped: str = ""

    @property
    def result(self) -> dict[str, Any]:
        return game_result(self.state)


def deal_result(row: SheetRow) -> dict[str, Any]:
    """A scored deal's ``result`` as records write it."""
    return {"end": row.end, "lives": list(row.lives), "coins": list(row.coins), "eliminated": list(row.eliminated)}


def game_result(state: ThirtyOneState) -> dict[str, Any]:
    """The game's ``result`` as records write it (T36-T38)."""
    r = state.result()
    return {"places": list(r.places), "coins": list(r.coins), "kitty": r.kitty, "complete": r.complete}


class _Table:
    """A table being built: every event is folded and kept."""

    def __init__(self) -> None:
        self.state = ThirtyOneState()
        self.log: list[Event] = []

    def add(self, event: Event) -> None:
        try:
            self.state.apply(event)
        except LogError as exc:  # every input is checked before it gets here: a guard, not a path
            raise RecordError(f"the rules refuse the record's log at event {exc.position}: {exc.reason}") from None
        self.log.append(event)


def replay(record: ThirtyOneRecord | Any, table: str = "record") -> Replayed:
    """Play ``record`` (a ``ThirtyOneRecord`` or its JSON value) through the engine. Raises
    ``RecordError`` at the first thing the rules do not allow; never compares (``compare``)."""
    rec = record if isinstance(record, ThirtyOneRecord) else read_record(record)
    t = _Table()
    t.add(
        TableOpenedV2(
            table=table, game=GAME, players=list(rec.players), rules=msgspec.to_builtins(rec.rules), seed="", formats={}
        )
    )
    out = Replayed(log=t.log, state=t.state)
    last = len(rec.deals)
    for deal in rec.deals:
        owed = due(t.state)
        if isinstance(owed, TableClosed):
            raise RecordError(
                f"deal {deal.number}: the game ended after deal {deal.number - 1} ({owed.reason}): no deal follows"
            )
        assert isinstance(owed, T31Dealt), owed
        t.add(T31Dealt(deal=owed.deal, dealer=owed.dealer, order=owed.order, deck=deal.deck, seed=""))  # type: ignore[arg-type]
        out.dealers.append(owed.dealer)
        stopped = _play_deal(t, deal)
        if stopped:
            if deal.number != last:
                raise RecordError(f"deal {deal.number}: {stopped}; only a record's last deal may stop before its end")
            out.results.append(None)
            out.stopped = f"deal {deal.number} {stopped}"
        else:
            out.results.append(deal_result(t.state.sheet[-1]))
    if not out.stopped:
        owed = due(t.state)
        if isinstance(owed, TableClosed):
            t.add(owed)
    return out


def _play_deal(t: _Table, deal: DealRecord) -> str:
    """Play one deal's actions and restocks; ``""`` when the deal was scored, else where its
    actions stop (a record cut short in the middle of a deal)."""
    restocks = iter(enumerate(deal.restocks, 1))
    used = 0
    done = 0  # actions played

    def settle() -> None:
        nonlocal used
        while not t.state.scored:
            if t.state.wants_restock:
                nxt = next(restocks, None)
                if nxt is None:
                    return
                used, stock = nxt
                _check_restock(t.state, deal, used, stock, done)
                t.add(T31Restocked(stock=list(stock)))  # type: ignore[arg-type]
                continue
            owed = due(t.state)
            if owed is None:
                return
            t.add(owed)

    settle()
    for k, (seat, command, _) in enumerate(deal.actions, 1):
        state = t.state
        if state.scored:
            when = f"after action {done}" if done else "when dealt"
            raise RecordError(f"{deal.where(k)}: the deal is over: it ended ({state.sheet[-1].end}) {when}")
        if state.wants_restock:
            raise RecordError(
                f"{deal.where(k)}: restock {used + 1} is missing: the stock ran out at the end of action {done} (T42)"
            )
        answer = decide(state, seat, command)
        if isinstance(answer, Rejection):
            raise RecordError(f"{deal.where(k)}: {answer.reason}")
        for event in answer:
            t.add(event)
        done = k
        settle()
    extra = len(deal.restocks) - used
    if extra > 0:
        uses = f"uses {used}" if used else "uses none"
        why = " (stock_out void: the stock is never rebuilt)" if t.state.rules.stock_out == "void" else ""
        raise RecordError(f"deal {deal.number}, restock {used + 1}: not used: the deal {uses}{why} (T42)")
    if t.state.scored:
        return ""
    if t.state.wants_restock:
        return f"stops after action {done}, where the stock ran out"
    return f"stops after action {done}" if done else "stops before its first action"


def _check_restock(state: ThirtyOneState, deal: DealRecord, k: int, stock: list[str], after: int) -> None:
    """T42: a new stock is the discard pile without its top card, in any order."""
    assert state.deal is not None
    pile = state.deal.restock_cards()
    if sorted(stock) == sorted(pile):
        return
    extra = sorted(set(stock) - set(pile)) + sorted({c for c in stock if stock.count(c) > 1})
    missing = sorted(set(pile) - set(stock))
    what = "; ".join(
        w for w in (f"holds {', '.join(extra)}" if extra else "", f"lacks {', '.join(missing)}" if missing else "") if w
    )
    when = f"after action {after}" if after else "when dealt"
    raise RecordError(
        f"deal {deal.number}, restock {k} ({when}): not the discard pile without its top card, {len(pile)} cards "
        f"({what}) (T42)"
    )


# --- comparing --------------------------------------------------------------------------------

DEAL_FIELDS: Final = ("end", "lives", "coins", "eliminated")
GAME_FIELDS: Final = ("places", "coins", "kitty", "complete")


def compare(record: ThirtyOneRecord, replayed: Replayed) -> list[Difference]:
    """Every compared field whose record value is not the rules': each deal's ``dealer`` and
    ``result`` fields (a deal that stops mid-way has no result: the record must give none),
    then the game's ``result`` fields. Keys a record adds to a result are ignored."""
    out: list[Difference] = []
    for i, (deal, dealer, mine) in enumerate(zip(record.deals, replayed.dealers, replayed.results)):
        path = f"deals[{i}]"
        if not same(deal.dealer, dealer):
            out.append(Difference(f"{path}.dealer", deal.dealer, dealer))
        out += _compare_fields(f"{path}.result", deal.result, mine, DEAL_FIELDS)
    out += _compare_fields("result", record.result, replayed.result, GAME_FIELDS)
    return out


def _compare_fields(path: str, theirs: Any, mine: dict[str, Any] | None, fields: tuple[str, ...]) -> list[Difference]:
    if mine is None:  # a deal that stops mid-way: no result is right
        return [] if theirs is MISSING or theirs is None else [Difference(path, theirs, None)]
    if not isinstance(theirs, dict):
        return [Difference(path, theirs, mine)]
    return [
        Difference(f"{path}.{name}", theirs.get(name, MISSING), mine[name])
        for name in fields
        if not same(theirs.get(name, MISSING), mine[name])
    ]


def check(record: Any) -> Verdict:
    """The verdict on a record (its JSON value or a ``ThirtyOneRecord``): replayed, then compared."""
    try:
        rec = record if isinstance(record, ThirtyOneRecord) else read_record(record)
        replayed = replay(rec)
    except RecordError as exc:
        return Verdict(status="error", reason=exc.reason)
    differences = tuple(compare(rec, replayed))
    return Verdict(
        status="differ" if differences else "agree",
        differences=differences,
        deals=len(replayed.results),
        complete=replayed.state.complete,
        stopped=replayed.stopped,
    )


# --- records and logs -------------------------------------------------------------------------


def events_of(record: Any, table: str = "record") -> list[Event]:
    """The log of a table that plays ``record`` (for ``skat records import``): opened (seed
    ``""``), every deal as an imported ``t31_dealt``, the actions as ``decide`` makes them, the
    restocks, what the rules derive, and the close: the rules' own when the game ended, else
    ``table_closed`` with ``CUT_SHORT`` (the game will not go on). The results are the rules',
    whatever the record says; raises ``RecordError`` where ``check`` gives an error."""
    replayed = replay(record, table)
    log = list(replayed.log)
    if not replayed.state.closed:
        log.append(TableClosed(reason=CUT_SHORT))
    return log


def _action_text(event: Event) -> str | None:
    """An action event as a record writes it; None for any other event."""
    if isinstance(event, T31Took):
        return f"{event.seat} take {event.source}"
    if isinstance(event, T31Discarded):
        return f"{event.seat} discard {event.card}"
    if isinstance(event, T31Knocked):
        return f"{event.seat} knock"
    if isinstance(event, T31Looked):
        return f"{event.seat} look"
    if isinstance(event, T31Threw):
        return f"{event.seat} throw"
    return None


def records_of(events: Iterable[Event | UnknownEvent]) -> dict[str, Any]:
    """The record of a Thirty-one table from its log (an archive's events of one table), as a
    JSON-ready dict with the keys in the order RECORDS.md lists them, plus skatbus's ``table``.

    The log is folded, so a log that breaks the rules raises ``LogError``. Time-outs, pauses and
    withdrawals are not written (a timed-out seat's default action is an action like any other).
    What the rules derive after the log's last event is derived too (the score of a deal that
    ended, a restock, the close a finished game owes), and a table closed by hand where its game
    had ended is closed by the rules: a record says what the game gave by its rules, as ``check``
    replays it.
    """
    state = ThirtyOneState()
    deals: list[dict[str, Any]] = []
    for position, event in enumerate(events):
        if position == 0 and not (type(event) is TableOpenedV2 and event.game == GAME):
            raise LogError(0, f"not a table of {GAME}: it starts with {type(event).__name__}")
        if type(event) is TableClosed and not state.closed:
            state.paused = False  # a record has no pauses: whether the game ended is the rules' question
            owed = due(state)
            if isinstance(owed, TableClosed):  # closed by hand where the rules close it: their close
                event = owed
        _fold_into(state, event, deals)
    if not state.opened:
        raise LogError(0, "no events: a table's log starts with table_opened")
    if not state.closed:
        state.paused = False  # a paused table owes nothing until resumed; a record has no pauses
        while (owed := due(state)) is not None and not isinstance(owed, T31Dealt):
            _fold_into(state, owed, deals)
    return {
        "game": GAME,
        "table": state.table,
        "players": list(state.players),
        "rules": msgspec.to_builtins(state.rules),
        "deals": deals,
        "result": game_result(state),
    }


def _fold_into(state: ThirtyOneState, event: Event | UnknownEvent, deals: list[dict[str, Any]]) -> None:
    """Fold one event and write what it adds to the record."""
    state.apply(event)
    if isinstance(event, T31Dealt):
        deals.append({"dealer": event.dealer, "deck": list(event.deck), "restocks": [], "actions": []})
    elif isinstance(event, T31Restocked):
        deals[-1]["restocks"].append(list(event.stock))
    elif isinstance(event, T31DealScored):
        deals[-1]["result"] = deal_result(state.sheet[-1])
    elif isinstance(event, Event) and (text := _action_text(event)) is not None:
        deals[-1]["actions"].append(text)
