"""The heuristic bot: bidding, skat and card play in hand-made situations, legality over many
tables, and that it beats the random baselines clearly."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
import structlog

from protocol.events import CardPlayed, DealDealt, Event, GameDeclared
from protocol.skat import cards as C
from protocol.skat.commands import BIDS, DISCARDS, HOLD, PASS, PICKUP, PLAY, Command, Declare, Discard, PlayCard
from protocol.skat.games import BID_LADDERS, NULL_VALUES, Declaration
from protocol.skat.rules import Rules
from protocol.skat.views import PlayerView
from protocol.wire import Update
from skatbus import heuristic as H
from skatbus.evaluate import SEATINGS, evaluate, main
from skatbus.heuristic import HeuristicBot
from skatbus.local import play_table

# Seats of forehand, middlehand, rearhand in the hand-made deals below.
SEATS = (1, 0, 2)


def _obs(
    seat: int, hand: str, legal: Sequence[Command], history: list[Event] | None = None, **fields: object
) -> Update:
    dealt = DealDealt(deal=1, dealer=SEATS[2], seats=SEATS, hands=([], [], []), skat=[])
    view = PlayerView(
        table="t",
        seat=seat,
        players=["a", "b", "c"],
        deal=1,
        phase=str(fields.pop("phase", "playing")),
        to_move=seat,
        hand=hand.split(),  # type: ignore[arg-type]
        history=[dealt, *(history or [])],  # type: ignore[list-item]
        legal=legal,  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )
    return Update(view=view, your_turn=True)


def _plays(hand: str, led: str | None = None, game: str = "C") -> list[Command]:
    """The legal card commands for ``hand`` on a trick led by ``led``."""
    m = C.parse(hand)
    order = C.ORDERS[game]
    legal = order.legal(m, None if led is None else C.card(led))
    return [PLAY[c] for c in C.cards_of(legal)]


def _trick_obs(me: int, hand: str, declarer: int, game: str, played: list[tuple[int, str]]) -> Update:
    """``played`` are (seat, card) of the current trick; the first is the leader's."""
    history: list[Event] = [GameDeclared(seat=declarer, game=Declaration(game=game))]  # type: ignore[arg-type]
    history += [CardPlayed(seat=s, card=c) for s, c in played]  # type: ignore[arg-type]
    return _obs(
        me,
        hand,
        _plays(hand, played[0][1] if played else None, game),
        history,
        declarer=declarer,
        game=Declaration(game=game),  # type: ignore[arg-type]
        trick=[c for _, c in played],
        trick_leader=played[0][0] if played else me,
    )


# --- bidding ----------------------------------------------------------------------------------


def test_four_jacks_and_long_trumps_bid_high() -> None:
    hand = "CJ SJ HJ DJ CA CT CK C9 SA HA"
    assert H.bid_limit(C.parse(hand), forehand=False) >= 72  # clubs with 5 at least
    bot = HeuristicBot("t")
    assert bot.act(_obs(1, hand, [HOLD, PASS], phase="bidding", bid=60)) == HOLD
    bids = [PASS, *(BIDS[v] for v in BID_LADDERS["isko"] if v > 60)]
    assert bot.act(_obs(0, hand, bids, phase="bidding", bid=60)) == BIDS[63]


def test_weak_hand_passes() -> None:
    hand = "CK C9 SQ S9 HK HQ H9 DQ DK SK"
    assert H.bid_limit(C.parse(hand), forehand=False) == 0
    bot = HeuristicBot("t")
    assert bot.act(_obs(0, hand, [PASS, *(BIDS[v] for v in BID_LADDERS["isko"])], phase="bidding")) == PASS
    assert bot.act(_obs(1, hand, [HOLD, PASS], phase="bidding", bid=18)) == PASS


def test_forehand_opens_alone_with_a_playable_hand() -> None:
    hand = "CJ HJ SA ST S9 S8 S7 HA DA D7"
    bids = [PASS, *(BIDS[v] for v in BID_LADDERS["isko"])]
    assert HeuristicBot("t").act(_obs(1, hand, bids, phase="bidding")) == BIDS[18]


def test_safe_null_hand_is_bid() -> None:
    hand = "C7 C9 CJ S7 S8 H7 H9 HJ D8 D7"
    assert H.null_danger(C.parse(hand), C.ALL & ~C.parse(hand))[0] == 0
    assert H.bid_limit(C.parse(hand), forehand=False) >= 23


def test_skat_spoils_only_without_two_or_more() -> None:
    assert H.skat_spoils(C.parse("CJ SJ CA CT C9 SA HA DA D7 D8"), "C") == 0.0
    assert H.skat_spoils(C.parse("SJ CA CT C9 C8 SA HA DA D7 D8"), "C") == 0.0
    without_two = H.skat_spoils(C.parse("HJ CA CT C9 C8 SA HA DA D7 D8"), "C")
    assert without_two == pytest.approx(1 - 190 / 231)


# --- skat, discard, declare -------------------------------------------------------------------


def test_strong_hand_picks_up_and_keeps_trumps() -> None:
    bot = HeuristicBot("t")
    twelve = "CJ SJ HA HT HK H9 H8 SA S7 D7 DK C8"
    assert bot.act(_obs(1, "CJ SJ HA HT HK H9 H8 SA S7 D7", [PICKUP], phase="skat", bid=20)) == PICKUP
    m = C.parse(twelve)
    discards = [DISCARDS[(a, b)] for a in C.cards_of(m) for b in C.cards_of(m) if a < b]
    d = bot.act(_obs(1, twelve, discards, phase="discard", bid=20))
    assert isinstance(d, Discard)
    assert not {"CJ", "SJ", "HA", "HT", "SA"} & set(d.cards)
    kept = " ".join(c for c in twelve.split() if c not in d.cards)
    declares = [Declare(game=g) for g in "CSHDGN"]  # type: ignore[arg-type]
    decl = bot.act(_obs(1, kept, declares, phase="declare", bid=20, discarded=list(d.cards)))
    assert decl == Declare(game="H")


def test_declared_game_reaches_the_bid_when_any_game_does() -> None:
    rng = random.Random(3)
    ladder = BID_LADDERS["isko"]
    for _ in range(300):
        twelve = C.mask(rng.sample(range(32), 12))
        bid = rng.choice(ladder[:20])
        plan = H.plan_game(twelve, bid, forehand=rng.random() < 0.5)
        reachable = max([H.estimated_value(g, twelve, False) for g in "CSHDG"] + [NULL_VALUES[(False, True)]])
        value = NULL_VALUES[(False, plan.ouvert)] if plan.game == "N" else H.estimated_value(plan.game, twelve, False)
        if reachable >= bid:
            assert value >= bid, (C.fmt(twelve), bid, plan.game)


# --- card play ---------------------------------------------------------------------------------


def test_schmiert_a_ten_on_the_partners_sure_trick() -> None:
    # Clubs by seat 0; partner (seat 1) leads SA, the declarer follows, we play last.
    obs = _trick_obs(2, "ST S8 CJ D7 D8 H7 H8 H9 DK", 0, "C", [(1, "SA"), (0, "S7")])
    assert HeuristicBot("t").act(obs) == PlayCard(card="ST")


def test_schmiert_an_ace_when_void_and_keeps_jacks() -> None:
    obs = _trick_obs(2, "HA CJ SJ D7 D8 H7 H8 H9 DK", 0, "C", [(1, "SA"), (0, "S7")])
    assert HeuristicBot("t").act(obs) == PlayCard(card="HA")


def test_plays_low_when_the_declarer_wins() -> None:
    # The declarer leads CJ; we cannot beat it: the seven, not the ace.
    obs = _trick_obs(1, "CA C7 SA ST D7 D8 H7 H8 H9 DK", 0, "C", [(0, "CJ")])
    assert HeuristicBot("t").act(obs) == PlayCard(card="C7")


def test_takes_the_declarers_trick_with_points() -> None:
    # Declarer leads HK in a clubs game, partner plays low; we hold HA: take it with the ace.
    obs = _trick_obs(2, "HA H7 S8 S9 D7 D8 DK CQ C9", 0, "C", [(0, "HK"), (1, "H8")])
    assert HeuristicBot("t").act(obs) == PlayCard(card="HA")


def test_defender_leads_an_ace() -> None:
    obs = _trick_obs(1, "SA S8 S9 D7 D8 DK H9 H7 CQ C9", 0, "C", [])
    assert HeuristicBot("t").act(obs) == PlayCard(card="SA")


def test_declarer_pulls_trumps_with_the_master() -> None:
    obs = _trick_obs(0, "CJ SJ HJ CA CT C9 SA ST H7 D7", 0, "C", [])
    assert HeuristicBot("t").act(obs) == PlayCard(card="CJ")


def test_null_declarer_ducks_with_its_highest_card_below() -> None:
    obs = _trick_obs(0, "D7 D8 DT S7 S9 H7 H8 C7 C8", 0, "N", [(1, "D9")])
    assert HeuristicBot("t").act(obs) == PlayCard(card="D8")


def test_null_defender_ducks_under_the_declarer() -> None:
    # The declarer (seat 0) played DT on our partner's D7 lead: stay under it.
    obs = _trick_obs(2, "D8 DJ DA S7 S9 H7 H8 C7 C8", 0, "N", [(1, "D7"), (0, "DT")])
    assert HeuristicBot("t").act(obs) == PlayCard(card="D8")


def test_falls_back_to_a_legal_action_on_nonsense() -> None:
    obs = _obs(0, "", [PASS], phase="weird")
    assert HeuristicBot("t").act(obs) == PASS


# --- whole tables -----------------------------------------------------------------------------


class _Strict:
    """The heuristic bot with its safety net removed: any exception or illegal pick fails."""

    def __init__(self, seed: str) -> None:
        self.bot = HeuristicBot(seed)
        self.decisions = 0

    def act(self, obs: Update) -> Command:
        action = self.bot._decide(obs.view, obs.view.legal)
        assert action in obs.view.legal, (action, obs.view.phase)
        self.decisions += 1
        return action


@pytest.mark.parametrize(
    "rules",
    [
        Rules(rounds=8),
        Rules(rounds=6, kontra=True, ramsch=True, bock=True),
        Rules(rounds=4, players=4, kontra=True, profile="classic"),
    ],
)
def test_never_illegal_over_many_tables(rules: Rules) -> None:
    from skatbus.bots import RandomBot, SteppingRandomBot

    for t in range(20):
        players = [f"p{i}" for i in range(rules.players)]
        bots = [
            _Strict(f"s{t}"),
            SteppingRandomBot(f"r{t}"),
            _Strict(f"h{t}"),
            RandomBot(f"x{t}"),
        ][: rules.players]
        run = play_table(f"t{t}", players, bots, rules, f"legal/{t}")  # type: ignore[arg-type]
        assert run.state.closed


def test_a_failed_decision_falls_back_and_is_logged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The safety net keeps the table going, but a bug behind it must show: counted, and logged
    once per kind of failure (not once per move)."""
    seen: list[Update] = []

    class _Spy:
        def act(self, obs: Update) -> Command:
            seen.append(obs)
            return obs.view.legal[0]

    play_table("spy", ["a", "b", "c"], [_Spy(), _Spy(), _Spy()], Rules(rounds=1), "spy")  # type: ignore[list-item]
    bot = HeuristicBot("x")

    def broken(*args: object) -> Command:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(bot, "_decide", broken)
    with structlog.testing.capture_logs() as logged:
        answers = [bot.act(obs) for obs in seen[:5]]
    assert answers == [obs.view.legal[0] for obs in seen[:5]]
    assert bot.fallbacks == 5
    phases = {obs.view.phase for obs in seen[:5]}
    warnings = [e for e in logged if e["event"] == "heuristic_fallback"]
    assert len(warnings) == len(phases) and all("ZeroDivisionError: a bug" in e["why"] for e in warnings)


def test_beats_random_bots_clearly() -> None:
    for opponent in ("random", "stepping-random"):
        ev = evaluate(["heuristic", opponent, opponent], deals=600, seed=f"ci/{opponent}")
        me, a, b = ev.stats
        assert me.deals == a.deals == b.deals >= 600
        assert me.mean - me.half_width > max(a.mean + a.half_width, b.mean + b.half_width)
        assert me.mean > 20


# --- evaluate -----------------------------------------------------------------------------------


def test_seatings_put_every_entry_in_every_seat_and_next_to_every_other() -> None:
    for entry in range(3):
        assert sorted(s.index(entry) for s in SEATINGS) == [0, 0, 1, 1, 2, 2]
    left_of = {(s[i], s[(i + 1) % 3]) for s in SEATINGS for i in range(3)}
    assert left_of == {(a, b) for a in range(3) for b in range(3) if a != b}


def test_evaluate_counts_each_deal_once_per_entry() -> None:
    ev = evaluate(
        ["heuristic", "random", "stepping-random"], deals=30, seed="count", rules=Rules(seeger_fabian=True, rounds=1)
    )
    assert ev.deals == 36 and ev.tables == 12
    for s in ev.stats:
        assert s.deals == 36
        assert s.won <= s.games
    total_games = sum(s.games for s in ev.stats)
    assert total_games + ev.passed_in == 36


def test_evaluate_main_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["heuristic", "random", "stepping-random", "--deals", "12", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "heuristic" in out and "95% CI" in out and "18 deals" in out


def test_evaluate_rejects_unknown_bots() -> None:
    with pytest.raises(ValueError):
        evaluate(["heuristic", "nobody", "random"], deals=3)


def test_a_null_worth_less_than_the_bid_is_never_planned() -> None:
    """Null's value is fixed, so a null below the bid cannot be declared at all (found by the
    fallback log in a duplicate run: "chose declare null ouvert, which is not legal")."""
    twelve = C.parse("C7 C8 C9 S7 S8 S9 H7 H8 H9 D7 D8 D9")  # a perfect null hand
    assert H.plan_game(twelve, 46, forehand=True).game == "N"
    plan = H.plan_game(twelve, 48, forehand=True)
    assert plan.game != "N"
    twelve_after = twelve & ~C.mask(plan.discard)
    assert C.count(twelve_after) == 10
