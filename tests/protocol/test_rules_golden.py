"""Golden tests: every worked example and number in RULES.md, in both profiles where they differ."""

from __future__ import annotations

import pytest

from protocol.events import DealDealt, TableOpened
from protocol.skat import cards as C
from protocol.skat.commands import Bid, Declare, Discard, Hold, Kontra, Pass, PickUpSkat, Re
from protocol.skat.deal import Deal
from protocol.skat.dealing import deal_seats, dealer_seat
from protocol.skat.decide import Rejection, decide
from protocol.skat.games import BID_LADDERS, Declaration
from protocol.skat.rules import Rules
from protocol.skat.scoring import DealResult, game_value, matadors
from protocol.skat.table import TableState, due

RULES_MD_BIDS = (
    "18 20 22 23 24 27 30 33 35 36 40 44 45 46 48 50 54 55 59 60 63 66 70 72 77 80 81 84 88 90 96 99 "
    "100 108 110 117 120 121 126 130 132 135 140 143 144 150 153 154 156 160 162 165 168 170 176 180 "
    "187 192 198 204 216 240 264"
)


def D(game: str, **mods: bool) -> Declaration:
    return Declaration(game=game, **mods)  # type: ignore[arg-type]


# --- cards ---------------------------------------------------------------------------------


def test_deck_holds_120_points() -> None:
    assert C.points(C.ALL) == 120
    assert [C.POINTS[C.card(c)] for c in ("SA", "ST", "SK", "SQ", "SJ", "S9", "S8", "S7")] == [11, 10, 4, 3, 2, 0, 0, 0]


@pytest.mark.parametrize(
    ("kind", "descending"),
    [
        ("H", "CJ SJ HJ DJ HA HT HK HQ H9 H8 H7"),
        ("G", "CJ SJ HJ DJ"),
        ("R", "CJ SJ HJ DJ"),
    ],
)
def test_trump_orders(kind: str, descending: str) -> None:
    assert C.fmt(C.ORDERS[kind].trump_sequence) == descending


def test_plain_and_null_suit_orders() -> None:
    grand = C.ORDERS["G"]
    spades_grand = sorted(C.cards_of(C.SUIT_MASKS[C.SPADES] & ~C.JACKS), key=lambda c: -grand.strength[c])
    assert C.fmt(spades_grand) == "SA ST SK SQ S9 S8 S7"
    null = C.ORDERS["N"]
    spades_null = sorted(C.cards_of(C.SUIT_MASKS[C.SPADES]), key=lambda c: -null.strength[c])
    assert C.fmt(spades_null) == "SA SK SQ SJ ST S9 S8 S7"
    assert null.trumps == 0


def test_jack_is_trump_not_its_suit() -> None:
    hearts = C.ORDERS["H"]
    # Spades led: a player holding SJ but no other spade may play anything (SJ is trump).
    hand = C.parse("SJ HA D7")
    assert hearts.legal(hand, C.card("SA")) == hand
    # A jack led asks for trump: hearts are trump in a hearts game.
    assert hearts.legal(C.parse("H7 S7"), C.card("CJ")) == C.parse("H7")
    # In null the jack is a plain spade.
    assert C.ORDERS["N"].legal(C.parse("SJ HA"), C.card("SA")) == C.parse("SJ")


def test_trick_winner() -> None:
    clubs = C.ORDERS["C"]
    trick = [C.card(c) for c in ("HA", "HT", "C7")]
    assert clubs.trick_winner(trick) == 2  # the lone trump
    assert C.ORDERS["G"].trick_winner([C.card(c) for c in ("HA", "DJ", "CJ")]) == 2
    assert C.ORDERS["N"].trick_winner([C.card(c) for c in ("HT", "HJ", "SA")]) == 1  # J above T in null


# --- bids ----------------------------------------------------------------------------------


def test_isko_bid_ladder_is_the_one_in_rules_md() -> None:
    assert BID_LADDERS["isko"] == tuple(int(x) for x in RULES_MD_BIDS.split())


def test_classic_ladder_adds_multiples_of_36() -> None:
    extra = set(BID_LADDERS["classic"]) - set(BID_LADDERS["isko"])
    assert extra == {252, 288, 324, 360}
    assert all(36 * k in BID_LADDERS["classic"] for k in range(1, 11))


# --- values: the worked examples table -----------------------------------------------------


@pytest.mark.parametrize(
    ("decl", "mats", "schneider", "schwarz", "value"),
    [
        (D("H"), -2, False, False, 30),
        (D("H"), 2, False, False, 30),
        (D("S"), 5, False, False, 66),
        (D("C"), -3, False, False, 48),
        (D("C"), 8, False, False, 108),
        (D("H"), -2, True, False, 40),
        (D("S"), 5, True, False, 77),
        (D("C"), 8, True, False, 120),
        (D("S"), 5, True, True, 88),
        (D("G"), 2, False, False, 72),
        (D("G"), 3, True, False, 120),
        (D("G"), 4, True, True, 168),
        # clubs ouvert with 2 = (2 + 1 + 6 steps) x 12
        (D("C", hand=True, schneider=True, schwarz=True, ouvert=True), 2, False, False, 108),
        # Diamonds hand, schneider announced, with 2, lost with 88 card points
        (D("D", hand=True, schneider=True), 2, False, False, 54),
    ],
)
def test_worked_values(decl: Declaration, mats: int, schneider: bool, schwarz: bool, value: int) -> None:
    for profile in ("isko", "classic"):
        base, mult = game_value(decl, mats, schneider, schwarz, profile)
        assert base * mult == value


def test_grand_ouvert_differs_by_profile() -> None:
    grand_ouvert = D("G", hand=True, schneider=True, schwarz=True, ouvert=True)
    base, mult = game_value(grand_ouvert, 4, True, True, "classic")
    assert (base, mult, base * mult) == (36, 10, 360)
    base, mult = game_value(grand_ouvert, 4, True, True, "isko")
    assert (base, mult, base * mult) == (24, 11, 264)


@pytest.mark.parametrize(
    ("twelve", "trump", "expected"),
    [
        ("CJ HJ DJ HA HT HK H8", "H", 1),  # SJ missing: with 1
        ("CJ SJ HJ HA", "H", 3),  # the seed-000 slip: CJ SJ HJ without DJ is with 3
        ("CJ SJ HJ DJ SA SK SQ", "S", 5),  # ST missing: with 5
        ("SJ HJ DJ HA HT HK", "H", -1),  # without 1
        ("HT HK HQ H8", "H", -5),  # no jack, no HA: without 5
        ("CJ SJ HJ DJ", "G", 4),
        ("DJ", "G", -3),
    ],
)
def test_matador_examples(twelve: str, trump: str, expected: int) -> None:
    assert matadors(C.parse(twelve), trump) == expected


# --- whole deals through the table layer ---------------------------------------------------

# Forehand holds every jack and the top clubs and spades; nobody else holds a jack.
STRONG = "CJ SJ HJ DJ CA CT CK SA ST HA"
MIDDLE = "C7 C8 S7 S8 S9 H7 H8 H9 D7 D8"
REAR = "C9 CQ SQ SK HQ HK DT D9 DQ DK"
SKAT = "HT DA"


class Table:
    """A table driven by scripts: explicit deals, explicit commands, then strongest-card play."""

    def __init__(self, rules: Rules) -> None:
        players = rules.players
        self.state = TableState()
        self.log: list = []
        self.append(TableOpened(table="golden", players=[f"p{i}" for i in range(players)], rules=rules, seed="g"))

    def append(self, event: object) -> None:
        self.state.apply(event)  # type: ignore[arg-type]
        self.log.append(event)

    def settle(self) -> None:
        """Append every derived event the table owes, except the next deal."""
        while (owed := due(self.state)) is not None and not isinstance(owed, DealDealt):
            self.append(owed)

    def deal(self, fh: str, mh: str, rh: str, skat: str = SKAT) -> None:
        n = self.state.deal_no + 1
        players = self.state.n
        self.append(
            DealDealt(
                deal=n,
                dealer=dealer_seat(n, players),
                seats=deal_seats(n, players),
                hands=(fh.split(), mh.split(), rh.split()),  # type: ignore[arg-type]
                skat=skat.split(),  # type: ignore[arg-type]
            )
        )

    def act(self, position: int, command: object) -> list | Rejection:
        seat = self.state.seats[position]
        result = decide(self.state, seat, command)  # type: ignore[arg-type]
        if isinstance(result, list):
            for e in result:
                self.append(e)
            self.settle()
        return result

    def script(self, *moves: tuple[int, object]) -> None:
        for position, command in moves:
            result = self.act(position, command)
            assert isinstance(result, list), result

    def play_out(self) -> DealResult:
        """Everyone plays its strongest legal card until the deal is scored."""
        state = self.state
        while state.in_deal:
            deal = state.deal
            assert deal is not None
            order = deal.order
            legal = C.cards_of(deal.legal_cards())
            best = max(legal, key=lambda c: (order.klass[c] == C.TRUMP, order.strength[c], -c))
            self.act(deal.to_move, deal.legal_actions()[[a.card for a in deal.legal_actions()].index(C.CODES[best])])
        return state.sheet[-1].result


def test_grand_hand_schwarz_won() -> None:
    t = Table(Rules())
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Bid(value=18)), (0, Declare(game="G")))
    r = t.play_out()
    assert (r.won, r.matadors, r.multiplier, r.value) == (True, 4, 8, 192)  # (4+1+hand+schneider+schwarz) x 24
    assert (r.declarer_points, r.declarer_tricks, r.schneider, r.schwarz) == (120, 10, True, True)
    assert r.scores == [192, 0, 0]


def test_overbid_loses_the_next_multiple_of_the_base() -> None:
    t = Table(Rules())
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Bid(value=216)), (0, Declare(game="G")))
    r = t.play_out()
    # 192 reached but 216 bid: lost, valued at the smallest multiple of 24 not below 216.
    assert (r.value, r.overbid, r.won, r.game_score) == (192, True, False, -432)


def test_null_below_the_bid_is_rejected_and_changes_nothing() -> None:
    t = Table(Rules())
    t.deal(MIDDLE, STRONG, REAR)
    t.script((1, Bid(value=24)), (0, Pass()), (2, Pass()), (1, PickUpSkat()), (1, Discard(cards=("HT", "DA"))))
    before = len(t.log)
    rejected = t.act(1, Declare(game="N"))
    assert isinstance(rejected, Rejection) and rejected.code == "illegal"
    assert "worth 23" in rejected.reason and "bid of 24" in rejected.reason
    assert len(t.log) == before
    assert isinstance(t.act(1, Declare(game="N", ouvert=True)), list)  # null ouvert 46 is fine


@pytest.mark.parametrize(
    ("mods", "value"),
    [({}, 23), ({"hand": True}, 35), ({"ouvert": True}, 46), ({"hand": True, "ouvert": True}, 59)],
)
def test_null_values_won(mods: dict[str, bool], value: int) -> None:
    # Middlehand's cards are all low: with everyone playing its strongest card it takes no trick.
    low = "C7 C8 S7 S8 S9 H7 H8 H9 D7 D8"
    t = Table(Rules())
    t.deal(STRONG, low, REAR)
    moves: list[tuple[int, object]] = [(1, Bid(value=18)), (0, Pass()), (2, Pass())]
    if not mods.get("hand"):
        moves += [(1, PickUpSkat()), (1, Discard(cards=("HT", "DA")))]
    moves.append((1, Declare(game="N", ouvert=mods.get("ouvert", False))))
    t.script(*moves)
    r = t.play_out()
    assert (r.won, r.value, r.scores[1]) == (True, value, value)


def _lost_hand_game(profile: str) -> DealResult:
    t = Table(Rules(profile=profile))  # type: ignore[arg-type]
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Bid(value=18)), (0, Pass()), (2, Pass()), (1, Declare(game="C")))
    return t.play_out()


def test_lost_hand_game_isko_costs_double_classic_single() -> None:
    isko, classic = _lost_hand_game("isko"), _lost_hand_game("classic")
    assert isko.matadors == classic.matadors == -9  # no jack, highest trump C8: without 9
    assert not isko.won and not classic.won
    assert isko.value == classic.value
    assert isko.game_score == -2 * isko.value
    assert classic.game_score == -classic.value


def _kontra_table(rules: Rules) -> Table:
    t = Table(rules)
    t.deal(STRONG, MIDDLE, REAR)
    # Middlehand bids and so may say Kontra; rearhand never bid and is not asked.
    t.script((1, Bid(value=18)), (0, Hold()), (1, Pass()), (2, Pass()), (0, Declare(game="G")))
    return t


def test_kontra_and_re_quadruple_the_value_and_trigger_bock() -> None:
    t = _kontra_table(Rules(kontra=True, bock=True))
    assert t.state.to_move == 1  # middlehand is asked first; rearhand did not bid
    t.script((1, Kontra()), (0, Re()))
    r = t.play_out()
    assert (r.kontra, r.re, r.value, r.scores[0]) == (True, True, 192, 768)
    scored = t.log[-1]
    # Kontra lost by the defenders and a Re: two Bock rounds of three deals.
    assert (scored.bock_rounds_added, scored.bock_deals_left) == (2, 6)
    # The next deal is a Bock deal: everything doubled.
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Bid(value=18)), (0, Declare(game="G")))
    r2 = t.play_out()
    assert r2.bock and r2.scores[t.state.seats[0]] == 2 * 192
    assert t.log[-1].bock_deals_left == 5


def test_kontra_passed_keeps_the_value() -> None:
    t = _kontra_table(Rules(kontra=True))
    t.script((1, Pass()))
    r = t.play_out()
    assert (r.kontra, r.scores[0]) == (False, 192)


def test_kontra_is_not_offered_without_the_rule() -> None:
    t = _kontra_table(Rules())
    assert t.state.deal is not None and t.state.deal.phase == "playing"


def test_lost_game_after_kontra_costs_twice_the_doubled_value() -> None:
    t = Table(Rules(kontra=True))
    t.deal(STRONG, MIDDLE, REAR)
    # Forehand held a bid, so it may say Kontra.
    t.script((1, Bid(value=18)), (0, Hold()), (1, Bid(value=20)), (0, Pass()), (2, Pass()))
    t.script((1, Declare(game="C")), (0, Kontra()), (1, Pass()))
    r = t.play_out()
    assert r.kontra and not r.re and not r.won
    assert r.scores[1] == -2 * 2 * r.value


@pytest.mark.parametrize(("players", "bonus"), [(3, 40), (4, 30)])
def test_seeger_fabian(players: int, bonus: int) -> None:
    t = Table(Rules(seeger_fabian=True, players=players))
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Bid(value=18)), (0, Pass()), (2, Pass()), (1, Declare(game="C")))
    lost = t.play_out()
    declarer = t.state.seats[1]
    expected = [bonus] * players
    expected[declarer] = lost.scores[declarer] - 50
    assert lost.seeger_fabian == expected  # the dealer sitting out gets the bonus too
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Bid(value=18)), (0, Declare(game="G")))
    won = t.play_out()
    declarer = t.state.seats[0]
    expected = [0] * players
    expected[declarer] = 192 + 50
    assert won.seeger_fabian == expected
    assert t.state.score == [a + b for a, b in zip(lost.seeger_fabian, won.seeger_fabian)]


def test_passed_in_scores_nothing_and_the_deal_moves_on() -> None:
    t = Table(Rules(seeger_fabian=True))
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Pass()))
    r = t.state.sheet[-1].result
    assert (r.kind, r.scores, r.seeger_fabian) == ("passed", [0, 0, 0], [0, 0, 0])
    owed = due(t.state)
    assert isinstance(owed, DealDealt) and owed.deal == 2 and owed.dealer == 0


def test_ramsch_durchmarsch() -> None:
    t = Table(Rules(ramsch=True))
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Pass()))
    r = t.play_out()
    assert r.kind == "ramsch" and r.ramsch is not None
    assert r.ramsch.durchmarsch == 0
    assert r.scores == [120, 0, 0]


def _ended_ramsch(points: list[int], tricks: list[int], last_winner: int) -> DealResult:
    """A Ramsch ended with the given trick points and counts (the skat HT DA = 21 points)."""
    deal = Deal(tuple(C.parse(h) for h in (STRONG, MIDDLE, REAR)), C.parse(SKAT), Rules(ramsch=True))  # type: ignore[arg-type]
    for pos, cmd in ((1, Pass()), (2, Pass()), (0, Pass())):
        deal.push(cmd, pos)
    from protocol.skat.deal import Trick

    deal.points = points
    deal.trick_counts = tricks
    deal.tricks = [Trick(0, (0, 1, 2), last_winner, 0)]
    deal._end("played_out")
    return deal.result()


def test_ramsch_most_points_loses_doubled_per_jungfrau() -> None:
    r = _ended_ramsch([60, 39, 0], [6, 4, 0], last_winner=1)  # 39 + 21 skat = 60: a tie
    assert r.ramsch is not None
    assert r.ramsch.points == [60, 60, 0]
    assert r.ramsch.losers == [0, 1] and r.ramsch.jungfrau == 1
    assert r.scores == [-120, -120, 0]


def test_ramsch_without_jungfrau() -> None:
    r = _ended_ramsch([50, 30, 19], [4, 3, 3], last_winner=2)
    assert r.scores == [-50, 0, 0]


def test_four_player_table_rotates_and_the_dealer_sits_out() -> None:
    t = Table(Rules(players=4))
    t.deal(STRONG, MIDDLE, REAR)
    assert t.state.seats == (0, 1, 2) and t.state.dealer == 3
    rejected = decide(t.state, 3, Pass())
    assert isinstance(rejected, Rejection) and rejected.code == "not_seated"
    t.script((1, Pass()), (2, Pass()), (0, Pass()))
    owed = due(t.state)
    assert isinstance(owed, DealDealt) and owed.dealer == 0 and owed.seats == (1, 2, 3)


def test_bidding_order_and_survivor() -> None:
    """Middlehand bids to forehand, then rearhand bids to the survivor, above the last bid."""
    t = Table(Rules())
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Bid(value=18)), (0, Hold()), (1, Bid(value=20)), (0, Pass()))
    assert t.state.to_move == 2
    low = t.act(2, Bid(value=20))
    assert isinstance(low, Rejection) and "not above 20" in low.reason
    odd = t.act(2, Bid(value=21))
    assert isinstance(odd, Rejection) and "next legal bid: 22" in odd.reason
    t.script((2, Bid(value=22)), (1, Hold()), (2, Pass()))
    assert t.state.deal is not None and (t.state.deal.declarer, t.state.deal.bid) == (1, 22)


def test_out_of_turn_is_rejected_with_who_is_to_move() -> None:
    t = Table(Rules())
    t.deal(STRONG, MIDDLE, REAR)
    rejected = t.act(0, Bid(value=18))
    assert isinstance(rejected, Rejection) and rejected.code == "out_of_turn"
    assert "middlehand" in rejected.reason or "seat 1" in rejected.reason


def test_suit_ouvert_requires_hand_and_implies_schwarz() -> None:
    t = Table(Rules())
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Bid(value=18)))
    bad = t.act(0, Declare(game="G", ouvert=True))
    assert isinstance(bad, Rejection) and "schwarz" in bad.reason
    t.script((0, Declare(game="G", schneider=True, schwarz=True, ouvert=True)))
    r = t.play_out()
    # isko grand ouvert: (4 + 1 + hand, schneider, announced, schwarz, announced, ouvert) x 24
    assert (r.won, r.value) == (True, 264)


# --- the three corners RULES.md spells out ----------------------------------------------------


def _play_until(t: Table, enough: object) -> None:
    """Strongest-card play (as ``play_out``) until ``enough(deal)`` holds."""
    state = t.state
    while state.in_deal and not enough(state.deal):
        deal = state.deal
        assert deal is not None
        order = deal.order
        legal = C.cards_of(deal.legal_cards())
        best = max(legal, key=lambda c: (order.klass[c] == C.TRUMP, order.strength[c], -c))
        t.act(deal.to_move, deal.legal_actions()[[a.card for a in deal.legal_actions()].index(C.CODES[best])])


def test_a_declarer_who_resigns_with_61_or_more_still_wins() -> None:
    from protocol.skat.commands import Resign

    t = Table(Rules())
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Bid(value=18)), (0, Declare(game="G")))
    _play_until(t, lambda d: d.declarer_points() >= 61 and not d.trick)
    t.act(0, Resign())  # the rest goes to the defenders, but a won game cannot be lost
    r = t.state.sheet[-1].result
    assert r.ended == "declarer_resigned" and r.won and r.declarer_points >= 61
    assert r.declarer_points < 120 and not r.schwarz  # judged on the tricks as they then stand
    assert r.scores[0] == r.value > 0


def test_a_declarer_who_resigns_below_61_loses() -> None:
    from protocol.skat.commands import Resign

    t = Table(Rules())
    t.deal(STRONG, MIDDLE, REAR)
    t.script((1, Pass()), (2, Pass()), (0, Bid(value=18)), (0, Declare(game="G")))
    _play_until(t, lambda d: len(d.tricks) >= 1 and not d.trick)
    assert t.state.deal is not None and t.state.deal.declarer_points() < 61
    t.act(0, Resign())
    r = t.state.sheet[-1].result
    assert r.ended == "declarer_resigned" and not r.won and r.scores[0] < 0


@pytest.mark.parametrize(
    ("ended", "rounds"),
    [("played_out", 1), ("declarer_resigned", 1), ("defenders_resigned", 1), ("defenders_took_trick", 0)],
)
def test_sixty_all_triggers_bock_only_for_a_game_played_or_conceded_to_its_end(ended: str, rounds: int) -> None:
    from protocol.skat.table import _bock_rounds

    rules = Rules(bock=True, bock_triggers=("sixty_all",))
    result = DealResult(
        kind="game", ended=ended, scores=[-96, 0, 0], seeger_fabian=[0, 0, 0],
        game=D("G", hand=True, schneider=True, schwarz=True), declarer_points=60,
    )  # fmt: skip
    assert _bock_rounds(rules, result) == rounds


def test_after_an_early_end_by_rule_no_level_is_judged_from_the_tricks() -> None:
    # Grand hand with schwarz announced, from a weak hand: lost at the defenders' first trick.
    t = Table(Rules())
    t.deal(REAR, MIDDLE, STRONG)
    t.script((1, Pass()), (2, Pass()), (0, Bid(value=18)), (0, Declare(game="G", schneider=True, schwarz=True)))
    r = t.play_out()
    assert r.ended == "defenders_took_trick" and not r.won
    assert r.declarer_points <= 30  # schneider by the points, but not judged after an early end
    assert (r.schneider, r.schwarz) == (False, False)
    # game, hand, schneider, announced, schwarz, announced: exactly the steps promised
    assert r.multiplier == abs(r.matadors) + 6 and r.value == 24 * r.multiplier
