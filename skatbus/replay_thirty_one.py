"""``skat replay`` of a Thirty-one table: the archive's omniscient view, deal by deal.

An archive holds every card (``t31_dealt.deck`` is the whole pack in dealing order, a card taken
from the stock is named in its event), so the replay shows what no seat saw: every hand as
dealt, the stock's order, each card taken. As for Skat, nothing the log says that can be
derived is trusted: the log is folded with the game's own engine (``protocol.thirty_one.state``,
which checks every derived event: deals, restocks, ends, lives, coins), the replay shows what
the fold implies, and the same fold is the verifier.

Actions are written ``<seat> <player>: <action>``, the action in the text form of game records
(``take stock``, ``discard S7``, ``knock``; a take adds the card taken: ``take stock (H7)``), so a
replay line can be read against a record. Cards are their codes (``HA``, ``S7``, ``DT``).

``skatbus.replay`` dispatches here for a table whose ``table_opened/2`` names Thirty-one; the
HTML page is ``replay_html_thirty_one``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TextIO

import msgspec

from protocol.events import (
    Event,
    PlayerTimedOut,
    SeatWithdrawn,
    TableClosed,
    TableOpenedV2,
    TablePaused,
    TableResumed,
    UnknownEvent,
)
from protocol.lifecycle import LogError
from protocol.thirty_one.cards import RANKS, SUITS, hand_value, points
from protocol.thirty_one.events import (
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Discarded,
    T31Knocked,
    T31Looked,
    T31Restocked,
    T31Threw,
    T31Took,
)
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.thirty_one.state import ThirtyOneState, due

if TYPE_CHECKING:
    from .replay import TableLog, Verdict

AnyLogged = Event | UnknownEvent

NAME: Final = "thirty-one"
TITLE: Final = "Thirty-one"

ENDS: Final[dict[str, str]] = {
    "thirty_one": "31",
    "showdown": "showdown",
    "throw_down": "throw-down",
    "void": "void",
    "turn_limit": "turn limit",
}
"""A deal's end (``t31_deal_ended.end``) in a word or two."""


# --- folding ---------------------------------------------------------------------------------


@dataclass
class Step:
    """One event and the table right after it (a private copy only where ``keep`` asked)."""

    position: int
    event: AnyLogged
    state: ThirtyOneState


def steps(log: TableLog, keep: Callable[[int, AnyLogged], bool] = lambda i, e: False) -> Iterator[Step]:
    """Fold the log with Thirty-one's engine, yielding every step; raises ``LogError`` at the
    first bad event (or at the reader's problem, when the fold gets that far)."""
    state = ThirtyOneState()
    for position, event in enumerate(log.events):
        if log.problem is not None and log.problem.position == position:
            raise log.problem
        state.apply(event)
        yield Step(position, event, state.copy() if keep(position, event) else state)
    if log.problem is not None:
        raise log.problem


def verify(log: TableLog) -> Verdict:
    """The fold re-derives every deal, restock, end and score and refuses the first event that
    does not follow; the lives, coins and places are then the engine's own."""
    from .replay import Verdict

    state: ThirtyOneState | None = None
    try:
        for step in steps(log):
            state = step.state
    except LogError as exc:
        return Verdict(False, exc.position, state.deal_no if state else 0, f"event {exc.position}: {exc.reason}", exc)
    assert state is not None
    deals = len(state.sheet)
    message = f"ok: {state.events} events, {deals} deals, the lives, coins and places follow"
    if not state.closed:
        owed = due(state)
        waiting = type(owed).__name__ if owed is not None else f"seat {state.to_move}"
        message += f" (the table is not closed: it waits for {waiting})"
    return Verdict(True, state.events, deals, message)


# --- words -----------------------------------------------------------------------------------

_ORDER: Final = {code: (SUITS.index(code[0]), -RANKS.index(code[1])) for code in (s + r for s in SUITS for r in RANKS)}


def sorted_hand(cards: Sequence[str]) -> list[str]:
    """A hand grouped by suit, high cards first: how a player holds it (the value is a suit's)."""
    return sorted(cards, key=lambda c: _ORDER.get(c, (9, 0)))


def value_text(cards: Sequence[str], rules: ThirtyOneRules) -> str:
    """A hand's value in points (``30.5`` under three_of_a_kind 30.5)."""
    return f"{points(hand_value(cards, rules)):g}"


def name(state: ThirtyOneState, seat: int) -> str:
    return state.players[seat] if 0 <= seat < len(state.players) else f"seat {seat}"


def seat_name(state: ThirtyOneState, seat: int) -> str:
    """``0 ann``: the seat as a record numbers it, and the player."""
    return f"{seat} {name(state, seat)}"


def rules_text(rules: ThirtyOneRules) -> str:
    """The coins and every option that differs from the rules page's default."""
    default = ThirtyOneRules()
    parts = [f"{rules.coins} coin{'s' if rules.coins != 1 else ''} each"]
    for field in msgspec.structs.fields(rules):
        key = field.name
        if key in ("coins", "turn_seconds", "max_timeouts"):
            continue
        value = getattr(rules, key)
        if value != getattr(default, key):
            parts.append(key if value is True else f"{key} {str(value).lower()}")
    return ", ".join(parts)


def describe(event: AnyLogged, state: ThirtyOneState) -> str:
    """One line for an event, in the words of the table (``state`` is the table after it)."""
    if isinstance(event, TableOpenedV2):
        return f"table {event.table} opened: {TITLE}, {', '.join(event.players)} ({rules_text(state.rules)})"
    if isinstance(event, T31Dealt):
        return f"deal {event.deal} dealt by {name(state, event.dealer)}"
    if isinstance(event, T31Took):
        return f"{seat_name(state, event.seat)}: take {event.source} ({event.card})"
    if isinstance(event, T31Discarded):
        return f"{seat_name(state, event.seat)}: discard {event.card}"
    if isinstance(event, T31Knocked):
        return f"{seat_name(state, event.seat)}: knock"
    if isinstance(event, T31Looked):
        return f"{seat_name(state, event.seat)}: look"
    if isinstance(event, T31Threw):
        return f"{seat_name(state, event.seat)}: throw"
    if isinstance(event, T31Restocked):
        return (
            f"the stock ran out: the discard pile but its top card is the new stock, {len(event.stock)} cards "
            f"(top first): {' '.join(event.stock)}"
        )
    if isinstance(event, T31DealEnded):
        return f"deal {event.deal} ended: {end_text(event, state)}"
    if isinstance(event, T31DealScored):
        return f"deal {event.deal} scored: {score_text(event, state)}"
    if isinstance(event, PlayerTimedOut):
        return f"{seat_name(state, event.seat)} timed out"
    if isinstance(event, SeatWithdrawn):
        return (
            f"{seat_name(state, event.seat)} is withdrawn after {event.missed} turns in a row timed out: "
            "the default action plays for it"
        )
    if isinstance(event, TablePaused):
        return "table paused" + (f": {event.reason}" if event.reason else "")
    if isinstance(event, TableResumed):
        return "table resumed"
    if isinstance(event, TableClosed):
        return f"table closed: {event.reason}; {places_text(state)}"
    if isinstance(event, UnknownEvent):
        return f"(an event this version does not know: {event.type}/{event.version})"
    return type(event).__name__


def end_text(e: T31DealEnded, state: ThirtyOneState) -> str:
    """How a deal ended, with every hand shown and its value."""
    deal = state.deal
    rules = state.rules
    shown = [(s, list(h)) for s, h in enumerate(e.shown) if h]
    hands = ", ".join(f"{seat_name(state, s)} {' '.join(sorted_hand(h))} = {value_text(h, rules)}" for s, h in shown)
    knocker = deal.knocker if deal is not None else -1
    after = f" after {seat_name(state, knocker)}'s knock" if knocker >= 0 else ""
    if e.end == "thirty_one":
        dealt = deal is not None and deal.turns == 0
        return f"31{' dealt' if dealt else ''}{after}: {hands}"
    if e.end == "showdown":
        return f"showdown{after}: {hands}"
    if e.end == "throw_down":
        thrower = deal.thrower if deal is not None else -1
        return f"throw-down by {seat_name(state, thrower)}: {hands}"
    if e.end == "void":
        return "void: the stock ran out" + (" with nobody knocking" if knocker < 0 else "") + "; no lives lost"
    if e.end == "turn_limit":
        return f"turn limit: {rules.max_turns} turns without a knock, void; no lives lost"
    return e.end


def lives_text(lives: list[int], state: ThirtyOneState) -> str:
    lost = [f"{name(state, s)} {n}" for s, n in enumerate(lives) if n]
    return "lives lost: " + ", ".join(lost) if lost else "no lives lost"


def coins_text(coins: list[int], kitty: int, state: ThirtyOneState, deal: int) -> str:
    """Coins of the seats that played ``deal`` (an earlier deal's eliminated are left out)."""
    held = [f"{name(state, s)} {c}" for s, c in enumerate(coins) if not 0 < state.out_deal[s] < deal]
    return f"coins {', '.join(held)}; kitty {kitty}"


def score_text(e: T31DealScored, state: ThirtyOneState) -> str:
    text = f"{lives_text(e.lives, state)}; {coins_text(e.coins, e.kitty, state, e.deal)}"
    if e.eliminated:
        text += "; eliminated: " + ", ".join(name(state, s) for s in e.eliminated)
    return text


def places_text(state: ThirtyOneState) -> str:
    """The places (so far, unless the table is closed), best first; the winner's coins hold the
    kitty once the table is closed (T36)."""
    places = state.places()
    ranked = sorted(range(state.n), key=lambda s: (places[s], s))
    word = "places" if state.closed else "places so far"
    return f"{word}: " + ", ".join(f"{places[s]} {name(state, s)} ({state.coins[s]} coins)" for s in ranked)


# --- the table at one moment, as data (terminal and HTML both draw this) ---------------------


def snapshot(state: ThirtyOneState, event: AnyLogged | None = None) -> dict[str, Any]:
    """What a viewer of the whole table sees right now, as JSON-ready data."""
    out: dict[str, Any] = {
        "table": state.table,
        "game": NAME,
        "players": list(state.players),
        "deal": state.deal_no,
        "coins": list(state.coins),
        "kitty": state.kitty,
        "text": describe(event, state) if event is not None else "",
    }
    if state.closed:
        out["places"] = state.places()
    deal = state.deal
    if deal is None:
        return out
    out["phase"] = state.phase
    out["dealer"] = state.dealer
    out["seats"] = [
        {
            "seat": s,
            "name": name(state, s),
            "in": deal.dealt_in(s),
            "hand": sorted_hand(deal.hands[s]),
            "value": points(deal.value(s)) if deal.hands[s] else None,
            "coins": state.coins[s],
            "dealer": s == state.dealer,
            "to_move": state.to_move == s,
            "knocker": s == deal.knocker,
            "thrower": s == deal.thrower,
        }
        for s in range(state.n)
    ]
    out["pile"] = list(deal.pile)
    out["stock"] = len(deal.stock)
    out["stock_top"] = deal.stock[0] if deal.stock else ""
    out["owed"] = [name(state, s) for s in deal.owed] if deal.knocker >= 0 and not deal.ended else []
    return out


def dealt_lines(event: T31Dealt, state: ThirtyOneState) -> list[str]:
    """A deal as dealt: each hand and its value, the discard pile's first card, the stock."""
    m = len(event.order)
    lines = []
    for j, s in enumerate(event.order):
        hand = [str(event.deck[i * m + j]) for i in range(3)]
        lines.append(
            f"  {seat_name(state, s):<18} {' '.join(sorted_hand(hand)):<10} {value_text(hand, state.rules):>4}"
        )
    lines.append(f"  discard pile: {event.deck[3 * m]}")
    stock = event.deck[3 * m + 1 :]
    lines.append(f"  stock, {len(stock)} cards (top first): {' '.join(stock)}")
    return lines


# --- the terminal ----------------------------------------------------------------------------


def render_state(snap: dict[str, Any]) -> list[str]:
    """The table at one moment as terminal lines."""
    head = f"table {snap['table']} ({TITLE}), deal {snap['deal']}"
    if "seats" not in snap:
        lines = [head]
    else:
        lines = [head + f" ({snap['phase']}), dealer {snap['players'][snap['dealer']]}"]
        for s in snap["seats"]:
            who = f"{s['seat']} {s['name']}"
            if not s["in"]:
                lines.append(f"  {who:<18} out")
                continue
            marks = "".join(
                word
                for word, on in (
                    (" knocked", s["knocker"]),
                    (" threw down", s["thrower"]),
                    (" <- to move", s["to_move"]),
                )
                if on
            )
            value = f"{s['value']:g}" if s["value"] is not None else ""
            lines.append(f"  {who:<18} {' '.join(s['hand']):<13} {value:>4}  coins {s['coins']}{marks}")
        top = f", top {snap['stock_top']}" if snap["stock_top"] else ""
        lines.append(f"  discard pile (top last): {' '.join(snap['pile'])}; stock {snap['stock']} cards{top}")
        if snap["owed"]:
            lines.append(f"  last turns owed: {', '.join(snap['owed'])}")
    coins = ", ".join(f"{p} {c}" for p, c in zip(snap["players"], snap["coins"]))
    lines.append(f"  coins: {coins}; kitty {snap['kitty']}")
    if "places" in snap:
        ranked = sorted(range(len(snap["players"])), key=lambda s: (snap["places"][s], s))
        lines.append("  places: " + ", ".join(f"{snap['places'][s]} {snap['players'][s]}" for s in ranked))
    return lines


def _broken(exc: LogError, out: TextIO) -> int:
    from .replay import breaks  # that module imports this one

    print(breaks(exc), file=out)
    return 1


def show_to(log: TableLog, to: int, out: TextIO) -> int:
    """The table after event ``to``."""
    if not 0 <= to < len(log.events):
        print(f"--to {to}: the log has events 0..{len(log.events) - 1}", file=sys.stderr)
        return 2
    last: Step | None = None
    try:
        for step in steps(log):
            last = step
            if step.position == to:
                break
    except LogError as exc:
        return _broken(exc, out)
    assert last is not None
    print(f"after event {to}: {describe(last.event, last.state)}", file=out)
    for line in render_state(snapshot(last.state, last.event)):
        print(line, file=out)
    return 0


def step_through(log: TableLog, deal: int | None, out: TextIO, pause: Callable[[], bool] | None) -> int:
    """Every event of one deal (or all deals): each deal as dealt (every hand and the stock),
    every turn, restock, end and score, and the places once the table closes. ``pause`` waits
    for the viewer between events (the table is then drawn after every turn)."""
    shown = False
    try:
        for step in steps(log):
            state, event = step.state, step.event
            if deal is not None and state.deal_no != deal:
                if shown and state.deal_no > deal:
                    break
                continue
            shown = True
            print(f"[{step.position:4}] {describe(event, state)}", file=out)
            if isinstance(event, T31Dealt):
                for line in dealt_lines(event, state):
                    print(line, file=out)
            elif pause is not None and isinstance(event, (T31Discarded, T31Knocked, T31Threw, T31DealScored)):
                for line in render_state(snapshot(state, event))[1:]:
                    print(line, file=out)
            if pause is not None and not pause():
                return 0
    except LogError as exc:
        return _broken(exc, out)
    if not shown:
        print(f"no deal {deal} in table {log.table}", file=sys.stderr)
        return 2
    return 0


def summary(log: TableLog, out: TextIO) -> int:
    """One line for the table: its game, players, deals and places."""
    state: ThirtyOneState | None = None
    code = 0
    try:
        for step in steps(log):
            state = step.state
    except LogError as exc:
        from .replay import breaks  # that module imports this one

        code = 1
        print(f"({breaks(exc)}; deals up to there)", file=out)
    if state is None or not state.opened:
        return code
    deals = len(state.sheet)
    print(
        f"table {state.table} ({TITLE}): {', '.join(state.players)}; {deals} deal{'s' if deals != 1 else ''}; "
        f"{places_text(state)}",
        file=out,
    )
    return code


# --- what the interactive replay (replay_nav) needs of a game ------------------------------

DEAL_STARTS: Final = (T31Dealt,)
DEAL_SCORED: Final = T31DealScored
STOPS: Final = (T31Knocked, T31Threw, T31Restocked, T31DealEnded, T31DealScored)
"""Where ``t`` stops: the moments a deal changes course."""
STOP_WORDS: Final = "knock, restock, end or score"
KEYS: Final = (
    "Enter/n: next event  b: back  t: next knock, restock, end or score  d: next deal  p: previous deal  "
    "N: deal N  e N: event N  l: tables  l N: table N  q: quit  ?: help"
)
