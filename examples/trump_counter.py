"""A ten-line bot: as declarer it draws trumps while the others may still hold some, otherwise
it plays its cheapest card; it leaves bidding and declaring to the built-in heuristic.
Everything it knows about the cards comes from ``Knowledge`` (docs/bots.md).

Play it against the built-in bots without a bus:  python examples/trump_counter.py
"""

from protocol.skat import cards as C
from protocol.skat.commands import PLAY, PlayCard
from skatbus import HeuristicBot, Knowledge


class TrumpCounter:
    bidder = HeuristicBot()

    def act(self, obs):
        legal, k = obs.view.legal, Knowledge.of(obs.view)
        if not isinstance(legal[0], PlayCard):
            return self.bidder.act(obs)  # bidding, skat, declaring: as the heuristic would
        cards = [C.card(a.card) for a in legal]
        trumps = [c for c in cards if k.order.klass[c] == C.TRUMP]
        trumps_out = any(k.possible(s) & k.order.trumps for s in k.seats if s != k.seat)
        if k.seat == k.declarer and not k.trick and trumps and trumps_out:
            return PLAY[max(trumps, key=lambda c: k.order.strength[c])]
        return PLAY[min(cards, key=lambda c: (C.POINTS[c], k.order.strength[c]))]


if __name__ == "__main__":
    from protocol.skat.rules import Rules
    from skatbus import RandomBot
    from skatbus.local import play_table

    run = play_table(
        "demo", ["counter", "r1", "r2"], [TrumpCounter(), RandomBot("1"), RandomBot("2")], Rules(rounds=10), "demo"
    )
    print(dict(zip(run.players, run.state.score)))
