"""Melds: what a combination is, what fits it, joker swaps, the no-feeding bar and claims
(rules M4-M7, M18-M21, M28-M33, M37-M39, M47, M48), and the finite lists of melds, lay-offs
and claims a hand can make.

A ``Meld`` on the table keeps its owner, its kind (a set of one rank, a run of one suit), and
its cards in order (a run low end first, a set as laid with lay-offs appended: M29 needs that
order), each card with the seat that laid it and, for a joker, what it stands for. Everything a
seat may see of a meld (owner, who laid each card, what each joker stands for) is in it.

The functions here are pure and raise ``Refused`` with a one-line reason a player can read;
the deal (``state.py``) decides whose cards they are and when they may be played.

Listing (M47). ``meld_options``, ``layoff_options`` and ``claim_options`` list every action a
hand can take, leaving out only actions equivalent to a listed one: the order of a set's cards
(a set is listed in suit order, jokers last), the choice between two copies of a card (the
first copy is listed), the rotation of a whole-suit run (listed from the lowest rank), and, for
jokers, (i) which joker goes where (the lowest-numbered jokers, in order of their places) and
(ii) a joker standing where a natural card the seat holds, and the action does not use, could
stand instead (the action with that natural is listed). (ii) does not apply to a joker the seat
must use now (after a swap or a take, M27): that joker is listed at every place it fits.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations

import msgspec

from .cards import SUITS, Cycle, base, is_joker, token
from .rules import RummyRules

SET = "set"
RUN = "run"


class Refused(ValueError):
    """A meld, lay-off, swap or claim the rules do not allow; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Placed(msgspec.Struct, frozen=True):
    """One card of a meld: the physical card, what a joker stands for (``""`` for a natural
    card; a card such as ``HQ``, or in a b set a rank such as ``Q``), and the seat that laid
    it (M24, M41, M42)."""

    card: str
    stands: str = ""
    by: int = 0

    @property
    def joker(self) -> bool:
        return is_joker(self.card)

    @property
    def text(self) -> str:
        return token(self.card, self.stands)


class Meld(msgspec.Struct, frozen=True, kw_only=True):
    """A meld on the table. ``rank``: a set's rank, or a run's low-end rank; ``suit``: a run's
    suit (``""`` for a set)."""

    owner: int
    kind: str
    rank: str
    suit: str = ""
    cards: tuple[Placed, ...]

    @property
    def naturals(self) -> int:
        return sum(1 for p in self.cards if not p.joker)

    @property
    def jokers(self) -> int:
        return sum(1 for p in self.cards if p.joker)

    @property
    def text(self) -> str:
        """The meld as a ``meld`` action writes it (a run low end first)."""
        return " ".join(p.text for p in self.cards)

    def suits(self) -> set[str]:
        """A set's suits: its natural cards' and its named jokers' (M37)."""
        return {p.card[0] if not p.joker else p.stands[0] for p in self.cards if not p.joker or len(p.stands) == 2}

    def positions(self, cyc: Cycle) -> list[int]:
        """A run's rank positions on the cycle, low end first."""
        return cyc.window(cyc.pos[self.rank], len(self.cards))


# --- making and growing melds ------------------------------------------------------------


def make_meld(tokens: Sequence[tuple[str, str]], rules: RummyRules, owner: int) -> Meld:
    """The meld ``tokens`` (card, stands) make, laid by ``owner``; raises ``Refused``. Its kind
    comes from its natural cards (M38); a run must be written low end first (M39)."""
    if len(tokens) < 3:
        raise Refused("a meld has three or more cards (M4)")
    cards = [c for c, _ in tokens]
    if len(set(cards)) != len(cards):
        raise Refused("a card is named twice")
    nats = [c for c in cards if not is_joker(c)]
    if len(nats) < 2:
        raise Refused("a meld holds at least two natural cards (M7)")
    if len(cards) - len(nats) > len(nats):
        raise Refused("a meld holds no more jokers than natural cards (M7)")
    if len({c[1] for c in nats}) == 1:
        return _set(tokens, nats, rules, owner)
    if len({c[0] for c in nats}) == 1:
        return _run(tokens, nats[0][0], rules, owner)
    raise Refused("neither a set (one rank) nor a run (one suit): " + " ".join(token(c, s) for c, s in tokens))


def _set(tokens: Sequence[tuple[str, str]], nats: list[str], rules: RummyRules, owner: int) -> Meld:
    rank = nats[0][1]
    used = [c[0] for c in nats]
    if len(set(used)) != len(used):
        raise Refused("a set's cards are of different suits (M4)")
    suits = set(used)
    for c, s in tokens:
        if is_joker(c):
            _set_joker(c, s, rank, suits, rules)
            if rules.named_set_jokers:
                suits.add(s[0])
    if len(tokens) > 4:
        raise Refused("a set holds at most four cards (M4, M37)")
    return Meld(owner=owner, kind=SET, rank=rank, cards=tuple(Placed(c, s, owner) for c, s in tokens))


def _set_joker(card: str, stands: str, rank: str, suits: set[str], rules: RummyRules) -> None:
    """M6, M19: in b a set's joker stands for its rank only; in c and d it names a card of the
    set's rank of a suit the set lacks."""
    if not rules.named_set_jokers:
        if stands != rank:
            raise Refused(f"in b a set's joker stands for its rank only: write {card}={rank}")
        return
    if len(stands) != 2 or stands[1] != rank:
        raise Refused(f"{card} must name the card of rank {rank} it stands for, e.g. {card}=C{rank} (M19)")
    if stands[0] in suits:
        raise Refused(f"{card}={stands}: the set has a card of that suit already (M4)")


def _run(tokens: Sequence[tuple[str, str]], suit: str, rules: RummyRules, owner: int) -> Meld:
    cyc = rules.cycle
    idx: list[int] = []
    for c, s in tokens:
        if is_joker(c):
            if len(s) != 2:
                raise Refused(f"a run's joker names the card of its place: {c}={suit}<rank> (M6)")
            cs, cr = s[0], s[1]
        else:
            cs, cr = c[0], c[1]
        if cs != suit:
            raise Refused(f"a run's cards are all of one suit ({suit}): {token(c, s)} is not (M4)")
        if cr not in cyc.pos:
            raise Refused(f"there is no rank {cr} in this pack")
        idx.append(cyc.pos[cr])
    if len(idx) > cyc.size:
        raise Refused("a run holds each rank of its suit at most once (M4)")
    for a, b in zip(idx, idx[1:]):
        if cyc.nxt(a) != b:
            corner = "" if cyc.closed else " (ace_joins_low is off: the ace is high only)"
            raise Refused(f"a run is written low end first, each card the next rank of the cycle (M3, M39){corner}")
    return Meld(
        owner=owner, kind=RUN, rank=cyc.ranks[idx[0]], suit=suit, cards=tuple(Placed(c, s, owner) for c, s in tokens)
    )


def run_end(meld: Meld, rank: str, cyc: Cycle) -> str:
    """Which end of a run a card of ``rank`` (of its suit) fits: ``high``, ``low`` or ``""``.
    A run lacking one rank of its whole suit takes it at the high end (M39)."""
    n = len(meld.cards)
    if n >= cyc.size or rank not in cyc.pos:
        return ""
    lo = cyc.pos[meld.rank]
    hi = (lo + n - 1) % cyc.size
    r = cyc.pos[rank]
    if cyc.nxt(hi) == r:
        return "high"
    if cyc.prv(lo) == r:
        return "low"
    return ""


def lay_off(meld: Meld, card: str, stands: str, rules: RummyRules, by: int) -> Meld:
    """``meld`` with ``card`` (a joker standing for ``stands``) laid off by ``by`` (M5, M37,
    M39); raises ``Refused``."""
    joker = is_joker(card)
    if joker and meld.jokers + 1 > meld.naturals:
        raise Refused("a meld holds no more jokers than natural cards (M7)")
    placed = Placed(card, stands, by)
    if meld.kind == SET:
        rank = meld.rank
        if joker:
            _set_joker(card, stands, rank, meld.suits(), rules)
        else:
            if card[1] != rank:
                raise Refused(f"{card} is not of the set's rank {rank} (M5)")
            if card[0] in meld.suits():
                raise Refused(f"the set has a card of suit {card[0]} already (M4; a named joker's suit counts, M37)")
        if len(meld.cards) >= 4:
            raise Refused("a set holds at most four cards (M4, M37)")
        return msgspec.structs.replace(meld, cards=(*meld.cards, placed))
    if joker:
        if len(stands) != 2:
            raise Refused(f"a run's joker names the card of its place: {card}={meld.suit}<rank> (M6)")
        cs, cr = stands[0], stands[1]
    else:
        cs, cr = card[0], card[1]
    if cs != meld.suit:
        raise Refused(f"{token(card, stands)} is not of the run's suit {meld.suit} (M5)")
    end = run_end(meld, cr, rules.cycle)
    if end == "high":
        return msgspec.structs.replace(meld, cards=(*meld.cards, placed))
    if end == "low":
        return msgspec.structs.replace(meld, rank=cr, cards=(placed, *meld.cards))
    raise Refused(f"{token(card, stands)} fits neither end of the run {meld.text} (M5)")


def swap_joker(meld: Meld, card: str, rules: RummyRules, by: int) -> tuple[Meld, str]:
    """(``meld`` with the natural ``card`` in its joker's place, the joker taken) (M18, M29,
    M30); raises ``Refused``. The natural card counts as laid by ``by`` (M41)."""
    if is_joker(card):
        raise Refused("a swap puts a natural card from your hand in a joker's place (M18)")
    if not meld.jokers:
        raise Refused(f"the meld {meld.text} holds no joker")
    cards = meld.cards
    if meld.kind == RUN:
        cyc = rules.cycle
        if card[0] != meld.suit:
            raise Refused(f"{card} is not of the run's suit {meld.suit}")
        at = (cyc.pos[card[1]] - cyc.pos[meld.rank]) % cyc.size
        if at >= len(cards) or not cards[at].joker:
            raise Refused(f"no joker of the run {meld.text} stands for {base(card)} (M18)")
    else:
        if card[1] != meld.rank:
            raise Refused(f"{card} is not of the set's rank {meld.rank}")
        if rules.named_set_jokers:
            found = [i for i, p in enumerate(cards) if p.joker and p.stands[0] == card[0]]
            if not found:
                raise Refused(f"no joker of the set {meld.text} stands for {base(card)} (M18: only the named card)")
        else:
            if card[0] in meld.suits():
                raise Refused(f"the set has a card of suit {card[0]} already")
            found = [i for i, p in enumerate(cards) if p.joker]  # M29: the first joker
        at = found[0]
    joker = cards[at].card
    new = (*cards[:at], Placed(card, "", by), *cards[at + 1 :])
    return msgspec.structs.replace(meld, cards=new), joker


# --- the no-feeding bar (c, d) ------------------------------------------------------------


def barred(card: str, row: Sequence[str], rules: RummyRules) -> bool:
    """Whether ``card`` may not be discarded (M21, M32): it forms a meld (M4-M7) with two or
    more cards lying anywhere in ``row``, the row's jokers counting as jokers."""
    if not rules.no_feeding:
        return False
    cyc = rules.cycle
    jokers = sum(1 for c in row if is_joker(c))
    nats = [c for c in row if not is_joker(c)]
    if is_joker(card):
        ranks: dict[str, int] = {}
        for c in nats:
            ranks[c[1]] = ranks.get(c[1], 0) + 1
        if any(v >= 2 for v in ranks.values()):
            return True
        for suit in SUITS:
            held = {cyc.pos[c[1]] for c in nats if c[0] == suit}
            for length in range(3, min(cyc.size, len(held) + 1 + jokers, 2 * len(held)) + 1):
                for start in cyc.starts(length, every_rotation=True):
                    k = sum(1 for p in cyc.window(start, length) if p in held)
                    j = length - k
                    if k >= 2 and 1 <= j <= k and j - 1 <= jokers:
                        return True
        return False
    s, r = card[0], card[1]
    others = {c[0] for c in nats if c[1] == r and c[0] != s}
    if len(others) >= 2 or (others and jokers):
        return True
    held = {cyc.pos[c[1]] for c in nats if c[0] == s}
    ri = cyc.pos[r]
    for length in range(3, min(cyc.size, len(held) + 1 + jokers) + 1):
        for start in cyc.starts(length, every_rotation=True):
            window = cyc.window(start, length)
            if ri not in window:
                continue
            k = sum(1 for p in window if p in held and p != ri)
            j = length - 1 - k
            if k >= 1 and j <= jokers and j <= k + 1:
                return True
    return False


# --- claims (c, d) ------------------------------------------------------------------------


def check_claim(meld: Meld, row_after: Sequence[str], rules: RummyRules) -> None:
    """M21, M33: a claim takes every natural row card that fits its meld: after it no natural
    row card is of the set's rank, at a joker's place in the run, or next to either end of the
    run. Raises ``Refused`` naming the card left behind."""
    nats = [c for c in row_after if not is_joker(c)]
    if meld.kind == SET:
        left = [c for c in nats if c[1] == meld.rank]
        if left:
            raise Refused(f"the claim must take every row card of rank {meld.rank}: {left[0]} too (M21, M33)")
        return
    cyc = rules.cycle
    places = meld.positions(cyc)
    jokers = {p for p, placed in zip(places, meld.cards) if placed.joker}
    ends: set[int] = set()
    if len(places) < cyc.size:
        for end in (cyc.prv(places[0]), cyc.nxt(places[-1])):
            if end is not None:
                ends.add(end)
    for c in nats:
        if c[0] == meld.suit:
            p = cyc.pos[c[1]]
            if p in jokers:
                raise Refused(f"the claim must take {c}, the natural card of a joker's place (M33)")
            if p in ends:
                raise Refused(f"the claim must take {c} too: it continues the run (M21, M33)")


def claim_options(hand: Sequence[str], row: Sequence[str], rules: RummyRules) -> Iterator[tuple[str, ...]]:
    """Every claim (as tokens) ``hand`` can make from ``row`` (M21, M33; listed per M47)."""
    cyc = rules.cycle
    row_jokers = sorted(c for c in row if is_joker(c))
    row_nats = {c for c in row if not is_joker(c)}
    for h in sorted(set(hand), key=_order):
        if is_joker(h):
            yield from _joker_claims(h, row_nats, row_jokers, rules)
            continue
        s, r = h[0], h[1]
        # a set: every row card of the rank, jokers naming missing suits
        ks = [t for t in SUITS if t != s and t + r in row_nats]
        missing = [t for t in SUITS if t != s and t not in ks]
        for nj in range(0, min(len(row_jokers), len(missing)) + 1):
            size = 1 + len(ks) + nj
            if size < 3 or size > 4 or nj > 1 + len(ks):
                continue
            nat = sorted([h, *(t + r for t in ks)], key=_order)
            for named in combinations(missing, nj):
                yield (*nat, *(token(j, t + r) for j, t in zip(row_jokers, named)))
        # a run through h
        held = {cyc.pos[c[1]] for c in row_nats if c[0] == s}
        ri = cyc.pos[r]
        for length in range(3, min(cyc.size, len(held) + 1 + len(row_jokers)) + 1):
            for start in cyc.starts(length):
                window = cyc.window(start, length)
                if ri not in window:
                    continue
                gaps = [p for p in window if p != ri and p not in held]
                k = length - 1 - len(gaps)
                if k < 1 or len(gaps) > len(row_jokers) or len(gaps) > k + 1:
                    continue
                if _run_end_open(window, held, cyc):
                    continue
                yield _run_tokens(window, s, {ri: h}, dict(zip(gaps, row_jokers)), cyc)


def _joker_claims(h: str, row_nats: set[str], row_jokers: list[str], rules: RummyRules) -> Iterator[tuple[str, ...]]:
    """Claims with a joker from the hand: it and the row's cards (M21, M32, M48)."""
    cyc = rules.cycle
    for r in cyc.ranks:
        ks = [t for t in SUITS if t + r in row_nats]
        if len(ks) < 2:
            continue
        missing = [t for t in SUITS if t not in ks]
        for m in range(1, min(len(missing), 1 + len(row_jokers), len(ks)) + 1):
            if len(ks) + m > 4:
                continue
            for named in combinations(missing, m):
                jokers = [h, *row_jokers]
                yield (*(t + r for t in ks), *(token(j, t + r) for j, t in zip(jokers, named)))
    for s in SUITS:
        held = {cyc.pos[c[1]] for c in row_nats if c[0] == s}
        if len(held) < 2:
            continue
        for length in range(3, min(cyc.size, len(held) + 1 + len(row_jokers), 2 * len(held)) + 1):
            for start in cyc.starts(length):
                window = cyc.window(start, length)
                gaps = [p for p in window if p not in held]
                k = length - len(gaps)
                if not gaps or len(gaps) > k or len(gaps) > 1 + len(row_jokers):
                    continue
                if _run_end_open(window, held, cyc):
                    continue
                yield _run_tokens(window, s, {}, dict(zip(gaps, [h, *row_jokers])), cyc)


def _run_end_open(window: list[int], held: set[int], cyc: Cycle) -> bool:
    """Whether a row natural lies next to either end of ``window`` (a claim must take it)."""
    if len(window) >= cyc.size:
        return False
    lo, hi = cyc.prv(window[0]), cyc.nxt(window[-1])
    return (lo is not None and lo in held) or (hi is not None and hi in held)


def _run_tokens(
    window: list[int], suit: str, fixed: dict[int, str], jokers: dict[int, str], cyc: Cycle
) -> tuple[str, ...]:
    out = []
    for p in window:
        card = suit + cyc.ranks[p]
        if p in fixed:
            out.append(fixed[p])
        elif p in jokers:
            out.append(token(jokers[p], card))
        else:
            out.append(card)
    return tuple(out)


def _order(card: str) -> tuple[int, str]:
    """Suit order C S H D, then the code; jokers last."""
    return (SUITS.index(card[0]) if not is_joker(card) else 9, card)


# --- what a hand can meld and lay off -----------------------------------------------------


class _Hand:
    """A hand seen for listing: one copy per card (M47), the natural cards by rank and suit,
    the jokers in order, and the card that must be used now (``must``)."""

    __slots__ = ("reps", "jokers", "free", "must", "must_joker", "by_rank", "by_suit")

    def __init__(self, hand: Sequence[str], rules: RummyRules, must: str) -> None:
        reps: dict[str, str] = {}
        for c in sorted(hand):  # "HQ" sorts before "HQ'": the first copy represents both
            if not is_joker(c) and base(c) not in reps:
                reps[base(c)] = c
        if must and not is_joker(must):
            reps[base(must)] = must
        self.reps = reps
        self.jokers = sorted(c for c in hand if is_joker(c))
        self.must = must
        self.must_joker = must if is_joker(must) else ""
        self.free = [j for j in self.jokers if j != self.must_joker]
        cyc = rules.cycle
        self.by_rank: dict[str, list[str]] = {}
        self.by_suit: dict[str, set[int]] = {}
        for b in sorted(reps, key=_order):
            self.by_rank.setdefault(b[1], []).append(b[0])
            self.by_suit.setdefault(b[0], set()).add(cyc.pos[b[1]])


def meld_options(hand: Sequence[str], rules: RummyRules, must: str = "") -> Iterator[tuple[str, ...]]:
    """Every new meld (as tokens) ``hand`` can lay, each including ``must`` if given (M14, M18,
    M27); listed per M47 (module docstring)."""
    h = _Hand(hand, rules, must)
    yield from _set_options(h, rules)
    yield from _run_options(h, rules)


def _set_options(h: _Hand, rules: RummyRules) -> Iterator[tuple[str, ...]]:
    must_base = base(h.must) if h.must and not h.must_joker else ""
    for r, held in h.by_rank.items():
        if must_base and must_base[1] != r:
            continue
        for size in range(2, len(held) + 1):
            for chosen in combinations(held, size):
                if must_base and must_base[0] not in chosen:
                    continue
                nat = tuple(h.reps[s + r] for s in chosen)
                for jokers in _set_fills(h, rules, r, chosen, held):
                    if len(nat) + len(jokers) >= 3:
                        yield nat + jokers


def _set_fills(
    h: _Hand, rules: RummyRules, r: str, chosen: tuple[str, ...], held: list[str]
) -> Iterator[tuple[str, ...]]:
    """The joker parts a set of ``chosen`` suits may have (M6, M7, M37, M47)."""
    n = len(chosen)
    if not rules.jokers:
        if not h.must_joker:
            yield ()
        return
    if not rules.named_set_jokers:  # b: rank-only jokers, four cards at most
        room = min(n, 4 - n)
        extra = h.free if n == len(held) else []  # (ii): else a held natural could stand there
        if h.must_joker:
            for e in range(0, min(len(extra), room - 1) + 1):
                yield tuple(token(j, r) for j in (h.must_joker, *extra[:e]))
        else:
            for e in range(0, min(len(extra), room) + 1):
                yield tuple(token(j, r) for j in extra[:e])
        return
    missing = [s for s in SUITS if s not in chosen]
    free_missing = [s for s in missing if s not in held]  # (ii)
    if h.must_joker:
        for first in missing:
            rest = [s for s in free_missing if s != first]
            for e in range(0, min(len(rest), len(h.free), n - 1) + 1):
                for named in combinations(rest, e):
                    yield (token(h.must_joker, first + r), *(token(j, s + r) for j, s in zip(h.free, named)))
        return
    for e in range(0, min(len(free_missing), len(h.free), n) + 1):
        for named in combinations(free_missing, e):
            yield tuple(token(j, s + r) for j, s in zip(h.free, named))


def _run_options(h: _Hand, rules: RummyRules) -> Iterator[tuple[str, ...]]:
    cyc = rules.cycle
    must_base = base(h.must) if h.must and not h.must_joker else ""
    njokers = len(h.jokers)
    for suit, held in h.by_suit.items():
        if must_base and must_base[0] != suit:
            continue
        if len(held) < 2:
            continue
        need = cyc.pos[must_base[1]] if must_base else -1
        for length in range(3, min(cyc.size, len(held) + njokers, 2 * len(held)) + 1):
            for start in cyc.starts(length):
                window = cyc.window(start, length)
                if must_base and need not in window:
                    continue
                k = sum(1 for p in window if p in held)
                if k < 2:
                    continue
                gaps = [p for p in window if p not in held]
                if not h.must_joker:
                    if len(gaps) > k or len(gaps) > len(h.free):
                        continue
                    yield _hand_run(window, suit, h, dict(zip(gaps, h.free)), cyc)
                    continue
                for q in window:  # the joker that must be used, at any place
                    rest = [p for p in gaps if p != q]
                    kk = k - (q in held)
                    if kk < 2 or len(rest) + 1 > kk or len(rest) > len(h.free):
                        continue
                    jokers = dict(zip(rest, h.free))
                    jokers[q] = h.must_joker
                    yield _hand_run(window, suit, h, jokers, cyc)


def _hand_run(window: list[int], suit: str, h: _Hand, jokers: dict[int, str], cyc: Cycle) -> tuple[str, ...]:
    out = []
    for p in window:
        card = suit + cyc.ranks[p]
        out.append(token(jokers[p], card) if p in jokers else h.reps[card])
    return tuple(out)


def layoff_options(
    hand: Sequence[str], melds: Sequence[Meld], rules: RummyRules, must: str = ""
) -> Iterator[tuple[int, str]]:
    """Every lay-off (meld number from 1, token) ``hand`` can make, only of ``must`` if given;
    listed per M47 (module docstring)."""
    h = _Hand(hand, rules, must)
    cyc = rules.cycle
    if must:
        naturals = [] if h.must_joker else [must]
        joker = h.must_joker
    else:
        naturals = [h.reps[b] for b in sorted(h.reps, key=_order)]
        joker = h.jokers[0] if h.jokers else ""
    for number, meld in enumerate(melds, 1):
        for c in naturals:
            if _fits(meld, c, rules):
                yield number, c
        if not joker or meld.jokers + 1 > meld.naturals:
            continue
        if meld.kind == SET:
            if len(meld.cards) >= 4:
                continue
            r = meld.rank
            suits = meld.suits()
            if not rules.named_set_jokers:
                if h.must_joker or not any(s + r in h.reps for s in SUITS if s not in suits):
                    yield number, token(joker, r)
                continue
            for s in SUITS:
                if s not in suits and (h.must_joker or s + r not in h.reps):
                    yield number, token(joker, s + r)
            continue
        places = meld.positions(cyc)
        if len(places) >= cyc.size:
            continue
        ends = []
        hi = cyc.nxt(places[-1])
        lo = cyc.prv(places[0])
        if hi is not None:
            ends.append(hi)
        if lo is not None and lo != hi:
            ends.append(lo)
        for p in ends:
            card = meld.suit + cyc.ranks[p]
            if h.must_joker or card not in h.reps:
                yield number, token(joker, card)


def _fits(meld: Meld, card: str, rules: RummyRules) -> bool:
    """Whether the natural ``card`` can be laid off on ``meld`` (M5, M37, M39)."""
    if meld.kind == SET:
        return card[1] == meld.rank and card[0] not in meld.suits() and len(meld.cards) < 4
    return card[0] == meld.suit and bool(run_end(meld, card[1], rules.cycle))


def can_use(card: str, hand: Sequence[str], melds: Sequence[Meld], rules: RummyRules) -> bool:
    """Whether ``card`` (in ``hand``) can be used at once in a new meld or a lay-off (M14,
    M18, M27, M28)."""
    for _ in layoff_options(hand, melds, rules, must=card):
        return True
    for _ in meld_options(hand, rules, must=card):
        return True
    return False
