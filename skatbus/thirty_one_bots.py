"""Built-in Thirty-one bots: ``random`` and ``heuristic``, each ``act(observation) -> command``.

A bot gets what a remote player gets: the seat's ``ThirtyOneView`` (its own hand, the public
history of the deal with hidden cards removed, the legal actions), inside an update with the
log position (``index``) as the services send it, or the bare view. It never sees the table's
state, so it cannot use a card the rules have not shown it. ``observe(state, seat)`` builds the
same update from a local state for engine-only play (``skatbus.thirty_one_eval``). Both bots are
deterministic: the random one draws from a source keyed by (seed, table, log position, seat),
as the Skat bots do (``skatbus.seeding``); the heuristic one uses no randomness at all.

The heuristic (``HeuristicBot``) plays from ``Knowledge.of(view)``: its hand, the cards the
others are known to hold (taken from the discard pile), and the cards that can still come from
the stock (never seen, or put back by a restock, and not known to be in another hand). Every
choice is made among ``view.legal``; the rules behind each choice are in the docstrings below.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Protocol

from protocol.thirty_one import PACK, ThirtyOneRules, ThirtyOneState, ThirtyOneView, hand_value, view
from protocol.thirty_one.cards import THIRTY_ONE, VALUES
from protocol.thirty_one.commands import (
    KNOCK,
    LOOK,
    TAKE_DISCARD,
    TAKE_STOCK,
    Command,
    Discard,
    Knock,
    Look,
    Take,
)
from protocol.thirty_one.events import T31Dealt, T31Took
from protocol.thirty_one.knowledge import Knowledge
from protocol.thirty_one.views import ThirtyOneUpdate

__all__ = [
    "BOTS", "HeuristicBot", "Observation", "Pool", "RandomBot", "T31Bot", "T31Update", "alone_lowest_chance",
    "gain", "lives_to_out", "make_bot", "observe", "opponent_table", "stock_pool",
]  # fmt: skip


T31Update = ThirtyOneUpdate
"""A Thirty-one seat's update (view, your_turn, deadline, index): what the services send and
what engine-only play hands a bot (``protocol.thirty_one.views.ThirtyOneUpdate``)."""


class Observation(Protocol):
    """What a bot may be given: anything with the seat's view and the log position (the
    services' ``Update``, or ``T31Update``)."""

    @property
    def view(self) -> Any: ...

    @property
    def index(self) -> int: ...


class T31Bot(Protocol):
    """A Thirty-one bot."""

    def act(self, obs: Observation | ThirtyOneView) -> Command: ...


def observe(state: ThirtyOneState, seat: int) -> T31Update:
    """The update ``seat`` gets when it is its turn, built from a local table state."""
    return T31Update(view=view(state, seat), your_turn=True, index=state.events)


def _unpack(obs: Observation | ThirtyOneView) -> tuple[ThirtyOneView, int]:
    """The view and a log position: a bare view has none, so its history length and phase
    stand in (they change with every decision of the deal)."""
    if isinstance(obs, ThirtyOneView):
        return obs, -1
    v = obs.view
    if not isinstance(v, ThirtyOneView):
        raise TypeError(f"a Thirty-one bot needs a ThirtyOneView, not {type(v).__name__}")
    return v, obs.index


def _rng(seed: str, v: ThirtyOneView, index: int) -> random.Random:
    """One random source per decision, from (seed, table, position, seat) only: the same game
    plays the same way in the engine and over the bus, whatever the timing."""
    where = str(index) if index >= 0 else f"{v.deal}.{len(v.history)}.{v.phase}"
    key = f"{seed}/{v.table}/{where}/{v.seat}".encode()
    return random.Random(int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big"))


class RandomBot:
    """Uniform over the legal actions (looks and throw-downs included), seeded."""

    def __init__(self, seed: str = "") -> None:
        self.seed = seed

    def act(self, obs: Observation | ThirtyOneView) -> Command:
        v, index = _unpack(obs)
        if not v.legal:
            raise ValueError(f"seat {v.seat} has no legal action (it is not its turn)")
        choice: Command = _rng(self.seed, v, index).choice(v.legal)
        return choice


# --- hand values and what a draw is worth --------------------------------------------------

V2: Final[dict[str, int]] = {code: 2 * v for code, v in VALUES.items()}
"""Card values in half points, as ``hand_value`` counts."""


def _plain(rules: ThirtyOneRules) -> bool:
    """Without three_of_a_kind and straight_flush a hand's value is its best suit total, which
    the fast formulas below use; with either option the general ``hand_value`` is used."""
    return rules.three_of_a_kind == "off" and not rules.straight_flush


class Pool:
    """The cards that may come from the stock, grouped by suit (half-point values, highest
    first): never seen or put back by a restock, and not known to be held by another seat."""

    __slots__ = ("cards", "by_suit", "size")

    def __init__(self, cards: Iterable[str]) -> None:
        self.cards = sorted(cards)
        self.size = len(self.cards)
        by_suit: dict[str, list[int]] = {}
        for c in self.cards:
            by_suit.setdefault(c[0], []).append(V2[c])
        for vals in by_suit.values():
            vals.sort(reverse=True)
        self.by_suit = by_suit


def stock_pool(k: Knowledge) -> Pool:
    """The cards the stock may hold as far as this seat knows (see ``Pool``)."""
    others: set[str] = set()
    for seat, held in enumerate(k.held):
        if seat != k.seat:
            others |= held
    return Pool((k.unseen | k.restocked) - others - set(k.hand))


def gain(hand: Sequence[str], pool: Pool, rules: ThirtyOneRules) -> float:
    """The expected rise of a three-card hand's value (half points) from one card of ``pool``,
    kept only if it helps: how promising the hand is. A drawn card of a suit held once or
    twice (or not at all) makes that suit's total plus its value; of a suit held three times,
    the total plus what it beats the lowest card by. The hand is worth the larger of that and
    its value (the card is thrown away otherwise)."""
    if not pool.size:
        return 0.0
    old = hand_value(hand, rules)
    total = 0
    if not _plain(rules):
        for c in pool.cards:
            new = hand_value([*hand, c], rules)
            if new > old:
                total += new - old
        return total / pool.size
    mine: dict[str, list[int]] = {}
    for c in hand:
        mine.setdefault(c[0], []).append(V2[c])
    for suit, vals in pool.by_suit.items():
        held = mine.get(suit)
        if held is None:
            base, low = -old, 0
        elif len(held) < 3:
            base, low = sum(held) - old, 0
        else:
            base, low = sum(held) - old, min(held)
        for v in vals:  # highest first: stop at the first card that does not help
            rise = base + v - low if v > low else 0
            if rise <= 0:
                break
            total += rise
    return total / pool.size


# --- the opponents' hands at a showdown ------------------------------------------------------

MAX_DRAWS: Final = 16
"""Opponent draws modelled; more draws than this count as this many."""
_SAMPLES: Final = 2000


@functools.cache
def opponent_table(three_of_a_kind: str = "off", straight_flush: bool = False) -> tuple[tuple[float, ...], ...]:
    """``table[k][v]``: the chance that a player who keeps his best three cards holds a hand
    worth at most ``v`` half points after ``k`` draws from a fresh stock. A knock is judged by
    the chance that every other hand beats the knocker's at the showdown, and the others'
    hands are modelled so: a fixed-seed simulation, computed once per option set."""
    rules = ThirtyOneRules(three_of_a_kind=three_of_a_kind, straight_flush=straight_flush)  # type: ignore[arg-type]
    rng = random.Random(31)
    counts = [[0] * (THIRTY_ONE + 1) for _ in range(MAX_DRAWS + 1)]
    pack = list(PACK)
    for _ in range(_SAMPLES):
        rng.shuffle(pack)
        hand = pack[:3]
        best = hand_value(hand, rules)
        counts[0][best] += 1
        for k in range(1, MAX_DRAWS + 1):
            card = pack[2 + k]
            keep = hand
            for i in range(3):
                trial = [*hand[:i], *hand[i + 1 :], card]
                v = hand_value(trial, rules)
                if v > best:
                    best, keep = v, trial
            hand = keep
            counts[k][best] += 1
    table = []
    for row in counts:
        acc, cum = 0, []
        for c in row:
            acc += c
            cum.append(acc / _SAMPLES)
        table.append(tuple(cum))
    return tuple(table)


def alone_lowest_chance(v: ThirtyOneView, k: Knowledge, value: int) -> float:
    """The chance that a knock now leaves this seat alone lowest (two lives, T23a): every other
    hand in the deal ends above ``value``. Each other seat gets one more turn after the knock,
    so it is modelled with one draw more than it has had; a seat known (from the discard pile)
    to hold more than ``value`` already is above it for sure."""
    table = opponent_table(v.rules.three_of_a_kind, v.rules.straight_flush)
    draws = _draws(v)
    chance = 1.0
    for seat in _order(v):
        if seat == v.seat:
            continue
        known = sorted(k.held[seat])
        if known and hand_value(known, v.rules) > value:
            continue
        chance *= 1.0 - table[min(draws.get(seat, 0) + 1, MAX_DRAWS)][min(value, THIRTY_ONE)]
    return chance


def _order(v: ThirtyOneView) -> list[int]:
    """The seats dealt in, in turn order (from the deal's ``t31_dealt``)."""
    for event in v.history:
        if type(event) is T31Dealt:
            return list(event.order)
    return list(v.active)


def _draws(v: ThirtyOneView) -> dict[int, int]:
    """How many cards each seat has taken in this deal."""
    out: dict[int, int] = {}
    for event in v.history:
        if type(event) is T31Took:
            out[event.seat] = out.get(event.seat, 0) + 1
    return out


def lives_to_out(coins: int, county: bool) -> int:
    """How many lives a seat with ``coins`` can lose in one deal and stay in: on the county the
    coins and then nothing more (T25), without it one fewer (out with the last coin)."""
    return coins if county else coins - 1


# --- the heuristic bot -------------------------------------------------------------------------


class HeuristicBot:
    """Plays from what its seat may know (see the module docstring). Its play is a function of
    the view alone (no randomness); ``seed`` is kept so that every bot is made the same way.

    The knobs, with the defaults that measured best in self-play (``skatbus.thirty_one_eval``,
    one variant against copies of the default, 2 and 3 players, 1,200-3,000 games each):
    ``knock_risk`` is the largest chance of ending alone lowest it knocks with (0.3 beat 0.1,
    0.2 and 0.4 with two players; 0.2-0.4 were even with three and five); ``careful``
    multiplies it when two lost lives would eliminate the seat and one would not (no
    measurable effect either way, kept because the risk is real); ``potential`` weighs a
    hand's promise (``gain``) against its value while more turns are to come (0.5-1.5 even,
    3 clearly worse); ``feed`` weighs what a discard gives the next seat (0 was worse with
    two players).
    """

    def __init__(
        self,
        seed: str = "",
        *,
        knock_risk: float = 0.3,
        potential: float = 1.0,
        feed: float = 0.5,
        careful: float = 0.5,
    ) -> None:
        self.seed = seed
        self.careful = careful
        self.knock_risk = knock_risk
        self.potential = potential
        self.feed = feed

    def act(self, obs: Observation | ThirtyOneView) -> Command:
        v, _ = _unpack(obs)
        legal = v.legal
        if not legal:
            raise ValueError(f"seat {v.seat} has no legal action (it is not its turn)")
        choice = self._choose(v, legal)
        return choice if choice in legal else legal[0]

    def _choose(self, v: ThirtyOneView, legal: Sequence[Command]) -> Command:
        kinds = {type(a) for a in legal}
        if Discard in kinds:
            return self.discard(v, Knowledge.of(v), legal)
        if not v.hand:
            return self.unseen(v, kinds)
        k = Knowledge.of(v)
        if TAKE_DISCARD in legal and self.completes_31(v):
            return TAKE_DISCARD
        if Knock in kinds and self.knocks(v, k):
            return KNOCK
        if Take in kinds:
            return self.take(v, k, legal)
        return legal[0]

    def unseen(self, v: ThirtyOneView, kinds: set[type]) -> Command:
        """Under ``throw_down``, before looking: look, and never throw down. A throw-down is
        blind and the thrower counts as the knocker (T31): his hand is as likely to be the
        lowest as anyone's, and alone lowest he loses two lives where anyone else loses one,
        so on average it costs him more than any other seat. The one case that looked clearly
        good (two seats left, the other out at its next lost life, this one able to lose two
        and stay in) measured worse than playing the deal: 46.4 % +- 0.9 won against 50 %
        over 3,000 two-player games, since a deal played well eliminates the other more often
        than a coin flip does. Knocking blind is never done either: looking first is free."""
        if Look in kinds:
            return LOOK
        return TAKE_STOCK if Take in kinds and v.stock else TAKE_DISCARD

    def completes_31(self, v: ThirtyOneView) -> bool:
        """Whether the discard pile's top card makes 31 with two of the hand's cards: taken,
        it ends the deal at once with a life lost by everyone else (T16, T17), which no knock
        can better, so it comes before the knock."""
        if not v.pile:
            return False
        hand, top = list(v.hand), v.pile[-1]
        return any(hand_value([*hand[:i], *hand[i + 1 :], top], v.rules) == THIRTY_ONE for i in range(len(hand)))

    def knocks(self, v: ThirtyOneView, k: Knowledge) -> bool:
        """Knock when the chance of ending alone lowest is small (``alone_lowest_chance``),
        at most ``knock_risk``: it falls with the number of players (each must beat the
        knocker) and rises with the turns gone (the others' hands improve) and with what the
        others are known to hold. With one life to spare a knock risks the elimination that a
        single lost life would not cause, so the risk is multiplied by ``careful`` then.
        ``min_knock`` and ``knock_in_first_round`` are the rules' (a knock is chosen only when
        it is legal)."""
        value = hand_value(v.hand, v.rules)
        risk = self.knock_risk
        if lives_to_out(v.coins[v.seat], v.rules.county) == 1:
            risk *= self.careful
        now = alone_lowest_chance(v, k, value)
        return now <= risk

    def weight(self, v: ThirtyOneView) -> float:
        """How much a hand's promise counts: nothing in the last turn after a knock (only the
        value at the showdown matters then), ``potential`` otherwise."""
        return 0.0 if v.knocker is not None else self.potential

    def take(self, v: ThirtyOneView, k: Knowledge, legal: Sequence[Command]) -> Command:
        """Take the discard pile's top card when what it gives for sure beats what the stock
        gives on average. The pile: the best hand it makes (value plus weighted promise,
        ``gain``), the top card kept (T14). The stock: the hand's value, plus the expected rise
        from the card drawn (``gain``), plus the same promise again for the turns after. So the
        top card is taken when it raises the value (or completes a suit) by more than a stock
        card would on average, and the stock otherwise."""
        may_stock = TAKE_STOCK in legal
        may_pile = TAKE_DISCARD in legal and bool(v.pile)
        if not may_pile:
            return TAKE_STOCK if may_stock else legal[0]
        if not may_stock:
            return TAKE_DISCARD
        rules = v.rules
        w = self.weight(v)
        pool = stock_pool(k)
        hand: list[str] = list(v.hand)
        top = v.pile[-1]
        g = gain(hand, pool, rules)
        stock_score = hand_value(hand, rules) + (1 + w) * g
        pile_score = max(self._score([*hand[:i], *hand[i + 1 :], top], pool, rules, w) for i in range(len(hand)))
        return TAKE_DISCARD if pile_score > stock_score else TAKE_STOCK

    def _score(self, hand: list[str], pool: Pool, rules: ThirtyOneRules, w: float) -> float:
        return hand_value(hand, rules) + (w * gain(hand, pool, rules) if w else 0.0)

    def discard(self, v: ThirtyOneView, k: Knowledge, legal: Sequence[Command]) -> Command:
        """Discard the card whose loss leaves the best hand: value plus weighted promise
        (``gain``, counted over the cards the stock may still hold, so a suit the others are
        collecting or that lies dead in the pile promises less), minus what the card gives the
        seat that plays next (``feeding``). Ties go to the lower card, which helps nobody much."""
        rules = v.rules
        w = self.weight(v)
        pool = stock_pool(k)
        hand: list[str] = list(v.hand)
        nxt = self.next_seat(v)
        best: Discard | None = None
        best_score = -1e9
        for action in legal:
            if not isinstance(action, Discard):
                continue
            card = action.card
            rest = [c for c in hand if c != card]
            score = self._score(rest, pool, rules, w) - self.feeding(v, k, nxt, card) - 0.01 * V2[card]
            if score > best_score:
                best, best_score = action, score
        return best if best is not None else legal[0]

    def next_seat(self, v: ThirtyOneView) -> int | None:
        """The seat that may take this discard: the next in turn order, or after a knock the
        next seat owed a last turn (nobody when this is the last turn: the showdown follows)."""
        if v.knocker is not None:
            owed = [s for s in v.last_turns if s != v.seat]
            return owed[0] if owed else None
        order = _order(v)
        if v.seat not in order:
            return None
        return order[(order.index(v.seat) + 1) % len(order)]

    def feeding(self, v: ThirtyOneView, k: Knowledge, seat: int | None, card: str) -> float:
        """What discarding ``card`` gives ``seat`` (the next to play), in half points: it will
        take it when it raises its hand. Of that hand this seat knows only the cards it took
        from the pile; a card of the suit it is collecting is worth ``feed`` times the rise it
        gives, and one that completes its 31 ends the deal with a life lost here (T17), so it
        counts as a whole hand's value."""
        if seat is None:
            return 0.0
        known = sorted(k.held[seat])
        if not known:
            return 0.0
        rules = v.rules
        before = hand_value(known, rules)
        after = hand_value([*known, card], rules)
        if after == THIRTY_ONE:
            return float(THIRTY_ONE)
        return self.feed * max(0, after - before)


BOTS: Final[dict[str, Callable[[str], T31Bot]]] = {"random": RandomBot, "heuristic": HeuristicBot}
"""The built-in Thirty-one bots by name; each is made from a seed string."""


def make_bot(name: str, seed: str = "") -> T31Bot:
    """A built-in Thirty-one bot by name (see ``BOTS``), or a class of one's own by its spec
    (``module:Class``, ``file.py:Class`` declaring ``game = "thirty-one"``: ``skatbus.bot_loader``,
    guarded so that a turn it fails is played by the default move)."""
    if ":" in name:
        from .bot_loader import make

        guarded: T31Bot = make(name, seed, "thirty-one")
        return guarded
    try:
        return BOTS[name](seed)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; built-in Thirty-one bots: {', '.join(sorted(BOTS))}") from None
