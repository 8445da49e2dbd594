"""The fixed-size observation of one seat: what it knows of a deal, as a ``float32`` vector.

Everything is seen from the observing seat: "me", "next" (the seat that plays after me) and
"prev" (the one after that, who plays before me), so that one network serves every position.
Card planes are 32 entries, one per card in ``protocol.cards`` order (C7 C8 ... CA S7 ... DA).
The layout (``SEGMENTS``; ``OFFSETS[name]`` is the slice of a segment; ``OBS_SIZE`` = 404):

==================  ====  ==========================================================================
segment             size  content (0/1 unless said otherwise)
==================  ====  ==========================================================================
hand                  32  my cards now (12 while I hold the skat)
skat                  32  the skat as dealt, if I know it (I declared and picked it up)
discarded             32  the two cards I put away after picking up
played_me             32  cards I have played this deal (the current trick included)
played_next           32  cards "next" has played
played_prev           32  cards "prev" has played
open                  32  cards another seat laid open and still holds (an ouvert declarer's
                          hand, once the Kontra round is over, as ``protocol.views`` shows it)
trick_first           32  the card led to the current trick
trick_second          32  the second card of the current trick
position               3  my position: forehand, middlehand, rearhand
phase                  7  bidding, skat, discard, declare, doubling (Kontra/Re), playing, ended
to_move                3  who acts now: me, next, prev (all 0 once the deal is over)
bid                   67  the bid standing, one-hot over ``actions.BID_VALUES`` (all 0: none yet)
bidder                 3  while bidding: who says the bids now (me, next, prev)
listener               3  while bidding: who answers them
awaiting_answer        1  while bidding: a bid waits for hold or pass
passed                 3  who has passed in the bidding (everyone once all passed)
declarer               3  who declares (all 0 before the bidding is won, and in a ramsch)
game                   7  the game: clubs, spades, hearts, diamonds, grand, null, ramsch
announced              4  hand, schneider, schwarz, ouvert
kontra                 1  Kontra said
re                     1  Re said
trick_leader           3  while playing: who led the current trick
card_points            3  card points won in tricks so far, / 120 (me, next, prev)
tricks_won             3  tricks won so far, / 10
bid_value              1  the bid standing, / 360 (the highest value of either ladder)
==================  ====  ==========================================================================

Only what the seat may know goes in: its own hand, the skat and its discard only for the
declarer who picked it up, an ouvert declarer's cards only once ``protocol.views`` shows them,
and the public record (bids, passes, the game, cards played, points taken). Another seat's
hidden cards never appear: tests/skatbus/rl checks every observation of random deals against
the true hands and against ``Knowledge.of(view)``.

A single deal is the episode: table totals, Bock and the deal number are not part of it.

The binary part is built as one Python ``int`` (each segment shifted to its offset) and
unpacked to the array in one NumPy call: a few microseconds per observation, about the
engine's own cost of one action.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from protocol.skat.deal import BIDDING, DOUBLING, PLAYING, Deal, Phase

from .actions import BID_VALUES

SEGMENTS: Final[tuple[tuple[str, int], ...]] = (
    ("hand", 32),
    ("skat", 32),
    ("discarded", 32),
    ("played_me", 32),
    ("played_next", 32),
    ("played_prev", 32),
    ("open", 32),
    ("trick_first", 32),
    ("trick_second", 32),
    ("position", 3),
    ("phase", 7),
    ("to_move", 3),
    ("bid", len(BID_VALUES)),
    ("bidder", 3),
    ("listener", 3),
    ("awaiting_answer", 1),
    ("passed", 3),
    ("declarer", 3),
    ("game", 7),
    ("announced", 4),
    ("kontra", 1),
    ("re", 1),
    ("trick_leader", 3),
    # scalars from here on
    ("card_points", 3),
    ("tricks_won", 3),
    ("bid_value", 1),
)
"""(name, size) of every segment, in order."""

CARD_PLANES: Final = (
    "hand",
    "skat",
    "discarded",
    "played_me",
    "played_next",
    "played_prev",
    "open",
    "trick_first",
    "trick_second",
)
"""The segments that are sets of cards."""


def _offsets() -> dict[str, slice]:
    out: dict[str, slice] = {}
    at = 0
    for name, size in SEGMENTS:
        out[name] = slice(at, at + size)
        at += size
    return out


OFFSETS: Final[dict[str, slice]] = _offsets()
OBS_SIZE: Final = OFFSETS["bid_value"].stop
N_BINARY: Final = OFFSETS["card_points"].start
"""Entries 0..N_BINARY-1 are 0/1; the rest are scalars in [0, 1]."""

PHASES: Final[tuple[Phase, ...]] = tuple(Phase)
GAMES: Final = "CSHDGNR"
MAX_BID: Final = max(BID_VALUES)

_O: Final[dict[str, int]] = {name: s.start for name, s in OFFSETS.items()}
_HAND, _SKAT, _DISCARDED, _PLAYED, _OPEN = _O["hand"], _O["skat"], _O["discarded"], _O["played_me"], _O["open"]
_TRICK1, _TRICK2 = _O["trick_first"], _O["trick_second"]
_PHASE_BIT: Final = {p: 1 << (_O["phase"] + i) for i, p in enumerate(PHASES)}
_BID_BIT: Final = {v: 1 << (_O["bid"] + i) for i, v in enumerate(BID_VALUES)}
_GAME_BIT: Final = {g: 1 << (_O["game"] + i) for i, g in enumerate(GAMES)}
_N_BYTES: Final = (N_BINARY + 7) // 8


def _rel_bits(segment: str) -> tuple[tuple[int, ...], ...]:
    """[observer][position]: the bit of ``position`` in ``segment`` seen from ``observer``."""
    at = _O[segment]
    return tuple(tuple(1 << (at + (q - p) % 3) for q in range(3)) for p in range(3))


_TO_MOVE, _BIDDER, _LISTENER = _rel_bits("to_move"), _rel_bits("bidder"), _rel_bits("listener")
_PASSED, _DECLARER, _LEADER = _rel_bits("passed"), _rel_bits("declarer"), _rel_bits("trick_leader")
_ALL_PASSED: Final = 0b111 << _O["passed"]
_OTHERS_PASSED: Final = tuple(tuple(_ALL_PASSED & ~_PASSED[p][d] for d in range(3)) for p in range(3))
"""[observer][declarer]: once the bidding is won, everyone but the declarer has passed."""
_AWAITING: Final = 1 << _O["awaiting_answer"]
_ANNOUNCED: Final = _O["announced"]
_KONTRA, _RE = 1 << _O["kontra"], 1 << _O["re"]


def encode_bits(deal: Deal, pos: int) -> int:
    """The binary part of the observation of deal position ``pos``, as an ``int`` (bit i = entry i)."""
    nxt, prv = (pos + 1) % 3, (pos + 2) % 3
    phase = deal.phase
    declarer = deal.declarer
    bits = deal.hands[pos] | 1 << (_O["position"] + pos) | _PHASE_BIT[phase]
    if declarer == pos and deal.picked_up:
        bits |= deal.skat << _SKAT | deal.discard << _DISCARDED
    # What a seat has played is what left its hand other than by the discard: no walk over
    # the tricks (a picked-up skat joins the declarer's cards, the discard leaves them).
    initial, hands = deal.initial_hands, deal.hands
    played = [initial[0] & ~hands[0], initial[1] & ~hands[1], initial[2] & ~hands[2]]
    if declarer is not None and deal.picked_up:
        played[declarer] = (initial[declarer] | deal.skat) & ~hands[declarer] & ~deal.discard
    trick = deal.trick
    if trick:
        bits |= 1 << (_TRICK1 + trick[0])
        if len(trick) > 1:
            bits |= 1 << (_TRICK2 + trick[1])
    bits |= played[pos] << _PLAYED | played[nxt] << (_PLAYED + 32) | played[prv] << (_PLAYED + 64)
    if deal.to_move is not None:
        bits |= _TO_MOVE[pos][deal.to_move]
    if deal.bid:
        bits |= _BID_BIT[deal.bid]
    if phase == BIDDING:
        bits |= _BIDDER[pos][deal.bidder] | _LISTENER[pos][deal.listener]
        if deal.awaiting_answer:
            bits |= _AWAITING
        stage = deal.bid_stage
        if stage == 2:  # forehand or middlehand passed: the one who is not the survivor
            bits |= _PASSED[pos][1 - deal.listener]
        elif stage == 3:
            bits |= _PASSED[pos][1] | _PASSED[pos][2]
    elif declarer is not None:
        bits |= _DECLARER[pos][declarer] | _OTHERS_PASSED[pos][declarer]
    else:  # a ramsch or a passed-in deal
        bits |= _ALL_PASSED
    decl = deal.declaration
    if decl is not None:
        bits |= _GAME_BIT[decl.game]
        bits |= (decl.hand | decl.schneider << 1 | decl.schwarz << 2 | decl.ouvert << 3) << _ANNOUNCED
        if decl.ouvert and phase != DOUBLING and declarer != pos and declarer is not None:
            bits |= deal.hands[declarer] << _OPEN
    elif deal.ramsch:
        bits |= _GAME_BIT["R"]
    if deal.kontra:
        bits |= _KONTRA
    if deal.re:
        bits |= _RE
    if phase == PLAYING:
        bits |= _LEADER[pos][deal.leader]
    return bits


def encode(deal: Deal, pos: int) -> np.ndarray:
    """The observation of deal position ``pos`` (0 forehand, 1 middlehand, 2 rearhand): a
    ``float32`` array of ``OBS_SIZE`` laid out as ``SEGMENTS`` says."""
    out = np.empty(OBS_SIZE, np.float32)
    raw = np.frombuffer(encode_bits(deal, pos).to_bytes(_N_BYTES, "little"), np.uint8)
    out[:N_BINARY] = np.unpackbits(raw, count=N_BINARY, bitorder="little")
    points, tricks = deal.points, deal.trick_counts
    nxt, prv = (pos + 1) % 3, (pos + 2) % 3
    out[N_BINARY:] = (
        points[pos] / 120,
        points[nxt] / 120,
        points[prv] / 120,
        tricks[pos] / 10,
        tricks[nxt] / 10,
        tricks[prv] / 10,
        deal.bid / MAX_BID,
    )
    return out


def segment(obs: np.ndarray, name: str) -> np.ndarray:
    """The entries of one segment of an observation."""
    return obs[OFFSETS[name]]


def cards_in(obs: np.ndarray, name: str) -> int:
    """A card plane of an observation as a card set (``protocol.cards`` bit mask)."""
    plane = obs[OFFSETS[name]]
    return int(sum(1 << c for c in np.flatnonzero(plane).tolist()))


def describe(obs: np.ndarray) -> dict[str, Any]:
    """An observation in words, for people and debugging: card planes as card codes, one-hot
    segments as the names they stand for, scalars as numbers."""
    from protocol.skat import cards as C

    out: dict[str, Any] = {name: C.codes(cards_in(obs, name)) for name in CARD_PLANES}
    seats = ("me", "next", "prev")
    names: dict[str, tuple[str, ...]] = {
        "position": ("forehand", "middlehand", "rearhand"),
        "phase": tuple(p.value for p in PHASES),
        "bid": tuple(map(str, BID_VALUES)),
        "game": ("clubs", "spades", "hearts", "diamonds", "grand", "null", "ramsch"),
        "announced": ("hand", "schneider", "schwarz", "ouvert"),
        "awaiting_answer": ("yes",),
        "kontra": ("yes",),
        "re": ("yes",),
    }
    for name, _ in SEGMENTS[len(CARD_PLANES) : SEGMENTS.index(("card_points", 3))]:
        labels = names.get(name, seats)
        out[name] = [labels[i] for i in np.flatnonzero(obs[OFFSETS[name]]).tolist()]
    out["card_points"] = [round(float(x) * 120) for x in obs[OFFSETS["card_points"]]]
    out["tricks_won"] = [round(float(x) * 10) for x in obs[OFFSETS["tricks_won"]]]
    out["bid_value"] = round(float(obs[OFFSETS["bid_value"]][0]) * MAX_BID)
    return out
