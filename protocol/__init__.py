"""skatbus.protocol: the rules of Skat, its events and commands, as pure Python without I/O.

Read it top-down: ``cards`` (cards, sets, orders) -> ``games`` (declarations, values, bids) ->
``rules`` (table options) -> ``dealing`` (seeded deals, seats) -> ``commands`` -> ``deal``
(one deal as a state machine) -> ``scoring`` -> ``events`` (the log and its codecs) ->
``table`` (fold a log into a table state; what the table owes) -> ``decide`` (commands to
events) -> ``views`` (what each seat may see) -> ``knowledge`` (what a seat knows from its view)
-> ``iss`` (ISS game records).

Playing a deal from code::

    from protocol import Deal, deal_from_seed
    deal = Deal(*deal_from_seed("my seed"))
    deal.push_text("bid 18")            # checked: IllegalAction says why if it is not legal
    while not deal.is_over:
        deal.push(deal.legal_actions()[0])
    print(deal.result())
"""

from .errors import IllegalAction
from .events import JSON, MSGPACK, Codec, Event
from .skat.cards import card, fmt, parse
from .skat.commands import (
    Bid,
    Command,
    Declare,
    Discard,
    Hold,
    Kontra,
    Pass,
    PickUpSkat,
    PlayCard,
    Re,
    Resign,
    ShowCards,
    parse_action,
)
from .skat.deal import Deal, Phase
from .skat.dealing import deal_from_seed, deal_seed
from .skat.decide import Rejection, decide, default_action, timeout
from .skat.ends import EndReason
from .skat.games import Declaration, GameKind
from .skat.knowledge import Knowledge
from .skat.rules import Rules
from .skat.scoring import DealResult, score
from .skat.table import LogError, TableState, due, fold

__all__ = [
    "Bid", "Codec", "Command", "Deal", "DealResult", "Declaration", "Declare", "Discard",
    "EndReason", "Event", "GameKind", "Hold", "IllegalAction", "JSON", "Knowledge", "Kontra",
    "LogError", "MSGPACK", "Pass", "Phase", "PickUpSkat", "PlayCard", "Re", "Rejection", "Resign",
    "Rules", "ShowCards", "TableState", "card", "deal_from_seed", "deal_seed", "decide",
    "default_action", "due", "fmt", "fold", "parse", "parse_action", "score", "timeout",
]  # fmt: skip
