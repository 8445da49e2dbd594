"""The rummy engine against the independent reference checker (``rummy_oracle``), differentially.

Random games of every variant and option combination are played by the engine with random
legal actions (a uniform player, and a taker who takes from the row whenever it can, so hands
grow long), sometimes written in a form M47 lets the engine's list leave out (a set's cards in
another order, the other copy of a card, a joker where a held natural could stand). Three
judges must agree:

- in lock-step with the engine, the oracle plays every action too (it must accept each one), and
  at sampled moments both are asked about a spread of candidate actions (every take, discard,
  swap and lay-off, claims of every extent, M47's variants of the listed melds): each candidate
  must be accepted by both or refused by both;
- the finished game's record (``protocol.rummy.records.record_of``) must be judged "agree" by
  ``records.check`` and by the oracle's ``check``;
- mutated records (a changed score, two actions swapped, an action inserted, a record cut short)
  must be judged the same way by both: refused at the same deal and position, or differing in
  the same fields.

Crowded positions (a row and a small hand of a few neighbouring ranks, all suits of one rank,
the jokers, sometimes melds on the table) put the same candidate question where bars, claims and
swaps are decided, which random games reach rarely; and the points named beforehand as likely
disagreements (a claim's extent beside a row joker, M33; a d player who has melded and holds
only barred cards, M23; M47's forms; M48) are pinned case by case.

Run more by hand with ``RUMMY_DIFF_GAMES=2000`` (that many uniform games, a third as many
taker's games, ten times as many crowded positions).
"""

from __future__ import annotations

import copy
import json
import os
import random
from itertools import islice, permutations
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.rummy import (
    SUITS,
    AnyAction,
    Claim,
    Deal,
    Lay,
    LayOff,
    Meld,
    RummyRules,
    Take,
    base,
    is_joker,
    legal,
    make_meld,
    new_match,
    parse_action,
    parse_token,
    play,
    records,
    start_deal,
    token,
    why_not,
)
from protocol.rummy.melds import meld_options
from tests.games import rummy_oracle as oracle

SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
GAMES = int(os.environ.get("RUMMY_DIFF_GAMES", "0"))
NAMES = ["ann", "bob", "cyd", "dan", "eve", "fay"]


def random_rules(rng: random.Random) -> RummyRules:
    """Every variant, player count, pack size and option (left out or written)."""
    variant = rng.choice("abcd")
    players = rng.randint(2, 6 if variant == "b" else 4)
    return RummyRules(
        variant=variant,  # type: ignore[arg-type]
        players=players,
        packs=rng.choice([None, 1, 2]) if variant == "b" else rng.choice([None, 1]),
        target=rng.choice([30, 60, 120, 300]),
        layoff_credit=rng.choice([None, "layer", "owner"]),
        ace_joins_low=rng.random() < 0.75,
        joker_doubling=rng.choice(["hand", "net"]),
        max_deals=rng.randint(1, 4),
    )


def oracle_config(rules: RummyRules) -> oracle.Config:
    return oracle.config_from({"players": NAMES[: rules.players], "rules": records.written_rules(rules)})


# --- candidate actions ---------------------------------------------------------------------------


def _variants(action: AnyAction, hand: tuple[str, ...], rules: RummyRules, rng: random.Random) -> list[str]:
    """M47: forms of a listed meld or claim the list may leave out, which both must accept."""
    if not isinstance(action, Lay | Claim):
        return []
    verb = "meld" if isinstance(action, Lay) else "claim"
    cards = list(action.cards)
    out: list[str] = []
    nats = [t for t in cards if not is_joker(t)]
    is_set = len({c[1] for c in nats}) == 1
    if is_set:  # a set's cards in any order
        perms = list(permutations(cards))
        out.extend(f"{verb} {' '.join(p)}" for p in rng.sample(perms, min(3, len(perms))))
    other = [t + "'" if not is_joker(t) and "'" not in t and t + "'" in hand else t for t in cards]
    if other != cards:  # the other copy of a card (108 cards)
        out.append(f"{verb} {' '.join(other)}")
    free = sorted(c for c in hand if is_joker(c) and all(parse_token(t)[0] != c for t in cards))
    if free and verb == "meld":  # a joker where a natural card of the meld could stand
        for i, t in enumerate(cards):
            if is_joker(t):
                continue
            alt = [*cards]
            alt[i] = token(free[0], t[1] if is_set and rules.variant == "b" else base(t))
            out.append(f"meld {' '.join(alt)}")
    jokers = [i for i, t in enumerate(cards) if is_joker(t)]
    if len(jokers) >= 2:  # which joker goes where
        a, b = jokers[0], jokers[1]
        ca, sa = parse_token(cards[a])
        cb, sb = parse_token(cards[b])
        alt = [*cards]
        alt[a], alt[b] = token(cb, sa), token(ca, sb)
        out.append(f"{verb} {' '.join(alt)}")
    return out


def _claims(state: Deal) -> list[str]:
    """Claims of every extent through each card of the hand: sets of any of the row's cards of
    its rank, runs of every window through it with the row's naturals and jokers in the gaps."""
    rules = state.rules
    if not rules.no_feeding:
        return []
    cyc = rules.cycle
    row = state.row
    row_jokers = [c for c in row if is_joker(c)]
    nat = {base(c): c for c in row if not is_joker(c)}
    out: list[str] = []
    for h in sorted(set(state.hands[state.seat])):
        if is_joker(h):
            out.extend(_joker_claims(h, row_jokers, nat, rules))
            continue
        s, r = h[0], h[1]
        same = [nat[t + r] for t in SUITS if t != s and t + r in nat]
        for k in range(1, len(same) + 1):
            for j in range(0, 2):
                if k + 1 + j < 3 or j > len(row_jokers):
                    continue
                used = {h[0], *(c[0] for c in same[:k])}
                missing = [t for t in SUITS if t not in used]
                if j and not missing:
                    continue
                joker = [token(row_jokers[0], missing[0] + r if rules.named_set_jokers else r)] if j else []
                out.append("claim " + " ".join([h, *same[:k], *joker]))
        ri = cyc.pos[r]
        for length in range(3, cyc.size + 1):
            for start in cyc.starts(length):
                window = cyc.window(start, length)
                if ri not in window:
                    continue
                texts: list[str] = []
                jokers = iter(row_jokers)
                ok = True
                for p in window:
                    card = s + cyc.ranks[p]
                    if p == ri:
                        texts.append(h)
                    elif card in nat:
                        texts.append(nat[card])
                    else:
                        spare = next(jokers, None)
                        if spare is None:
                            ok = False
                            break
                        texts.append(token(spare, card))
                if ok:
                    out.append("claim " + " ".join(texts))
    return out


def _joker_claims(h: str, row_jokers: list[str], nat: dict[str, str], rules: RummyRules) -> list[str]:
    """Claims whose card from the hand is the joker ``h``: with row naturals of one rank, or a
    window of one suit with ``h`` in one gap and the row's jokers in the others."""
    cyc = rules.cycle
    out: list[str] = []
    for r in cyc.ranks:
        have = [nat[t + r] for t in SUITS if t + r in nat]
        missing = [t for t in SUITS if t + r not in nat]
        if len(have) >= 2 and missing:
            out.append("claim " + " ".join([*have, token(h, missing[0] + r if rules.named_set_jokers else r)]))
    for s in SUITS:
        for length in range(3, cyc.size + 1):
            for start in cyc.starts(length):
                window = cyc.window(start, length)
                gaps = [p for p in window if s + cyc.ranks[p] not in nat]
                if not gaps or len(gaps) > 1 + len(row_jokers) or len(gaps) * 2 > length:
                    continue
                fill = dict(zip(gaps, [h, *row_jokers]))
                texts = [token(fill[p], s + cyc.ranks[p]) if p in fill else nat[s + cyc.ranks[p]] for p in window]
                out.append("claim " + " ".join(texts))
    return out


def candidates(state: Deal, listed: list[AnyAction], rng: random.Random) -> list[str]:
    rules, hand = state.rules, state.hands[state.seat]
    out = [str(a) for a in listed]
    for a in rng.sample(listed, min(12, len(listed))):
        out.extend(_variants(a, hand, rules, rng))
    out.extend(f"take {i}" for i in range(1, len(state.row) + 1))
    out.extend(_random_melds(state, rng))
    out.extend(f"discard {c}" for c in sorted(set(hand)))
    out.extend(_claims(state))
    cyc = rules.cycle
    jokers = sorted(c for c in hand if is_joker(c))
    for number, meld in enumerate(state.melds, 1):
        for c in sorted(set(hand)):
            if not is_joker(c):
                out.append(f"layoff {number} {c}")
                if meld.jokers:
                    out.append(f"swap {number} {c}")
        for j in jokers[:1]:
            if meld.kind == "set":
                if rules.named_set_jokers:
                    out.extend(f"layoff {number} {j}={t}{meld.rank}" for t in SUITS)
                else:
                    out.append(f"layoff {number} {j}={meld.rank}")
            else:
                lo = cyc.pos[meld.rank]
                for p in (cyc.prv(lo), cyc.nxt((lo + len(meld.cards) - 1) % cyc.size)):
                    if p is not None:
                        out.append(f"layoff {number} {j}={meld.suit}{cyc.ranks[p]}")
    return list(dict.fromkeys(out))


def _random_joker(card: str, rules: RummyRules, rng: random.Random) -> str:
    """A joker written with a random card or rank (right or wrong)."""
    stands = rng.choice(rules.pack[: 13 * 4 if rules.variant != "a" else 36])
    return token(card, stands[1] if rng.random() < 0.3 else base(stands))


def _random_melds(state: Deal, rng: random.Random) -> list[str]:
    """Melds of random cards of the hand (and of the row's end), in random order, jokers named
    at random or as a neighbour of a natural card: mostly refused, sometimes not."""
    rules, hand = state.rules, list(state.hands[state.seat])
    cyc = rules.cycle
    out: list[str] = []
    for _ in range(8):
        k = rng.randint(3, min(5, max(3, len(hand))))
        if len(hand) < 3:
            break
        chosen = rng.sample(hand, k)
        nats = [c for c in chosen if not is_joker(c)]
        if rng.random() < 0.5 and nats:  # sorted as a run would be, from a random natural
            chosen.sort(key=lambda c: (cyc.pos[c[1]] - cyc.pos[nats[0][1]]) % cyc.size if not is_joker(c) else 99)
        texts = []
        for c in chosen:
            if is_joker(c):
                if nats and rng.random() < 0.6:
                    n = rng.choice(nats)
                    p = cyc.nxt(cyc.pos[n[1]]) if rng.random() < 0.5 else cyc.prv(cyc.pos[n[1]])
                    rank = cyc.ranks[p] if p is not None else n[1]
                    texts.append(token(c, rank if rules.variant == "b" and rng.random() < 0.5 else n[0] + rank))
                else:
                    texts.append(_random_joker(c, rules, rng))
            else:
                texts.append(c)
        out.append("meld " + " ".join(texts))
    for number in range(1, len(state.melds) + 1):
        for j in sorted(c for c in hand if is_joker(c))[:1]:
            out.append(f"layoff {number} {_random_joker(j, rules, rng)}")
            out.append(f"swap {number} {j}")
    return out


def engine_says(state: Deal, text: str) -> str:
    try:
        return why_not(state, parse_action(text)) or ""
    except ValueError as exc:
        return str(exc) or "refused"


def oracle_says(ostate: oracle.DealState, seat: int, text: str) -> str:
    trial = copy.deepcopy(ostate)
    verb, *args = text.split()
    try:
        oracle.act(trial, seat, verb, args)
    except oracle.Refused as exc:
        return str(exc) or "refused"
    return ""


def describe(state: Deal) -> str:
    melds = "; ".join(f"{i}:{m.owner}:{m.text}" for i, m in enumerate(state.melds, 1))
    return (
        f"variant {state.rules.variant} ace_joins_low={state.rules.ace_joins_low} seat {state.seat} "
        f"melded={state.melded} pending={state.pending!r} hand={' '.join(state.hands[state.seat])} "
        f"row={' '.join(state.row)} melds=[{melds}]"
    )


# --- playing ---------------------------------------------------------------------------------------


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


class Stats:
    def __init__(self) -> None:
        self.games = 0
        self.actions = 0
        self.takes = 0
        self.probes = 0
        self.candidates = 0
        self.mutations = 0


STATS = Stats()


def play_game(seed: int, taker: bool, probe: float) -> dict[str, Any]:
    """One game on the engine, the oracle in lock-step; returns its record."""
    rng = random.Random(seed)
    rules = random_rules(rng)
    cfg = oracle_config(rules)
    match = new_match(rules)
    decks: list[list[str]] = []
    lines: list[list[str]] = []
    while not match.complete:
        deck = list(rules.pack)
        rng.shuffle(deck)
        match = start_deal(match, deck)
        assert match.deal is not None
        decks.append(deck)
        lines.append([])
        ostate = oracle.deal_out(cfg, match.deal.dealer, deck)
        while match.deal is not None:
            state = match.deal
            listed = legal(state)
            assert listed, describe(state)
            if rng.random() < probe:
                STATS.probes += 1
                for text in candidates(state, listed, rng):
                    STATS.candidates += 1
                    mine, theirs = engine_says(state, text), oracle_says(ostate, state.seat, text)
                    assert bool(mine) == bool(theirs), (
                        f"seed {seed}: {text!r}: engine {mine or 'accepts'}; oracle {theirs or 'accepts'}\n"
                        f"{describe(state)}"
                    )
            action = choose(rng, state, listed, taker)
            text = str(action)
            if rng.random() < 0.3:  # sometimes a form M47 lets the list leave out
                alt = [t for t in _variants(action, state.hands[state.seat], rules, rng) if not engine_says(state, t)]
                if alt:
                    text = rng.choice(alt)
                    action = parse_action(text)
            seat = state.seat
            STATS.actions += 1
            STATS.takes += isinstance(action, Take)
            lines[-1].append(f"{seat} {text}")
            verb, *args = text.split()
            try:
                oracle.act(ostate, seat, verb, args)
            except oracle.Refused as exc:
                raise AssertionError(f"seed {seed}: the oracle refuses {text!r}: {exc}\n{describe(state)}") from None
            match = play(match, action)
        assert ostate.end is not None, f"seed {seed}: the engine ended the deal, the oracle did not"
    STATS.games += 1
    return records.record_of(match, NAMES[: rules.players], decks, lines)


# --- judging records -------------------------------------------------------------------------------


def oracle_key(record: dict[str, Any]) -> tuple[Any, ...]:
    v = oracle.check(record)
    if v.refusal is not None:
        return ("refused", v.refusal.deal, v.refusal.position)
    if v.differences:
        return ("differ", *sorted(d.split(":")[0] for d in v.differences))
    return ("incomplete",) if v.incomplete else ("agree",)


def engine_key(record: dict[str, Any]) -> tuple[Any, ...]:
    try:
        rec = records.read_record(record)
        replayed = records.replay(rec)
    except records.RefusedAt as exc:
        deal = None if exc.deal is None else exc.deal - 1
        return ("refused", deal, None if exc.action is None else exc.action - 1)
    differences = records.compare(rec, replayed)
    verdict = records.check(record)
    assert (verdict.status == "differ") == bool(differences)
    if differences:
        return ("differ", *sorted(d.field for d in differences))
    return ("incomplete",) if replayed.stopped else ("agree",)


def mutations(record: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    deals = record["deals"]
    i = rng.randrange(len(deals))
    m = copy.deepcopy(record)  # a changed score
    seat = rng.randrange(len(record["players"]))
    m["deals"][i]["result"]["score"][seat] += rng.choice([-3, -1, 1, 10])
    out.append(m)
    with_two = [k for k, d in enumerate(deals) if len(d["actions"]) >= 2]
    if with_two:  # two actions swapped
        k = rng.choice(with_two)
        m = copy.deepcopy(record)
        acts = m["deals"][k]["actions"]
        p = rng.randrange(len(acts) - 1)
        q = p + 1 if rng.random() < 0.7 else rng.randrange(p + 1, len(acts))
        acts[p], acts[q] = acts[q], acts[p]
        out.append(m)
    every = [a for d in deals for a in d["actions"]]
    for _ in range(2):  # an action inserted: one of the record's own, or a card out of nowhere
        m = copy.deepcopy(record)
        acts = m["deals"][i]["actions"]
        p = rng.randrange(len(acts) + 1)
        seat_of = acts[p].split()[0] if p < len(acts) else acts[-1].split()[0] if acts else "0"
        pack = records.read_record(record).rules.pack
        extra = rng.choice(
            [
                rng.choice(every) if every else "0 take 1",
                f"{seat_of} discard {rng.choice(pack)}",
                f"{seat_of} take {rng.randint(1, 4)}",
                f"{seat_of} layoff 1 {rng.choice(pack)}",
            ]
        )
        acts.insert(p, extra)
        out.append(m)
    m = copy.deepcopy(record)  # cut short in the middle of a deal
    del m["deals"][i + 1 :]
    acts = m["deals"][i]["actions"]
    if acts:
        del acts[rng.randrange(len(acts)) :]
        m["deals"][i].pop("result", None)
    out.append(m)
    return out


def check_record(record: dict[str, Any], seed: int) -> None:
    assert oracle_key(record) == ("agree",), (seed, oracle.check(record))
    assert engine_key(record) == ("agree",), (seed, records.check(record).describe())
    assert records.check(record).status == "agree"
    rng = random.Random(seed ^ 0x5EED)
    for m in mutations(record, rng):
        STATS.mutations += 1
        theirs, mine = oracle_key(m), engine_key(m)
        assert theirs == mine, (seed, theirs, mine, records.check(m).describe(), oracle.check(m).refusal)


@settings(max_examples=GAMES or 14, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_random_games_agree(seed: int) -> None:
    check_record(play_game(seed, taker=False, probe=0.15), seed)


@settings(max_examples=(GAMES // 3) or 5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_long_games_with_takes_agree(seed: int) -> None:
    check_record(play_game(seed, taker=True, probe=0.08), seed)


def test_every_variant_is_covered() -> None:
    """The option drawing reaches every variant, both b pack sizes and both corner rules."""
    seen = set()
    for seed in range(60):
        rules = random_rules(random.Random(seed))
        seen.add((rules.variant, rules.pack_count, rules.ace_joins_low))
    assert {(v, p) for v, p, _ in seen} == {("a", 1), ("b", 1), ("b", 2), ("c", 1), ("d", 1)}
    assert {low for _, _, low in seen} == {True, False}


# --- crowded positions -----------------------------------------------------------------------------


def crowded(rng: random.Random) -> tuple[Deal, oracle.DealState]:
    """A deal in the middle where bars and claims are the question: the row and a small hand
    drawn from a few neighbouring ranks of two suits, all suits of one rank, and the jokers."""
    variant = rng.choice("abcdcd")
    rules = RummyRules(variant=variant, players=2, ace_joins_low=rng.random() < 0.7)  # type: ignore[arg-type]
    cyc = rules.cycle
    low = rng.randrange(cyc.size)
    ranks = [cyc.ranks[p] for p in cyc.window(low, 5)]
    suits = rng.sample(SUITS, 2)
    pool = {s + r for s in suits for r in ranks} | {s + ranks[2] for s in SUITS}
    if rules.jokers:
        pool |= {"X1", "X2"}
    cards = rng.sample(sorted(pool), min(len(pool), rng.randint(4, 11)))
    melds: list[Meld] = []
    for _ in range(rng.choice([0, 0, 1, 2])):  # melds on the table, of the same few cards
        spare = [c for c in sorted(pool | {s + r for s in SUITS for r in ranks}) if c not in cards]
        spare = [c for c in spare if all(c != p.card for m in melds for p in m.cards)]
        options = list(islice(meld_options(rng.sample(spare, min(len(spare), 7)), rules), 40))
        if options:
            tokens = [parse_token(t) for t in rng.choice(options)]
            melds.append(make_meld(tokens, rules, rng.randrange(2)))
    k = rng.randint(1, min(4, len(cards) - 2))
    hand, row = cards[:k], cards[k:]
    rng.shuffle(row)
    melded = rng.random() < 0.5
    on_table = {p.card for m in melds for p in m.cards}
    rest = [c for c in rules.pack if c not in cards and c not in on_table]
    state = Deal(
        rules=rules,
        dealer=1,
        hands=(tuple(hand), tuple(rest[:5])),
        stock=tuple(rest[5:]),
        row=tuple(row),
        melds=tuple(melds),
        seat=0,
        melded=(melded, False),
        turns=1,
    )
    cfg = oracle_config(rules)
    ostate = oracle.DealState(cfg, 1, [list(hand), list(rest[:5])], list(rest[5:]), list(row))
    for m in melds:
        pieces = [oracle.parse_token(cfg, p.text) for p in m.cards]
        for piece in pieces:
            piece.credit = m.owner
        ostate.melds.append(oracle.build_meld(cfg, m.owner, pieces))
    if melded:
        ostate.melded.add(0)
    return state, ostate


@settings(max_examples=GAMES * 10 or 300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_crowded_positions_agree(seed: int) -> None:
    """Every candidate (discards, takes, claims of every extent) in a crowded row is accepted by
    both or refused by both (M14, M21-M23, M32, M33, M48, M49)."""
    rng = random.Random(seed)
    state, ostate = crowded(rng)
    for text in candidates(state, legal(state), rng):
        STATS.candidates += 1
        mine, theirs = engine_says(state, text), oracle_says(ostate, 0, text)
        assert bool(mine) == bool(theirs), (
            f"{text!r}: engine {mine or 'accepts'}; oracle {theirs or 'accepts'}\n{describe(state)}"
        )


# --- the points named beforehand as likely disagreements -------------------------------------------


def position(variant: str, hand: str, row: str, melded: bool = True) -> tuple[Deal, oracle.DealState]:
    """Seat 0 of 2 to move (its draw made) with ``hand`` and the row ``row``, oldest first."""
    rules = RummyRules(variant=variant, players=2)  # type: ignore[arg-type]
    named = hand.split() + row.split()
    rest = [c for c in rules.pack if c not in named]
    state = Deal(
        rules=rules,
        dealer=1,
        hands=(tuple(hand.split()), tuple(rest[:5])),
        stock=tuple(rest[5:]),
        row=tuple(row.split()),
        seat=0,
        melded=(melded, False),
        turns=1,
    )
    ostate = oracle.DealState(oracle_config(rules), 1, [hand.split(), rest[:5]], rest[5:], row.split())
    if melded:
        ostate.melded.add(0)
    return state, ostate


def both(state: Deal, ostate: oracle.DealState, text: str) -> bool:
    """Whether both accept ``text``; fails when they disagree."""
    mine, theirs = engine_says(state, text), oracle_says(ostate, 0, text)
    assert bool(mine) == bool(theirs), (text, mine, theirs)
    return not mine


def test_claim_extent_with_a_row_joker_that_could_bridge() -> None:
    """M21, M33: a claim must leave no natural row card "next to either end of the run"; a row
    joker that could bridge a gap to a farther natural does not make that natural part of the
    claim, but a joker the claim does lay makes the natural next to it an end's neighbour."""
    state, ostate = position("c", "H9 C3", "H5 X1 H7 H8")
    assert both(state, ostate, "claim H7 H8 H9")  # H5 lies two beyond H7: left in the row
    assert both(state, ostate, "claim H5 X1=H6 H7 H8 H9")  # or taken, the joker bridging
    assert both(state, ostate, "claim H7 H8 H9 X1=HT")
    assert not both(state, ostate, "claim X1=H6 H7 H8 H9")  # H5 is now next to the low end
    assert not both(state, ostate, "discard H9") and both(state, ostate, "discard C3")


def test_d_player_who_has_melded_and_holds_only_barred_cards_must_claim() -> None:
    """M23 (d is "like c"; only a player barred from claiming by M22 may discard any card), M49."""
    for melded in (True, False):
        state, ostate = position("d", "H6 S6", "C6 D6 H7 H8", melded=melded)
        assert both(state, ostate, "discard H6") is not melded
        assert both(state, ostate, "claim C6 D6 H6") is melded


def test_m48_no_claim_possible_any_discard() -> None:
    """M48: d, a joker alone and all four of a rank in the row: no claim can take all four with
    it (a set holds four cards), so the barred joker may go."""
    state, ostate = position("d", "X1", "C6 S6 H6 D6")
    assert both(state, ostate, "discard X1")


def test_m47_forms_are_accepted_by_both() -> None:
    """M47: a set in any order, the other copy, a joker where a held natural could stand, which
    joker goes where, a whole-suit run in another rotation."""
    state, ostate = position("c", "H7 S7 D7 X1 X2 H8 H9", "")
    for text in ("meld D7 H7 S7", "meld S7 H7 X1=C7", "meld H7 X1=H8 H9", "meld H7 H8 X1=H9 X2=HT"):
        assert both(state, ostate, text)
    assert both(state, ostate, "meld H7 H8 X2=H9 X1=HT")
    rules = RummyRules(variant="b", players=5, packs=2)
    whole = [f"S{r}" for r in "56789TJQKA234"]
    named = [*whole, "H7'", "S7'", "D7"]
    rest = [c for c in rules.pack if c not in named]
    big = Deal(
        rules=rules,
        dealer=4,
        hands=(tuple(named), *(tuple(rest[k * 6 : k * 6 + 6]) for k in range(4))),
        stock=tuple(rest[24:]),
        seat=0,
        melded=(False,) * 5,
        turns=1,
    )
    obig = oracle.DealState(
        oracle_config(rules), 4, [list(named), *(rest[k * 6 : k * 6 + 6] for k in range(4))], rest[24:]
    )
    assert both(big, obig, "meld " + " ".join(whole))
    assert both(big, obig, "meld H7' S7' D7")


def test_played_fixtures_agree() -> None:
    """tests/data/rummy/played.jsonl (games the engine played, make_played.py): both agree."""
    path = Path(__file__).parent.parent / "data" / "rummy" / "played.jsonl"
    played = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert len(played) == 8
    for record in played:
        assert oracle_key(record) == engine_key(record) == ("agree",), record["note"]
