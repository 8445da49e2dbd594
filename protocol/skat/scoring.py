"""What a finished deal is worth: matadors, game value, overbidding, Kontra/Re, Bock, Ramsch,
the standard score and Seeger-Fabian points.

``score(deal, ...)`` turns an ended deal into a ``DealResult``, the payload of the
deal-scored event. It is the only place where rule numbers become points. It reads the deal
through ``PlayedDeal``, the few facts scoring needs, so that the deal (which scores itself when
it ends) depends on scoring and not the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

import msgspec

from . import cards as C
from .cards import ORDERS
from .ends import EARLY_BY_RULE, PASSED_IN, EndReason
from .games import Declaration, base_value, null_value
from .rules import Rules


class _Trick(Protocol):
    @property
    def winner(self) -> int: ...


class PlayedDeal(Protocol):
    """What scoring reads of an ended deal (``protocol.deal.Deal`` is one), in deal positions."""

    rules: Rules
    declaration: Declaration | None
    declarer: int | None
    end_reason: EndReason | None
    bid: int
    kontra: bool
    re: bool
    ramsch: bool
    skat: int
    points: list[int]
    trick_counts: list[int]

    @property
    def tricks(self) -> Sequence[_Trick]: ...

    def declarer_points(self) -> int: ...

    def twelve_cards(self) -> int: ...


class RamschResult(msgspec.Struct, frozen=True, kw_only=True, repr_omit_defaults=True):
    points: list[int]
    """Card points per table seat (the skat counted for the last trick's winner)."""
    losers: list[int]
    """Table seats with the most points (all of them lose those points)."""
    jungfrau: int
    """Players who took no trick; each doubles the loss."""
    durchmarsch: int | None = None
    """Table seat that took every trick (+120 instead of a loss), if any."""


class DealResult(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """The full breakdown of one scored deal. Seats are table seats."""

    kind: str
    """"game", "ramsch" or "passed"."""
    ended: str
    """Why play stopped (see ``deal.PLAYED_OUT`` and friends)."""
    scores: list[int]
    """Standard score change per table seat (Kontra/Re and Bock applied)."""
    seeger_fabian: list[int]
    """Seeger-Fabian points per table seat for this deal."""
    bock: bool = False
    declarer: int | None = None
    game: Declaration | None = None
    bid: int = 0
    matadors: int = 0
    """Signed: +n "with n", -n "without n"; 0 in null."""
    multiplier: int = 0
    base: int = 0
    value: int = 0
    """The game value as reached (base x multiplier, or the null value), before overbidding."""
    overbid: bool = False
    won: bool = False
    declarer_points: int = 0
    declarer_tricks: int = 0
    schneider: bool = False
    schwarz: bool = False
    kontra: bool = False
    re: bool = False
    game_score: int = 0
    """The declarer's signed score before Kontra/Re and Bock (ISS's ``v``)."""
    ramsch: RamschResult | None = None


def matadors(twelve: int, game: str) -> int:
    """Signed matadors of a suit game or grand over the declarer's 12 cards."""
    seq = ORDERS[game].trump_sequence
    has = bool(twelve >> seq[0] & 1)
    n = 0
    for c in seq:
        if bool(twelve >> c & 1) != has:
            break
        n += 1
    return n if has else -n


def game_value(
    decl: Declaration, matadors: int, schneider: bool, schwarz: bool, profile: str = "isko"
) -> tuple[int, int]:
    """Base and multiplier of a suit game or grand: value = base x multiplier.

    ``schneider``/``schwarz`` say what was reached; announcements add their own steps and the
    steps they promise whether reached or not.
    """
    base = base_value(decl, profile)
    ouvert_step = decl.ouvert and not (profile == "classic" and decl.game == "G")
    multiplier = (
        abs(matadors)
        + 1
        + decl.hand
        + (schneider or decl.schneider)
        + decl.schneider
        + (schwarz or decl.schwarz)
        + decl.schwarz
        + ouvert_step
    )
    return base, multiplier


def lost_factor(decl: Declaration, profile: str) -> int:
    """How many times the value a lost game costs: ISkO 2; classic 1 for a hand game."""
    if profile == "classic" and decl.hand:
        return 1
    return 2


SF_WIN: Final = 50
SF_LOSS: Final = -50
SF_DEFENDER_BONUS: Final = {3: 40, 4: 30}


def score(deal: PlayedDeal, seats: tuple[int, int, int], n_players: int, bock: bool) -> DealResult:
    """Score an ended deal; ``seats`` maps deal positions to table seats."""
    if deal.end_reason == PASSED_IN:
        zero = [0] * n_players
        return DealResult(kind="passed", ended=PASSED_IN, scores=zero, seeger_fabian=list(zero), bock=bock)
    if deal.ramsch:
        return _score_ramsch(deal, seats, n_players, bock)
    return _score_game(deal, seats, n_players, bock)


def _score_game(deal: PlayedDeal, seats: tuple[int, int, int], n_players: int, bock: bool) -> DealResult:
    decl = deal.declaration
    assert decl is not None and deal.end_reason is not None
    profile = deal.rules.profile
    pos = deal.declarer
    assert pos is not None, "a declared game has a declarer"
    points = deal.declarer_points()
    tricks = deal.trick_counts[pos]
    early = deal.end_reason in EARLY_BY_RULE
    if decl.game == "N":
        won = deal.end_reason != "declarer_resigned" and tricks == 0
        value = null_value(decl)
        mats = mult = base = 0
        schneider = schwarz = False
        overbid = False
        lost_value = value
    else:
        mats = matadors(deal.twelve_cards(), decl.game)
        # A deal that stopped early by rule is not judged for schneider/schwarz reached (as on
        # ISS): its announcements already carry every step.
        schneider = not early and (points >= 90 or points <= 30)
        schwarz = not early and (tricks == 10 or tricks == 0)
        base, mult = game_value(decl, mats, schneider, schwarz, profile)
        value = base * mult
        # A won game cannot be lost: a declarer who resigns already holding 61 or more (skat
        # included) still wins, judged on the tricks as they then stand (RULES.md, "Play").
        won = (
            points > 60
            and (not decl.schneider or points >= 90)
            and (not decl.schwarz or tricks == 10)
            and deal.end_reason not in EARLY_BY_RULE
        )
        overbid = value < deal.bid
        lost_value = value
        if overbid:
            won = False
            lost_value = -(-deal.bid // base) * base
    game_score = value if won else -lost_factor(decl, profile) * lost_value
    factor = (2 if deal.kontra else 1) * (2 if deal.re else 1) * (2 if bock else 1)
    final = game_score * factor
    scores = [0] * n_players
    declarer_seat = seats[pos]
    scores[declarer_seat] = final
    sf = [0] * n_players
    sf[declarer_seat] = final + (SF_WIN if won else SF_LOSS)
    if not won:
        for seat in range(n_players):
            if seat != declarer_seat:
                sf[seat] = SF_DEFENDER_BONUS[n_players]
    return DealResult(
        kind="game",
        ended=deal.end_reason,
        scores=scores,
        seeger_fabian=sf,
        bock=bock,
        declarer=declarer_seat,
        game=decl,
        bid=deal.bid,
        matadors=mats,
        multiplier=mult,
        base=base,
        value=value,
        overbid=overbid,
        won=won,
        declarer_points=points,
        declarer_tricks=tricks,
        schneider=schneider,
        schwarz=schwarz,
        kontra=deal.kontra,
        re=deal.re,
        game_score=game_score,
    )


def _score_ramsch(deal: PlayedDeal, seats: tuple[int, int, int], n_players: int, bock: bool) -> DealResult:
    pts = list(deal.points)
    last_winner = deal.tricks[-1].winner
    pts[last_winner] += C.points(deal.skat)
    counts = deal.trick_counts
    scores = [0] * n_players
    durch = next((p for p in (0, 1, 2) if counts[p] == 10), None)
    jungfrau = sum(1 for p in (0, 1, 2) if counts[p] == 0)
    factor = 2 if bock else 1
    top = max(pts)
    losers = [p for p in (0, 1, 2) if pts[p] == top]
    if durch is not None:
        scores[seats[durch]] = 120 * factor
    else:
        for p in losers:
            scores[seats[p]] = -top * (2**jungfrau) * factor
    by_seat = [0] * n_players
    for p in (0, 1, 2):
        by_seat[seats[p]] = pts[p]
    return DealResult(
        kind="ramsch",
        ended=deal.end_reason or "",
        scores=scores,
        seeger_fabian=list(scores),
        bock=bock,
        ramsch=RamschResult(
            points=by_seat,
            losers=[] if durch is not None else sorted(seats[p] for p in losers),
            jungfrau=jungfrau,
            durchmarsch=None if durch is None else seats[durch],
        ),
    )
