"""An independent reference checker for records of the Russian rummy "Скат" (variants a to d).

Written from the rules page (rules M1 to M49) and the record format alone, without the engine in
``protocol/rummy/``, so that the two can be cross-checked: where they disagree, one of them (or
the rules page) is wrong. Clarity over speed: every check is a plain function with the rule
numbers it follows in a comment.

``check(record)`` replays a record (one JSON object) and returns a ``Verdict``:

- ``refusal``: the first thing the rules do not allow, with the deal index (0-based), the action's
  position in that deal's ``actions`` (0-based; ``None`` for faults of the record as a whole, its
  rules or a deck) and a reason;
- ``differences``: every compared field (dealer, each deal's ``end``, ``out``, ``plus``, ``minus``,
  ``score``, ``totals``, and the game's ``places``, ``totals``, ``complete``) whose recorded value is
  not what the rules give, one line each;
- ``incomplete``: the last deal stops before the rules end it (never scored).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SUITS = "CSHD"
RANKS_A = "6789TJQKA"  # M1, M3: the 36-card pack
RANKS_BCD = "23456789TJQKA"  # M1, M3: the 52-card pack (plus jokers)
POINTS = {"A": 11, "K": 10, "Q": 10, "J": 10, "T": 10}  # M2; others their pip value


class Refused(Exception):
    """An action (or a record's part) the rules do not allow; the text is the reason."""


def points(rank: str) -> int:
    """M2: ace 11, the figures and the ten 10, the others their pip value."""
    return POINTS.get(rank, 0) or int(rank)


def is_joker(card: str) -> bool:
    return card.startswith("X")


@dataclass(frozen=True)
class Config:
    """The rules in force for one game (M45, M46 and the options table)."""

    variant: str = "a"
    players: int = 3
    packs: int = 1
    target: int = 500
    layoff_credit: str = ""  # "" = the variant's default: layer in a, owner in b, c, d (M24, B8)
    ace_joins_low: bool = True
    joker_doubling: str = "hand"
    max_deals: int = 200

    def __post_init__(self) -> None:
        if not self.layoff_credit:
            object.__setattr__(self, "layoff_credit", "layer" if self.variant == "a" else "owner")

    @property
    def ranks(self) -> str:
        return RANKS_A if self.variant == "a" else RANKS_BCD

    @property
    def hand_size(self) -> int:
        return 5 if self.variant in "ac" else 6  # M9

    @property
    def named_jokers(self) -> bool:
        return self.variant in "cd"  # M19: c and d name the card a joker stands for

    def pack(self) -> list[str]:
        """M1: the cards, in a fixed order (the deck must be a permutation of it)."""
        cards = [s + r for s in SUITS for r in self.ranks]
        if self.variant == "a":
            return cards
        if self.packs == 2:
            return cards + [c + "'" for c in cards] + ["X1", "X2", "X3", "X4"]
        return cards + ["X1", "X2"]

    def step(self, rank: int, by: int) -> int | None:
        """The rank index ``by`` places on along the cycle (M3), or None past the line's end (M44)."""
        n = len(self.ranks)
        if self.ace_joins_low:
            return (rank + by) % n
        nxt = rank + by
        return nxt if 0 <= nxt < n else None


def config_from(record: dict[str, Any]) -> Config:
    """Reads and validates the rules (options table, M45, M46); raises Refused on a bad value."""
    players = record.get("players")
    if not isinstance(players, list) or not players:
        raise Refused("the record has no list of players")
    rules = record.get("rules") or {}
    if not isinstance(rules, dict):
        raise Refused("rules is not an object")
    n = len(players)
    if "players" in rules and rules["players"] != n:  # M46
        raise Refused(f"option players={rules['players']!r} differs from the {n} players listed (M46)")
    variant = rules.get("variant", "a")
    if variant not in ("a", "b", "c", "d"):
        raise Refused(f"unknown variant {variant!r}")
    high = 6 if variant == "b" else 4
    if not 2 <= n <= high:
        raise Refused(f"variant {variant} takes 2 to {high} players, not {n}")
    packs = rules.get("packs", 2 if variant == "b" and n >= 5 else 1)
    if packs not in (1, 2) or (packs == 2 and variant != "b"):  # M45
        raise Refused(f"packs={packs!r} is not allowed in variant {variant} (M45)")
    credit = rules.get("layoff_credit", "layer" if variant == "a" else "owner")  # M24, B8
    if credit not in ("layer", "owner"):
        raise Refused(f"layoff_credit={credit!r} is not layer or owner")
    low = rules.get("ace_joins_low", True)
    doubling = rules.get("joker_doubling", "hand")
    if not isinstance(low, bool):
        raise Refused(f"ace_joins_low={low!r} is not true or false")
    if doubling not in ("hand", "net"):
        raise Refused(f"joker_doubling={doubling!r} is not hand or net")
    target, max_deals = rules.get("target", 500), rules.get("max_deals", 200)
    for name, value in (("target", target), ("max_deals", max_deals)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise Refused(f"{name}={value!r} is not a positive whole number")
    return Config(variant, n, packs, target, credit, low, doubling, max_deals)


# --- cards as written in actions --------------------------------------------------------------


@dataclass
class Piece:
    """A card on the table: the physical card, the rank index and suit it stands for, whom it counts for."""

    card: str
    rank: int
    suit: str | None  # None only for a b set joker (M6, M19)
    credit: int = -1

    @property
    def joker(self) -> bool:
        return is_joker(self.card)


def parse_token(cfg: Config, token: str) -> Piece:
    """A card of an action: ``HA`` (``HA'``), or a joker with what it stands for, ``X1=HQ`` / ``X1=Q`` (b sets)."""
    card, _, stands = token.partition("=")
    if is_joker(card):
        if card not in cfg.pack():
            raise Refused(f"{card} is not a card of this pack")
        if not stands:
            raise Refused(f"joker {card} is written without what it stands for ({card}=..)")
        spec = stands.rstrip("'")  # M30: X1=HQ' is read as X1=HQ
        if len(spec) == 1 and spec in cfg.ranks:
            return Piece(card, cfg.ranks.index(spec), None)
        if len(spec) == 2 and spec[0] in SUITS and spec[1] in cfg.ranks:
            return Piece(card, cfg.ranks.index(spec[1]), spec[0])
        raise Refused(f"{token}: {stands!r} is not a card")
    if stands or card not in cfg.pack():
        raise Refused(f"{token} is not a card of this pack")
    return Piece(card, cfg.ranks.index(card[1]), card[0])


# --- melds -------------------------------------------------------------------------------------


@dataclass
class Meld:
    """A meld on the table (M4, M5): kind and rank (set) or suit (run) fixed when laid; a run low to high."""

    owner: int
    kind: str  # "set" or "run"
    rank: int  # the set's rank; for a run the rank index of its low end
    suit: str  # the run's suit; "" for a set
    pieces: list[Piece]

    @property
    def naturals(self) -> int:
        return sum(not p.joker for p in self.pieces)

    @property
    def jokers(self) -> int:
        return sum(p.joker for p in self.pieces)

    def suits_taken(self, cfg: Config) -> set[str]:
        """A set's suits: its naturals', and in c and d its jokers' named suits (M37)."""
        return {p.suit for p in self.pieces if p.suit and (not p.joker or cfg.named_jokers)}


def build_meld(cfg: Config, owner: int, pieces: list[Piece]) -> Meld:
    """A new meld from the written cards, or Refused (M4, M6, M7, M19, M37, M38, M39)."""
    if len(pieces) < 3:
        raise Refused("a meld has at least three cards (M4)")
    if len({p.card for p in pieces}) < len(pieces):
        raise Refused("a card is written twice")
    nat = [p for p in pieces if not p.joker]
    jok = [p for p in pieces if p.joker]
    if len(nat) < 2 or len(jok) > len(nat):
        raise Refused("a meld needs at least two natural cards and no more jokers than naturals (M7)")
    if len({p.rank for p in nat}) == 1:  # M38: one rank is a set
        rank = nat[0].rank
        suits = [p.suit for p in nat]
        for p in jok:
            if p.rank != rank:
                raise Refused(f"{p.card} must stand for the set's rank (M6)")
            if cfg.named_jokers:
                if p.suit is None:
                    raise Refused(f"{p.card} must name a card in c and d (M19)")
                suits.append(p.suit)
            elif p.suit is not None:
                raise Refused(f"in b a set joker stands for a rank only ({p.card}={cfg.ranks[rank]})")
        if len(set(suits)) < len(suits):
            raise Refused("a set's cards must be of different suits (M4, M19)")
        if len(pieces) > 4:
            raise Refused("a set holds four cards at most (M4, M37)")
        return Meld(owner, "set", rank, "", pieces)
    if len({p.suit for p in nat}) == 1:  # M38: one suit with different ranks is a run
        suit = nat[0].suit or ""
        for p in jok:
            if p.suit != suit:
                raise Refused(f"{p.card} in a run must stand for a card of the run's suit (M6)")
        if len(pieces) > len(cfg.ranks):
            raise Refused("a run is at most the whole suit (M4)")
        for a, b in zip(pieces, pieces[1:]):
            if cfg.step(a.rank, 1) != b.rank:
                raise Refused("a run is written low to high with ranks following on the cycle (M3, M4, M39)")
        return Meld(owner, "run", pieces[0].rank, suit, pieces)
    raise Refused("the cards are neither a set nor a run (M4, M38)")


def layoff_end(cfg: Config, meld: Meld, p: Piece) -> str:
    """Where ``p`` goes when laid off on ``meld`` ("set", "low", "high"), or Refused (M5, M7, M19, M37, M39)."""
    if p.joker and meld.jokers + 1 > meld.naturals:
        raise Refused("a meld may hold no more jokers than natural cards (M7)")
    if meld.kind == "set":
        if p.rank != meld.rank:
            raise Refused("a set takes only a card of its rank (M5)")
        if p.joker and cfg.named_jokers and p.suit is None:
            raise Refused(f"{p.card} must name a card in c and d (M19)")
        if p.joker and not cfg.named_jokers and p.suit is not None:
            raise Refused(f"in b a set joker stands for a rank only ({p.card}={cfg.ranks[p.rank]})")
        if p.suit is not None and p.suit in meld.suits_taken(cfg):
            raise Refused("the set already holds that suit (M5, M37)")
        if len(meld.pieces) >= 4:
            raise Refused("a set holds four cards at most (M4, M37)")
        return "set"
    if p.suit != meld.suit:
        raise Refused("a run takes only a card of its suit (M5)")
    if len(meld.pieces) == len(cfg.ranks):
        raise Refused("the run is already the whole suit (M4)")
    if cfg.step(meld.rank, len(meld.pieces)) == p.rank:  # M39: the one missing rank goes high
        return "high"
    if cfg.step(meld.rank, -1) == p.rank:
        return "low"
    raise Refused("a run takes only the next card at either end (M5)")


def lay_off(cfg: Config, meld: Meld, p: Piece) -> None:
    """Puts ``p`` on the meld where ``layoff_end`` says."""
    where = layoff_end(cfg, meld, p)
    if where == "low":
        meld.pieces.insert(0, p)
        meld.rank = p.rank
    else:
        meld.pieces.append(p)


# --- what could be done: used by take (M14), swap (M28), the feeding bar (M21) and M23/M48 -----------


def _windows(cfg: Config, through: int | None) -> list[list[int]]:
    """Every stretch of 3 or more consecutive ranks on the cycle (or line, M44), through rank ``through`` if given."""
    n = len(cfg.ranks)
    out: list[list[int]] = []
    for start in range(n):
        for length in range(3, n + 1):
            ranks = [cfg.step(start, i) for i in range(length)]
            if None in ranks:
                break
            stretch = [r for r in ranks if r is not None]
            if through is None or through in stretch:
                out.append(stretch)
    return out


def can_form(cfg: Config, card: str, pool: list[str]) -> bool:
    """Could ``card`` make a new meld (M4 to M7) with some cards of ``pool``? (jokers in the pool as jokers)"""
    jokers = sum(is_joker(c) for c in pool)
    nat = {(c[0], cfg.ranks.index(c[1])) for c in pool if not is_joker(c)}
    if not is_joker(card):
        suit, rank = card[0], cfg.ranks.index(card[1])
        others = {s for s, r in nat if r == rank and s != suit}
        if len(others) >= 2 or (len(others) == 1 and jokers >= 1):  # a set
            return True
        for stretch in _windows(cfg, rank):  # a run through the card, gaps filled by jokers
            have = sum(r == rank or (suit, r) in nat for r in stretch)
            gaps = len(stretch) - have
            if gaps <= jokers and gaps <= have:
                return True
        return False
    for r in range(len(cfg.ranks)):  # the card is a joker: it fills one place
        if len({s for s, rr in nat if rr == r}) >= 2:
            return True
    for suit in SUITS:
        for stretch in _windows(cfg, None):
            have = sum((suit, r) in nat for r in stretch)
            gaps = len(stretch) - have
            if 1 <= gaps <= jokers + 1 and gaps <= have:
                return True
    return False


def can_lay_off(cfg: Config, card: str, meld: Meld) -> bool:
    """Could ``card`` be laid off on ``meld`` (a joker under some naming)?"""
    if is_joker(card):
        if meld.jokers + 1 > meld.naturals:
            return False
        if meld.kind == "set":
            return len(meld.pieces) < 4
        return len(meld.pieces) < len(cfg.ranks)
    try:
        layoff_end(cfg, meld, parse_token(cfg, card))
    except Refused:
        return False
    return True


def can_use(cfg: Config, card: str, pool: list[str], melds: list[Meld]) -> bool:
    """M14, M18, M28: the card could be used at once, in a new meld with ``pool`` or laid off on a meld."""
    return can_form(cfg, card, pool) or any(can_lay_off(cfg, card, m) for m in melds)


def barred(cfg: Config, card: str, row: list[str]) -> bool:
    """M21, M32: in c and d, would ``card`` form a meld with two or more cards of the row?"""
    return cfg.variant in "cd" and can_form(cfg, card, row)


def claim_possible(cfg: Config, card: str, row: list[str]) -> bool:
    """M21, M33, M48: is there a claim with ``card`` from the hand that takes every fitting row natural?"""
    row_jokers = sum(is_joker(c) for c in row)
    nat = {(c[0], cfg.ranks.index(c[1])) for c in row if not is_joker(c)}
    n = len(cfg.ranks)

    def clear_ends(suit: str, stretch: list[int]) -> bool:
        if len(stretch) == n:
            return True
        ends = (cfg.step(stretch[0], -1), cfg.step(stretch[-1], 1))
        return not any((suit, r) in nat for r in ends if r is not None)

    if not is_joker(card):
        suit, rank = card[0], cfg.ranks.index(card[1])
        k = len({s for s, r in nat if r == rank})  # a set must take all of them
        if k >= 2 or (k == 1 and row_jokers >= 1):
            return True
        for stretch in _windows(cfg, rank):
            have = sum(r == rank or (suit, r) in nat for r in stretch)
            gaps = len(stretch) - have
            if gaps <= row_jokers and gaps <= have and clear_ends(suit, stretch):
                return True
        return False
    for r in range(n):
        if len({s for s, rr in nat if rr == r}) in (2, 3):  # with the joker at most four (M48)
            return True
    for suit in SUITS:
        for stretch in _windows(cfg, None):
            have = sum((suit, r) in nat for r in stretch)
            gaps = len(stretch) - have
            if 1 <= gaps <= row_jokers + 1 and gaps <= have and clear_ends(suit, stretch):
                return True
    return False


# --- a deal -----------------------------------------------------------------------------------


@dataclass
class DealState:
    """Everything a deal's replay keeps: hands, stock (top first), row (oldest first), melds, whose turn."""

    cfg: Config
    dealer: int
    hands: list[list[str]]
    stock: list[str]
    row: list[str] = field(default_factory=list)
    melds: list[Meld] = field(default_factory=list)
    turn: int = 0
    pending: str | None = None  # a card taken (M14) or joker swapped out (M18) that the next action must use
    melded: set[int] = field(default_factory=set)  # M22, M36: seats with a meld action this deal
    end: str | None = None
    out: int | None = None

    def credit(self, seat: int, owner: int) -> int:
        """M24, M41: whom a card laid on ``owner``'s meld by ``seat`` counts for."""
        return seat if seat == owner or self.cfg.layoff_credit == "layer" else owner

    def begin_turn(self, seat: int) -> None:
        """M11, M16: a turn begins by drawing the stock's top card; an empty stock ends the deal."""
        self.turn = seat
        if not self.stock:
            self.end = "stock_out"
            return
        self.hands[seat].append(self.stock.pop(0))


def deal_out(cfg: Config, dealer: int, deck: list[str]) -> DealState:
    """M9, RECORDS: one card at a time to each player from the dealer's left; the rest is the stock."""
    n = cfg.players
    hands: list[list[str]] = [[] for _ in range(n)]
    dealt = n * cfg.hand_size
    for k, card in enumerate(deck[:dealt]):
        hands[(dealer + 1 + k) % n].append(card)
    state = DealState(cfg, dealer, hands, list(deck[dealt:]))
    state.begin_turn((dealer + 1) % n)  # M10
    return state


def _take_cards(hand: list[str], pieces: list[Piece]) -> None:
    for p in pieces:
        if p.card not in hand:
            raise Refused(f"{p.card} is not in the hand")
    for p in pieces:
        hand.remove(p.card)


def act(state: DealState, seat: int, verb: str, args: list[str]) -> None:
    """Plays one action of ``seat`` or raises Refused with the reason (M11 to M23, M27 to M49)."""
    cfg = state.cfg
    hand = state.hands[seat]
    if state.end is not None:
        raise Refused("the deal has already ended (M15, M16)")
    if seat != state.turn:
        raise Refused(f"it is seat {state.turn}'s turn, not seat {seat}'s (M10)")
    if state.pending is not None:  # M14, M18, M27
        used = verb in ("meld", "layoff") and any(a.partition("=")[0] == state.pending for a in args)
        if not used:
            raise Refused(f"{state.pending} just taken must be used at once, in a meld or lay-off (M14, M18, M27)")
        state.pending = None
    if verb in ("take", "swap", "claim"):
        if verb == "claim" and cfg.variant not in "cd":
            raise Refused("claims belong to variants c and d (M21)")
        if verb == "swap" and cfg.variant == "a":
            raise Refused("variant a has no jokers (M1)")
        if cfg.variant == "d" and seat not in state.melded:
            raise Refused(f"in d no {verb} before one's own first meld of the deal (M22, M36)")
    if verb == "meld":
        pieces = [parse_token(cfg, a) for a in args]
        meld = build_meld(cfg, seat, pieces)
        _take_cards(hand, pieces)
        for p in pieces:
            p.credit = seat
        state.melds.append(meld)
        state.melded.add(seat)
    elif verb == "layoff":
        if len(args) != 2 or not args[0].isdigit() or not 1 <= int(args[0]) <= len(state.melds):
            raise Refused("layoff names a meld on the table and one card")
        meld = state.melds[int(args[0]) - 1]
        p = parse_token(cfg, args[1])
        if p.card not in hand:
            raise Refused(f"{p.card} is not in the hand")
        lay_off(cfg, meld, p)
        hand.remove(p.card)
        p.credit = state.credit(seat, meld.owner)
    elif verb == "take":
        if len(args) != 1 or not args[0].isdigit() or not 1 <= int(args[0]) <= len(state.row):
            raise Refused(f"take names a card of the row, 1 to {len(state.row)} (M14)")
        k = int(args[0]) - 1
        named, taken = state.row[k], state.row[k:]
        after = hand + taken
        after.remove(named)
        if not can_use(cfg, named, after, state.melds):
            raise Refused(f"the named card {named} could not be used at once (M14)")
        del state.row[k:]
        hand.extend(taken)
        state.pending = named
    elif verb == "swap":
        swap(state, seat, args)
    elif verb == "claim":
        claim(state, seat, args)
    elif verb == "discard":
        if len(args) != 1 or args[0] not in hand:
            raise Refused("discard names one card of the hand")
        discard_allowed(state, seat, args[0])
        hand.remove(args[0])
        state.row.append(args[0])
    else:
        raise Refused(f"unknown action {verb!r}")
    if not hand:  # M15, M40
        state.end, state.out = "went_out", seat
    elif verb == "discard":
        state.begin_turn((seat + 1) % cfg.players)


def swap(state: DealState, seat: int, args: list[str]) -> None:
    """M18, M28, M29, M30, M41: a natural card from the hand replaces a meld's joker, which goes to the hand."""
    cfg, hand = state.cfg, state.hands[seat]
    if len(args) != 2 or not args[0].isdigit() or not 1 <= int(args[0]) <= len(state.melds):
        raise Refused("swap names a meld on the table and one card")
    meld = state.melds[int(args[0]) - 1]
    card = args[1]
    if is_joker(card) or card not in hand:
        raise Refused(f"{card} is not a natural card of the hand")
    p = parse_token(cfg, card)
    places = [i for i, q in enumerate(meld.pieces) if q.joker]
    if meld.kind == "run" or cfg.named_jokers:  # the card of the joker's place, or its named card
        places = [i for i in places if meld.pieces[i].rank == p.rank and meld.pieces[i].suit == p.suit]
    elif p.rank != meld.rank or p.suit in meld.suits_taken(cfg):  # b set: any missing suit of its rank
        places = []
    if not places:
        raise Refused(f"{card} cannot replace a joker of meld {args[0]} (M18)")
    i = places[0]  # M29: the first joker in the meld's order
    joker = meld.pieces[i].card
    hand.remove(card)
    old = meld.pieces[i]
    meld.pieces[i] = Piece(card, p.rank, p.suit, state.credit(seat, meld.owner))
    if not can_use(cfg, joker, list(hand), state.melds):  # M28
        hand.append(card)
        meld.pieces[i] = old
        raise Refused(f"the joker {joker} could not be used at once (M28)")
    hand.append(joker)
    state.pending = joker


def claim(state: DealState, seat: int, args: list[str]) -> None:
    """M21, M33, M42: one card from the hand with row cards as a new meld, taking every fitting row natural."""
    cfg, hand = state.cfg, state.hands[seat]
    pieces = [parse_token(cfg, a) for a in args]
    from_hand = [p for p in pieces if p.card in hand]
    if len(from_hand) != 1 or any(p.card not in state.row for p in pieces if p is not from_hand[0]):
        raise Refused("a claim is exactly one card from the hand and the others from the row (M21)")
    meld = build_meld(cfg, seat, pieces)
    rest = list(state.row)
    for p in pieces:
        if p is not from_hand[0]:
            rest.remove(p.card)
    nat = {(c[0], cfg.ranks.index(c[1])) for c in rest if not is_joker(c)}
    if meld.kind == "set":
        left = [s for s, r in nat if r == meld.rank]
    else:
        places = [p.rank for p in meld.pieces if p.joker]
        if len(meld.pieces) < len(cfg.ranks):
            places += [r for r in (cfg.step(meld.rank, -1), cfg.step(meld.rank, len(meld.pieces))) if r is not None]
        left = [r for s, r in nat if s == meld.suit and r in places]
    if left:
        raise Refused("the claim must take every natural row card that fits the meld (M21, M33)")
    state.row = rest
    hand.remove(from_hand[0].card)
    for p in pieces:
        p.credit = seat  # M42
    state.melds.append(meld)


def discard_allowed(state: DealState, seat: int, card: str) -> None:
    """M21, M23, M32, M48, M49: the feeding bar of c and d, judged against the row before the discard."""
    cfg, hand, row = state.cfg, state.hands[seat], state.row
    if not barred(cfg, card, row):
        return
    if not all(barred(cfg, c, row) for c in hand):
        raise Refused(f"{card} would form a meld with cards of the row (M21)")
    if cfg.variant == "d" and seat not in state.melded:
        return  # M23: barred from claiming by M22, any card may go
    if any(claim_possible(cfg, c, row) for c in hand):
        raise Refused("every card of the hand is barred: a claim is due before the discard (M23, M49)")
    # M48: every card barred and no claim possible: any card may be discarded


def legal_discards(state: DealState) -> list[str]:
    """The cards the seat to move may discard now (M21, M23, M48), for tests and diagnostics."""
    out = []
    for card in state.hands[state.turn]:
        try:
            discard_allowed(state, state.turn, card)
        except Refused:
            continue
        out.append(card)
    return out


def score_deal(state: DealState) -> dict[str, Any]:
    """M24, M34: plus, minus and score per seat."""
    cfg, n = state.cfg, state.cfg.players
    plus = [0] * n
    for meld in state.melds:
        for p in meld.pieces:
            plus[p.credit] += points(cfg.ranks[p.rank])
    minus, score = [0] * n, [0] * n
    for s, hand in enumerate(state.hands):
        pts = sum(points(c[1]) for c in hand if not is_joker(c))
        jokers = sum(is_joker(c) for c in hand)
        if cfg.variant == "b":
            minus[s] = pts + 50 * jokers
            score[s] = plus[s] - minus[s]
        elif cfg.variant == "a" or cfg.joker_doubling == "hand":
            minus[s] = pts * 2**jokers
            score[s] = plus[s] - minus[s]
        else:  # net: the minus undoubled, a negative net doubled per joker (M34, B11)
            minus[s] = pts
            net = plus[s] - pts
            score[s] = net * 2**jokers if net < 0 else net
    return {"end": state.end, "out": state.out, "plus": plus, "minus": minus, "score": score}


# --- a record -----------------------------------------------------------------------------------


@dataclass
class Refusal:
    deal: int | None
    position: int | None
    reason: str


@dataclass
class Verdict:
    refusal: Refusal | None = None
    differences: list[str] = field(default_factory=list)
    incomplete: bool = False
    results: list[dict[str, Any]] = field(default_factory=list)  # what the rules give, per deal scored
    game: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.refusal:
            return "refused"
        if self.differences:
            return "differ"
        return "incomplete" if self.incomplete else "agree"


def places(totals: list[int]) -> list[int]:
    """M26, M35: the highest total first; equal totals share a place, which skips the places they take."""
    return [1 + sum(t > mine for t in totals) for mine in totals]


def _compare(verdict: Verdict, where: str, recorded: Any, expected: dict[str, Any], keys: tuple[str, ...]) -> None:
    if not isinstance(recorded, dict):
        verdict.differences.append(f"{where}: missing")
        return
    for key in keys:
        if recorded.get(key) != expected[key]:
            verdict.differences.append(f"{where}.{key}: record {recorded.get(key)!r}, rules {expected[key]!r}")


def check(record: dict[str, Any]) -> Verdict:
    """Replays a rummy record under its rules and compares what it states with what the rules give."""
    verdict = Verdict()
    try:
        if record.get("game", "rummy") != "rummy":
            raise Refused(f"not a rummy record: game {record.get('game')!r}")
        cfg = config_from(record)
    except Refused as exc:
        verdict.refusal = Refusal(None, None, str(exc))
        return verdict
    n = cfg.players
    totals = [0] * n
    deals = record.get("deals") or []
    over = False
    if not isinstance(deals, list) or not all(isinstance(x, dict) for x in deals):
        verdict.refusal = Refusal(None, None, "deals is not a list of objects")
        return verdict
    for d, deal in enumerate(deals):
        if over:
            verdict.refusal = Refusal(d, None, f"the game ended after deal {d - 1} (M26)")
            return verdict
        dealer = (n - 1 + d) % n  # M8
        if deal.get("dealer") != dealer:
            verdict.differences.append(f"deals[{d}].dealer: record {deal.get('dealer')!r}, rules {dealer}")
        deck = deal.get("deck") or []
        if not isinstance(deck, list) or sorted(map(str, deck)) != sorted(cfg.pack()):
            verdict.refusal = Refusal(d, None, f"the deck is not the {len(cfg.pack())}-card pack of the rules (M1)")
            return verdict
        state = deal_out(cfg, dealer, deck)
        actions = deal.get("actions") or []
        if not isinstance(actions, list):
            verdict.refusal = Refusal(d, None, "actions is not a list")
            return verdict
        for pos, text in enumerate(actions):
            seat_text, _, rest = str(text).partition(" ")
            words = rest.split()
            try:
                if not seat_text.isdigit() or int(seat_text) >= n or not words:
                    raise Refused(f"not an action: {text!r}")
                act(state, int(seat_text), words[0], words[1:])
            except Refused as exc:
                verdict.refusal = Refusal(d, pos, str(exc))
                return verdict
        if state.end is None or state.pending is not None:
            if d < len(deals) - 1:
                verdict.refusal = Refusal(d, len(actions), "the actions stop before the deal ends")
                return verdict
            verdict.incomplete = True  # RECORDS: reported as such, never scored
            break
        result = score_deal(state)
        totals = [t + s for t, s in zip(totals, result["score"])]  # M25
        result["totals"] = list(totals)
        verdict.results.append(result)
        _compare(
            verdict,
            f"deals[{d}].result",
            deal.get("result"),
            result,
            ("end", "out", "plus", "minus", "score", "totals"),
        )
        over = max(totals) >= cfg.target or d + 1 >= cfg.max_deals  # M26
    verdict.game = {"places": places(totals), "totals": totals, "complete": over}
    _compare(verdict, "result", record.get("result"), verdict.game, ("places", "totals", "complete"))
    return verdict
