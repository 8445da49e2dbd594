"""Game records of Thirty-one (protocol/thirty_one/records.py): reading, replaying, comparing,
and the two ways between records and logs.

The records of tests/data/records/ come from the rules page's worked examples and numbered rules
(each line's ``note`` quotes the one it comes from; ``make_records.py`` there wrote them, with the
results typed in by hand from the example, not computed). ``agree.jsonl`` must agree,
``differ.jsonl`` must differ in exactly the fields its ``expect`` lists, ``error.jsonl`` must be an
error whose reason holds its ``expect``. Round trips play random engine games (the property
tests' driver: random options, 2-9 players, time-outs, pauses, looks) and check that the records
written from their logs agree and import back to the same results.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings

from protocol.events import Event, TableClosed, TableOpenedV2
from protocol.lifecycle import LogError
from protocol.thirty_one import GAME, T31Dealt, ThirtyOneRules, fold
from protocol.thirty_one.records import (
    CUT_SHORT,
    MISSING,
    Difference,
    RecordError,
    Verdict,
    check,
    compare,
    events_of,
    parse_line,
    read_record,
    records_of,
    replay,
    same,
)

from .test_properties import SEEDS, Game

DATA = Path(__file__).parents[2] / "data" / "records"


def lines(name: str) -> list[str]:
    return [line for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def records(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines(name)]


AGREE = records("agree.jsonl")
DIFFER = records("differ.jsonl")
EXAMPLE_12 = AGREE[0]
CUT_AFTER_3, STOPS_IN_6 = AGREE[1], AGREE[2]
assert "Cut short after deal 3" in CUT_AFTER_3["note"] and "Deal 6 stops" in STOPS_IN_6["note"]


def by_note(start: str) -> dict[str, Any]:
    return copy.deepcopy(next(r for r in AGREE if r["note"].startswith(start)))


ROUNDS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- the worked examples ------------------------------------------------------------------


def test_example_12_a_whole_game_as_a_record() -> None:
    """Example 12: "Three players A, B, C (seats 0, 1, 2), 3 coins each, the county on."

    | deal | dealer | lives lost | coins A B C | kitty |
    | 1 | C | B 1 | 3 2 3 | 1 |
    | 2 | A | A 1, B 1 | 2 1 3 | 3 |
    | 3 | B | B 2: pays 1, owes 1, eliminated (3rd) | 2 0 3 | 4 |
    | 4 | C | A 1 | 1 - 3 | 5 |
    | 5 | A | C 1 | 1 - 2 | 6 |
    | 6 | C | A 2: pays 1, owes 1, eliminated (2nd) | 0 - 2 | 7 |

    "C wins and takes the kitty: 2 + 7 = 9 coins, every coin of the game." The rules' values are
    compared with the example itself here, not only with the record."""
    verdict = check(EXAMPLE_12)
    assert verdict == Verdict(status="agree", deals=6, complete=True)
    replayed = replay(EXAMPLE_12)
    assert replayed.dealers == [2, 0, 1, 2, 0, 2]
    rows = [(r["lives"], r["coins"], r["eliminated"]) for r in replayed.results if r is not None]
    assert rows == [
        ([0, 1, 0], [3, 2, 3], []),
        ([1, 1, 0], [2, 1, 3], []),
        ([0, 2, 0], [2, 0, 3], [1]),
        ([1, 0, 0], [1, 0, 3], []),
        ([0, 0, 1], [1, 0, 2], []),
        ([2, 0, 0], [0, 0, 2], [0]),
    ]
    assert [s.kitty for s in replayed.state.sheet] == [1, 3, 4, 5, 6, 7]
    assert replayed.result == {"places": [2, 3, 1], "coins": [0, 0, 9], "kitty": 0, "complete": True}
    assert replayed.log[-1] == TableClosed(reason="one player left")


@pytest.mark.parametrize("record", AGREE, ids=[f"agree-{i + 1}" for i in range(len(AGREE))])
def test_the_records_of_the_examples_agree(record: dict[str, Any]) -> None:
    verdict = check(record)
    assert verdict.status == "agree", f"{record['note']}\n{verdict.describe()}"


def test_the_records_cover_every_option_and_2_to_9_players() -> None:
    """The data holds a record for every player count and every option set away from its default."""
    assert {len(r["players"]) for r in AGREE} == set(range(2, 10))
    options = {k for r in AGREE for k, v in r["rules"].items() if getattr(ThirtyOneRules(), k, v) != v}
    spelt = {k for r in AGREE for k in r["rules"]}
    assert set(ThirtyOneRules.__struct_fields__) - {"turn_seconds", "max_timeouts", "time_control"} <= options
    assert set(ThirtyOneRules.__struct_fields__) - {"time_control"} <= spelt  # newer than the records
    assert any(r["deals"] and r["deals"][0]["restocks"] for r in AGREE)
    assert {r["deals"][0]["result"]["end"] for r in AGREE if r["deals"] and "result" in r["deals"][0]} == {
        "thirty_one", "showdown", "throw_down", "void", "turn_limit",
    }  # fmt: skip


@pytest.mark.parametrize("record", DIFFER, ids=[f"differ-{i + 1}" for i in range(len(DIFFER))])
def test_records_that_differ_name_every_differing_field(record: dict[str, Any]) -> None:
    verdict = check(record)
    assert verdict.status == "differ", verdict.describe()
    assert [d.field for d in verdict.differences] == record["expect"], record["note"]
    for d in verdict.differences:  # the record's own value and the rules' value, side by side
        assert d.record is MISSING or d.record == _at(record, d.field), d
        assert not same(d.record, d.rules)


def _at(record: dict[str, Any], path: str) -> Any:
    node: Any = record
    for part in path.replace("]", "").replace("[", ".").split("."):
        node = node[int(part)] if part.isdigit() else node[part]
    return node


ERROR_LINES = lines("error.jsonl")
UNLABELLED = {0: "not JSON", 1: "a record is a JSON object"}
"""The lines of error.jsonl that cannot carry an ``expect`` key (not JSON, not an object)."""


@pytest.mark.parametrize("k", range(len(ERROR_LINES)), ids=[f"error-{k + 1}" for k in range(len(ERROR_LINES))])
def test_records_that_are_errors_say_why_in_one_line(k: int) -> None:
    line = ERROR_LINES[k]
    try:
        record = parse_line(line)
    except RecordError as exc:
        verdict = Verdict(status="error", reason=exc.reason)
        record = None
    else:
        verdict = check(record)
    expect = record["expect"] if isinstance(record, dict) else UNLABELLED[k]
    assert verdict.status == "error"
    assert expect in verdict.reason, (expect, verdict.reason)
    assert "\n" not in verdict.reason
    assert verdict.describe() == f"error: {verdict.reason}"


def test_every_kind_of_error_is_in_the_data_once() -> None:
    kinds = [json.loads(line).get("kind") for line in ERROR_LINES[2:]]
    assert len(kinds) == len(set(kinds)) and None not in kinds
    assert len(ERROR_LINES) >= 50


def test_an_action_error_names_the_deal_the_position_and_the_action() -> None:
    """RECORDS.md: a checker "refuses the first action the rules do not allow (naming the deal,
    the action's position and the reason)". Example 12, deal 3, action 5 (B's knock) made a
    discard before B took a card, then also a discard of a card B does not hold."""
    r = copy.deepcopy(EXAMPLE_12)
    r["deals"][2]["actions"][4] = "1 discard S7"
    assert check(r).reason == 'deal 3, action 5 "1 discard S7": take a card first (from the stock or the discard pile)'
    r["deals"][2]["actions"][4:5] = ["1 take stock", "1 discard S7"]
    assert check(r).reason == 'deal 3, action 6 "1 discard S7": you do not hold S7'


def test_the_form_of_a_record_is_read_before_it_is_replayed() -> None:
    """A text that is no action is named even where an earlier action breaks the rules: a record
    is read whole (its form) before it is replayed (its rules)."""
    r = copy.deepcopy(EXAMPLE_12)
    r["deals"][2]["actions"][4] = "1 discard S7"
    r["deals"][4]["actions"][0] = "2 bluff"
    assert check(r).reason.startswith('deal 5, action 1 "2 bluff": not an action')


# --- T42, T44, T45 --------------------------------------------------------------------------


def test_t42_restocks_are_used_in_order_and_their_order_is_the_stock() -> None:
    """T42: "A record must give exactly the restocks its deal uses"; RECORDS.md: "each new stock,
    top card first, in the order the stock was rebuilt". Swapping two restocks, or giving a
    stock in another order, breaks the record where a player takes a card it does not hold."""
    two = by_note("Two restocks in one deal")
    assert check(two).status == "agree"
    swapped = copy.deepcopy(two)
    first, second = swapped["deals"][0]["restocks"]
    swapped["deals"][0]["restocks"] = [second, first]
    assert "restock 1 (after action 84): not the discard pile without its top card" in check(swapped).reason
    reordered = copy.deepcopy(two)
    reordered["deals"][0]["restocks"][1] = second[::-1]
    reason = check(reordered).reason
    assert reason.startswith('deal 1, action 170 "0 discard ') and "you do not hold" in reason


def test_t42_a_restock_may_be_any_order_of_the_right_cards() -> None:
    """T28: the new stock is the pile but its top card, shuffled: any order is a stock, so long
    as the actions that follow take what it gives."""
    one = by_note("A record with a restock")
    deal = one["deals"][0]
    stock = deal["restocks"][0][::-1]
    deal["restocks"][0] = stock
    deal["actions"][-1] = f"0 discard {stock[0]}"  # A's last turn takes the new top card
    assert check(one).status == "agree"


@pytest.mark.parametrize("seconds", [-1, 0, 0.001, 1e300, 30])
def test_t44_turn_seconds_only_has_to_be_a_number(seconds: float) -> None:
    """T44: "Unknown keys in rules are ignored (turn_seconds only has to be a number)"."""
    r = by_note("Example 4")
    r["rules"] = {"turn_seconds": seconds, "house_rule": {"any": ["thing"]}, "variant": "b"}
    assert check(r).status == "agree"


@pytest.mark.parametrize(
    ("rules", "says"),
    [
        ({"turn_seconds": "30"}, "turn_seconds must be a number"),
        ({"turn_seconds": True}, "turn_seconds must be a number"),
        ({"turn_seconds": None}, "turn_seconds must be a number"),
        ({"coins": 0}, "coins must be 1 or more"),
        ({"coins": 1.5}, "coins"),
        ({"coins": True}, "coins"),
        ({"min_knock": -1}, "min_knock must be 0 to 31"),
        ({"max_turns": 0}, "max_turns"),
        ({"max_deals": 0}, "max_deals"),
        ({"max_timeouts": -1}, "max_timeouts"),
        ({"stock_out": "reshuffled"}, "stock_out"),
        ({"throw_down": 1}, "throw_down"),
        ({"three_of_a_kind": "31"}, "three_of_a_kind"),
        ({"three_of_a_kind": 0}, "three_of_a_kind"),
    ],
)
def test_t44_a_known_option_with_an_impossible_value_is_an_error(rules: dict[str, Any], says: str) -> None:
    r = by_note("Example 4")
    r["rules"] = rules
    verdict = check(r)
    assert verdict.status == "error" and verdict.reason.startswith("rules: ") and says in verdict.reason


T45 = [r for r in AGREE if r["note"].startswith("Option three_of_a_kind spelt")]


@pytest.mark.parametrize("record", T45, ids=[json.dumps(r["rules"].get("three_of_a_kind", "(left out)")) for r in T45])
def test_t45_three_of_a_kind_spellings(record: dict[str, Any]) -> None:
    """T45: "three_of_a_kind accepts "off", false or null for off, 30/"30" (and true) and
    30.5/"30.5"." The record's hands make the three settings give three different results."""
    spelt = record["rules"].get("three_of_a_kind", "(left out)")
    meaning = {"off": "off", False: "off", None: "off", "(left out)": "off", 30: "30", "30": "30", True: "30"}.get(
        spelt, "30.5"
    )
    assert read_record(record).rules.three_of_a_kind == meaning
    assert check(record).status == "agree"
    others = [r for r in T45 if read_record(r).rules.three_of_a_kind != meaning]
    assert all(r["deals"][0]["result"]["lives"] != record["deals"][0]["result"]["lives"] for r in others)


def test_t45_as_json_spells_it() -> None:
    """The spellings as they stand in a JSON line (30 and 30.0 are one number in JSON)."""
    for text, meaning in [('"off"', "off"), ("false", "off"), ("null", "off"), ("30", "30"), ("30.0", "30"),
                          ('"30"', "30"), ("true", "30"), ("30.5", "30.5"), ('"30.5"', "30.5")]:  # fmt: skip
        line = json.dumps(by_note("Example 4")).replace('"rules": {}', f'"rules": {{"three_of_a_kind": {text}}}')
        assert read_record(parse_line(line)).rules.three_of_a_kind == meaning, text


# --- reading --------------------------------------------------------------------------------


def test_unknown_keys_are_ignored_everywhere() -> None:
    """RECORDS.md: "Unknown keys are ignored": in the record, in a deal, in a result."""
    r = copy.deepcopy(EXAMPLE_12)
    r["event"] = "club night"
    r["deals"][0]["comment"] = "a quick knock"
    r["deals"][0]["result"]["shown"] = [["HA", "HK", "H4"]]
    r["result"]["winner"] = "cyd"
    assert check(r).status == "agree"


def test_restocks_may_be_left_out_and_rules_too() -> None:
    """An option left out has its default (RECORDS.md); a deal that needs no restock may leave
    ``restocks`` out (it is ``[]``)."""
    r = copy.deepcopy(EXAMPLE_12)
    del r["rules"]
    for deal in r["deals"]:
        del deal["restocks"]
    assert check(r).status == "agree"


def test_actions_are_read_as_the_engine_prints_them() -> None:
    r = copy.deepcopy(EXAMPLE_12)
    r["deals"][0]["actions"] = ["0  KNOCK ", "1 Take Stock", "1 discard c3", "2 take stock", "2 discard C4"]
    assert check(r).status == "agree"


def test_same_keeps_types_apart() -> None:
    """A checker passes no record that writes a wrong type: true is not 1, "3" is not 3; numbers
    compare by value (3 is 3.0)."""
    assert same(3, 3.0) and same([0, 1], [0.0, 1]) and same({"a": [1]}, {"a": [1.0]})
    assert not same(True, 1) and not same(1, True) and not same("3", 3) and not same(None, MISSING)
    assert not same([1, 2], [1, 2, 3]) and not same({"a": 1}, {"a": 1, "b": 2})


def test_a_difference_shows_both_values_as_json() -> None:
    d = Difference("deals[2].result.coins", [3, 2, 3], [3, 3, 2])
    assert str(d) == "deals[2].result.coins: record [3,2,3], rules [3,3,2]"
    assert str(Difference("result", MISSING, {"kitty": 0})) == 'result: record (missing), rules {"kitty":0}'
    assert Difference("result", MISSING, 1).to_json() == {"field": "result", "rules": 1}


def test_not_json_and_not_utf8_are_errors() -> None:
    with pytest.raises(RecordError, match="not JSON"):
        parse_line("{")
    with pytest.raises(RecordError, match="not UTF-8"):
        parse_line(b'{"game": "thirty-one", "players": ["\xff"]}')
    assert parse_line("\ufeff{}".encode()) == {}


# --- incomplete records ---------------------------------------------------------------------


def test_a_last_deal_stopping_mid_way_is_incomplete_and_never_scored() -> None:
    """RECORDS.md: "A record whose last deal stops in the middle is incomplete and is reported
    as such, never scored." Example 12 stopped after A's knock in deal 6: the game's result is
    the one after deal 5 (T38: the active players share place 1)."""
    r = STOPS_IN_6
    verdict = check(r)
    assert verdict.status == "agree" and verdict.stopped == "deal 6 stops after action 1"
    assert verdict.describe() == "agree (incomplete: deal 6 stops after action 1, not scored)"
    replayed = replay(r)
    assert replayed.results[-1] is None and len(replayed.state.sheet) == 5
    assert replayed.result == {"places": [1, 3, 1], "coins": [1, 0, 2], "kitty": 6, "complete": False}


def test_a_record_cut_short_between_deals() -> None:
    """RECORDS.md: "A record may stop after any deal (a game cut short); complete is then false"."""
    r = copy.deepcopy(EXAMPLE_12)
    r["deals"] = r["deals"][:2]
    r["result"] = {"places": [1, 1, 1], "coins": [2, 1, 3], "kitty": 3, "complete": False}
    verdict = check(r)
    assert verdict.status == "agree" and not verdict.complete and verdict.describe() == "agree (cut short after deal 2)"


# --- records and logs ------------------------------------------------------------------------


def played(seed: int, **kw: Any) -> Game:
    game = Game(seed, **kw)
    game.play()
    return game


def through_json(record: dict[str, Any]) -> Any:
    return json.loads(json.dumps(record))


@ROUNDS
@given(SEEDS)
def test_random_games_make_records_that_agree(seed: int) -> None:
    """An engine game (random options, 2-9 players, time-outs, pauses, looks, restocks) ->
    ``records_of`` -> JSON -> ``check``: agree, with the dealers and results of the log."""
    game = played(seed)
    record = through_json(records_of(game.log))
    verdict = check(record)
    assert verdict.status == "agree", verdict.describe()
    assert verdict.complete and verdict.deals == len(game.state.sheet)
    assert [d["dealer"] for d in record["deals"]] == [row.dealer for row in game.state.sheet]
    assert record["result"] == msgspec.to_builtins(game.state.result())
    assert record["table"] == "prop" and record["players"] == game.state.players


@ROUNDS
@given(SEEDS)
def test_events_of_records_of_folds_to_the_same_results(seed: int) -> None:
    """``events_of(records_of(log))``: a log without seeds, time-outs or pauses that folds to the
    same score sheet and result; its own record is the same record."""
    game = played(seed)
    record = through_json(records_of(game.log))
    log = events_of(record, "again")
    again = fold(log)
    assert again.sheet == game.state.sheet and again.result() == game.state.result()
    assert again.closed and again.close_reason == game.state.close_reason
    assert all(not (isinstance(e, (T31Dealt, TableOpenedV2)) and e.seed) for e in log)
    assert through_json(records_of(log)) == dict(record, table="again")


@ROUNDS
@given(SEEDS)
def test_a_log_cut_anywhere_makes_a_record_that_agrees(seed: int) -> None:
    """An archive read before its table ended (the last deal in the middle, a score still owed,
    a time-out without its default action yet): the record says what the rules give so far."""
    game = played(seed, max_deals=random.Random(seed).choice([1, 2, 3]))
    cut = random.Random(seed ^ 7).randrange(1, len(game.log) + 1)
    record = through_json(records_of(game.log[:cut]))
    verdict = check(record)
    assert verdict.status == "agree", (cut, verdict.describe())
    again = fold(events_of(record))
    assert again.sheet == game.state.sheet[: len(again.sheet)]


def test_records_of_the_data_round_trip() -> None:
    """Every record of agree.jsonl -> ``events_of`` -> ``records_of``: the same record (the
    rules written out in full, skatbus's ``table`` added, the ``note`` gone)."""
    for r in AGREE:
        back = records_of(events_of(r, "t-1"))
        assert back["table"] == "t-1" and back["rules"] == msgspec.to_builtins(read_record(r).rules)
        assert back["players"] == r["players"] and back["result"] == r["result"]
        mine = [{k: d[k] for k in ("dealer", "deck", "restocks", "actions", "result") if k in d} for d in back["deals"]]
        assert mine == [dict(d, restocks=d.get("restocks", [])) for d in r["deals"]], r["note"]


def test_events_of_closes_a_record_cut_short() -> None:
    """A game cut short becomes a closed table that is not complete: nobody won it by the rules."""
    log = events_of(CUT_AFTER_3)
    assert log[-1] == TableClosed(reason=CUT_SHORT)
    state = fold(log)
    assert state.closed and not state.complete and state.result().kitty == 4
    assert events_of(EXAMPLE_12)[-1] == TableClosed(reason="one player left")


def test_events_of_an_error_raises_with_the_reason() -> None:
    r = copy.deepcopy(EXAMPLE_12)
    r["deals"][0]["actions"][0] = "1 knock"
    with pytest.raises(RecordError, match=r'^deal 1, action 1 "1 knock": not your turn'):
        events_of(r)


def test_records_of_refuses_what_is_no_thirty_one_log() -> None:
    game = played(3, max_deals=1)
    with pytest.raises(LogError, match="not a table of thirty-one"):
        records_of(game.log[1:])
    with pytest.raises(LogError, match="no events"):
        records_of([])
    broken: list[Event] = list(game.log)
    broken.insert(2, broken[1])  # a second deal 1
    with pytest.raises(LogError):
        records_of(broken)


def test_records_of_writes_actions_not_time_outs_or_pauses() -> None:
    """Time-outs, withdrawals and pauses are the table's, not the game's: a record has the
    actions only (a timed-out seat's default action is one of them)."""
    for seed in range(200):
        game = played(seed, max_deals=2)
        kinds = {type(e).__name__ for e in game.log}
        if {"PlayerTimedOut", "TablePaused"} <= kinds:
            break
    else:
        pytest.fail("no game with a time-out and a pause in 200 seeds")
    record = records_of(game.log)
    texts = [a for d in record["deals"] for a in d["actions"]]
    actions = [e for e in game.log if type(e).__name__.startswith("T31") and hasattr(e, "seat")]
    assert len(texts) == len(actions)
    assert check(through_json(record)).status == "agree"


def test_compare_lists_deal_fields_before_game_fields() -> None:
    r = copy.deepcopy(EXAMPLE_12)
    r["result"]["kitty"] = 1
    r["deals"][5]["dealer"] = 1
    r["deals"][0]["result"]["end"] = "void"
    rec = read_record(r)
    fields = [d.field for d in compare(rec, replay(rec))]
    assert fields == ["deals[0].result.end", "deals[5].dealer", "result.kitty"]


def test_the_game_name_is_the_registered_one() -> None:
    assert GAME.name == "thirty-one" and read_record(EXAMPLE_12).players == ["ann", "bob", "cyd"]


def test_a_table_closed_by_hand_is_recorded_by_the_rules() -> None:
    """A table its operator closed: where the game had not ended the record is cut short
    (``complete`` false, nobody takes the kitty); where it had (one player left), the record
    says so, as ``check`` replays it: a record says what the game gave by its rules (T27, T36)."""
    log = events_of(EXAMPLE_12)
    assert log[-1] == TableClosed(reason="one player left")
    by_hand = [*log[:-1], TableClosed(reason="the operator went home")]
    assert not fold(by_hand).complete  # the log's own fold: a close that is not the rules'
    record = records_of(by_hand)
    assert record["result"] == EXAMPLE_12["result"] and check(through_json(record)).status == "agree"
    early = next(i for i, e in enumerate(log) if isinstance(e, T31Dealt) and e.deal == 4)
    cut = records_of([*log[:early], TableClosed(reason="the operator went home")])
    assert cut["result"] == {"places": [1, 3, 1], "coins": [2, 0, 3], "kitty": 4, "complete": False}
    assert check(through_json(cut)).describe() == "agree (cut short after deal 3)"


def test_a_paused_table_is_recorded_as_the_rules_go_on() -> None:
    """A record has no pauses: a log that ends paused, with a deal's score still owed, gives the
    record with that score."""
    from protocol.events import TablePaused

    log = events_of(EXAMPLE_12)
    ended = next(i for i, e in enumerate(log) if type(e).__name__ == "T31DealEnded")
    record = records_of([*log[:ended], TablePaused(reason="lunch")])
    assert record["deals"][0]["result"] == EXAMPLE_12["deals"][0]["result"]
    assert check(through_json(record)).status == "agree"


def test_the_data_files_are_what_make_records_writes() -> None:
    """tests/data/records/make_records.py and the .jsonl files it wrote stay in step."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_records", DATA / "make_records.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    good = make.agree()
    assert [json.dumps(r, ensure_ascii=False) for r in good] == lines("agree.jsonl")
    assert [json.dumps(r, ensure_ascii=False) for r in make.differ(good)] == lines("differ.jsonl")
    written = [r["raw"] if "raw" in r else json.dumps(r, ensure_ascii=False) for r in make.errors(good)]
    assert written == lines("error.jsonl")
