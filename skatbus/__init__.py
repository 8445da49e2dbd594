"""skatbus: what bot authors, researchers and operators import.

The layers point one way: ``protocol`` (the rules, pure) <- ``services`` (what runs on the bus:
the five services, the event store, the embedded server) <- ``skatbus`` (this package: the bot
SDK and the bots, tournaments, evaluation, replays and game records, the ``skat`` command line).

Writing a bot (docs/bots.md)::

    from skatbus import Knowledge, run

    class MyBot:
        def act(self, obs):
            k = Knowledge.of(obs.view)   # cards played, voids shown, cards unseen, partner
            return obs.view.legal[0]

    run(MyBot(), player="alice", url="nats://127.0.0.1:4222")
"""

from protocol.errors import IllegalAction
from protocol.skat.deal import Deal, Phase
from protocol.skat.knowledge import Knowledge

from .bots import Bot, RandomBot, SteppingRandomBot, make_bot
from .heuristic import HeuristicBot
from .player import RemotePlayer
from .sdk import play, run

__all__ = [
    "Bot",
    "Deal",
    "HeuristicBot",
    "IllegalAction",
    "Knowledge",
    "Phase",
    "RandomBot",
    "RemotePlayer",
    "SteppingRandomBot",
    "make_bot",
    "play",
    "run",
]
