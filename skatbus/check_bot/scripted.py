"""The players of the example transcripts in docs/protocol.md, one script per game.

Each transcript has one JSON player written as a bot author in any language would write it
(raw NATS, JSON only: ``JsonPlayer``), whose every message is recorded, and built-in players in
the other seats, simple enough to play the same way whatever the timing. A ``Script`` says who
sits where, under which rules and seed, and which update ends the transcript.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.skat.commands import Bid, Pass
from protocol.skat.rules import Rules
from protocol.subjects import command_subject, parse_view_subject
from protocol.thirty_one.commands import Knock, Take
from protocol.thirty_one.rules import ThirtyOneRules

JsonCommand = dict[str, Any]


class JsonPlayer:
    """A JSON player in raw NATS: it subscribes to its views and its inbox, answers one prompt
    at a time (so that every run sends the same messages) with the commands ``commands(update)``
    gives, each sent as a request, and stops answering once an update ``ends`` the transcript."""

    def __init__(self, nc: Client, player: str) -> None:
        self.nc = nc
        self.player = player
        self.n = 0
        self.replies: dict[str, asyncio.Future[bytes]] = {}
        self.done = asyncio.Event()
        self.prompts: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.worker: asyncio.Task[None] | None = None

    def commands(self, update: dict[str, Any]) -> list[JsonCommand]:
        """What to send for a prompt, in order (the same twice: a retry after a lost reply)."""
        raise NotImplementedError

    def ends(self, update: dict[str, Any]) -> bool:
        """Whether ``update`` ends the transcript."""
        raise NotImplementedError

    async def start(self) -> None:
        await self.nc.subscribe(f"_INBOX.{self.player}.*", cb=self._on_reply)
        await self.nc.subscribe(f"skat.view.{self.player}.*", cb=self._on_update)
        await self.nc.flush()
        self.worker = asyncio.ensure_future(self._work())

    async def stop(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            await asyncio.gather(self.worker, return_exceptions=True)

    async def _work(self) -> None:
        while True:
            subject, update = await self.prompts.get()
            _, table = parse_view_subject(subject)  # the ids checked, not just the prefix swapped
            for command in self.commands(update):
                await self.request(command_subject(self.player, table), command)

    async def _on_reply(self, msg: Msg) -> None:
        future = self.replies.pop(msg.subject, None)
        if future is not None and not future.done():
            future.set_result(msg.data)

    async def request(self, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        reply = f"_INBOX.{self.player}.{self.n}"
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.replies[reply] = future
        await self.nc.publish(subject, json.dumps(body).encode(), reply=reply)
        return json.loads(await asyncio.wait_for(future, 10.0))  # type: ignore[no-any-return]

    async def _on_update(self, msg: Msg) -> None:
        update = json.loads(msg.data)
        if self.ends(update):
            self.done.set()
        if update.get("your_turn") and not self.done.is_set():
            self.prompts.put_nowait((msg.subject, update))


# --- Skat --------------------------------------------------------------------------------------


class SkatJsonPlayer(JsonPlayer):
    """Bids the lowest bid, picks up, discards, declares a grand, plays one card, then resigns;
    and it sends its pickup twice, as after a lost reply, to show the ``stale`` answer."""

    def __init__(self, nc: Client, player: str) -> None:
        super().__init__(nc, player)
        self.played = False

    def commands(self, update: dict[str, Any]) -> list[JsonCommand]:
        legal: list[dict[str, Any]] = update["view"].get("legal", [])
        types = [a["type"] for a in legal]
        if "bid" in types:
            action = legal[types.index("bid")]
        elif "pickup" in types:
            action = legal[types.index("pickup")]
        elif "declare" in types:
            action = next(
                (a for a in legal if a["type"] == "declare" and a["game"] == "G"), legal[types.index("declare")]
            )
        elif "play" in types and self.played:
            action = {"type": "resign"}
        else:
            action = legal[0]
            self.played = action["type"] == "play"
        command = {**action, "at": update["index"]}
        return [command, command] if action["type"] == "pickup" else [command]  # the second: stale

    def ends(self, update: dict[str, Any]) -> bool:
        return skat_deal_ended(update)


def skat_deal_ended(update: dict[str, Any]) -> bool:
    view = update["view"]
    return view.get("phase") in ("between_deals", "closed") or view.get("deal", 0) > 1


class SkatPasser:
    """The Skat transcript's other two seats: never bid, then play the first legal card."""

    def act(self, obs: Any) -> Any:
        legal = obs.view.legal
        return next((a for a in legal if isinstance(a, Pass)), None) or next(
            (a for a in legal if not isinstance(a, Bid)), legal[0]
        )


# --- Thirty-one --------------------------------------------------------------------------------


class ThirtyOneJsonPlayer(JsonPlayer):
    """Takes the discard pile's top card, sending that take twice, as after a lost reply, to
    show the ``stale`` answer (the take, not the discard: after it the table waits for this
    player's discard, so the answer names the same position in every run), and discards the first
    card it may; knocks at its next turn. The game is played to its end (the ``closed`` view,
    with every seat's place)."""

    def __init__(self, nc: Client, player: str) -> None:
        super().__init__(nc, player)
        self.turns = 0

    def commands(self, update: dict[str, Any]) -> list[JsonCommand]:
        legal: list[dict[str, Any]] = update["view"].get("legal", [])
        at = update["index"]
        if any(a["type"] == "take" for a in legal):  # the start of a turn
            self.turns += 1
            knock = next((a for a in legal if a["type"] == "knock"), None)
            if self.turns > 1 and knock is not None:
                return [{**knock, "at": at}]
            pile = {**next((a for a in legal if a.get("source") == "discard"), legal[0]), "at": at}
            return [pile, pile]  # the second: stale
        return [{**legal[0], "at": at}]

    def ends(self, update: dict[str, Any]) -> bool:
        return bool(update["view"].get("phase") == "closed")


class ThirtyOneStockTaker:
    """The Thirty-one transcript's other seat: takes the stock's top card (which the JSON player
    sees as a hidden card) and discards the first card it may; never knocks."""

    def act(self, obs: Any) -> Any:
        legal = obs.view.legal
        for a in legal:
            if isinstance(a, Take) and a.source == "stock":
                return a
        return next(a for a in legal if not isinstance(a, Knock))  # a discard (or the pile, if alone)


# --- the scripts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Script:
    """One game's transcript: the JSON player (seated first), the others, the table."""

    game: str
    player: Callable[[Client, str], JsonPlayer]
    other: Callable[[], Any]
    """A built-in bot for each other seat."""
    players: tuple[str, ...]
    rules: Any
    seed: str = "transcript"
    table: str = "demo"


SCRIPTS: Final[dict[str, Script]] = {
    "skat": Script(
        game="skat",
        player=SkatJsonPlayer,
        other=SkatPasser,
        players=("ann", "bob", "cyd"),
        rules=Rules(rounds=1, turn_seconds=60),
    ),
    "thirty-one": Script(
        game="thirty-one",
        player=ThirtyOneJsonPlayer,
        other=ThirtyOneStockTaker,
        players=("ann", "bob"),
        # One coin, and out with it (T25): the deal's loser leaves, so one deal is the game.
        rules=ThirtyOneRules(coins=1, county=False, turn_seconds=60),
    ),
}
"""The transcripts by game."""
