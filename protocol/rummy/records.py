"""Game records of the rummy: read one, replay it through the engine, compare; write one from
a game the engine played (RECORDS.md, the rummy part; docs/records.md has the format).

A record is one JSON object (one line of a JSON Lines file): ``game`` ``"rummy"``, the players
in seat order, the rules by the rules page's names, and per deal the ``dealer`` (derived by M8,
compared), the ``deck`` as dealt from (one card at a time from the dealer's left, then the
stock, top card first), the ``actions`` as ``"<seat> <action>"`` without the compulsory draw
(M11: the engine draws by itself) and the deal's ``result`` (``end``, ``out``, ``plus``,
``minus``, ``score``, ``totals``); then the game's ``result`` (``places``, ``totals``,
``complete``).

The checker replays every deal through the engine (``state.deal``/``apply`` under
``scoring.Match``), so an action is refused for exactly the reason a live player's would be,
and the first refused action ends the check with one line naming the deal, the action's
position and text, and the reason. Then ``dealer``, every deal's ``result`` and the game's
``result`` are compared field by field, one ``Difference`` per differing field.

The verdict, its differences, the error type and the field comparison are Thirty-one's
(``protocol.thirty_one.records``, whose first part is game-neutral), so ``skat records`` reads
the rummy's verdicts as it reads Thirty-one's. What it also needs of a game's records module,
``records_of(events)`` and ``events_of(record)``, waits for the rummy's events; until then
``record_of`` writes the record of a game played directly on the engine.

Positions in words count from 1 (``deal 3, action 5``); field paths count from 0 as JSON does
(``deals[2].result.score`` is deal 3). ``RefusedAt`` carries the same position as numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from ..errors import IllegalAction
from ..thirty_one.records import MISSING, Difference, RecordError, Verdict, parse_line, same, show
from .actions import AnyAction, format_line, parse_action
from .rules import RummyRules, rules_from_record
from .scoring import DealResult, GameResult, Match, new_match, play, start_deal

__all__ = [
    "DEAL_FIELDS", "GAME", "GAME_FIELDS", "MISSING", "DealRecord", "Difference", "RecordError", "RefusedAt",
    "Replayed", "RummyRecord", "Verdict", "check", "compare", "deal_result", "game_result", "parse_line",
    "read_record", "record_of", "replay", "written_rules",
]  # fmt: skip

GAME: Final = "rummy"
"""The ``game`` of the records this module reads."""

DEAL_FIELDS: Final = ("end", "out", "plus", "minus", "score", "totals")
GAME_FIELDS: Final = ("places", "totals", "complete")


class RefusedAt(RecordError):
    """A record the rules refuse at a known place: ``deal`` (1-based; None for the record as a
    whole: its players, rules or deals list) and ``action`` (1-based position in that deal's
    ``actions``; None for the deal itself, its deck; one past the last action for a deal that
    stops before its end and is not the last)."""

    def __init__(self, reason: str, deal: int | None = None, action: int | None = None) -> None:
        super().__init__(reason)
        self.deal = deal
        self.action = action


def _brief(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return _brief(show(value))


# --- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DealRecord:
    """One deal of a record as written: checked for shape only. The deck's cards and the
    action texts are judged when the deal is replayed, in order, so that the first fault of
    the record is the one reported (a bad text in deal 3 does not hide a refused action in
    deal 1)."""

    number: int
    """1-based."""
    dealer: Any
    """As written (compared, not trusted); ``MISSING`` if left out."""
    deck: list[Any]
    actions: list[Any]
    result: Any
    """As written; ``MISSING`` if left out."""

    def where(self, k: int) -> str:
        """``deal 3, action 5 "1 discard S7"`` for the k-th action (1-based)."""
        return f"deal {self.number}, action {k} {_brief(show(self.actions[k - 1]))}"


@dataclass(frozen=True)
class RummyRecord:
    """A record read and checked for shape: players, rules, deals, and the game's result as
    written (``MISSING`` if left out)."""

    players: list[str]
    rules: RummyRules
    deals: list[DealRecord]
    result: Any
    table: str = ""
    """skatbus's own key ``table`` (others ignore it)."""


def read_record(obj: Any) -> RummyRecord:
    """A record's JSON value read into a ``RummyRecord``; unknown keys are ignored. Raises
    ``RefusedAt`` (a ``RecordError``) for a record that is not a rummy record, whose players
    are not a list of names or whose rules name an impossible option (M45, M46)."""
    if not isinstance(obj, dict):
        raise RefusedAt(f"a record is a JSON object, not {_kind(obj)}")
    game = obj.get("game", MISSING)
    if game != GAME:
        raise RefusedAt(f'game: expected "{GAME}", not {_brief(show(game))}')
    players = obj.get("players", MISSING)
    if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
        raise RefusedAt(f"players: a list of names (non-empty strings), not {_brief(show(players))}")
    twice = sorted({p for p in players if players.count(p) > 1})
    if twice:
        raise RefusedAt(f"players: {', '.join(twice)} sits twice")
    raw_rules = obj.get("rules", {})
    if not isinstance(raw_rules, dict):
        raise RefusedAt(f"rules: an object of options by their names, not {_kind(raw_rules)}")
    try:
        rules = rules_from_record(raw_rules, players)
    except (ValueError, TypeError) as exc:  # msgspec.ValidationError is a ValueError
        raise RefusedAt(f"rules: {exc}") from None
    deals = obj.get("deals", MISSING)
    if not isinstance(deals, list):
        raise RefusedAt(f"deals: a list of deals, not {_kind(deals)}")
    out: list[DealRecord] = []
    for number, d in enumerate(deals, 1):
        if not isinstance(d, dict):
            raise RefusedAt(f"deal {number}: a deal is an object, not {_kind(d)}", number)
        deck, actions = d.get("deck", MISSING), d.get("actions", MISSING)
        if not isinstance(deck, list):
            raise RefusedAt(f"deal {number}: deck: the pack in the order dealt from, not {_kind(deck)}", number)
        if not isinstance(actions, list):
            raise RefusedAt(f'deal {number}: actions: a list of "<seat> <action>" texts, not {_kind(actions)}', number)
        out.append(DealRecord(number, d.get("dealer", MISSING), list(deck), list(actions), d.get("result", MISSING)))
    table = obj.get("table")
    return RummyRecord(
        players=list(players),
        rules=rules,
        deals=out,
        result=obj.get("result", MISSING),
        table=table if isinstance(table, str) else "",
    )


def _check_deck(deal: DealRecord, pack: Sequence[str]) -> list[str]:
    """M1: the deck holds every card of the rules' pack exactly once."""
    where = f"deal {deal.number}: deck"
    known = set(pack)
    bad = [c for c in deal.deck if not isinstance(c, str) or c not in known]
    if bad:
        raise RefusedAt(f"{where}: not a card of this pack: {_kind(bad[0])}", deal.number)
    cards: list[str] = deal.deck
    twice = sorted({c for c in cards if cards.count(c) > 1})
    missing = [c for c in pack if c not in cards]
    if twice or missing:
        what = "; ".join(
            w
            for w in (f"{', '.join(twice)} twice" if twice else "", f"{', '.join(missing)} missing" if missing else "")
            if w
        )
        raise RefusedAt(f"{where}: the {len(pack)} cards of the pack, each once ({what}) (M1)", deal.number)
    return cards


def _read_action(deal: DealRecord, k: int, n: int) -> tuple[int, AnyAction]:
    text = deal.actions[k - 1]
    if not isinstance(text, str):
        raise RefusedAt(f'{deal.where(k)}: an action is a text "<seat> <action>"', deal.number, k)
    seat_text, _, rest = text.strip().partition(" ")
    if not seat_text.isdigit() or int(seat_text) >= n:
        raise RefusedAt(f'{deal.where(k)}: an action is "<seat> <action>", the seat 0 to {n - 1}', deal.number, k)
    try:
        return int(seat_text), parse_action(rest)
    except ValueError as exc:
        raise RefusedAt(f"{deal.where(k)}: {exc}", deal.number, k) from None


# --- replaying ----------------------------------------------------------------------------------


def deal_result(row: DealResult) -> dict[str, Any]:
    """A scored deal's ``result`` as records write it (M24, M25)."""
    return {
        "end": row.end,
        "out": row.out,
        "plus": list(row.plus),
        "minus": list(row.minus),
        "score": list(row.score),
        "totals": list(row.totals),
    }


def game_result(result: GameResult) -> dict[str, Any]:
    """The game's ``result`` as records write it (M26, M35)."""
    return {"places": list(result.places), "totals": list(result.totals), "complete": result.complete}


@dataclass
class Replayed:
    """What the rules make of a record: the match at its end, and per replayed deal the dealer
    and the ``result`` the rules give (None for a last deal that stops mid-way)."""

    match: Match
    dealers: list[int]
    results: list[dict[str, Any] | None]
    stopped: str = ""

    @property
    def result(self) -> dict[str, Any]:
        return game_result(self.match.result())


def replay(record: RummyRecord | Any) -> Replayed:
    """Play ``record`` (a ``RummyRecord`` or its JSON value) through the engine. Raises
    ``RefusedAt`` at the first thing the rules do not allow; never compares (``compare``)."""
    rec = record if isinstance(record, RummyRecord) else read_record(record)
    rules = rec.rules
    match = new_match(rules)
    out = Replayed(match=match, dealers=[], results=[])
    last = len(rec.deals)
    for deal in rec.deals:
        if match.complete:
            raise RefusedAt(
                f"deal {deal.number}: the game ended after deal {deal.number - 1} (M26): no deal follows", deal.number
            )
        deck = _check_deck(deal, rules.pack)
        match = start_deal(match, deck)
        assert match.deal is not None
        out.dealers.append(match.deal.dealer)
        done = len(match.results)
        for k in range(1, len(deal.actions) + 1):
            seat, action = _read_action(deal, k, rules.players)
            state = match.deal
            if state is None:
                end = match.results[-1].end
                raise RefusedAt(
                    f"{deal.where(k)}: the deal is over: it ended ({end}) after action {k - 1} (M15, M16)",
                    deal.number,
                    k,
                )
            if seat != state.seat:
                raise RefusedAt(
                    f"{deal.where(k)}: it is seat {state.seat}'s turn, not seat {seat}'s (M10)", deal.number, k
                )
            try:
                match = play(match, action)
            except IllegalAction as exc:
                raise RefusedAt(f"{deal.where(k)}: {exc.reason}", deal.number, k) from None
        if len(match.results) > done:
            out.results.append(deal_result(match.results[-1]))
            continue
        n_actions = len(deal.actions)
        stops = f"stops after action {n_actions}" if n_actions else "stops before its first action"
        if deal.number != last:
            raise RefusedAt(
                f"deal {deal.number}: {stops}; only a record's last deal may stop before its end",
                deal.number,
                n_actions + 1,
            )
        out.results.append(None)
        out.stopped = f"deal {deal.number} {stops}"
    out.match = match
    return out


# --- comparing ----------------------------------------------------------------------------------


def compare(record: RummyRecord, replayed: Replayed) -> list[Difference]:
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
    if mine is None:
        return [] if theirs is MISSING or theirs is None else [Difference(path, theirs, None)]
    if not isinstance(theirs, dict):
        return [Difference(path, theirs, mine)]
    return [
        Difference(f"{path}.{name}", theirs.get(name, MISSING), mine[name])
        for name in fields
        if not same(theirs.get(name, MISSING), mine[name])
    ]


def check(record: Any) -> Verdict:
    """The verdict on a record (its JSON value or a ``RummyRecord``): replayed, then compared.
    ``error`` carries the refusal's one line; ``differ`` every differing field."""
    try:
        rec = record if isinstance(record, RummyRecord) else read_record(record)
        replayed = replay(rec)
    except RecordError as exc:
        return Verdict(status="error", reason=exc.reason)
    differences = tuple(compare(rec, replayed))
    return Verdict(
        status="differ" if differences else "agree",
        differences=differences,
        deals=len(replayed.results),
        complete=replayed.match.complete,
        stopped=replayed.stopped,
    )


# --- writing ------------------------------------------------------------------------------------


def written_rules(rules: RummyRules) -> dict[str, Any]:
    """The rules as a record writes them: every option by its name, the variant-dependent
    defaults (``packs``, ``layoff_credit``) spelled out."""
    out: dict[str, Any] = msgspec.to_builtins(rules.resolved())
    return out


def record_of(
    match: Match,
    players: Sequence[str],
    decks: Sequence[Sequence[str]],
    actions: Sequence[Sequence[str | tuple[int, AnyAction]]],
    table: str = "",
) -> dict[str, Any]:
    """The record of a game played on the engine: ``match`` as it stands (its deals scored,
    perhaps one in progress), with each deal's deck as dealt and its actions (record lines
    ``"<seat> <action>"`` or (seat, action) pairs), one entry per deal begun. A JSON-ready dict
    with the keys in RECORDS.md's order; the rules are written resolved (every
    variant-dependent default spelled out), so the record replays the same whatever the
    defaults become. A deal in progress is written without a result (never scored). Raises
    ``ValueError`` when the decks or action lists do not match the match's deals."""
    if len(players) != match.rules.players:
        raise ValueError(f"{len(players)} names for {match.rules.players} seats")
    if len(decks) != match.deals or len(actions) != match.deals:
        raise ValueError(f"the match has begun {match.deals} deals: give a deck and actions for each")
    dealers = [r.dealer for r in match.results]
    if match.deal is not None:
        dealers.append(match.deal.dealer)
    deals: list[dict[str, Any]] = []
    for i, (dealer, deck, lines) in enumerate(zip(dealers, decks, actions)):
        texts = [line if isinstance(line, str) else format_line(*line) for line in lines]
        d: dict[str, Any] = {"dealer": dealer, "deck": list(deck), "actions": texts}
        if i < len(match.results):
            d["result"] = deal_result(match.results[i])
        deals.append(d)
    out: dict[str, Any] = {"game": GAME}
    if table:
        out["table"] = table
    out.update(
        players=list(players),
        rules=written_rules(match.rules),
        deals=deals,
        result=game_result(match.result()),
    )
    return out
