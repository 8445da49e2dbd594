"""Writes the rummy ("Скат") record fixtures of this directory (``python tests/data/rummy/make_records.py``).

Every record stages a worked example (or a rule) of the rummy rules page; its ``note`` says which.
The script knows nothing of any checker or engine: it lays out each deck by the records' dealing
order (one card at a time to each player from the dealer's left, then the stock top first, the
unnamed cards following in pack order) and writes the results BY HAND from the example's numbers.
The tests read only the .jsonl files; this script is how they were made and how to change them.

Files: ``agree.jsonl`` (records the rules reproduce), ``differ.jsonl`` (each with ``expect``: the
fields that must differ), ``refused.jsonl`` (each with ``expect``: the deal index, the action's
position and a text the reason must hold). ``note`` and ``expect`` are keys the format does not
know: a checker ignores them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
NAMES = ["ann", "bob", "cyd", "dan", "eve", "fay"]


def pack(variant: str, packs: int = 1) -> list[str]:
    ranks = "6789TJQKA" if variant == "a" else "23456789TJQKA"
    cards = [s + r for s in "CSHD" for r in ranks]
    if variant == "a":
        return cards
    if packs == 2:
        return cards + [c + "'" for c in cards] + ["X1", "X2", "X3", "X4"]
    return cards + ["X1", "X2"]


def deck(variant: str, dealer: int, hands: list[list[str]], stock: list[str], packs: int = 1) -> list[str]:
    """The deck that deals ``hands`` (by seat) from the dealer's left and then has ``stock`` on top."""
    n, size = len(hands), len(hands[0])
    assert all(len(h) == size for h in hands), hands
    dealt = [hands[(dealer + 1 + k) % n][k // n] for k in range(n * size)]
    named = dealt + stock
    full = pack(variant, packs)
    assert len(set(named)) == len(named) and all(c in full for c in named), named
    return named + [c for c in full if c not in named]


def result(
    end: str, out: int | None, plus: list[int], minus: list[int], score: list[int], totals: list[int]
) -> dict[str, Any]:
    return {"end": end, "out": out, "plus": plus, "minus": minus, "score": score, "totals": totals}


def record(
    note: str, rules: dict[str, Any], deals: list[dict[str, Any]], game: dict[str, Any], n: int = 0
) -> dict[str, Any]:
    n = n or len(deals[0]["result"]["score"])
    return {"note": note, "game": "rummy", "players": NAMES[:n], "rules": rules, "deals": deals, "result": game}


def ex1_deal(credit: str) -> dict[str, Any]:
    """Example 1 (a): row SA SQ CK HJ, P2 holds SJ, draws SK, names SQ and lays SJ SQ SK at once."""
    hands = [
        ["SA", "HJ", "D6", "S7", "H9"],  # P1: discards SA, then HJ
        ["SJ", "SQ", "HQ", "HK", "C8"],  # P2: discards SQ, later takes it back
        ["CA", "C6", "C7", "CK", "H6"],  # P3: lays CA C6 C7 (round the corner), discards CK
    ]
    stock = ["DT", "D9", "DJ", "C9", "SK"]
    actions = [
        "0 discard SA",
        "1 discard SQ",
        "2 meld CA C6 C7",
        "2 discard CK",
        "0 discard HJ",  # the row is SA SQ CK HJ
        "1 take 2",  # SQ CK HJ
        "1 meld SJ SQ SK",  # 30
        "1 meld HJ HQ HK",
        "1 layoff 1 CK",  # CK before CA
        "1 layoff 1 C8",
        "1 discard D9",  # hand empty: out
    ]
    # P1 holds D6 S7 H9 DT C9 = 41; P3 holds H6 DJ = 16; P2's melds 60, lay-offs CK 10 + C8 8 = 18.
    if credit == "layer":
        res = result("went_out", 1, [0, 78, 24], [41, 0, 16], [-41, 78, 8], [-41, 78, 8])
    else:
        res = result("went_out", 1, [0, 60, 42], [41, 0, 16], [-41, 60, 26], [-41, 60, 26])
    return {"dealer": 2, "deck": deck("a", 2, hands, stock), "actions": actions, "result": res}


def ex3_deal(dealer: int) -> tuple[dict[str, Any], list[int]]:
    """Example 3 (a, 3 players), with P1 on the dealer's left; returns the deal and its layer scores by seat."""
    p1, p2, p3 = ((dealer + k) % 3 for k in (1, 2, 3))
    by_role = {
        p1: ["HK", "SK", "DK", "C6", "C7"],  # draws D7 (discarded, taken by P2), then C8
        p2: ["DA", "D6", "CK", "HQ", "S9"],  # draws H6 (discarded)
        p3: ["SA", "HT", "C9", "D8", "S6"],  # draws S8 (discarded)
    }
    hands = [by_role[s] for s in range(3)]
    actions = [
        f"{p1} meld HK SK DK",
        f"{p1} discard D7",
        f"{p2} take 1",
        f"{p2} meld DA D6 D7",  # round the corner: 11 + 6 + 7 = 24
        f"{p2} layoff 1 CK",
        f"{p2} discard H6",
        f"{p3} discard S8",
        f"{p1} meld C6 C7 C8",  # P1's hand is empty: out, no discard
    ]
    scores = {p1: 51, p2: 15, p3: -44}
    d = {"dealer": dealer, "deck": deck("a", dealer, hands, ["D7", "H6", "S8", "C8"]), "actions": actions}
    return d, [scores[s] for s in range(3)]


def ex3_records() -> list[dict[str, Any]]:
    layer, _ = ex3_deal(2)
    layer["result"] = result("went_out", 0, [51, 34, 0], [0, 19, 44], [51, 15, -44], [51, 15, -44])
    owner = copy.deepcopy(layer)
    owner["result"] = result("went_out", 0, [61, 24, 0], [0, 19, 44], [61, 5, -44], [61, 5, -44])
    return [
        record(
            "example 3 (a, layoff_credit layer): 51, 15, -44",
            {"variant": "a"},
            [layer],
            {"places": [1, 2, 3], "totals": [51, 15, -44], "complete": False},
        ),
        record(
            "example 3 (a, layoff_credit owner): 61, 5, -44",
            {"variant": "a", "layoff_credit": "owner"},
            [owner],
            {"places": [1, 2, 3], "totals": [61, 5, -44], "complete": False},
        ),
    ]


def ex6_deal() -> dict[str, Any]:
    """Example 6 (c): row SA C6 SQ S6; P2 draws H6, may not discard it, claims C6 S6 H6 (18)."""
    hands = [
        ["SA", "S6", "C9", "HT", "DJ"],
        ["C6", "D2", "D3", "D4", "H9"],
        ["SQ", "X1", "CK", "H2", "H4"],
    ]
    stock = ["D8", "D5", "S9", "C3", "H6"]
    actions = [
        "0 discard SA",
        "1 discard C6",
        "2 discard SQ",
        "0 discard S6",  # the row is SA C6 SQ S6
        "1 claim C6 S6 H6",  # 18; the row is SA SQ
        "1 meld D2 D3 D4 D5",  # 14
        "1 discard H9",  # out by the discard
    ]
    # P1 holds C9 HT DJ D8 C3 = 40; P3 holds X1 CK H2 H4 S9: (10 + 2 + 4 + 9) x 2 = 50.
    res = result("went_out", 1, [0, 32, 0], [40, 0, 50], [-40, 32, -50], [-40, 32, -50])
    return {"dealer": 2, "deck": deck("c", 2, hands, stock), "actions": actions, "result": res}


def ex6_run_deal() -> dict[str, Any]:
    """Example 6's run (c, 2 players): H6 H7 H9 in the row, P1 draws H8 and claims the whole stretch H6 to H9."""
    hands = [["H6", "H9", "C2", "C3", "SK"], ["H7", "D9", "S5", "CT", "DA"]]
    stock = ["S2", "S3"]
    actions = [
        "0 discard H6",
        "1 discard H7",
        "0 discard H9",  # H9 with H7 wants H8: no meld, allowed
        "1 discard S3",
        "0 claim H6 H7 H8 H9",  # 30; H7 H8 H9 alone would leave H6 next to it (M33)
        "0 meld C2 C3 C4",
    ]  # the record stops here, in the middle of the deal
    return {"dealer": 1, "deck": deck("c", 1, hands, stock + ["C4", "D3", "H8"]), "actions": actions}


def joker_c_deal(credit: str) -> dict[str, Any]:
    """M19, M20, M21, M33, M41 (c, 2 players): a discarded joker is claimed and named, then swapped out."""
    hands = [["X1", "C2", "HT", "D5", "D6"], ["H9", "CK", "DK", "SQ", "DA"]]
    stock = ["S2", "S9", "S3", "H8", "S4"]
    actions = [
        "0 discard X1",  # M20: allowed, the row is empty
        "1 discard H9",  # H9 with X1: one natural only, no meld (M7)
        "0 discard C2",
        "1 claim H8 H9 X1=HT",  # 27 for the claimer (M42); the row is C2
        "1 discard S9",
        "0 swap 1 HT",  # c: only the named card replaces the joker (M18)
        "0 meld D5 D6 X1=D7",  # 18
        "0 meld S2 S3 S4",  # 9, out without a discard
    ]
    # P2 holds CK DK SQ DA = 41; the HT swapped in counts like a lay-off (M41).
    if credit == "owner":
        res = result("went_out", 0, [27, 27], [0, 41], [27, -14], [27, -14])
    else:
        res = result("went_out", 0, [37, 17], [0, 41], [37, -24], [37, -24])
    return {"dealer": 1, "deck": deck("c", 1, hands, stock), "actions": actions, "result": res}


def ex8_deal() -> dict[str, Any]:
    """Example 8 (d): the row ends in H9; P2 must lay C3 C4 C5 before he may take it for H7 H8 H9."""
    hands = [
        ["H9", "D2", "D5", "S8", "SJ", "CK"],
        ["H7", "H8", "C3", "C4", "C5", "C6"],
        ["X1", "S2", "S4", "D7", "DT", "HQ"],
    ]
    actions = [
        "0 discard H9",
        "1 meld C3 C4 C5",  # 12: now he has melded (M22)
        "1 take 1",
        "1 meld H7 H8 H9",  # 24
        "1 layoff 1 C6",
        "1 layoff 1 C2",  # out without a discard
    ]
    # P1 holds D2 D5 S8 SJ CK HA = 46; P3 holds X1 S2 S4 D7 DT HQ: 33 x 2 = 66.
    res = result("went_out", 1, [0, 44, 0], [46, 0, 66], [-46, 44, -66], [-46, 44, -66])
    return {"dealer": 2, "deck": deck("d", 2, hands, ["HA", "C2"]), "actions": actions, "result": res}


def ex9_deal() -> dict[str, Any]:
    """Example 9 (a, 4 players): 16 stock cards, 16 turns, each discarding what it drew; the 17th cannot begin."""
    hands = [
        ["HJ", "HQ", "HK", "S7", "C8"],
        ["HA", "SA", "D9", "C6", "ST"],
        ["C7", "C9", "DT", "S8", "H6"],
        ["CA", "D6", "S9", "H7", "DQ"],
    ]
    stock = ["CT", "CJ", "CQ", "CK", "S6", "SJ", "SQ", "SK", "H8", "H9", "HT", "D7", "D8", "DJ", "DK", "DA"]
    actions = ["0 meld HJ HQ HK"]
    for t, card in enumerate(stock):
        actions.append(f"{t % 4} discard {card}")
    # P1 30 - (S7 C8) 15 = 15; P2 -47; P3 C7 C9 DT S8 H6 = 40; P4 CA D6 S9 H7 DQ = 43.
    res = result("stock_out", None, [30, 0, 0, 0], [15, 47, 40, 43], [15, -47, -40, -43], [15, -47, -40, -43])
    return {"dealer": 3, "deck": deck("a", 3, hands, stock), "actions": actions, "result": res}


def ex10_deal() -> dict[str, Any]:
    """Example 10 (a, 2 players): P1 holds C9 CT after his last discard, draws CJ and lays C9 CT CJ (29)."""
    hands = [["C9", "CT", "D6", "D7", "D8"], ["H6", "H8", "ST", "SQ", "DA"]]
    actions = ["0 meld D6 D7 D8", "0 discard SA", "1 discard S6", "0 meld C9 CT CJ"]
    res = result("went_out", 0, [50, 0], [0, 45], [50, -45], [50, -45])
    return {"dealer": 1, "deck": deck("a", 1, hands, ["SA", "S6", "CJ"]), "actions": actions, "result": res}


def ex11_deal() -> dict[str, Any]:
    """Example 11 (b, 5 players, so 108 cards by default): H7 S7 D7 a set; HJ HQ HK HA plus HT' a run."""
    hands = [
        ["HJ", "HQ", "HK", "HA", "X2", "D9"],
        ["HT'", "H7", "S7", "D7", "C2", "C3"],
        ["SA", "SA'", "CK", "CK'", "D2", "D2'"],
        ["X3", "H2", "H3", "H5", "S9", "S9'"],
        ["DQ", "DJ'", "CT", "C8", "S6", "H4"],
    ]
    actions = [
        "0 meld HJ HQ HK HA",  # 41
        "0 discard S5",
        "1 layoff 1 HT'",  # a copy; counts 10 for the meld's owner (b: owner)
        "1 meld H7 S7 D7",  # 21
        "1 meld C2 C3 X1=C4",  # 9, out without a discard
    ]
    # P1 holds X2 D9: 50 + 9 = 59; P3 46; P4 X3 H2 H3 H5 S9 S9' = 78; P5 48.
    res = result(
        "went_out", 1, [51, 30, 0, 0, 0], [59, 0, 46, 78, 48], [-8, 30, -46, -78, -48], [-8, 30, -46, -78, -48]
    )
    return {"dealer": 4, "deck": deck("b", 4, hands, ["S5", "X1"], packs=2), "actions": actions, "result": res}


def ex5_deal(credit: str) -> dict[str, Any]:
    """Example 5 (b, 54 cards): P1 lays D4 D5 X1=D6; P2 swaps D6 in and lays H8 S8 X1=8 at once."""
    hands = [
        ["D4", "D5", "X1", "HA", "H2", "C9"],
        ["D6", "H8", "S8", "S2", "S3", "S4"],
        ["SK", "SQ", "CJ", "H5", "C3", "D9"],
    ]
    actions = [
        "0 meld D4 D5 X1=D6",
        "0 discard DT",
        "1 swap 1 D6",
        "1 meld H8 S8 X1=8",  # 24; the joker's suit stays open in b
        "1 meld S2 S3 S4",  # 9
        "1 discard CK",
    ]
    # P1 holds HA H2 C9 = 22, P3 SK SQ CJ H5 C3 D9 = 47.
    if credit == "owner":
        res = result("went_out", 1, [15, 33, 0], [22, 0, 47], [-7, 33, -47], [-7, 33, -47])
    else:
        res = result("went_out", 1, [9, 39, 0], [22, 0, 47], [-13, 39, -47], [-13, 39, -47])
    return {"dealer": 2, "deck": deck("b", 2, hands, ["DT", "CK"]), "actions": actions, "result": res}


def points(card: str) -> int:
    """M2, only to add up the declared cards of ``quiet_deal`` (the script knows no other rule)."""
    return {"A": 11, "K": 10, "Q": 10, "J": 10, "T": 10}.get(card[1]) or int(card[1])


def quiet_deal(dealer: int, plans: list[tuple[str, str]], before: list[int]) -> dict[str, Any]:
    """A deal of a, 3 players, to build up totals: on its first turn each seat lays the meld of its plan, and on every
    turn discards the card it has just drawn, so it ends holding the rest of its plan when the stock runs out (M16).
    Its result is the plan's arithmetic: plus = the meld's points, minus = the held cards' (M24)."""
    hands = [(m + " " + h).split() for m, h in plans]
    dk = deck("a", dealer, hands, [])
    actions = []
    for t, card in enumerate(dk[15:]):
        seat = (dealer + 1 + t) % 3
        if t < 3:
            actions.append(f"{seat} meld {plans[seat][0]}")
        actions.append(f"{seat} discard {card}")
    plus = [sum(map(points, m.split())) for m, _ in plans]
    minus = [sum(map(points, h.split())) for _, h in plans]
    score = [p - m for p, m in zip(plus, minus)]
    totals = [t + s for t, s in zip(before, score)]
    return {
        "dealer": dealer,
        "deck": dk,
        "actions": actions,
        "result": result("stock_out", None, plus, minus, score, totals),
    }


def ex12_exact() -> dict[str, Any]:
    """Example 12 exactly: 15 quiet deals bring the totals to 470, 495, 430; example 3's deal (layer) ends the game."""
    kings, queens, jacks, three_jacks = "CK SK HK DK", "CQ SQ HQ DQ", "CJ SJ HJ DJ", "CJ SJ HJ"
    deals, totals = [], [0, 0, 0]
    for i in range(15):
        p3 = (jacks, "S9") if i < 13 else (three_jacks, "S8 H8" if i == 13 else "S9 H8")
        plans = [(kings, "C9" if i < 10 else "C8"), (queens, "C7"), p3]  # 31 or 32; 33; 31, then 14 and 13
        deals.append(quiet_deal((2 + i) % 3, plans, totals))
        totals = deals[-1]["result"]["totals"]
    assert totals == [470, 495, 430], totals
    last, _ = ex3_deal(2)  # deal 15: the dealer is seat 2 again
    last["result"] = result("went_out", 0, [51, 34, 0], [0, 19, 44], [51, 15, -44], [521, 510, 386])
    game = {"places": [1, 2, 3], "totals": [521, 510, 386], "complete": True}
    return record("example 12 exactly: 470, 495, 430, then +51, +15, -44 reach 500", {}, [*deals, last], game)


def ex12_records() -> list[dict[str, Any]]:
    """Example 12's rule (M26) on example 3's deal: the game ends after the deal where a total reaches the target."""
    first, _ = ex3_deal(2)
    first["result"] = result("went_out", 0, [51, 34, 0], [0, 19, 44], [51, 15, -44], [51, 15, -44])
    second, _ = ex3_deal(0)  # seat 1 is P1 now, seat 2 P2, seat 0 P3
    second["result"] = result("went_out", 1, [0, 51, 34], [44, 0, 19], [-44, 51, 15], [7, 66, -29])
    ended = {"places": [2, 1, 3], "totals": [7, 66, -29], "complete": True}
    return [
        ex12_exact(),
        record("example 12 with target 60: 66 reaches it, the game ends", {"target": 60}, [first, second], ended),
        record(
            "M26: max_deals 1 ends the game after one deal",
            {"max_deals": 1},
            [copy.deepcopy(first)],
            {"places": [1, 2, 3], "totals": [51, 15, -44], "complete": True},
        ),
    ]


def agree() -> list[dict[str, Any]]:
    ex1 = ex1_deal("layer")
    cut = record(
        "example 6's run (c): the claim H6 H7 H8 H9; the record stops mid-deal",
        {"variant": "c"},
        [ex6_run_deal()],
        {"places": [1, 1], "totals": [0, 0], "complete": False},
        n=2,
    )
    cut["expect"] = "incomplete"
    return [
        record(
            "example 1 (a): take SQ from SA SQ CK HJ and lay SJ SQ SK",
            {"variant": "a"},
            [ex1],
            {"places": [3, 1, 2], "totals": [-41, 78, 8], "complete": False},
        ),
        record(
            "example 1 (a) with layoff_credit owner",
            {"layoff_credit": "owner"},
            [ex1_deal("owner")],
            {"places": [3, 1, 2], "totals": [-41, 60, 26], "complete": False},
        ),
        *ex3_records(),
        record(
            "example 5 (b, owner): a joker swap; P1's meld 15 before and after",
            {"variant": "b"},
            [ex5_deal("owner")],
            {"places": [2, 1, 3], "totals": [-7, 33, -47], "complete": False},
        ),
        record(
            "example 5 (b, layer): the swapped-in D6 counts for P2",
            {"variant": "b", "layoff_credit": "layer"},
            [ex5_deal("layer")],
            {"places": [2, 1, 3], "totals": [-13, 39, -47], "complete": False},
        ),
        record(
            "example 6 (c): no feeding the row, the claim C6 S6 H6",
            {"variant": "c"},
            [ex6_deal()],
            {"places": [2, 1, 3], "totals": [-40, 32, -50], "complete": False},
        ),
        record(
            "M19, M41 (c, owner): a row joker claimed, named, swapped out",
            {"variant": "c"},
            [joker_c_deal("owner")],
            {"places": [1, 2], "totals": [27, -14], "complete": False},
        ),
        record(
            "M19, M41 (c, layer): the swapped-in HT counts for its layer",
            {"variant": "c", "layoff_credit": "layer"},
            [joker_c_deal("layer")],
            {"places": [1, 2], "totals": [37, -24], "complete": False},
        ),
        record(
            "example 8 (d): melding first, then taking H9",
            {"variant": "d"},
            [ex8_deal()],
            {"places": [2, 1, 3], "totals": [-46, 44, -66], "complete": False},
        ),
        record(
            "example 9 (a, 4 players): the stock runs out after 16 turns",
            {"variant": "a"},
            [ex9_deal()],
            {"places": [1, 4, 2, 3], "totals": [15, -47, -40, -43], "complete": False},
        ),
        record(
            "example 10 (a): going out without a discard",
            {},
            [ex10_deal()],
            {"places": [1, 2], "totals": [50, -45], "complete": False},
        ),
        record(
            "example 11 (b, 5 players: 108 cards): copies, a set, a run with HT' laid off",
            {"variant": "b"},
            [ex11_deal()],
            {"places": [2, 1, 3, 5, 4], "totals": [-8, 30, -46, -78, -48], "complete": False},
        ),
        *ex12_records(),
        cut,
    ]


def by_note(start: str) -> dict[str, Any]:
    return copy.deepcopy(next(r for r in agree() if r["note"].startswith(start)))


def refused() -> list[dict[str, Any]]:
    """Records the rules refuse, each with the refusal it must give."""
    out: list[dict[str, Any]] = []

    def add(
        note: str, rules: dict[str, Any], deal: dict[str, Any], actions: list[str], d: int, pos: int | None, text: str
    ) -> None:
        deal = copy.deepcopy(deal)
        deal["actions"] = actions
        deal.pop("result", None)
        rec = {
            "note": note,
            "game": "rummy",
            "players": NAMES[: rules.pop("_n")],
            "rules": rules,
            "deals": [deal],
            "result": {},
        }
        rec["expect"] = {"deal": d, "position": pos, "reason": text}
        out.append(rec)

    ex1 = ex1_deal("layer")
    a1 = ex1["actions"]
    add(
        "example 1: naming SQ without a way to use it", {"_n": 3}, ex1, [*a1[:2], "2 take 2"], 0, 2, "could not be used"
    )
    add(
        "M14, M27: the named SQ is not used by the next action",
        {"_n": 3},
        ex1,
        [*a1[:6], "1 meld HJ HQ HK"],
        0,
        6,
        "used at once",
    )
    ex6 = ex6_deal()
    a6 = ex6["actions"]
    add(
        "example 6 (c): discarding H6 feeds the row",
        {"_n": 3, "variant": "c"},
        ex6,
        [*a6[:4], "1 discard H6"],
        0,
        4,
        "M21",
    )
    run = ex6_run_deal()
    ar = run["actions"]
    add(
        "example 6's run (c): a claim leaving H6 next to H7 H8 H9",
        {"_n": 2, "variant": "c"},
        run,
        [*ar[:4], "0 claim H7 H8 H9"],
        0,
        4,
        "every natural",
    )
    add(
        "M21 (c): discarding H8 would feed H7 H9",
        {"_n": 2, "variant": "c"},
        run,
        [*ar[:4], "0 discard H8"],
        0,
        4,
        "M21",
    )
    jc = joker_c_deal("owner")
    add(
        "M19 (c): a claimed joker must be named",
        {"_n": 2, "variant": "c"},
        jc,
        [*jc["actions"][:3], "1 claim H8 H9 X1"],
        0,
        3,
        "without",
    )
    ex8 = ex8_deal()
    add(
        "example 8 (d): taking H9 before one's first meld",
        {"_n": 3, "variant": "d"},
        ex8,
        ["0 discard H9", "1 take 1"],
        0,
        1,
        "M22",
    )
    ex10 = ex10_deal()
    add(
        "M15: no action after a player has gone out", {"_n": 2}, ex10, [*ex10["actions"], "1 discard H6"], 0, 4, "ended"
    )
    add("M10: seat 1 acts out of turn", {"_n": 2}, ex10, ["1 discard S6"], 0, 0, "turn")
    ex11 = ex11_deal()
    add(
        "example 11: H7 H7' S7 is no set (two hearts)",
        {"_n": 5, "variant": "b"},
        ex11,
        ["0 meld HJ HQ HK HA", "0 discard S5", "1 meld H7 H7' S7"],
        0,
        2,
        "different suits",
    )
    ex5 = ex5_deal("owner")
    add(
        "M18, M27: the swapped joker must be used at once",
        {"_n": 3, "variant": "b"},
        ex5,
        [*ex5["actions"][:3], "1 meld S2 S3 S4"],
        0,
        3,
        "used at once",
    )
    add(
        "M22 (d): no swap before one's first meld",
        {"_n": 3, "variant": "d"},
        ex5,
        ["0 meld D4 D5 X1=D6", "0 discard DT", "1 swap 1 D6"],
        0,
        2,
        "M22",
    )
    after = ex12_records()[1]  # target 60, two deals
    rec = copy.deepcopy(after)
    rec["note"] = "M26: a deal after the game has ended"
    rec["deals"].append(copy.deepcopy(rec["deals"][0]))
    rec["expect"] = {"deal": 2, "position": None, "reason": "ended"}
    out.append(rec)
    bad = by_note("example 1 (a): take")
    bad["note"] = "M46: a players option that differs from the list"
    bad["rules"]["players"] = 4
    bad["expect"] = {"deal": None, "position": None, "reason": "M46"}
    out.append(bad)
    return out


def differ() -> list[dict[str, Any]]:
    """Records whose stated results are not what the rules give, with the fields that must differ."""
    out = []
    wrong = by_note("example 3 (a, layoff_credit layer)")
    wrong["note"] = "example 3 with the owner scores written under layer"
    wrong["deals"][0]["result"] = result("went_out", 0, [61, 24, 0], [0, 19, 44], [61, 5, -44], [61, 5, -44])
    wrong["result"]["totals"] = [61, 5, -44]
    wrong["expect"] = ["deals[0].result.plus", "deals[0].result.score", "deals[0].result.totals", "result.totals"]
    out.append(wrong)
    dealer = by_note("example 1 (a): take")
    dealer["note"] = "M8: the first dealer is the last seat, not seat 0"
    dealer["deals"][0]["dealer"] = 0
    dealer["expect"] = ["deals[0].dealer"]
    out.append(dealer)
    stock = by_note("example 9")
    stock["note"] = "example 9 written as if P1 had gone out, and complete"
    stock["deals"][0]["result"]["end"] = "went_out"
    stock["deals"][0]["result"]["out"] = 0
    stock["result"]["complete"] = True
    stock["expect"] = ["deals[0].result.end", "deals[0].result.out", "result.complete"]
    out.append(stock)
    return out


def main() -> None:
    for name, records in (("agree", agree()), ("refused", refused()), ("differ", differ())):
        with open(HERE / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
