"""One deal of Skat as a mutable state machine: bidding, skat, declaration, Kontra/Re, tricks.

``Deal`` is the rules engine's core, in the spirit of python-chess's ``Board``: start from a
deal, ask ``to_move`` and ``legal_actions()``, ``push(action)``, read ``result()`` at the end.
It works in deal positions (0 forehand, 1 middlehand, 2 rearhand); the table layer maps them
to table seats. Everything here is pure and allocation-light because the tournament runner,
the services and the benchmarks all go through it for every single card.

``check(pos, action)`` says why an action is illegal (or None) without touching the state and
``is_legal`` asks the same as a yes or no; ``push`` assumes a legal action (it is the hot path
of every search), while ``push_checked`` and ``push_text("CJ")`` check first and raise
``IllegalAction`` with the reason. ``pop()`` takes the last action back. "Nobody" is ``None``:
``declarer`` before the bidding is won, ``to_move`` once the deal is over.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Final

from ..errors import IllegalAction
from . import cards as C
from .cards import CODES, INDEX, ORDERS, POINTS, CardOrder
from .commands import (
    BIDS,
    DISCARDS,
    HAND_DECLARES,
    HOLD,
    KONTRA,
    PASS,
    PICKUP,
    PICKUP_DECLARES,
    PLAY,
    RE,
    Bid,
    Command,
    Declare,
    Discard,
    Hold,
    Kontra,
    Pass,
    PickUpSkat,
    PlayCard,
    Re,
    Resign,
    ShowCards,
    parse_action,
)
from .ends import (  # why a deal ended
    DECLARER_RESIGNED,
    DEFENDERS_RESIGNED,
    NULL_TRICK,
    PASSED_IN,
    PLAYED_OUT,
    SCHWARZ_MISSED,
    EndReason,
)
from .games import BID_LADDERS, Declaration, GameKind, declaration_error, null_value
from .rules import Rules
from .scoring import DealResult, score


class Phase(StrEnum):
    """The phases of a deal. The values are what views carry on the wire (``PlayerView.phase``)."""

    BIDDING = "bidding"
    SKAT = "skat"
    """The declarer picks up the skat or declares a hand game."""
    DISCARD = "discard"
    DECLARE = "declare"
    DOUBLING = "doubling"
    """Kontra and Re."""
    PLAYING = "playing"
    ENDED = "ended"

    def __repr__(self) -> str:
        return f"Phase.{self.name}"


BIDDING: Final = Phase.BIDDING
SKAT: Final = Phase.SKAT
DISCARD: Final = Phase.DISCARD
DECLARE: Final = Phase.DECLARE
DOUBLING: Final = Phase.DOUBLING
PLAYING: Final = Phase.PLAYING
ENDED: Final = Phase.ENDED


FOREHAND, MIDDLEHAND, REARHAND = 0, 1, 2
POSITION_NAMES: Final = ("forehand", "middlehand", "rearhand")


class Trick:
    """A completed trick: who led, the three cards in play order, who won, its points."""

    __slots__ = ("leader", "cards", "winner", "points")

    def __init__(self, leader: int, cards: tuple[int, ...], winner: int, points: int) -> None:
        self.leader = leader
        self.cards = cards
        self.winner = winner
        self.points = points

    def __repr__(self) -> str:
        return f"Trick(leader={self.leader}, cards={C.fmt(self.cards)}, winner={self.winner})"


class Deal:
    """The state of one deal, in deal positions. Create with ``Deal(hands, skat, rules)``."""

    __slots__ = (
        "rules", "ladder", "initial_hands", "skat", "hands", "phase", "to_move",
        "bid", "bidder", "listener", "bid_stage", "awaiting_answer", "took_part",
        "declarer", "picked_up", "discard", "declaration", "order", "doubling_queue",
        "kontra", "re", "trick", "leader", "tricks", "points", "trick_counts",
        "resigned", "shown", "end_reason", "ramsch", "history",
    )  # fmt: skip

    def __init__(self, hands: tuple[int, int, int] | list[int], skat: int, rules: Rules | None = None) -> None:
        rules = rules or Rules()
        all_cards = hands[0] | hands[1] | hands[2] | skat
        if all_cards != C.ALL or any(h.bit_count() != 10 for h in hands) or skat.bit_count() != 2:
            raise ValueError("a deal is three hands of 10 cards and a skat of 2, all 32 cards once")
        self.rules = rules
        self.ladder: tuple[int, ...] = BID_LADDERS[rules.profile]
        self.initial_hands: tuple[int, int, int] = (hands[0], hands[1], hands[2])
        self.skat = skat
        self.hands: list[int] = list(hands)
        self.phase: Phase = BIDDING
        self.to_move: int | None = MIDDLEHAND
        """Who acts next; None once the deal is over."""
        self.bid = 0
        self.bidder = MIDDLEHAND
        self.listener: int = FOREHAND
        self.bid_stage = 1
        self.awaiting_answer = False
        self.took_part = [False, False, False]
        self.declarer: int | None = None
        """Who won the bidding; None before that, and in a passed-in deal or a ramsch."""
        self.picked_up = False
        self.discard = 0
        self.declaration: Declaration | None = None
        self.order: CardOrder = ORDERS["G"]
        self.doubling_queue: list[int] = []
        self.kontra = False
        self.re = False
        self.trick: list[int] = []
        self.leader = FOREHAND
        self.tricks: list[Trick] = []
        self.points = [0, 0, 0]
        self.trick_counts = [0, 0, 0]
        self.resigned: set[int] = set()
        self.shown = False
        self.end_reason: EndReason | None = None
        self.ramsch = False
        self.history: list[tuple[int, Command]] = []

    # --- asking ------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase == ENDED

    @property
    def defenders(self) -> tuple[int, ...]:
        return tuple(p for p in (0, 1, 2) if p != self.declarer)

    def legal_actions(self) -> list[Command]:
        """Every action the player to move may take (resigning and showing cards aside)."""
        phase = self.phase
        to_move = self.to_move
        if to_move is None:
            return []
        if phase == PLAYING:
            trick = self.trick
            hand = self.hands[to_move]
            if trick:
                order = self.order
                m = hand & order.class_masks[order.klass[trick[0]]] or hand
            else:
                m = hand
            out: list[Command] = []
            while m:
                low = m & -m
                out.append(PLAY[low.bit_length() - 1])
                m ^= low
            return out
        if phase == BIDDING:
            if self.awaiting_answer:
                return [HOLD, PASS]
            bids = _BID_ACTIONS[self.rules.profile]
            return [PASS, *bids[_first_above(self.ladder, self.bid) :]]
        if phase == SKAT:
            return [PICKUP, *_declares_for(self.bid, True)]
        if phase == DISCARD:
            held = C.cards_of(self.hands[to_move])
            return [DISCARDS[(a, b)] for i, a in enumerate(held) for b in held[i + 1 :]]
        if phase == DECLARE:
            return list(_declares_for(self.bid, False))
        if phase == DOUBLING:
            return [RE if self.kontra else KONTRA, PASS]
        return []

    def legal_cards(self) -> int:
        """The playable cards of the player to move, as a set (empty outside trick play)."""
        if self.phase != PLAYING or self.to_move is None:
            return 0
        hand = self.hands[self.to_move]
        if not self.trick:
            return hand
        order = self.order
        return hand & order.class_masks[order.klass[self.trick[0]]] or hand

    def check(self, pos: int, action: Command) -> str | None:
        """Why ``pos`` may not take ``action`` now, in words a player can read; None if it may."""
        if self.phase == ENDED:
            return "the deal is over"
        if isinstance(action, Resign):
            return self._resign_error(pos)
        if isinstance(action, ShowCards):
            if self.phase != PLAYING or self.ramsch:
                return "cards can only be shown by the declarer during trick play"
            if pos != self.declarer:
                return "only the declarer can show its cards"
            return "cards are already shown" if self.shown else None
        if self.to_move is None:
            return "the deal is over"
        if pos != self.to_move:
            return f"not your turn: waiting for {POSITION_NAMES[self.to_move]} to {self.expected()}"
        phase = self.phase
        if phase == PLAYING:
            if not isinstance(action, PlayCard):
                return f"expected a card to play, got {_name(action)}"
            c = INDEX[action.card]
            if not self.hands[pos] >> c & 1:
                return f"{action.card} is not in your hand"
            if not self.legal_cards() >> c & 1:
                return f"{action.card} does not follow suit: you must play {self._follow_name()}"
            return None
        if phase == BIDDING:
            return self._bidding_error(action)
        if phase == SKAT:
            if isinstance(action, PickUpSkat):
                return None
            if isinstance(action, Declare):
                return self._declare_error(action)
            return f"expected pickup or a hand declaration, got {_name(action)}"
        if phase == DISCARD:
            if not isinstance(action, Discard):
                return f"expected two cards to discard, got {_name(action)}"
            a, b = INDEX[action.cards[0]], INDEX[action.cards[1]]
            if a == b:
                return "discard two different cards"
            hand = self.hands[pos]
            for c in (a, b):
                if not hand >> c & 1:
                    return f"{CODES[c]} is not among your 12 cards"
            return None
        if phase == DECLARE:
            if not isinstance(action, Declare):
                return f"expected a declaration, got {_name(action)}"
            return self._declare_error(action)
        if phase == DOUBLING:
            wanted = Re if self.kontra else Kontra
            if isinstance(action, (Pass, wanted)):
                return None
            return f"expected {'re' if self.kontra else 'kontra'} or pass, got {_name(action)}"
        return "nothing to do"

    def expected(self) -> str:
        """What the player to move is expected to do, in words."""
        return {
            BIDDING: "answer (hold or pass)" if self.awaiting_answer else "bid or pass",
            SKAT: "pick up the skat or declare a hand game",
            DISCARD: "discard two cards",
            DECLARE: "declare a game",
            DOUBLING: "say re or pass" if self.kontra else "say kontra or pass",
            PLAYING: "play a card",
        }.get(self.phase, "nothing")

    def is_legal(self, action: Command, pos: int | None = None) -> bool:
        """May ``pos`` (default: the player to move) take ``action`` now?"""
        if pos is None:
            pos = self.to_move
        return pos is not None and self.check(pos, action) is None

    def parse(self, text: str, pos: int | None = None) -> Command:
        """The action ``text`` names ("CJ", "bid 18", "declare grand hand", ...; see
        ``commands.parse_action``), checked for ``pos`` (default: the player to move).
        Raises ``IllegalAction`` if it cannot be taken now, ``ValueError`` if it names nothing."""
        action = parse_action(text)
        if isinstance(action, Declare) and "hand" in text.lower().split() and self.picked_up:
            raise IllegalAction(action, "a hand game is declared before picking up the skat")
        self._raise_if_illegal(action, pos)
        return action

    # --- acting ------------------------------------------------------------------------

    def push_checked(self, action: Command, pos: int | None = None) -> None:
        """``push`` after checking: raises ``IllegalAction`` (with the reason) instead of
        corrupting the state when the action is not legal."""
        self._raise_if_illegal(action, pos)
        self.push(action, pos)

    def push_text(self, text: str, pos: int | None = None) -> Command:
        """Parse ``text`` as an action, check it and push it; returns the action."""
        action = self.parse(text, pos)
        self.push(action, pos)
        return action

    def _raise_if_illegal(self, action: Command, pos: int | None) -> None:
        who = self.to_move if pos is None else pos
        reason = "the deal is over" if who is None else self.check(who, action)
        if reason is not None:
            raise IllegalAction(action, reason)

    def pop(self) -> tuple[int, Command]:
        """Take back the last action; returns it with the position that took it.

        The deal is replayed from its cards without the last action: a deal has at most a few
        dozen actions, and ``push`` stays free of undo bookkeeping (it is the hot path)."""
        if not self.history:
            raise IndexError("pop from a deal with no actions")
        last = self.history[-1]
        replayed = Deal(self.initial_hands, self.skat, self.rules)
        for pos, action in self.history[:-1]:
            replayed.push(action, pos)
        for name in Deal.__slots__:
            setattr(self, name, getattr(replayed, name))
        return last

    def push(self, action: Command, pos: int | None = None) -> None:
        """Apply a legal action of ``pos`` (default: the player to move)."""
        if pos is None:
            pos = self.to_move
            assert pos is not None, "the deal is over"
        self.history.append((pos, action))
        kind = type(action)
        if kind is PlayCard:
            self._play(pos, INDEX[action.card])  # type: ignore[attr-defined]
        else:
            _HANDLERS[kind](self, pos, action)

    def _play(self, pos: int, c: int) -> None:
        self.hands[pos] ^= 1 << c
        trick = self.trick
        trick.append(c)
        if len(trick) < 3:
            self.to_move = (pos + 1) % 3
            return
        leader = self.leader
        winner = (leader + self.order.trick_winner(trick)) % 3
        pts = POINTS[trick[0]] + POINTS[trick[1]] + POINTS[trick[2]]
        self.tricks.append(Trick(leader, tuple(trick), winner, pts))
        self.points[winner] += pts
        self.trick_counts[winner] += 1
        self.trick = []
        self.leader = self.to_move = winner
        decl = self.declaration
        if decl is not None and (winner == self.declarer) == (decl.game == "N"):
            # Null lost at the declarer's first trick; schwarz announced lost at the defenders'.
            if decl.game == "N":
                self._end(NULL_TRICK)
                return
            if decl.schwarz:
                self._end(SCHWARZ_MISSED)
                return
        if len(self.tricks) == 10:
            self._end(PLAYED_OUT)

    def _bid(self, pos: int, action: Bid) -> None:
        self.bid = action.value
        self.took_part[pos] = True
        if self.bid_stage == 3:
            self._win_bidding(FOREHAND)
            return
        self.awaiting_answer = True
        self.to_move = self.listener

    def _hold(self, pos: int, action: Hold) -> None:
        self.took_part[pos] = True
        self.awaiting_answer = False
        self.to_move = self.bidder

    def _pass(self, pos: int, action: Pass) -> None:
        if self.phase == DOUBLING:
            self._next_doubling()
            return
        if self.bid_stage == 3:
            self._all_passed()
            return
        survivor = self.bidder if pos == self.listener else self.listener
        self.awaiting_answer = False
        if self.bid_stage == 1:
            self.bid_stage = 2
            self.bidder = REARHAND
            self.listener = survivor
            self.to_move = REARHAND
        elif self.bid > 0:
            self._win_bidding(survivor)
        else:
            # Middlehand and rearhand passed without a bid: forehand may open or pass.
            self.bid_stage = 3
            self.bidder = FOREHAND
            self.to_move = FOREHAND

    def _win_bidding(self, pos: int) -> None:
        self.declarer = pos
        self.phase = SKAT
        self.to_move = pos

    def _all_passed(self) -> None:
        if self.rules.ramsch:
            self.ramsch = True
            self.order = ORDERS["R"]
            self._start_play()
        else:
            self._end(PASSED_IN)

    def _pickup(self, pos: int, action: PickUpSkat) -> None:
        self.picked_up = True
        self.hands[pos] |= self.skat
        self.phase = DISCARD

    def _discard(self, pos: int, action: Discard) -> None:
        m = (1 << INDEX[action.cards[0]]) | (1 << INDEX[action.cards[1]])
        self.hands[pos] &= ~m
        self.discard = m
        self.phase = DECLARE

    def _declare(self, pos: int, action: Declare) -> None:
        decl = Declaration(
            game=action.game,
            hand=not self.picked_up,
            schneider=action.schneider,
            schwarz=action.schwarz,
            ouvert=action.ouvert,
        )
        self.declaration = decl
        self.order = ORDERS[decl.game]
        if self.rules.kontra:
            self.doubling_queue = [p for p in (0, 1, 2) if p != pos and self.took_part[p]]
            if self.doubling_queue:
                self.phase = DOUBLING
                self.to_move = self.doubling_queue.pop(0)
                return
        self._start_play()

    def _kontra(self, pos: int, action: Kontra) -> None:
        self.kontra = True
        self.doubling_queue = []  # one Kontra speaks for both defenders; now the declarer
        self.to_move = self.declarer

    def _re(self, pos: int, action: Re) -> None:
        self.re = True
        self._start_play()

    def _next_doubling(self) -> None:
        if self.doubling_queue:
            self.to_move = self.doubling_queue.pop(0)
        else:
            self._start_play()

    def _start_play(self) -> None:
        self.phase = PLAYING
        self.leader = self.to_move = FOREHAND

    def _show(self, pos: int, action: ShowCards) -> None:
        self.shown = True

    def _resign(self, pos: int, action: Resign) -> None:
        self.resigned.add(pos)
        if pos == self.declarer:
            self._concede_rest(to_declarer=False)
            self._end(DECLARER_RESIGNED)
        elif len(self.resigned - {self.declarer}) == 2:
            self._concede_rest(to_declarer=True)
            self._end(DEFENDERS_RESIGNED)

    def _concede_rest(self, to_declarer: bool) -> None:
        """Give every card not yet in a trick to one side, as tricks (not in null)."""
        if self.declarer is None or (self.declaration is not None and self.declaration.game == "N"):
            return
        rest = self.hands[0] | self.hands[1] | self.hands[2] | C.mask(self.trick)
        receiver = self.declarer if to_declarer else self.defenders[0]
        self.points[receiver] += C.points(rest)
        self.trick_counts[receiver] += rest.bit_count() // 3

    def _end(self, reason: EndReason) -> None:
        self.phase = ENDED
        self.end_reason = reason
        self.to_move = None

    # --- checks ------------------------------------------------------------------------

    def _bidding_error(self, action: Command) -> str | None:
        if self.awaiting_answer:
            if isinstance(action, (Hold, Pass)):
                return None
            return f"answer the bid of {self.bid} with hold or pass, got {_name(action)}"
        if isinstance(action, Pass):
            return None
        if not isinstance(action, Bid):
            return f"expected a bid or pass, got {_name(action)}"
        if action.value <= self.bid:
            return f"bid too low: {action.value} is not above {self.bid}"
        if action.value not in BIDS or action.value not in self.ladder:
            nxt = self.ladder[_first_above(self.ladder, action.value)] if action.value < self.ladder[-1] else None
            hint = f" (next legal bid: {nxt})" if nxt else ""
            return f"{action.value} is not a legal bid{hint}"
        return None

    def _declare_error(self, action: Declare) -> str | None:
        decl = Declaration(
            game=action.game,
            hand=not self.picked_up,
            schneider=action.schneider,
            schwarz=action.schwarz,
            ouvert=action.ouvert,
        )
        err = declaration_error(decl)
        if err:
            return err
        if decl.game == "N" and null_value(decl) < self.bid:
            return f"{decl} is worth {null_value(decl)}, less than the bid of {self.bid}"
        return None

    def _resign_error(self, pos: int) -> str | None:
        if self.phase != PLAYING:
            return "resigning is only possible during trick play"
        if self.ramsch:
            return "nobody can resign a ramsch"
        if pos in self.resigned:
            return "you have already resigned"
        return None

    def _follow_name(self) -> str:
        led = self.trick[0]
        k = self.order.klass[led]
        return "trump" if k == C.TRUMP else C.SUITS[k] + " (" + ("clubs", "spades", "hearts", "diamonds")[k] + ")"

    # --- derived -----------------------------------------------------------------------

    def result(self) -> DealResult:
        """The scored result of an ended deal, seats being positions (0 forehand ...)."""

        if self.phase != ENDED:
            raise ValueError("the deal is not over")
        return score(self, (0, 1, 2), 3, bock=False)

    def twelve_cards(self) -> int:
        """The declarer's hand plus the skat: what matadors are counted over."""
        return self.initial_hands[self._declarer()] | self.skat

    def declarer_points(self) -> int:
        """Card points of the declarer's tricks plus the skat (discard or untouched skat)."""
        skat = self.discard if self.picked_up else self.skat
        return self.points[self._declarer()] + C.points(skat)

    def _declarer(self) -> int:
        if self.declarer is None:
            raise ValueError("nobody has won the bidding")
        return self.declarer

    # --- printing ----------------------------------------------------------------------

    def __repr__(self) -> str:
        parts = [self.phase.value]
        if self.to_move is not None:
            parts.append(f"{POSITION_NAMES[self.to_move]} to {self.expected()}")
        if self.declarer is not None:
            game = f" {self.declaration}" if self.declaration is not None else ""
            parts.append(f"{POSITION_NAMES[self.declarer]} declares{game} at {self.bid}")
        elif self.bid:
            parts.append(f"bid {self.bid}")
        if self.tricks or self.trick:
            parts.append(f"{len(self.tricks)} tricks, trick [{C.fmt(self.trick)}]")
        if self.end_reason is not None:
            parts.append(f"ended: {self.end_reason.value}")
        return f"<Deal {'; '.join(parts)}>"

    def __str__(self) -> str:
        """The deal as a person reads it: hands, skat, trick, points (everything, unhidden)."""
        kind = self.declaration.game if self.declaration is not None else ("R" if self.ramsch else "G")
        lines = []
        for pos in (FOREHAND, MIDDLEHAND, REARHAND):
            tags = []
            if pos == self.declarer:
                tags.append("declarer")
            if pos == self.to_move:
                tags.append("to move")
            label = f"{POSITION_NAMES[pos]}{' (' + ', '.join(tags) + ')' if tags else ''}"
            hand = " ".join(C.CODES[c] for c in C.sorted_for(self.hands[pos], kind))
            lines.append(f"{label:<26} {hand:<30} {self.points[pos]:>3} points")
        skat = self.discard if self.picked_up else self.skat
        lines.append(f"{'skat' if not self.picked_up else 'discarded':<26} {C.fmt(skat)}")
        if self.trick:
            lines.append(f"{'trick':<26} {C.fmt(self.trick)}")
        lines.append(repr(self))
        return "\n".join(lines)

    def copy(self) -> Deal:
        new = Deal.__new__(Deal)
        for name in Deal.__slots__:
            setattr(new, name, getattr(self, name))
        new.hands = list(self.hands)
        new.took_part = list(self.took_part)
        new.doubling_queue = list(self.doubling_queue)
        new.trick = list(self.trick)
        new.tricks = list(self.tricks)
        new.points = list(self.points)
        new.trick_counts = list(self.trick_counts)
        new.resigned = set(self.resigned)
        new.history = list(self.history)
        return new


_BID_ACTIONS: Final[dict[str, tuple[Bid, ...]]] = {
    profile: tuple(BIDS[v] for v in ladder) for profile, ladder in BID_LADDERS.items()
}
_DECLARES_CACHE: dict[tuple[int, bool], tuple[Declare, ...]] = {}


def _declares_for(bid: int, hand: bool) -> tuple[Declare, ...]:
    """The declarations allowed after bidding ``bid`` (only null can be too cheap), cached."""
    key = (bid, hand)
    found = _DECLARES_CACHE.get(key)
    if found is None:
        found = tuple(
            d
            for d in (HAND_DECLARES if hand else PICKUP_DECLARES)
            if d.game != "N" or null_value(Declaration(game=GameKind.NULL, hand=hand, ouvert=d.ouvert)) >= bid
        )
        _DECLARES_CACHE[key] = found
    return found


def _first_above(ladder: tuple[int, ...], value: int) -> int:
    """Index of the first bid in ``ladder`` above ``value``."""
    lo, hi = 0, len(ladder)
    while lo < hi:
        mid = (lo + hi) // 2
        if ladder[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _name(action: object) -> str:
    return type(action).__struct_config__.tag if hasattr(type(action), "__struct_config__") else type(action).__name__  # type: ignore[attr-defined]


_HANDLERS: Final[dict[type, Callable[[Deal, int, Any], None]]] = {
    Bid: Deal._bid,
    Hold: Deal._hold,
    Pass: Deal._pass,
    PickUpSkat: Deal._pickup,
    Discard: Deal._discard,
    Declare: Deal._declare,
    Kontra: Deal._kontra,
    Re: Deal._re,
    ShowCards: Deal._show,
    Resign: Deal._resign,
}
