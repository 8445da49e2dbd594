"""Property tests of the rummy engine over random games of every variant: random options,
random legal actions (a uniform player, and one that takes from the row whenever it can, whose
hands grow past 15 cards).

What must hold at every step: every card of the pack is in exactly one place (hands, stock,
row, melds); ``legal`` is non-empty until the deal ends and every action it lists is accepted
by ``apply`` (all of them at a sample of the steps, the chosen one always); ``apply`` never
changes its input; the action texts round-trip. At every deal's end: the scores are the rules'
sums (M24, M34) computed here afresh, the totals add up, and replaying the deal from its deck
and its action texts (a record) gives the same state. Every game ends (M17, M26).

A game is driven by a ``random.Random`` seeded from one hypothesis integer (the failing seed
is what hypothesis reports), as tests/protocol/thirty_one/test_properties.py does.
"""

from __future__ import annotations

import random
from itertools import combinations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.rummy import (
    AnyAction,
    Claim,
    Deal,
    Discard,
    Lay,
    LayOff,
    Match,
    RummyRules,
    Swap,
    Take,
    apply,
    base,
    cards_in_play,
    deal,
    is_joker,
    legal,
    new_match,
    parse_action,
    parse_line,
    play,
    points,
    start_deal,
    why_not,
)

SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
RANK_VALUE = {**{str(k): k for k in range(2, 10)}, "T": 10, "J": 10, "Q": 10, "K": 10, "A": 11}
"""M2, written out again."""
RANKS = "23456789TJQKA"
MAX_LISTED = 5000
"""The longest legal list allowed (the deal module's docstring gives the measured figures)."""


def random_rules(rng: random.Random) -> RummyRules:
    variant = rng.choice("abcd")
    players = rng.randint(2, 6 if variant == "b" else 4)
    return RummyRules(
        variant=variant,  # type: ignore[arg-type]
        players=players,
        packs=rng.choice([1, 2]) if variant == "b" else None,
        target=rng.choice([40, 80, 150]),
        layoff_credit=rng.choice([None, "layer", "owner"]),
        ace_joins_low=rng.random() < 0.8,
        joker_doubling=rng.choice(["hand", "net"]),
        max_deals=rng.randint(1, 3),
    )


def choose(rng: random.Random, state: Deal, actions: list[AnyAction], taker: bool) -> AnyAction:
    if taker and not state.pending:
        takes = [a for a in actions if isinstance(a, Take)]
        if takes:
            return min(takes, key=lambda a: a.n)
        if rng.random() < 0.9:
            quiet = [a for a in actions if not isinstance(a, Lay | LayOff | Claim)]
            if quiet:
                return rng.choice(quiet)
    return rng.choice(actions)


def expected_scores(state: Deal) -> tuple[list[int], list[int], list[int]]:
    """M24, M34 from the rules page, independently of ``scoring``."""
    rules = state.rules
    owner = rules.credit == "owner"
    plus = [0] * state.n
    for meld in state.melds:
        for p in meld.cards:
            rank = p.stands[-1] if p.joker else p.card[1]  # a joker counts the rank it stands for
            plus[meld.owner if owner else p.by] += RANK_VALUE[rank]
    minus: list[int] = []
    score: list[int] = []
    for seat, hand in enumerate(state.hands):
        nat = sum(points(c) for c in hand if not is_joker(c))
        jokers = sum(1 for c in hand if is_joker(c))
        if rules.variant in ("a", "b"):
            m = nat + 50 * jokers
            s = plus[seat] - m
        elif rules.joker_doubling == "hand":
            m = nat * 2**jokers
            s = plus[seat] - m
        else:
            m = nat
            s = plus[seat] - m
            s = s * 2**jokers if s < 0 else s
        minus.append(m)
        score.append(s)
    return plus, minus, score


def play_game(seed: int, taker: bool, check_all_every: int = 7) -> Match:
    rng = random.Random(seed)
    rules = random_rules(rng)
    match = new_match(rules)
    pack = sorted(rules.pack)
    steps = 0
    while not match.complete:
        deck = list(rules.pack)
        rng.shuffle(deck)
        match = start_deal(match, deck)
        assert match.deal is not None
        first = match.deal
        lines: list[str] = []
        while True:
            state = match.deal
            assert state is not None and not state.ended
            assert sorted(cards_in_play(state)) == pack, "a card is missing or twice"
            actions = legal(state)
            assert actions, f"no legal action: {state}"
            assert len(actions) <= MAX_LISTED
            before = msgspec.json.encode(state)
            if steps % 5 == 0 and len(state.hands[state.seat]) <= 9 and len(state.row) <= 8 and not state.pending:
                brute_check(state, actions)
            if steps % check_all_every == 0:
                for action in actions:
                    apply(state, action)  # raises if a listed action is refused
                    assert parse_action(str(action)) == action
            action = choose(rng, state, actions, taker)
            assert parse_action(str(action)) == action
            lines.append(f"{state.seat} {action}")
            after = play(match, action)
            assert msgspec.json.encode(state) == before, "apply changed its input"
            steps += 1
            assert steps < 200_000, "a game that does not end"
            if after.deal is None:
                ended = apply(state, action)
                check_end(ended, after)
                replay(first, lines, ended)
                match = after
                break
            match = after
    assert len(match.results) <= rules.max_deals
    assert match.complete and (any(t >= rules.target for t in match.totals) or len(match.results) == rules.max_deals)
    return match


def brute_check(state: Deal, actions: list[AnyAction]) -> None:
    """Completeness: every take, discard, swap and natural lay-off ``apply`` accepts is listed
    (up to the copy of a card, M47), and so is every new meld and claim of natural cards only
    (up to order and copies); tried by brute force on small hands and rows."""
    hand, row = state.hands[state.seat], state.row

    def ok(action: object) -> bool:
        return not why_not(state, action)  # type: ignore[arg-type]

    def norm(action: object) -> object:
        if isinstance(action, Lay | Claim):
            return (type(action).__name__, frozenset(base(c) for c in action.cards))
        if isinstance(action, LayOff | Swap):
            return (type(action).__name__, action.meld, base(action.card) if "=" not in action.card else action.card)
        return action

    listed = {norm(a) for a in actions}
    candidates: list[object] = [Take(n=i) for i in range(1, len(row) + 1)]
    candidates += [Discard(card=c) for c in hand]
    for m in range(1, len(state.melds) + 1):
        candidates += [LayOff(meld=m, card=c) for c in hand if not is_joker(c)]
        candidates += [Swap(meld=m, card=c) for c in hand if not is_joker(c)]
    naturals = sorted(c for c in hand if not is_joker(c))
    for size in range(3, len(naturals) + 1):
        for combo in combinations(naturals, size):
            candidates += [Lay(cards=tuple(p)) for p in _orders(combo)]
    if state.rules.no_feeding:
        row_nats = [c for c in row if not is_joker(c)]
        for h in naturals:
            for size in range(2, min(4, len(row_nats)) + 1):
                for combo in combinations(row_nats, size):
                    candidates += [Claim(cards=tuple(p)) for p in _orders((h, *combo))]
    for c in candidates:
        if ok(c):
            assert norm(c) in listed, f"{c} is accepted but not listed"


def _orders(cards: tuple[str, ...]) -> list[tuple[str, ...]]:
    """A set in one order, and every rotation-free run order (low end first) of ``cards``."""
    by_rank = sorted(cards, key=lambda c: ("CSHD".index(c[0]), c))
    out = [tuple(by_rank)]
    if len({c[0] for c in cards}) == 1:
        out += [tuple(sorted(cards, key=lambda c: (RANKS.index(c[1]) - k) % len(RANKS))) for k in range(len(RANKS))]
    return out


def check_end(ended: Deal, match: Match) -> None:
    assert ended.ended and sorted(cards_in_play(ended)) == sorted(ended.rules.pack)
    result = match.results[-1]
    plus, minus, score = expected_scores(ended)
    assert list(result.plus) == plus and list(result.minus) == minus and list(result.score) == score
    assert sum(plus) == sum(points(p.card, p.stands) for m in ended.melds for p in m.cards)
    if ended.end == "went_out":
        assert result.out == ended.out and ended.hands[ended.out] == () and result.minus[ended.out] == 0
    else:
        assert ended.end == "stock_out" and result.out is None and ended.stock == ()
    totals = [sum(r.score[s] for r in match.results) for s in range(ended.n)]
    assert list(match.totals) == totals == list(result.totals)


def replay(first: Deal, lines: list[str], ended: Deal) -> None:
    """The deal rebuilt from its deck and action texts, as a record gives them."""
    state = first
    for line in lines:
        seat, action = parse_line(line)
        assert seat == state.seat
        state = apply(state, action)
    assert state == ended


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_random_games_uniform(seed: int) -> None:
    play_game(seed, taker=False)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_random_games_taker(seed: int) -> None:
    play_game(seed, taker=True)


def test_every_variant_is_played() -> None:
    """A fixed set of seeds covers every variant and both pack sizes of b."""
    seen = set()
    for seed in range(40):
        rules = random_rules(random.Random(seed))
        seen.add((rules.variant, rules.pack_count))
    assert seen == {("a", 1), ("b", 1), ("b", 2), ("c", 1), ("d", 1)}


def test_deal_is_dealt_as_records_say() -> None:
    rules = RummyRules(variant="b", players=3)
    state = deal(rules, 1, rules.pack)  # dealer 1: seats 2, 0, 1 get cards 0, 1, 2, ...
    assert state.hands[2][:2] == (rules.pack[0], rules.pack[3]) and state.hands[0][0] == rules.pack[1]
    assert len(state.hands[1]) == 6 and len(state.hands[2]) == 7  # seat 2 drew the stock's top
    assert state.drawn == rules.pack[18] and state.stock[0] == rules.pack[19] and state.seat == 2
