"""A rule-based Skat bot: hand-strength bidding, skat handling, and card play from what it has seen.

Hand-strength estimate (bidding, hand or pickup, discarding, declaring)
-----------------------------------------------------------------------
Every possible game is scored by a small logistic model: a handful of countable features of the
cards, weighted and summed into a logit, gives ``p``, the chance that this bot wins that game
when it declares it. The weights are not guessed: they were fitted (logistic regression) on
tens of thousands of deals in which one seat was made to declare a given game and the rest was
played out by this bot in all three seats, so ``p`` means "how often this very card play wins
from such a hand". The features, counted over the cards the bot holds (the skat is unknown
while bidding):

* suit game (trump C/S/H/D): trumps (jacks + trump suit), jacks, the two top jacks (CJ, SJ),
  trump ace and ten, side aces, side tens guarded by their ace, side tens with at least one
  other card (a guard against the ace), bare side tens, side voids, side losers (per side suit
  up to three cards that are not A, A-T, A-T-K from the top), forehand (it leads first);
* grand: jacks, CJ, SJ, aces, tens guarded by their ace, other guarded tens, bare tens, voids,
  losers, the longest side suit, forehand;
* null: dangerous cards (a card is safe when the opponents hold no more cards below it in its
  suit than we do: ``7``, ``7 9``, ``7 8 J`` are safe, a single ``8`` or ``A`` is not), how far
  those cards are uncovered, unsafe suits, voids, forehand.

There are three models per game family: "pre" for bidding (10 cards, skat unknown, pickup
expected), "post" once the skat is known (the 10 cards kept plus the points discarded) and
"hand" for a hand game. Fitting them on the bot's own play mattered: a declarer that led its
jacks when the defenders had no trumps left showed up as a negative weight on "forehand" in
grand, and went away with the play fixed.

The value a hand may bid is that of the best game whose expected Seeger-Fabian score clears a
margin: a win scores ``value + 50``, a loss ``-(2 value + 50)``, so without risk a game is
worth it when ``p >= (2v + 50) / (3v + 100) + MARGIN``. ``value`` is ``base x (matadors + 1
[+ 1 hand])`` (``protocol.scoring.matadors``) counted over the 10 known cards. "With k" can
only grow with the skat; "without k" (k >= 2) shrinks if the skat holds one of the k missing
top trumps, which happens with chance ``1 - C(22-k, 2) / C(22, 2)`` (18 % for k = 2) and
leaves the game overbid: that chance enters the expectation as a sure loss, and when the full
value is too risky the bot still bids the value of "without 1", which the skat cannot cut.
Null is worth 23 / 35 (hand) / 59 (ouvert hand, only with no dangerous card at all).
The bot bids or holds one step at a time up to that value and passes above it; forehand alone
after two passes opens with 18 if its limit allows.

With the skat in hand the bot tries, for each promising game, the discards that its own model
scores best (short side suits shed, tens pushed into the skat, trumps and aces kept; in null
the most uncovered high cards), and declares the game with the best expected score among those
whose value reaches the bid (an overbid game is lost anyway, so one is declared only when no
game reaches it); a hand game is played when its expected score beats the pickup's by
``HAND_EDGE``. Kontra needs trump control or three aces against the declared game; Re needs a
game the estimate calls 93 % safe.

Card play
---------
Rules from club play, using what the public history shows: which cards are gone, and which
player failed to follow which suit (a known void, so a possible ruff). The declarer pulls
trumps while holding the master trump or at least as many trumps as the defenders, cashes
masters (aces, tens whose ace is gone) when nobody can ruff them, never leads trumps the
defenders cannot follow (that only lets them shed small cards) and otherwise gives up a trick
with its cheapest card of a short side suit while its trumps can still win the lead back. It
takes tricks with a sure winner (side card or trump ace/ten first), and throws its cheapest
card when it cannot. A defender cashes its aces early, leads long suits when the declarer sits
right behind it and short suits when the declarer sits last ("kurzer Weg, lange Farbe; langer
Weg, kurze Farbe"), leads into a partner's void, schmiert (gives aces and tens) when the
partner's card wins the trick for sure, takes the declarer's tricks with point cards when it can,
and plays its cheapest card otherwise. In null the declarer ducks under the trick with its
highest card that stays under it and sheds its most uncovered cards; the defenders lead their
lowest cards and duck under the declarer to force it to take a trick.

Every decision is picked from ``obs.view.legal``; anything unexpected falls back to the first
legal action, so the bot never plays an illegal move or crashes a table.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Iterable, Sequence
from typing import Final

from protocol.events import DealDealt
from protocol.skat import cards as C
from protocol.skat.cards import INDEX, JACKS, ORDERS, POINTS, TRUMP, CardOrder
from protocol.skat.commands import (
    BIDS,
    DISCARDS,
    HOLD,
    KONTRA,
    PASS,
    PICKUP,
    PLAY,
    RE,
    Bid,
    Command,
    Declare,
    Discard,
    Hold,
    Kontra,
    PickUpSkat,
    PlayCard,
    Re,
)
from protocol.skat.games import NULL_VALUES, SUIT_BASE
from protocol.skat.knowledge import Knowledge
from protocol.skat.scoring import matadors
from protocol.skat.views import PlayerView
from protocol.wire import Update
from services import logs

# --- cards as bits ---------------------------------------------------------------------------

CJ, SJ = INDEX["CJ"], INDEX["SJ"]
PLAIN: Final = tuple(C.SUIT_MASKS[s] & ~JACKS for s in range(4))
"""Each suit without its jack: what a suit is in suit games and grand."""
ACE_OF: Final = tuple(s * 8 + C.ACE for s in range(4))
TEN_OF: Final = tuple(s * 8 + C.TEN for s in range(4))
KING_OF: Final = tuple(s * 8 + C.KING for s in range(4))
NULL_RANK: Final = tuple(c & 7 for c in range(32))
"""Null order within a suit is the index order 7 8 9 T J Q K A."""
SUIT_GAMES: Final = "CSHD"


def _bits(m: int) -> list[int]:
    return C.cards_of(m)


def _build_stronger() -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    for kind, order in ORDERS.items():
        rows = []
        for c in range(32):
            klass, strength = order.klass[c], order.strength[c]
            rows.append(C.mask(d for d in range(32) if order.klass[d] == klass and order.strength[d] > strength))
        out[kind] = tuple(rows)
    return out


_STRONGER: Final = _build_stronger()


def _beats(order: CardOrder, c: int, best: int) -> bool:
    """Does ``c`` beat the trick's current best card ``best``?"""
    kc, kb = order.klass[c], order.klass[best]
    if kc == kb:
        return order.strength[c] > order.strength[best]
    return kc == TRUMP


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, x))))


# --- hand features -----------------------------------------------------------------------------


def _side_suit_features(hand: int, suits: Sequence[int]) -> tuple[int, int, int, int, int, int, int]:
    """(aces, tens with ace, guarded tens, bare tens, voids, losers, longest) over side suits."""
    aces = tens_a = tens_g = tens_b = voids = losers = longest = 0
    for s in suits:
        m = hand & PLAIN[s]
        n = m.bit_count()
        if n == 0:
            voids += 1
            continue
        longest = max(longest, n)
        a = m >> ACE_OF[s] & 1
        t = m >> TEN_OF[s] & 1
        k = m >> KING_OF[s] & 1
        aces += a
        if t:
            if a:
                tens_a += 1
            elif n >= 2:
                tens_g += 1
            else:
                tens_b += 1
        tops = a + (a & t) + (a & t & k)
        losers += max(0, min(n, 3) - tops)
    return aces, tens_a, tens_g, tens_b, voids, losers, longest


def suit_features(hand: int, trump: int, forehand: bool) -> tuple[float, ...]:
    """Features of a suit game with trump suit ``trump`` (0..3): see the module docstring."""
    trumps = hand & (JACKS | PLAIN[trump])
    side = [s for s in range(4) if s != trump]
    aces, tens_a, tens_g, tens_b, voids, losers, _ = _side_suit_features(hand, side)
    return (
        1.0,
        trumps.bit_count(),
        (hand & JACKS).bit_count(),
        hand >> CJ & 1,
        hand >> SJ & 1,
        (hand >> ACE_OF[trump] & 1) + (hand >> TEN_OF[trump] & 1),
        aces,
        tens_a,
        tens_g,
        tens_b,
        voids,
        losers,
        float(forehand),
    )


def grand_features(hand: int, forehand: bool) -> tuple[float, ...]:
    """Features of a grand: see the module docstring."""
    aces, tens_a, tens_g, tens_b, voids, losers, longest = _side_suit_features(hand, range(4))
    return (
        1.0,
        (hand & JACKS).bit_count(),
        hand >> CJ & 1,
        hand >> SJ & 1,
        aces,
        tens_a,
        tens_g,
        tens_b,
        voids,
        losers,
        longest,
        float(forehand),
    )


def null_danger(hand: int, others: int) -> tuple[int, int, int, int]:
    """(dangerous cards, total excess, unsafe suits, voids) of ``hand`` in null.

    A card is dangerous when ``others`` (cards the opponents may hold) has more cards below it
    in its suit than ``hand`` has: the opponents can then lead under it until it must win.
    """
    bad = excess = bad_suits = voids = 0
    for s in range(4):
        mine = hand & C.SUIT_MASKS[s]
        if not mine:
            voids += 1
            continue
        theirs = others & C.SUIT_MASKS[s]
        below_mine = 0
        suit_bad = False
        for c in _bits(mine):
            below = theirs & ((1 << c) - 1)
            gap = below.bit_count() - below_mine
            if gap > 0:
                bad += 1
                excess += gap
                suit_bad = True
            below_mine += 1
        bad_suits += suit_bad
    return bad, excess, bad_suits, voids


def null_features(hand: int, others: int, forehand: bool) -> tuple[float, ...]:
    bad, excess, bad_suits, voids = null_danger(hand, others)
    return (1.0, bad, excess, bad_suits, voids, float(forehand))


# Logistic weights, in feature order (the first is the intercept), fitted offline by
# ``python -m skatbus.heuristic_fit --deals 90000`` (the comments are its sample counts).
# "pre" sees 10 cards before the skat (the pickup to come); "post" the 10 cards kept after
# discarding, plus the discarded points as a last feature; "hand" the 10 cards of a hand game
# (the skat unseen). A weight of exactly 0 belongs to a feature that never varied there (a
# bare ten is always discarded).
MODELS: Final[dict[str, tuple[float, ...]]] = {
    # suit/pre: 39904 samples, 47.6% won
    "suit/pre": (-6.36, 0.978, 0.269, 0.629, 0.346, 0.668, 1.02, 0.462, 0.622, 0.57, 0.147, -0.177, 0.0494),
    # suit/post: 39904 samples, 47.6% won
    "suit/post": (-14.4, 1.48, 0.405, 0.951, 0.452, 0.981, 2.12, 0.802, 1.18, 0, 1.36, -0.033, 0.0798, 0.0666),
    # suit/hand: 17238 samples, 20.0% won
    "suit/hand": (-10.2, 1.19, 0.287, 0.85, 0.43, 0.752, 1.61, 0.468, 0.929, -0.233, 1.22, -0.192, -0.148),
    # grand/pre: 16507 samples, 46.2% won
    "grand/pre": (-8.89, 1.75, 0.562, 0.0733, 1.39, 1.06, 0.84, 0.72, 0.0789, 0.206, 0.286, -0.00992),
    # grand/post: 16507 samples, 46.2% won
    "grand/post": (-15.5, 2.29, 0.812, 0.137, 2.18, 1.45, 1.35, 0, 0.892, 0.36, 0.433, 0.00347, 0.0911),
    # grand/hand: 7209 samples, 24.9% won
    "grand/hand": (-14.6, 2.09, 0.764, 0.201, 2.05, 1.34, 1.22, 0.088, 0.788, 0.33, 0.698, 0.0243),
    # null/pre: 2049 samples, 72.7% won
    "null/pre": (3.9, -0.747, -0.152, 0.248, -0.287, -0.619),
    # null/post: 2049 samples, 72.7% won
    "null/post": (3.32, -0.065, -0.585, -0.208, 0.0441, -0.687, -0.00385),
    # null/hand: 851 samples, 33.5% won
    "null/hand": (1.91, 0.134, -0.531, -0.0155, 0.836, -0.105),
}


def family(game: str) -> str:
    return "suit" if game in SUIT_GAMES else ("grand" if game == "G" else "null")


def features(game: str, hand: int, forehand: bool, others: int | None = None) -> tuple[float, ...]:
    """The model features of ``hand`` for ``game``; ``others`` (null only) are the cards the
    opponents may hold, by default every card not in ``hand``."""
    if game == "N":
        return null_features(hand, C.ALL & ~hand if others is None else others, forehand)
    if game == "G":
        return grand_features(hand, forehand)
    return suit_features(hand, SUIT_GAMES.index(game), forehand)


def win_chance(
    game: str, hand: int, forehand: bool, stage: str = "pre", *, others: int | None = None, skat_points: float = 0.0
) -> float:
    """Estimated chance that this bot wins ``game`` (C S H D G N) declared with ``hand``.

    ``stage``: "pre" before the skat (a pickup to come), "post" after discarding
    (``skat_points`` discarded), "hand" for a hand game.
    """
    f = features(game, hand, forehand, others)
    if stage == "post":
        f = (*f, skat_points)
    w = MODELS[f"{family(game)}/{stage}"]
    return _sigmoid(sum(wi * fi for wi, fi in zip(w, f)))


# --- values and expected scores ----------------------------------------------------------------

MARGIN: Final = 0.04
"""Extra win chance required over the break-even point before bidding or declaring a game."""
HAND_EDGE: Final = 10.0
"""Expected Seeger-Fabian points a hand game must gain over the pickup to be chosen."""


def sf_expectation(p: float, value: int) -> float:
    """Expected Seeger-Fabian score of declaring a game of ``value`` won with chance ``p``."""
    return p * (value + 50) - (1 - p) * (2 * value + 50)


def worth_playing(p: float, value: int) -> bool:
    return p >= (2 * value + 50) / (3 * value + 100) + MARGIN


def estimated_value(game: str, cards: int, hand_game: bool) -> int:
    """Game value with the matadors counted over ``cards`` (final once they are the 12)."""
    if game == "N":
        return NULL_VALUES[(hand_game, False)]
    return SUIT_BASE[game] * (abs(matadors(cards, game)) + 1 + hand_game)


def skat_spoils(hand: int, game: str) -> float:
    """Chance that the unseen skat holds one of the top trumps a "without k" hand lacks, which
    cuts the multiplier (without 1 and with k are never cut): 1 - C(22-k, 2) / C(22, 2)."""
    m = matadors(hand, game)
    if m >= -1:
        return 0.0
    return 1.0 - math.comb(22 + m, 2) / math.comb(22, 2)


def acceptable(p: float, value: int, spoil: float = 0.0) -> bool:
    """Is declaring at ``value`` worth it, when with chance ``spoil`` the game turns out
    overbid (lost whatever happens)? The expected score must clear ``MARGIN`` as a win chance."""
    expectation = (1 - spoil) * sf_expectation(p, value) - spoil * (2 * value + 50)
    return expectation >= MARGIN * (3 * value + 100)


@functools.lru_cache(maxsize=4096)
def bid_limit(hand: int, forehand: bool) -> int:
    """The highest bid this hand is willing to reach (0: pass); cached, as every bidding
    step of a deal asks it again for the same hand."""
    limit = 0
    for game in "CSHDG":
        spoil = skat_spoils(hand, game)
        for stage, hand_game in (("pre", False), ("hand", True)):
            p = win_chance(game, hand, forehand, stage)
            v = estimated_value(game, hand, hand_game)
            if acceptable(p, v, spoil):
                limit = max(limit, v)
            elif spoil:
                # Without k: the multiplier never drops below that of without 1.
                safe_v = SUIT_BASE[game] * (2 + hand_game)
                if acceptable(p, safe_v):
                    limit = max(limit, safe_v)
    others = C.ALL & ~hand
    if worth_playing(win_chance("N", hand, forehand, others=others), 23):
        limit = max(limit, 23)
    p_null_hand = win_chance("N", hand, forehand, "hand", others=others)
    if worth_playing(p_null_hand, 35):
        limit = max(limit, 35)
    if _null_ouvert_safe(hand, others, forehand) and worth_playing(p_null_hand, 59):
        limit = max(limit, 59)
    return limit


def _null_ouvert_safe(hand: int, others: int, forehand: bool) -> bool:
    """No dangerous card, and (as forehand, who must lead) a 7 to lead into a suit the
    opponents hold at least three cards of."""
    if null_danger(hand, others)[0]:
        return False
    if not forehand:
        return True
    return any(hand >> (s * 8) & 1 and (others & C.SUIT_MASKS[s]).bit_count() >= 3 for s in range(4))


# --- with the skat: discarding and declaring -------------------------------------------------------


class Plan:
    """A game to declare and the two cards to discard for it, with the expected score."""

    __slots__ = ("game", "discard", "expectation", "ouvert")

    def __init__(self, game: str, discard: tuple[int, int], expectation: float, ouvert: bool = False) -> None:
        self.game = game
        self.discard = discard
        self.expectation = expectation
        self.ouvert = ouvert


def _discard_candidates(twelve: int, game: str) -> list[int]:
    """Cards worth trying to discard for ``game``: never trumps; aces only in null."""
    if game == "N":
        # The most uncovered cards first, then the highest.
        others = C.ALL & ~twelve
        ranked = sorted(_bits(twelve), key=lambda c: (-_null_gap(twelve, others, c), -NULL_RANK[c]))
        return ranked[:5]
    order = ORDERS[game]
    side = twelve & ~order.trumps
    cands = [c for c in _bits(side) if c & 7 != C.ACE]
    if len(cands) < 2:
        cands = _bits(side) or _bits(twelve)
    if len(cands) < 2:
        cands = _bits(twelve)
    # Keep the list short: tens and the cards of the shortest side suits first.
    lengths = {s: (twelve & PLAIN[s]).bit_count() for s in range(4)}
    cands.sort(key=lambda c: (-(POINTS[c] >= 10), lengths[c >> 3], -POINTS[c]))
    return cands[:6]


def _null_gap(hand: int, others: int, c: int) -> int:
    s = c >> 3
    below_theirs = (others & C.SUIT_MASKS[s] & ((1 << c) - 1)).bit_count()
    below_mine = (hand & C.SUIT_MASKS[s] & ((1 << c) - 1)).bit_count()
    return below_theirs - below_mine


def plan_game(twelve: int, bid: int, forehand: bool, games: str = "CSHDGN") -> Plan:
    """The best (game, discard) for the 12 cards after the pickup.

    Games whose value reaches the bid are preferred over any that does not (an overbid game is
    lost whatever happens); among them the highest expected Seeger-Fabian score wins.
    """
    candidates = (
        (game, a, b, kept) for game in _promising(twelve, games, bid) for a, b, kept in _discards(twelve, game)
    )
    return _best_plan(candidates, twelve, bid, forehand, judge_null_ouvert=True)


def _best_plan(
    candidates: Iterable[tuple[str, int, int, int]], twelve: int, bid: int, forehand: bool, judge_null_ouvert: bool
) -> Plan:
    """The best of (game, discard a, discard b, kept 10 cards): a game that reaches the bid
    first, then the highest expected Seeger-Fabian score. ``judge_null_ouvert`` weighs whether
    open cards are safe in null; without it null goes ouvert only when the bid demands it."""
    best: Plan | None = None
    best_key: tuple[bool, float] | None = None
    for game, a, b, kept in candidates:
        pts = POINTS[a] + POINTS[b]
        if game == "N":
            others = C.ALL & ~twelve
            p = win_chance("N", kept, forehand, "post", others=others, skat_points=pts)
            ouvert = bid > 23
            if judge_null_ouvert:
                safe = _null_ouvert_safe(kept, others, forehand)
                ouvert = ouvert or (safe and p > 0.9)
                if ouvert and not safe:
                    p *= 0.5  # open cards let the defenders find every weakness
            value = NULL_VALUES[(False, ouvert)]
            if value < bid:
                continue  # a null worth less than the bid cannot be declared at all
        else:
            p = win_chance(game, kept, forehand, "post", skat_points=pts)
            value = estimated_value(game, twelve, False)
            ouvert = False
        key = (value >= bid, sf_expectation(p, max(value, bid)))
        if best_key is None or key > best_key:
            best_key, best = key, Plan(game, (a, b), key[1], ouvert)
    if best is None:  # only nulls below the bid were offered: a suit or grand is legal (if lost)
        suits = ((g, a, b, kept) for g in "CSHDG" for a, b, kept in _discards(twelve, g))
        return _best_plan(suits, twelve, bid, forehand, judge_null_ouvert=False)
    return best


def _promising(twelve: int, games: str, bid: int) -> str:
    """The games worth trying discards for: the best suit (and the next if it is nearly as
    long), grand with two jacks or two aces (or when no suit game reaches the bid), null with
    at most four uncovered cards. The rest would never be chosen; skipping them keeps a
    discard decision fast."""
    counts = {g: (twelve & (JACKS | PLAIN[SUIT_GAMES.index(g)])).bit_count() for g in games if g in SUIT_GAMES}
    suits = sorted(counts, key=lambda g: -counts[g])
    out = "".join(g for g in suits[:2] if counts[g] >= counts[suits[0]] - 1)
    if "G" in games:
        jacks = (twelve & JACKS).bit_count()
        aces = sum(twelve >> ACE_OF[s] & 1 for s in range(4))
        reach = max((estimated_value(g, twelve, False) for g in out), default=0)
        if jacks >= 2 or aces >= 2 or reach < bid or not out:
            out += "G"
    if "N" in games and (null_danger(twelve, C.ALL & ~twelve)[0] <= 4 or not out):
        out += "N"
    return out or games


def _discards(twelve: int, game: str) -> list[tuple[int, int, int]]:
    cands = _discard_candidates(twelve, game)
    out = []
    for i, a in enumerate(cands):
        for b in cands[i + 1 :]:
            out.append((min(a, b), max(a, b), twelve & ~(1 << a) & ~(1 << b)))
    return out


def expected_score(p: float, value: int, spoil: float = 0.0) -> float:
    """Expected Seeger-Fabian score when, with chance ``spoil``, the game ends up overbid."""
    return (1 - spoil) * sf_expectation(p, value) - spoil * (2 * value + 50)


def _spoil_at(hand: int, game: str, bid: int, hand_game: bool) -> float:
    """The skat can only spoil a bid above the value of "without 1"."""
    return skat_spoils(hand, game) if bid > SUIT_BASE[game] * (2 + hand_game) else 0.0


def best_hand_game(hand: int, bid: int, forehand: bool) -> tuple[str, float] | None:
    """The best hand game reaching ``bid`` and its expected score, if any is worth playing."""
    best: tuple[str, float] | None = None
    for game in "CSHDG":
        p = win_chance(game, hand, forehand, "hand")
        v = estimated_value(game, hand, True)
        spoil = _spoil_at(hand, game, bid, True)
        if v >= bid and acceptable(p, v, spoil):
            e = expected_score(p, v, spoil)
            if best is None or e > best[1]:
                best = (game, e)
    if bid <= 35:
        p = win_chance("N", hand, forehand, "hand")
        if worth_playing(p, 35):
            e = sf_expectation(p, 35)
            if best is None or e > best[1]:
                best = ("N", e)
    return best


def pickup_expectation(hand: int, bid: int, forehand: bool) -> float:
    """Expected score of picking up the skat: the best pre-skat estimate among games reaching the bid."""
    best = -1e9
    for game in "CSHDG":
        v = estimated_value(game, hand, False)
        if v >= bid:
            p = win_chance(game, hand, forehand)
            best = max(best, expected_score(p, v, _spoil_at(hand, game, bid, False)))
    if bid <= 23:
        best = max(best, sf_expectation(win_chance("N", hand, forehand), 23))
    return best


# --- what the seat has seen ----------------------------------------------------------------------


class Seen(Knowledge):
    """The trick-play picture of one seat (``protocol.knowledge``), rebuilt from its view on every
    decision, with the guesses this bot adds to what the seat knows for certain."""

    __slots__ = ("open_hand",)

    def __init__(self, v: PlayerView) -> None:
        super().__init__(v)
        self.open_hand = next(iter(self.open_cards.values()), 0)
        """The declarer's open cards (ouvert or shown), seen by a defender; else empty."""

    def may_be_void(self, seat: int, klass: int) -> bool:
        """Known void, or so few cards of the class are left that a void is likely."""
        if self.voids[seat] >> klass & 1:
            return True
        return (self.possible(seat) & self.order.class_masks[klass]).bit_count() <= 2

    def could_beat(self, seat: int, card: int, led: int) -> bool:
        """Could ``seat`` (playing after ``card`` is best) take the trick from it?"""
        order = self.order
        poss = self.possible(seat)
        higher = poss & _STRONGER[self.kind][card]
        if order.klass[card] == led:
            if higher:
                return True
            # A ruff: only if it may be void in the led class and holds a trump.
            return led != TRUMP and self.may_be_void(seat, led) and bool(poss & order.trumps)
        # ``card`` is a trump on a side-suit lead: only a higher trump beats it, by a void seat.
        return bool(higher) and self.may_be_void(seat, led)


_log = logs.get(bot="heuristic")

# --- the bot ---------------------------------------------------------------------------------------


class HeuristicBot:
    """Bids from a fitted hand-strength estimate and plays by club rules (see the module docstring)."""

    def __init__(self, seed: str = "") -> None:
        self.seed = str(seed)
        self._plans: dict[tuple[str, int, int], Plan] = {}
        self.fallbacks = 0
        """How often a decision failed (a bug here) and the first legal action was played instead."""
        self._reported: set[tuple[str, str]] = set()

    def act(self, obs: Update) -> Command:
        legal = obs.view.legal
        if not legal:
            raise ValueError("asked to act without legal actions")
        try:
            action = self._decide(obs.view, legal, self._tie_break(obs))
        except Exception as exc:  # a bot must never stall a table: play the first legal action
            self._fell_back(obs, f"{type(exc).__name__}: {exc}", exc)
            return legal[0]
        if action not in legal:
            self._fell_back(obs, f"chose {action}, which is not legal")
            return legal[0]
        return action

    def _fell_back(self, obs: Update, why: str, exc: BaseException | None = None) -> None:
        """Count a fallback and log it, once per kind of failure and phase: the fallback keeps
        the table going, the log line keeps the bug from hiding behind it."""
        self.fallbacks += 1
        key = (obs.view.phase, why.split(":")[0])
        if key in self._reported:
            return
        self._reported.add(key)
        _log.warning(
            "heuristic_fallback",
            why=why,
            phase=obs.view.phase,
            table=obs.view.table,
            index=obs.index,
            seat=obs.view.seat,
            exc_info=exc,
        )

    def _tie_break(self, obs: Update) -> int:
        """A number from (seed, table, log position, seat) only, so that the bot's choices never
        depend on timing or on the order it sees its tables in (as ``skatbus.bots``)."""
        v = obs.view
        return zlib.crc32(f"{self.seed}/{v.table}/{obs.index}/{v.seat}".encode())

    def _decide(self, v: PlayerView, legal: Sequence[Command], tie_break: int = 0) -> Command:
        first = legal[0]
        if isinstance(first, PlayCard):
            return PLAY[self._card(v, legal, tie_break)]
        if isinstance(first, Hold) or any(isinstance(a, Bid) for a in legal):
            return self._bid(v, legal)
        if isinstance(first, PickUpSkat):
            return self._skat(v, legal)
        if isinstance(first, Discard):
            return self._discard(v)
        if isinstance(first, Declare):
            return self._declare(v, legal)
        if isinstance(first, (Kontra, Re)):
            return self._double(v, isinstance(first, Re))
        return first

    # --- bidding ---------------------------------------------------------------------------

    def _bid(self, v: PlayerView, legal: Sequence[Command]) -> Command:
        hand = C.parse(v.hand)
        limit = bid_limit(hand, _is_forehand(v))
        if HOLD in legal:
            return HOLD if v.bid <= limit else PASS
        bids = [a.value for a in legal if isinstance(a, Bid)]
        nxt = min(bids) if bids else 10**9
        return BIDS[nxt] if nxt <= limit else PASS

    def _skat(self, v: PlayerView, legal: Sequence[Command]) -> Command:
        hand = C.parse(v.hand)
        forehand = _is_forehand(v)
        hand_game = best_hand_game(hand, v.bid, forehand)
        if hand_game is not None and hand_game[1] > pickup_expectation(hand, v.bid, forehand) + HAND_EDGE:
            return Declare(game=hand_game[0])  # type: ignore[arg-type]
        return PICKUP

    def _discard(self, v: PlayerView) -> Command:
        twelve = C.parse(v.hand)
        plan = plan_game(twelve, v.bid, _is_forehand(v))
        if len(self._plans) > 64:  # plans live from the discard to the declaration only
            self._plans.clear()
        self._plans[(v.table, v.deal, v.seat)] = plan
        return DISCARDS[plan.discard]

    def _declare(self, v: PlayerView, legal: Sequence[Command]) -> Command:
        plan = self._plans.get((v.table, v.deal, v.seat))
        hand = C.parse(v.hand)
        if plan is None or C.mask(plan.discard) != C.parse(v.discarded):
            plan = _replan(hand, C.parse(v.discarded), v.bid, _is_forehand(v))
        return Declare(game=plan.game, ouvert=plan.ouvert)  # type: ignore[arg-type]

    def _double(self, v: PlayerView, re: bool) -> Command:
        hand = C.parse(v.hand)
        game = v.game.game if v.game is not None else "G"
        if re:
            hand_game = v.game is not None and v.game.hand
            skat_points = C.points(C.parse(v.discarded))
            return RE if _declarer_confident(hand, game, _is_forehand(v), hand_game, skat_points) else PASS
        return KONTRA if _defence_strong(hand, game) else PASS

    # --- card play -------------------------------------------------------------------------

    def _card(self, v: PlayerView, legal: Sequence[Command], tie_break: int) -> int:
        cards = [INDEX[a.card] for a in legal if isinstance(a, PlayCard)]
        if len(cards) == 1:
            return cards[0]
        seen = Seen(v)
        # Ties go to the first card in this list (min and max keep the first of equals).
        k = tie_break % len(cards)
        cards = cards[k:] + cards[:k]
        if seen.kind == "R":
            return _ramsch_card(seen, cards)
        if seen.kind == "N":
            return _null_declarer(seen, cards) if seen.declarer == seen.seat else _null_defender(seen, cards)
        if seen.declarer == seen.seat:
            return _declarer_lead(seen, cards) if not seen.trick else _declarer_follow(seen, cards)
        return _defender_lead(seen, cards) if not seen.trick else _defender_follow(seen, cards)


def _is_forehand(v: PlayerView) -> bool:
    for e in v.history:
        if type(e) is DealDealt:
            return e.seats[0] == v.seat
    return False


def _replan(hand: int, discard: int, bid: int, forehand: bool) -> Plan:
    """Choose the game for a discard already made (the plan was lost, e.g. a restarted bot)."""
    twelve = hand | discard
    a, b = C.cards_of(discard)
    return _best_plan(((game, a, b, hand) for game in "CSHDGN"), twelve, bid, forehand, judge_null_ouvert=False)


def _declarer_confident(hand: int, game: str, forehand: bool, hand_game: bool, skat_points: int) -> bool:
    """Re only with a game the estimate calls nearly certain."""
    if game == "N":
        return null_danger(hand, C.ALL & ~hand)[0] == 0
    stage = "hand" if hand_game else "post"
    return win_chance(game, hand, forehand, stage, skat_points=skat_points) > 0.93


def _defence_strong(hand: int, game: str) -> bool:
    """Kontra only with real trump control or aces behind the declarer."""
    if game == "N":
        return False
    jacks = (hand & JACKS).bit_count()
    aces = sum(hand >> ACE_OF[s] & 1 for s in range(4))
    if game == "G":
        return jacks >= 2 and aces >= 2 and bool(hand >> CJ & 1)
    trumps = (hand & (JACKS | PLAIN[SUIT_GAMES.index(game)])).bit_count()
    return (trumps >= 4 and jacks >= 2 and aces >= 1) or (trumps >= 3 and jacks >= 1 and aces >= 3)


# --- trick play: suit games and grand ---------------------------------------------------------


def _best_in_trick(seen: Seen) -> tuple[int, int]:
    """(card, seat) currently winning the trick."""
    order = seen.order
    idx = 0
    for i in range(1, len(seen.trick)):
        if _beats(order, seen.trick[i], seen.trick[idx]):
            idx = i
    return seen.trick[idx], seen.trick_seats[idx]


def _cheapest(seen: Seen, cards: list[int]) -> int:
    """The card that costs least to give away: few points, no trump, low, from a short suit."""
    order = seen.order
    hand = seen.hand

    def cost(c: int) -> tuple[int, int, int, int]:
        trump = order.klass[c] == TRUMP
        suit_len = 0 if trump else (hand & order.class_masks[order.klass[c]]).bit_count()
        # A card guarding an unplayed ten of its suit is worth keeping.
        guard = 0
        if not trump and suit_len == 2 and hand >> TEN_OF[c >> 3] & 1 and c != TEN_OF[c >> 3]:
            guard = 1
        return (POINTS[c] + 6 * trump + 3 * guard, order.strength[c] + 20 * (c & 7 == C.JACK), suit_len, c)

    return min(cards, key=cost)


def _richest(seen: Seen, cards: list[int]) -> int:
    """The card that gives the most points, keeping jacks (trump power) while possible; a ten
    the declarer's ace could still catch goes before an ace that will win a trick of its own."""
    order = seen.order

    def key(c: int) -> tuple[bool, bool, int, int]:
        exposed = 5 if POINTS[c] == 10 and not _master(seen, c) else 0
        return (c & 7 != C.JACK, order.klass[c] != TRUMP or POINTS[c] >= 10, POINTS[c] + exposed, -order.strength[c])

    return max(cards, key=key)


def _master(seen: Seen, c: int) -> bool:
    """No card that could still appear beats ``c``."""
    return not (_STRONGER[seen.kind][c] & (seen.unseen | seen.open_hand) & ~seen.played)


def _opponent_trumps(seen: Seen) -> int:
    order = seen.order
    if seen.seat == seen.declarer:
        return seen.unseen & order.trumps
    return seen.possible(seen.declarer) & order.trumps if seen.declarer is not None else 0


def _declarer_lead(seen: Seen, cards: list[int]) -> int:
    """Pull trumps with the master trump; cash side masters nobody can ruff; keep drawing
    trumps while level or ahead in them (a trump lead also stops the defenders from
    schmiering side aces); else give up a trick with the cheapest side card, keeping the
    trumps to win the lead back."""
    order = seen.order
    trumps_mine = [c for c in cards if order.klass[c] == TRUMP]
    side = [c for c in cards if order.klass[c] != TRUMP]
    theirs = seen.unseen & order.trumps
    if trumps_mine and theirs:
        top = max(trumps_mine, key=lambda c: order.strength[c])
        if _master(seen, top):
            return top
    masters = [c for c in side if _master(seen, c)]
    safe = [c for c in masters if _ruff_risk(seen, c, theirs) == 0]
    if safe:
        return max(safe, key=lambda c: POINTS[c])
    if trumps_mine and theirs and len(trumps_mine) >= theirs.bit_count():
        return _lowest_trump(seen, trumps_mine)
    risky = [c for c in masters if _ruff_risk(seen, c, theirs) == 1]
    if risky:
        return max(risky, key=lambda c: POINTS[c])
    if side:
        # Losers go while our trumps can still win the lead back; a trump lead when the
        # defenders have none only lets them throw their small cards and keep the aces.
        return _give_up_lead(seen, side)
    return _lowest_trump(seen, trumps_mine) if trumps_mine else cards[0]


def _ruff_risk(seen: Seen, c: int, their_trumps: int) -> int:
    """0: no defender can ruff ``c``; 1: one might (few cards of the suit left); 2: a defender
    known to be void in the suit may still hold trumps."""
    if not their_trumps:
        return 0
    klass = seen.order.klass[c]
    risk = 0
    for seat in seen.seats:
        if seat == seen.seat or not seen.possible(seat) & seen.order.trumps:
            continue
        if seen.voids[seat] >> klass & 1:
            return 2
        if seen.may_be_void(seat, klass):
            risk = 1
    return risk


def _lowest_trump(seen: Seen, trumps: list[int]) -> int:
    order = seen.order
    return min(trumps, key=lambda c: (POINTS[c] >= 10, order.strength[c]))


def _give_up_lead(seen: Seen, side: list[int]) -> int:
    """Lose the lead cheaply: a low card of a short suit, never from a ten we want to keep."""
    order = seen.order
    hand = seen.hand

    def key(c: int) -> tuple[int, int, int, int]:
        k = order.klass[c]
        suit = hand & order.class_masks[k]
        holds_ten_unguarded = bool(suit >> TEN_OF[k] & 1) and not _master(seen, TEN_OF[k])
        return (POINTS[c], int(holds_ten_unguarded), suit.bit_count(), order.strength[c])

    return min(side, key=key)


def _taking_card(seen: Seen, winners: list[int]) -> int:
    """The card to take a trick with: a side card or a trump ace/ten (points home) before a
    small trump, a small trump before a jack, the most points, then the lowest."""
    order = seen.order

    def key(c: int) -> tuple[bool, bool, int, int]:
        return (order.klass[c] == TRUMP and POINTS[c] < 10, c & 7 == C.JACK, -POINTS[c], order.strength[c])

    return min(winners, key=key)


def _winners(seen: Seen, cards: list[int], best: int) -> list[int]:
    return [c for c in cards if _beats(seen.order, c, best)]


def _safe_against(seen: Seen, c: int, seats: list[int]) -> bool:
    led = seen.order.klass[seen.trick[0]] if seen.trick else seen.order.klass[c]
    return not any(seen.could_beat(s, c, led) for s in seats)


def _declarer_follow(seen: Seen, cards: list[int]) -> int:
    order = seen.order
    best, _ = _best_in_trick(seen)
    later = seen.still_to_play()
    winners = _winners(seen, cards, best)
    safe = [c for c in winners if _safe_against(seen, c, later)]
    trick_points = sum(POINTS[c] for c in seen.trick)
    if safe:
        return _taking_card(seen, safe)
    if winners and trick_points >= 10:
        # Not sure to hold, but worth fighting for: the strongest winner we have.
        return max(winners, key=lambda c: order.strength[c] + 100 * (order.klass[c] == TRUMP))
    return _cheapest(seen, cards)


def _defender_lead(seen: Seen, cards: list[int]) -> int:
    order = seen.order
    declarer = seen.declarer
    assert declarer is not None
    partner = seen.partner
    decl_trumps = _opponent_trumps(seen)
    decl_void = seen.voids[declarer]
    side = [c for c in cards if order.klass[c] != TRUMP]
    # 1. Cash masters (aces first) in suits the declarer still follows (or cannot ruff).
    cash = [c for c in side if _master(seen, c) and (not decl_void >> order.klass[c] & 1 or not decl_trumps)]
    if cash:
        return max(cash, key=lambda c: (POINTS[c], -order.strength[c]))
    # 2. Into the partner's void, if the declarer still follows that suit.
    if partner is not None:
        ruffable = [
            c for c in side if seen.voids[partner] >> order.klass[c] & 1 and not decl_void >> order.klass[c] & 1
        ]
        if ruffable:
            return min(ruffable, key=lambda c: (POINTS[c], order.strength[c]))
    if side:
        return _defender_suit_lead(seen, side, decl_void, decl_trumps)
    return _lowest_trump(seen, cards)


def _defender_suit_lead(seen: Seen, side: list[int], decl_void: int, decl_trumps: int) -> int:
    """Kurzer Weg, lange Farbe; langer Weg, kurze Farbe: with the declarer right behind, lead
    a long suit (the declarer is likely short in it); with it last, a short suit."""
    order = seen.order
    hand = seen.hand
    declarer_next = seen.next_seat(seen.seat) == seen.declarer

    def key(c: int) -> tuple[int, int, int, int]:
        k = order.klass[c]
        n = (hand & order.class_masks[k]).bit_count()
        into_void = int(bool(decl_void >> k & 1) and bool(decl_trumps) and POINTS[c] > 0)
        lone_ten = int(POINTS[c] >= 10 and not _master(seen, c))
        length = -n if declarer_next else n
        return (into_void + lone_ten, length, POINTS[c], order.strength[c])

    # Within the chosen suit the lowest card (the sort key ends on strength).
    return min(side, key=key)


def _defender_follow(seen: Seen, cards: list[int]) -> int:
    order = seen.order
    best, winner = _best_in_trick(seen)
    later = seen.still_to_play()
    declarer = seen.declarer
    assert declarer is not None
    declarer_later = declarer in later
    winners = _winners(seen, cards, best)
    if winner == seen.partner:
        if not declarer_later or not seen.could_beat(declarer, best, order.klass[seen.trick[0]]):
            return _schmier(seen, cards)
        over = [c for c in winners if not seen.could_beat(declarer, c, order.klass[seen.trick[0]])]
        if over:
            return _richest(seen, over)
        return _cheapest(seen, cards)
    # The declarer's card leads the trick.
    if winners:
        trick_points = sum(POINTS[c] for c in seen.trick)
        if not declarer_later:
            pick = _taking_card(seen, winners)
            if trick_points + POINTS[pick] >= 3 or pick & 7 != C.JACK:
                return pick
    return _cheapest(seen, cards)


def _schmier(seen: Seen, cards: list[int]) -> int:
    """The partner takes the trick: give it points, but keep jacks and a master we can cash."""
    return _richest(seen, cards)


# --- trick play: null and ramsch --------------------------------------------------------------


def _null_declarer(seen: Seen, cards: list[int]) -> int:
    others = seen.unseen | seen.open_hand
    if not seen.trick:
        # Lead where the opponents have no lower card and many higher ones.
        def lead_key(c: int) -> tuple[int, int]:
            suit = others & C.SUIT_MASKS[c >> 3]
            lower = (suit & ((1 << c) - 1)).bit_count()
            return (lower, -(suit.bit_count() - lower))

        return min(cards, key=lead_key)
    best, _ = _best_in_trick(seen)
    order = seen.order
    led = order.klass[seen.trick[0]]
    following = [c for c in cards if order.klass[c] == led]
    if following:
        under = [c for c in following if not _beats(order, c, best)]
        if under:
            return max(under, key=lambda c: order.strength[c])
        return min(following, key=lambda c: order.strength[c])
    # Void: shed the most uncovered card.
    return max(cards, key=lambda c: (_null_gap(seen.hand, others, c), NULL_RANK[c]))


def _null_defender(seen: Seen, cards: list[int]) -> int:
    order = seen.order
    declarer = seen.declarer
    assert declarer is not None
    if not seen.trick:
        decl_void = seen.voids[declarer]
        live = [c for c in cards if not decl_void >> order.klass[c] & 1] or cards
        hand = seen.hand
        return min(live, key=lambda c: (NULL_RANK[c], -(hand & C.SUIT_MASKS[c >> 3]).bit_count()))
    best, winner = _best_in_trick(seen)
    led = order.klass[seen.trick[0]]
    following = [c for c in cards if order.klass[c] == led]
    if winner == declarer:
        if following:
            under = [c for c in following if not _beats(order, c, best)]
            if under:
                return max(under, key=lambda c: order.strength[c])
            return max(following, key=lambda c: order.strength[c])
        return max(cards, key=lambda c: NULL_RANK[c])
    if declarer in seen.still_to_play():
        # Keep the bar low for the declarer behind us.
        if following:
            return min(following, key=lambda c: order.strength[c])
        return max(cards, key=lambda c: NULL_RANK[c])
    # The declarer already ducked: shed a high card.
    return max(cards, key=lambda c: NULL_RANK[c])


def _ramsch_card(seen: Seen, cards: list[int]) -> int:
    """Ramsch: everyone for themselves, points are bad. Duck under the trick; if forced to
    take it, take it with the highest card; lead low."""
    order = seen.order
    if not seen.trick:
        return min(cards, key=lambda c: (POINTS[c], order.strength[c]))
    best, _ = _best_in_trick(seen)
    under = [c for c in cards if not _beats(order, c, best)]
    if under:
        return max(under, key=lambda c: (POINTS[c], order.strength[c]))
    return max(cards, key=lambda c: order.strength[c])
