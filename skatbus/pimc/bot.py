"""``pimc``: perfect-information Monte Carlo card play on top of the heuristic's bidding.

For a card to play, the bot deals out the cards it has not seen in many ways consistent with
what it knows (``worlds.sample``: hand sizes, voids shown, open cards), solves each world with
every hand known (``solver``), and plays the card that reaches its side's goal in the most
worlds: the declarer 61 card points (90 when schneider was announced, all 120 in a schwarz or
ouvert game: a stand-in for "every trick" that misses a defender's trick of 7s, 8s and 9s),
the defenders keeping it below that; in null, the declarer taking no
trick. Where several cards tie, the heuristic bot's choice among them wins, so the search only
overrules the heuristic where it sees a difference. It samples ``worlds`` worlds per decision
(40 by default: play that depends on the seed and the deal alone), stopping early only if its
time budget per decision (``budget`` seconds) runs out; with ``worlds=None`` it samples until
the budget is spent. A world whose search needs more than ``node_limit``
nodes does not vote; with no vote at all the heuristic's card is played.

Bidding, the skat, discarding, declaring, Kontra/Re and ramsch are the heuristic's (its
fitted hand-strength model): the literature's PIMC players are strongest in the card play.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from protocol.skat import cards as C
from protocol.skat.commands import PLAY, Command, PlayCard
from protocol.skat.knowledge import RAMSCH, Knowledge
from protocol.wire import Update

from ..heuristic import HeuristicBot
from ..seeding import decision_rng
from .solver import HAVE_CORE, Position, SearchAborted, Solver
from .worlds import sample

DEFAULT_BUDGET = 0.6
"""Seconds of search per card decision at most: with sampling, one last world and the heuristic's
own choice on top, a decision stays under a second even on a busy machine (2,001 duplicate
deals with 0.9 here had a longest decision of 1.23 s on an oversubscribed 2-core machine)."""
DEFAULT_WORLDS = 40
"""Worlds per card decision: with the C core about 50 ms per decision on average."""
NODE_LIMIT = 400_000 if HAVE_CORE else 60_000
"""Nodes per world: about 25 ms with the C core (it solves ~15 million nodes/s; the zero-window
searches at the first trick take ~2 ms in the median); ~0.3 s in Python, where only positions
from about the second trick on fit."""


class PimcBot:
    """The PIMC bot (``skat bot pimc``). ``budget``: seconds of search per card decision."""

    blocking = True  # searches take up to ``budget`` seconds: the SDK runs them in a thread

    def __init__(
        self,
        seed: str = "",
        budget: float = DEFAULT_BUDGET,
        worlds: int | None = DEFAULT_WORLDS,
        node_limit: int = NODE_LIMIT,
    ) -> None:
        self.seed = str(seed)
        self.budget = budget
        self.node_limit = node_limit
        """Nodes one world's search may take; a world that needs more does not vote."""
        self.worlds = worlds
        """Worlds per decision: the play then depends on the seed and the deal alone, unless the
        budget runs out first (rare with the C core; ``None``: as many as the budget allows)."""
        self.heuristic = HeuristicBot(seed)
        self.worlds_solved = 0
        """Worlds solved so far, over all decisions (for the benchmark and the curious)."""

    def act(self, obs: Update) -> Command:
        view = obs.view
        legal = view.legal
        fallback = self.heuristic.act(obs)
        if not legal or not isinstance(legal[0], PlayCard) or len(legal) == 1:
            return fallback
        k = Knowledge.of(view)
        if k.kind == RAMSCH or k.declarer is None or k.game is None:
            return fallback
        votes = self._votes(k, view.discarded, decision_rng(self.seed, obs))
        if not votes:
            return fallback
        best = max(votes.values())
        choice = C.card(fallback.card) if isinstance(fallback, PlayCard) else -1
        if votes.get(choice) == best:
            return fallback
        return PLAY[min(c for c, v in votes.items() if v == best)]

    def _votes(self, k: Knowledge, discarded: Sequence[str], rng: random.Random) -> dict[int, int]:
        """Per legal card, in how many sampled worlds it reaches this seat's side's goal."""
        assert k.declarer is not None and k.game is not None
        declarer_pos = k.seats.index(k.declarer)
        me = k.seats.index(k.seat)
        null = k.game.game == "N"
        taken = k.side_points()[0]
        goal = 120 if (k.game.schwarz or k.game.ouvert) and not null else 90 if k.game.schneider else 61
        votes: dict[int, int] = {}
        deadline = time.perf_counter() + self.budget
        wanted = self.worlds if self.worlds is not None else 1 << 30
        worlds = 0
        for _ in range(wanted):
            if time.perf_counter() > deadline:
                break
            try:
                world = sample(k, rng)
            except ValueError:
                break
            skat_points = C.points(C.parse(discarded)) if discarded else C.points(world.skat)
            solver = Solver(k.order, declarer_pos, null, node_limit=self.node_limit, deadline=deadline)
            position = Position(world.hands, k.trick, me, declarer_pos, k.order, null)
            try:
                reached = solver.move_reaches(position, goal - taken - skat_points)
            except SearchAborted:
                continue  # too big to solve in time: this world does not vote
            declarer_side = k.seat == k.declarer
            for c, r in reached.items():
                good = (not r) if null else r  # in null, "reached" means the declarer took a trick
                votes[c] = votes.get(c, 0) + (good == declarer_side)
            worlds += 1
        self.worlds_solved += worlds
        return votes
