"""One deal at a table of 3 or 4, stepped by action index: what both environments drive.

``DealGame`` deals the cards, maps table seats to deal positions, takes actions by their index
(``skatbus.rl.actions``) and scores the deal per table seat. It knows nothing of PettingZoo or
Gymnasium, so both environments (and a hand-written training loop) share one implementation.

At a 4-player table the dealer sits the deal out: the deal has three active seats, and the
dealer's share of the result is what ``protocol.scoring`` gives it (0 in the standard list; the
Seeger-Fabian defender bonus of 30 when the declarer loses).

Two ways to step:

* fast (the default): a bare ``protocol.deal.Deal``, nothing else. This is the engine's own
  hot path plus an index lookup and a legality test.
* with views (``views=True``): the deal also lives in a ``protocol.table.TableState`` whose
  events are written exactly as the services write them (``decide``, then what ``due`` owes),
  so ``update(pos)`` can hand a built-in bot the very ``Update`` it would get over the bus.
  The Gymnasium wrapper uses it for its opponents; it costs several times the fast path.
  The table is kept in deal positions (its seats 0, 1, 2 are forehand, middlehand,
  rearhand), which is all a bot sees of seats.
"""

from __future__ import annotations

import msgspec
import numpy as np

from protocol.errors import IllegalAction
from protocol.events import DealDealt, TableOpened
from protocol.skat import cards as C
from protocol.skat.deal import ENDED, Deal
from protocol.skat.dealing import deal_deck, deal_from_seed
from protocol.skat.decide import decide
from protocol.skat.rules import Rules
from protocol.skat.scoring import DealResult, score
from protocol.skat.table import TableState, due
from protocol.wire import Update
from skatbus.bots import observe

from .actions import ACTIONS, N_ACTIONS, legal_bits


class DealGame:
    """One deal at a table of ``rules.players`` seats; see the module docstring."""

    __slots__ = ("rules", "n", "views", "deal", "dealer", "seats", "pos_of", "table", "table_name")

    def __init__(self, rules: Rules | None = None, views: bool = False) -> None:
        self.rules = rules or Rules()
        self.n = self.rules.players
        self.views = views
        """Keep a ``TableState`` next to the deal, for ``update``."""
        self.deal = Deal(*deal_from_seed(""), self.rules)
        self.dealer = self.n - 1
        self.seats: tuple[int, int, int] = (0, 1, 2)
        """Table seats of forehand, middlehand and rearhand."""
        self.pos_of: dict[int, int] = {0: 0, 1: 1, 2: 2}
        """Deal position of each active table seat (the dealer of a 4-player table has none)."""
        self.table: TableState | None = None
        self.table_name = "rl"

    def new_deal(
        self,
        dealer: int,
        cards: tuple[tuple[int, int, int], int] | None = None,
        rng: np.random.Generator | None = None,
        name: str = "rl",
    ) -> None:
        """Start a deal dealt by table seat ``dealer``: with ``cards`` (hands by position and
        skat, as ``protocol.dealing`` gives them), else shuffled by ``rng``. ``name`` names
        the table the bots see (their random choices depend on it, see ``bots.decision_rng``)."""
        if not 0 <= dealer < self.n:
            raise ValueError(f"dealer {dealer} is not a seat of a {self.n}-player table")
        if cards is None:
            if rng is None:
                raise ValueError("give the cards or a random generator to shuffle them")
            cards = deal_deck(rng.permutation(32).tolist())
        hands, skat = cards
        self.dealer = dealer
        self.seats = ((dealer + 1) % self.n, (dealer + 2) % self.n, (dealer + 3) % self.n)
        self.pos_of = {seat: pos for pos, seat in enumerate(self.seats)}
        self.table_name = name
        if not self.views:
            self.deal = Deal(hands, skat, self.rules)
            return
        table = TableState()
        rules = msgspec.structs.replace(self.rules, players=3, rounds=0, bock=False)
        table.apply(TableOpened(table=name, players=[f"player_{s}" for s in self.seats], rules=rules, seed=""))
        table.apply(
            DealDealt(
                deal=1,
                dealer=2,
                seats=(0, 1, 2),
                hands=(C.codes(hands[0]), C.codes(hands[1]), C.codes(hands[2])),  # type: ignore[arg-type]
                skat=C.codes(skat),  # type: ignore[arg-type]
            )
        )
        assert table.deal is not None
        self.table = table
        self.deal = table.deal

    @property
    def over(self) -> bool:
        return self.deal.phase == ENDED

    @property
    def to_move(self) -> int | None:
        """The table seat to act, or None once the deal is over."""
        pos = self.deal.to_move
        return None if pos is None else self.seats[pos]

    def legal_bits(self) -> int:
        """The legal action indices of the seat to move, as a bit set (see ``actions``)."""
        return legal_bits(self.deal)

    def push(self, index: int) -> None:
        """Take the action of ``index`` for the seat to move. Raises ``IllegalAction`` (a
        ``ValueError``) if it is not legal now, leaving the deal as it was."""
        deal = self.deal
        pos = deal.to_move
        if pos is None:
            raise IllegalAction(f"action {index}", "the deal is over")
        if not (0 <= index < N_ACTIONS and legal_bits(deal) >> index & 1):
            action = ACTIONS[index] if 0 <= index < N_ACTIONS else f"action {index}"
            reason = deal.check(pos, action) if 0 <= index < N_ACTIONS else None  # type: ignore[arg-type]
            raise IllegalAction(action, reason or f"index {index} is not among the legal actions now")
        self._push(pos, index)

    def _push(self, pos: int, index: int) -> None:
        table = self.table
        if table is None or not self.views:
            self.deal.push(ACTIONS[index], pos)
            return
        events = decide(table, pos, ACTIONS[index])
        if not isinstance(events, list):
            raise IllegalAction(ACTIONS[index], events.reason)
        for event in events:
            table.apply(event)
        deal = self.deal
        while deal.phase != ENDED and (owed := due(table)) is not None:
            table.apply(owed)

    def update(self, pos: int) -> Update:
        """What the seat at deal position ``pos`` would receive as its prompt (``views=True``)."""
        if self.table is None or not self.views:
            raise RuntimeError("DealGame(views=True) keeps the table that bots' updates come from")
        return observe(self.table, pos)

    def result(self) -> DealResult:
        """The scored deal by table seat (lists of ``n`` entries; no Bock in a single deal)."""
        if not self.over:
            raise ValueError("the deal is not over")
        return score(self.deal, self.seats, self.n, bock=False)
