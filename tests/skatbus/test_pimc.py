"""The PIMC bot's parts: the double-dummy solver against plain minimax, sampled worlds against
what a seat knows and the true deal, and the bot's own promises (legal, reproducible)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator

import pytest
from nats.aio.client import Client

from protocol.events import CardPlayed, PlayerTimedOut
from protocol.skat import cards as C
from protocol.skat.cards import POINTS
from protocol.skat.commands import PlayCard
from protocol.skat.deal import PLAYING, Deal, Phase
from protocol.skat.dealing import deal_from_seed
from protocol.skat.knowledge import Knowledge
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, fold
from protocol.skat.views import view
from protocol.wire import OpenTable
from skatbus.bots import observe
from skatbus.heuristic import HeuristicBot
from skatbus.local import play_table
from skatbus.pimc.bot import PimcBot
from skatbus.pimc.solver import HAVE_CORE, Position, SearchAborted, Solver
from skatbus.pimc.worlds import hand_sizes, sample
from skatbus.player import RemotePlayer
from tests.bus import Stack, open_table, wait_closed
from tests.protocol.test_views import _walk

GAMES = {"C": "clubs", "S": "spades", "H": "hearts", "D": "diamonds", "G": "grand", "N": "null"}


def _minimax(deal: Deal, hands: list[int], trick: list[int], mover: int, null: bool) -> int:
    """Plain minimax over every legal card: the declarer's future points (null: 1 if it takes
    a trick). No pruning, no table, no equivalences: slow and obviously right."""
    order, declarer = deal.order, deal.declarer
    values = []
    for c in C.cards_of(order.legal(hands[mover], trick[0] if trick else None)):
        hands[mover] ^= 1 << c
        values.append(_after(deal, hands, [*trick, c], mover, null))
        hands[mover] ^= 1 << c
    maximizing = (mover == declarer) != null
    return max(values) if maximizing else min(values)


def _after(deal: Deal, hands: list[int], trick: list[int], mover: int, null: bool) -> int:
    if len(trick) < 3:
        return _minimax(deal, hands, trick, (mover + 1) % 3, null)
    winner = ((mover + 1) % 3 + deal.order.trick_winner(trick)) % 3
    won = winner == deal.declarer
    if null:
        return 1 if won else (0 if not any(hands) else _minimax(deal, hands, [], winner, null))
    pts = sum(POINTS[c] for c in trick) if won else 0
    return pts + (_minimax(deal, hands, [], winner, null) if any(hands) else 0)


def _endgames(count: int) -> Iterator[tuple[Deal, bool]]:
    """Random hand games of every kind, played at random down to three or four tricks."""
    for seed in range(count * 3):
        rng = random.Random(seed)
        deal = Deal(*deal_from_seed(f"endgame{seed}"))
        for text in ("bid 18", "pass", "pass"):
            deal.push_text(text)
        game = rng.choice("CSHDGN")
        deal.push_text(f"declare {GAMES[game]}")
        left = rng.choice((9, 10, 11, 12))
        while deal.phase == PLAYING and sum(h.bit_count() for h in deal.hands) > left:
            deal.push(rng.choice(deal.legal_actions()))
        if deal.phase == PLAYING:
            yield deal, game == "N"
            count -= 1
            if not count:
                return


CORES = [False, pytest.param(True, marks=pytest.mark.skipif(not HAVE_CORE, reason="the C core is not built"))]


@pytest.mark.parametrize("use_core", CORES, ids=["python", "c"])
@pytest.mark.parametrize("case", range(4))
def test_the_solver_agrees_with_plain_minimax(case: int, use_core: bool) -> None:
    for deal, null in list(_endgames(40))[case * 10 : case * 10 + 10]:
        assert deal.to_move is not None and deal.declarer is not None
        solver = Solver(deal.order, deal.declarer, null, use_core=use_core)
        position = Position(deal.hands, deal.trick, deal.to_move, deal.declarer, deal.order, null)
        values = solver.move_values(position)
        assert set(values) == set(C.cards_of(deal.legal_cards()))
        for card, value in values.items():
            hands = list(deal.hands)
            hands[deal.to_move] ^= 1 << card
            assert value == _after(deal, hands, [*deal.trick, card], deal.to_move, null), (repr(deal), card)
        for target in (1, 20, 45):
            reached = Solver(deal.order, deal.declarer, null, use_core=use_core).move_reaches(position, target)
            for card, value in values.items():
                assert reached[card] == (value >= 1 if null else value >= target)


@pytest.mark.parametrize("use_core", CORES, ids=["python", "c"])
def test_a_node_limit_stops_a_search(use_core: bool) -> None:
    deal = Deal(*deal_from_seed("big"))
    for text in ("bid 18", "pass", "pass", "declare grand"):
        deal.push_text(text)
    assert deal.to_move is not None and deal.declarer is not None
    solver = Solver(deal.order, deal.declarer, node_limit=2000, use_core=use_core)
    with pytest.raises(SearchAborted):
        solver.move_values(Position(deal.hands, [], deal.to_move, deal.declarer, deal.order))


@pytest.mark.skipif(not HAVE_CORE, reason="the C core is not built")
def test_the_c_core_agrees_with_the_python_solver_on_whole_deals() -> None:
    """From the first card on: exact values from both searches, for every kind of game."""
    for seed in range(6):
        deal = Deal(*deal_from_seed(f"whole{seed}"))
        for text in ("bid 18", "pass", "pass", f"declare {GAMES['CSHDGN'[seed]]}"):
            deal.push_text(text)
        for _ in range(random.Random(seed).choice((9, 12))):  # three or four tricks in
            deal.push(deal.legal_actions()[0])
        assert deal.to_move is not None and deal.declarer is not None
        null = deal.declaration is not None and deal.declaration.game == "N"
        position = Position(deal.hands, deal.trick, deal.to_move, deal.declarer, deal.order, null)
        fast = Solver(deal.order, deal.declarer, null, use_core=True).move_values(position)
        slow = Solver(deal.order, deal.declarer, null, use_core=False).move_values(position)
        assert fast == slow


@pytest.mark.parametrize("seed", range(4))
def test_worlds_agree_with_what_the_seat_knows_and_hold_the_truth_as_possible(seed: int) -> None:
    rng = random.Random(seed)
    rules = Rules(rounds=1, kontra=True)
    checked = 0
    for state in _walk(200 + seed, rules):
        deal = state.deal
        if deal is None or state.scored or deal.phase != Phase.PLAYING:
            continue
        for pos, seat in enumerate(state.seats):
            k = Knowledge.of(view(state, seat))
            sizes = hand_sizes(k)
            assert all(sizes[s] == C.count(deal.hands[p]) for p, s in enumerate(state.seats))
            for _ in range(3):
                world = sample(k, rng)
                assert world.hands[pos] == deal.hands[pos]
                cards = world.hands[0] | world.hands[1] | world.hands[2] | world.skat
                assert cards & k.played == 0 and cards | k.played | k.skat == C.ALL
                for p, s in enumerate(state.seats):
                    assert C.count(world.hands[p]) == sizes[s]
                    assert world.hands[p] & ~k.possible(s) == 0  # no card against a shown void
            checked += 1
    assert checked


def _seat_tables(bot: object, seed: str) -> TableState:
    bots = [bot, HeuristicBot("a"), HeuristicBot("b")]
    return play_table("pimc", ["p", "a", "b"], bots, Rules(rounds=1, kontra=True), seed).state  # type: ignore[list-item]


def test_the_bot_plays_legal_tables_and_reproducibly_with_a_fixed_number_of_worlds() -> None:
    first = _seat_tables(PimcBot("s", worlds=3), "pimc-legal")
    again = _seat_tables(PimcBot("s", worlds=3), "pimc-legal")
    assert first.closed and first.score == again.score and first.events == again.events


def test_the_bot_overrules_the_heuristic_only_with_a_card_it_holds() -> None:
    bot = PimcBot("x", worlds=4)
    state = TableState()
    decisions = 0
    for state in _walk(9, Rules(rounds=1)):
        seat = state.to_move
        if seat is None or state.deal is None or state.deal.phase != Phase.PLAYING:
            continue
        obs = observe(state, seat)
        action = bot.act(obs)
        assert isinstance(action, PlayCard) and action in obs.view.legal
        decisions += 1
        if decisions > 12:
            break
    assert decisions and bot.worlds_solved > 0


async def test_pimc_plays_over_the_bus_as_a_remote_bot(stack: Stack, nc: Client) -> None:
    """``skat bot pimc``: a remote player like any other (its searches in a worker thread), a
    whole table without a time-out and a log that verifies."""
    players = ["ann", "pim", "cyd"]
    others = [RemotePlayer(nc, p, HeuristicBot(p)) for p in ("ann", "cyd")]
    for p in others:
        await p.start()
    bot = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "bot", "pimc", "--player", "pim", "--nats", stack.url],
        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
    )
    try:
        rules = Rules(rounds=1, turn_seconds=30)
        assert (await open_table(nc, OpenTable(table="pimc", players=players, rules=rules, seed="pimc"))).ok
        log = await wait_closed(nc, "pimc", timeout=120)
    finally:
        bot.terminate()
        assert bot.wait(20) == 0
        for p in others:
            await p.stop()
    state = fold(log)
    assert state.closed and not [e for e in log if isinstance(e, PlayerTimedOut)]
    assert any(isinstance(e, CardPlayed) and e.seat == 1 for e in log)
