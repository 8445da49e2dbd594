"""Who sends a turn prompt: the service that appended the event making it that seat's turn,
even where the turn passes into another service's phase. So a new deal's first bid is prompted
by the dealer and the first card by bidding, without a consumer hop to the phase's own service;
and a service that hears of the event later (or starts later) still takes the answer."""

from __future__ import annotations

import asyncio
import time

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.events import DealDealt, GameDeclared
from protocol.skat.rules import Rules
from protocol.skat.table import TableState
from protocol.wire import OpenTable, Update, decode
from services.store import EventStore
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer
from tests.bus import Stack, open_table, wait_closed
from tests.services.test_table_over_bus import PLAYERS, pure_log

RULES = Rules(rounds=1, turn_seconds=60)


def _seed_with_a_game_in_the_first_deal() -> str:
    """A seed whose first deal is declared (not passed in), found with the pure engine."""
    for n in range(100):
        seed = f"writer-{n}"
        log = pure_log("wp", RULES, seed, "w")
        first_deal = log[: next(i for i, e in enumerate(log) if type(e).__name__ == "DealScored")]
        if any(isinstance(e, GameDeclared) for e in first_deal):
            return seed
    raise AssertionError("no seed with a declared first deal")


class Prompts:
    """Every turn prompt seen on the table's view subjects, as (phase, player, index)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []
        self.changed = asyncio.Event()

    async def on_msg(self, msg: Msg) -> None:
        update: Update = decode(msg.data, Update)
        if update.your_turn and update.view is not None:
            player = update.view.players[update.view.seat]
            self.seen.append((update.view.phase, player, update.index))
            self.changed.set()

    async def wait_for(self, phase: str, timeout: float = 20.0) -> tuple[str, str, int]:
        async def first() -> tuple[str, str, int]:
            while True:
                for prompt in self.seen:
                    if prompt[0] == phase:
                        return prompt
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(first(), timeout)


async def _until(done: object, prompts: Prompts) -> None:
    while not done():  # type: ignore[operator]
        prompts.changed.clear()
        await prompts.changed.wait()


async def test_the_writer_prompts_so_the_first_bid_and_card_need_no_hop_to_the_phase_service(
    nats_server: object, nc: Client
) -> None:
    seed = _seed_with_a_game_in_the_first_deal()
    prompts = Prompts()
    sub = await nc.subscribe("skat.view.*.wp", cb=prompts.on_msg)
    stack = Stack(nats_server.url)  # type: ignore[attr-defined]
    players = [RemotePlayer(nc, p, HashedBot("w"), request_timeout=1.0) for p in PLAYERS]
    try:
        for name in ("dealer", "scoring", "views"):  # neither bidding nor play runs yet
            stack.start(name)
        for p in players:
            await p.start()
        assert (await open_table(nc, OpenTable(table="wp", players=PLAYERS, rules=RULES, seed=seed))).ok
        phase, player, index = await prompts.wait_for("bidding")  # from the dealer: bidding is not there
        assert index == 2 and player == PLAYERS[1]  # after opened and dealt: middlehand bids first
        stack.start("bidding")  # it catches up, and takes the bid answering a prompt it never sent
        first_card = await prompts.wait_for("playing")  # from bidding: play is not there
        # Had bidding died between its append and its prompt, the instance taking over sends
        # the prompt again: it writes events of the last one's kind (here: it is killed after
        # prompting, and its successor's recovery repeats the prompt, which players drop).
        stack.kill("bidding")
        stack.start("bidding")
        await asyncio.wait_for(_until(lambda: prompts.seen.count(first_card) >= 2, prompts), 30)
        stack.start("play")
        assert await wait_closed(nc, "wp") == pure_log("wp", RULES, seed, "w")
    finally:
        for p in players:
            await p.stop()
        await sub.unsubscribe()
        stack.stop()


async def test_a_prompt_another_service_sent_is_repeated_once_by_the_phase_service_if_unanswered(
    stack: Stack, nc: Client
) -> None:
    """The dealer prompts a new deal's first bid; had it died between dealing and prompting,
    the seat would wait for nothing. So bidding, whose phase it is, sends that prompt again
    after ``REPROMPT_AFTER`` seconds without an answer, once (players drop repeats by index)."""
    from services.runtime import RECHECK_AFTER, REPROMPT_AFTER

    # Services read their tables again RECHECK_AFTER seconds after taking their partitions over
    # (at start), and re-send what is pending then: open the table after that.
    await asyncio.sleep(RECHECK_AFTER + 1.0)

    times: list[float] = []  # wall clock, to compare with the server's stamp of the deal
    loop = asyncio.get_running_loop()

    async def on_msg(msg: Msg) -> None:
        update: Update = decode(msg.data, Update)
        if update.your_turn and update.index == 2:
            times.append(time.time())

    sub = await nc.subscribe("skat.view.*.rp", cb=on_msg)
    try:
        assert (await open_table(nc, OpenTable(table="rp", players=PLAYERS, rules=RULES, seed="rp"))).ok
        end = loop.time() + REPROMPT_AFTER + 15.0  # nobody answers
        while len(times) < 2 and loop.time() < end:
            await asyncio.sleep(0.05)
        assert len(times) == 2, times
        # The repeat is counted from when bidding heard of the deal, which is after it was stored.
        dealt = (await EventStore(nc).read("rp"))[1]
        assert isinstance(dealt.event, DealDealt)
        assert times[1] >= dealt.time + REPROMPT_AFTER - 0.1, (times, dealt.time)
        await asyncio.sleep(REPROMPT_AFTER + 1.0)
        assert len(times) == 2, times  # once, not every few seconds
    finally:
        await sub.unsubscribe()


@pytest.mark.parametrize(
    ("table", "players", "rules"),
    [
        ("one-kontra", ["ann", "bob", "cyd"], Rules(rounds=2, kontra=True, bock=True, turn_seconds=60)),
        ("one-ramsch", ["ann", "bob", "cyd"], Rules(rounds=2, ramsch=True, kontra=True, turn_seconds=60)),
        ("one-four", ["ann", "bob", "cyd", "dan"], Rules(rounds=1, players=4, kontra=True, turn_seconds=60)),
    ],
)
async def test_every_position_a_seat_must_answer_is_prompted_exactly_once(
    stack: Stack, nc: Client, table: str, players: list[str], rules: Rules
) -> None:
    """Whichever service wrote the event that made it a seat's turn (the dealer, bidding, play,
    across every phase change: a new deal, the skat, the declaration, Kontra and Re, a
    passed-in Ramsch, a four-player table whose dealer sits out), that seat gets one prompt
    for that position, to the right player, and no position goes unprompted."""
    from services.runtime import RECHECK_AFTER

    await asyncio.sleep(RECHECK_AFTER + 1.0)  # past the services' start-up re-read (it may repeat)
    prompted: list[tuple[int, str]] = []

    async def on_msg(msg: Msg) -> None:
        update: Update = decode(msg.data, Update)
        if update.your_turn and update.view is not None:
            prompted.append((update.index, update.view.players[update.view.seat]))

    sub = await nc.subscribe(f"skat.view.*.{table}", cb=on_msg)
    bots = [RemotePlayer(nc, p, HashedBot("once")) for p in players]
    try:
        for bot in bots:
            await bot.start()
        assert (await open_table(nc, OpenTable(table=table, players=players, rules=rules, seed=table))).ok
        log = await wait_closed(nc, table)
        await asyncio.sleep(0.5)  # the last prompts' deliveries
    finally:
        for bot in bots:
            await bot.stop()
        await sub.unsubscribe()
    state = TableState()
    expected = []
    for event in log:
        state.apply(event)
        if state.to_move is not None:
            expected.append((state.events, state.players[state.to_move]))
    assert sorted(prompted) == expected
