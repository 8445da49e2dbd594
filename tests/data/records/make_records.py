"""Writes the Thirty-one game records of this directory (``python tests/data/records/make_records.py``).

Every record comes from a worked example or a numbered rule of the Thirty-one rules page (its
``note`` quotes it). The script knows nothing of the engine: it builds each deck by the records'
dealing order (one card at a time to each active player from the dealer's left, then the discard
pile's first card, then the stock top first; unnamed cards follow in pack order), keeps the stock
and the discard pile as cards move so that actions and restocks can name their cards, and writes
the results BY HAND from the example (or the rule) it quotes. The tests read only the .jsonl
files; this script is how they were made and how to change them.

Files: ``agree.jsonl`` (records the rules reproduce), ``differ.jsonl`` (each with ``expect``: the
fields that must differ), ``error.jsonl`` (each with ``kind`` and ``expect``: a text the reason
must hold). ``note``, ``expect`` and ``kind`` are keys the format does not know: a checker ignores
them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PACK = [s + r for s in "CSHD" for r in "23456789TJQKA"]
LETTERS = "ABCDEFGHI"
NAMES = ["ann", "bob", "cyd", "dan", "eve", "fay", "gus", "hal", "ida"]


def seat(letter: str) -> int:
    return LETTERS.index(letter)


class Deal:
    """One deal being written: its deck, and the stock and pile as the actions move cards."""

    def __init__(
        self,
        n: int,
        dealer: str,
        hands: dict[str, list[str]],
        pile: str,
        stock: list[str] | None = None,
        active: str | None = None,
    ) -> None:
        live = {seat(c) for c in (active or LETTERS[:n])}
        assert {seat(c) for c in hands} == live, (hands, active)
        d = seat(dealer)
        self.order = [s for s in ((d + k) % n for k in range(1, n + 1)) if s in live]
        m = len(self.order)
        dealt = [""] * (3 * m)
        for j, s in enumerate(self.order):
            for i, card in enumerate(hands[LETTERS[s]]):
                dealt[i * m + j] = card
        named = dealt + [pile] + list(stock or [])
        assert len(set(named)) == len(named) and all(c in PACK for c in named), named
        self.deck = named + [c for c in PACK if c not in named]
        self.dealer = d
        self.stock = self.deck[3 * m + 1 :]
        self.pile = [pile]
        self.actions: list[str] = []
        self.restocks: list[list[str]] = []
        self.result: dict[str, Any] | None = None

    def act(self, *lines: str) -> Deal:
        """Actions as ``"<letter> <action>"``; cards move with them."""
        for line in lines:
            who, _, text = line.partition(" ")
            if text == "take stock":
                self.taken = self.stock.pop(0) if self.stock else ""  # an error record may try
            elif text == "take discard":
                self.taken = self.pile.pop()
            elif text.startswith("discard "):
                self.pile.append(text.split()[1])
            self.actions.append(f"{seat(who)} {text}")
        return self

    def churn(self, *whos: str) -> Deal:
        """Each takes the stock's top card and discards it: his hand stays as it was."""
        for who in whos:
            card = self.stock[0]
            self.act(f"{who} take stock", f"{who} discard {card}")
        return self

    def restock(self) -> Deal:
        """The rules rebuild the stock here (T28): the pile but its top card, in pack order."""
        assert not self.stock
        new = sorted(self.pile[:-1], key=PACK.index)
        self.restocks.append(new)
        self.stock = list(new)
        self.pile = self.pile[-1:]
        return self

    def scored(self, end: str, lives: list[int], coins: list[int], eliminated: list[int] | None = None) -> Deal:
        self.result = {"end": end, "lives": lives, "coins": coins, "eliminated": eliminated or []}
        return self

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dealer": self.dealer, "deck": self.deck, "restocks": self.restocks}
        out["actions"] = self.actions
        if self.result is not None:
            out["result"] = self.result
        return out


def record(note: str, n: int, rules: dict[str, Any], deals: list[Deal], result: dict[str, Any]) -> dict[str, Any]:
    return {
        "note": note,
        "game": "thirty-one",
        "players": NAMES[:n],
        "rules": rules,
        "deals": [d.record() for d in deals],
        "result": result,
    }


def game(places: list[int], coins: list[int], kitty: int, complete: bool) -> dict[str, Any]:
    return {"places": places, "coins": coins, "kitty": kitty, "complete": complete}


# --- agree.jsonl --------------------------------------------------------------------------


def example_12_deals() -> list[Deal]:
    """Example 12, "A whole game. Three players A, B, C (seats 0, 1, 2), 3 coins each, the county on."
    The hands give the values the example shows; the others take a stock card and discard it."""
    d1 = Deal(3, "C", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"]}, "C5")
    d1.act("A knock").churn("B", "C").scored("showdown", [0, 1, 0], [3, 2, 3])
    d2 = Deal(3, "A", {"A": ["C2", "C3", "D5"], "B": ["H2", "H3", "D6"], "C": ["SA", "SK", "D2"]}, "C5", ["C4", "SQ"])
    d2.churn("B").act("C take stock", "C discard D2").scored("thirty_one", [1, 1, 0], [2, 1, 3])
    d3 = Deal(3, "B", {"A": ["HK", "HQ", "H3"], "B": ["SK", "ST", "C2"], "C": ["DA", "DK", "D7"]}, "C5")
    d3.churn("C", "A").act("B knock").churn("C", "A").scored("showdown", [0, 2, 0], [2, 0, 3], [1])
    d4 = Deal(3, "C", {"A": ["H9", "H5", "C2"], "C": ["DA", "DK", "D5"]}, "C5", active="AC")
    d4.churn("A").act("C knock").churn("A").scored("showdown", [1, 0, 0], [1, 0, 3])
    d5 = Deal(3, "A", {"A": ["HA", "HK", "H6"], "C": ["DA", "DQ", "D6"]}, "C5", active="AC")
    d5.churn("C").act("A knock").churn("C").scored("showdown", [0, 0, 1], [1, 0, 2])
    d6 = Deal(3, "C", {"A": ["HK", "H9", "C2"], "C": ["DA", "DK", "D3"]}, "C5", active="AC")
    d6.act("A knock").churn("C").scored("showdown", [2, 0, 0], [0, 0, 2], [0])
    return [d1, d2, d3, d4, d5, d6]


EXAMPLE_12 = (
    'Example 12: "deal 1 C: A knocks on his first turn; shown A 25, B 17, C 22 | B 1 | 3 2 3 | 1; '
    "deal 2 A: C makes 31 | A 1, B 1 | 2 1 3 | 3; deal 3 B: B knocks; shown A 23, B 20, C 28: B alone "
    "lowest | B 2: pays 1, owes 1, eliminated (3rd) | 2 0 3 | 4; deal 4 C: C knocks; shown A 14, C 26 | "
    "A 1 | 1 - 3 | 5; deal 5 A: A knocks; shown A 27, C 27: the knocker tied | C 1 | 1 - 2 | 6; deal 6 C: "
    "A knocks; shown A 19, C 24: A alone lowest | A 2: pays 1, owes 1, eliminated (2nd) | 0 - 2 | 7. C wins "
    "and takes the kitty: 2 + 7 = 9 coins.\" T36: the winner's coins include the kitty, kitty 0."
)


def knock_round(n: int, hands: dict[str, list[str]], dealer: str | None = None) -> Deal:
    """The player on the dealer's left knocks at once; every other player takes a stock card and
    discards it, so the hands shown are the hands dealt."""
    dealer = dealer or LETTERS[n - 1]
    d = Deal(n, dealer, hands, "C5")
    first = LETTERS[d.order[0]]
    d.act(f"{first} knock").churn(*(LETTERS[s] for s in d.order[1:]))
    return d


POOL = {
    "A": ["HA", "HK", "H4"],  # 25
    "B": ["S9", "S8", "C2"],  # 17
    "C": ["DT", "D9", "D3"],  # 22
    "D": ["CK", "CQ", "C3"],  # 23
    "E": ["SA", "SK", "S2"],  # 23
    "F": ["DA", "DK", "D2"],  # 23
    "G": ["HQ", "HJ", "H2"],  # 22
    "H": ["CA", "CJ", "C4"],  # 25
    "I": ["ST", "S7", "D4"],  # 17
}


def agree() -> list[dict[str, Any]]:
    out = []
    out.append(
        record(EXAMPLE_12, 3, {"coins": 3, "county": True}, example_12_deals(), game([2, 3, 1], [0, 0, 9], 0, True))
    )
    # The same game cut short: after deal 3 (between deals), and in the middle of deal 6.
    deals = example_12_deals()[:3]
    out.append(
        record(
            EXAMPLE_12 + " Cut short after deal 3 (T38: the active players share place 1; B, out, is 3rd).",
            3, {}, deals, game([1, 3, 1], [2, 0, 3], 4, False),
        )
    )  # fmt: skip
    deals = example_12_deals()
    deals[5].actions = deals[5].actions[:1]
    deals[5].result = None
    out.append(
        record(
            EXAMPLE_12 + " Deal 6 stops after A's knock: incomplete, never scored; the result is after deal 5.",
            3, {"coins": 3}, deals, game([1, 3, 1], [1, 0, 2], 6, False),
        )
    )  # fmt: skip
    out.append(
        record(
            "A record of no deal (RECORDS.md: a record may stop after any deal).",
            3,
            {},
            [],
            game([1, 1, 1], [3, 3, 3], 0, False),
        )
    )

    # --- 2 to 9 players -------------------------------------------------------------------------
    d = Deal(2, "B", {"A": ["HQ", "H5", "C3"], "B": ["DT", "D9", "D4"]}, "C2", ["SA"])
    d.act("A take stock", "A discard HQ", "B knock", "A take discard", "A discard C3")
    out.append(
        record(
            'Example 10, 2 players: "A breaks up his hearts and discards HQ. B knocks. In his last turn A may take HQ '
            'back from the discard pile; he must then discard another card." Shown A HQ H5 SA = 15, B 23: A loses one.',
            2, {}, [d.scored("showdown", [1, 0], [2, 3])], game([1, 1], [2, 3], 1, False),
        )
    )  # fmt: skip
    d = Deal(3, "C", {"A": ["ST", "S8", "C2"], "B": ["HQ", "H8", "D4"], "C": ["DA", "DK", "C9"]}, "C5")
    d.act("A knock").churn("B", "C")
    out.append(
        record(
            'Example 5, 3 players: "A knocks; shown: A ST S8 C2 = 18, B HQ H8 D4 = 18, C DA DK C9 = 21. A has L '
            'together with B (T23b): B loses one life, A none."',
            3, {}, [d.scored("showdown", [0, 1, 0], [3, 2, 3])], game([1, 1, 1], [3, 2, 3], 1, False),
        )
    )  # fmt: skip
    d = Deal(3, "C", {"A": ["CJ", "C9", "H2"], "B": ["SA", "S9", "D3"], "C": ["HK", "HQ", "H5"]}, "C5")
    d.act("A knock").churn("B", "C")
    out.append(
        record(
            'Example 6, 3 players: "A knocks; shown: A CJ C9 H2 = 19, B SA S9 D3 = 20, C HK HQ H5 = 25. A loses two '
            'lives (T23a)."',
            3, {}, [d.scored("showdown", [2, 0, 0], [1, 3, 3])], game([1, 1, 1], [1, 3, 3], 2, False),
        )
    )  # fmt: skip
    d = knock_round(
        4, {"A": ["HA", "HK", "H3"], "B": ["SK", "S9", "D5"], "C": ["CK", "CT", "C7"], "D": ["DQ", "D9", "H8"]}
    )
    out.append(
        record(
            'Example 4, 4 players: "A knocks. B, C and D each have one more turn, D (on A\'s right) last. The hands '
            "shown: A HA HK H3 = 24, B SK S9 D5 = 19, C CK CT C7 = 27, D DQ D9 H8 = 19. L = 19 and the knocker is "
            'above it (T23c): B and D lose one life each."',
            4, {}, [d.scored("showdown", [0, 1, 0, 1], [3, 2, 3, 2])], game([1, 1, 1, 1], [3, 2, 3, 2], 2, False),
        )
    )  # fmt: skip
    d = Deal(
        4,
        "D",
        {"A": ["HA", "HK", "H4"], "B": ["DK", "DQ", "S3"], "C": ["CK", "CT", "C7"], "D": ["S9", "S8", "C2"]},
        "DA",
    )
    d.act("A knock", "B take discard", "B discard S3")
    out.append(
        record(
            'Example 7, 4 players: "A knocks. The top discard is DA. B holds DK DQ S3, takes DA and discards S3: DA DK '
            'DQ = 31. The deal ends at once; C and D get no turn. A, C and D lose one life each (T17), A only one."',
            4, {}, [d.scored("thirty_one", [1, 0, 1, 1], [2, 3, 2, 2])], game([1, 1, 1, 1], [2, 3, 2, 2], 3, False),
        )
    )  # fmt: skip
    d = Deal(
        4,
        "D",
        {"A": ["C2", "C3", "C4"], "B": ["HA", "HK", "HT"], "C": ["D2", "D3", "D4"], "D": ["SA", "SQ", "SJ"]},
        "C5",
    )
    out.append(
        record(
            'Example 8, 4 players: "B is dealt HA HK HT, D SA SQ SJ, both 31. The deal ends before the first turn; A '
            'and C lose one life each (T18)." No action is written: the table declares a 31 (T16).',
            4, {}, [d.scored("thirty_one", [1, 0, 1, 0], [2, 3, 2, 3])], game([1, 1, 1, 1], [2, 3, 2, 3], 2, False),
        )
    )  # fmt: skip
    for n in range(5, 10):
        hands = {k: POOL[k] for k in LETTERS[:n]}
        losers = [1] + ([8] if n == 9 else [])
        lives = [1 if s in losers else 0 for s in range(n)]
        coins = [3 - x for x in lives]
        d = knock_round(n, hands).scored("showdown", lives, coins)
        out.append(
            record(
                f"{n} players (T3: 2 to 9): A knocks at once (T19), everyone else has one more turn (T21); the lowest, "
                f"17, {'B and I' if n == 9 else 'B'} lose one (T23c)."
                + (" Example 13: with 9 players the first stock holds 24 cards." if n == 9 else ""),
                n, {}, [d], game([1] * n, coins, len(losers), False),
            )
        )  # fmt: skip

    # --- every option --------------------------------------------------------------------------
    d1 = knock_round(
        4, {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"], "D": ["C3", "C4", "S2"]}
    )
    d1.scored("showdown", [0, 0, 0, 1], [1, 1, 1, 0], [3])
    d2 = Deal(4, "A", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["D9", "D8", "C3"]}, "C5", active="ABC")
    d2.churn("B", "C").act("A knock").churn("B", "C").scored("showdown", [0, 1, 1, 0], [1, 0, 0, 0], [1, 2])
    out.append(
        record(
            'Options coins 1 and county false (T25: "eliminated as soon as he pays his last coin"); T37: "Shared '
            'places skip the places they take: 1, 2, 2, 4". D is out in deal 1, B and C together in deal 2 (T26); '
            "the deal passes from D's seat to A (T6); A wins and takes the kitty (T36).",
            4, {"coins": 1, "county": False}, [d1, d2], game([1, 2, 2, 4], [4, 0, 0, 0], 0, True),
        )
    )  # fmt: skip
    e9 = [
        Deal(3, "C", {"A": ["C2", "C3", "D4"], "B": ["S2", "S3", "D5"], "C": ["HA", "HK", "HQ"]}, "C5").scored(
            "thirty_one", [1, 1, 0], [1, 1, 2]
        ),
        Deal(3, "A", {"A": ["SA", "SK", "S4"], "B": ["C2", "C3", "D4"], "C": ["HA", "HK", "H4"]}, "C5")
        .act("B knock")
        .churn("C", "A")
        .scored("showdown", [0, 2, 0], [1, 0, 2], [1]),
        Deal(3, "C", {"A": ["C2", "C3", "D4"], "C": ["HA", "HK", "HQ"]}, "C5", active="AC").scored(
            "thirty_one", [1, 0, 0], [0, 0, 2]
        ),
        Deal(3, "A", {"A": ["C2", "C3", "D4"], "C": ["HA", "HK", "H4"]}, "C5", active="AC")
        .act("C knock")
        .churn("A")
        .scored("showdown", [1, 0, 0], [0, 0, 2], [0]),
    ]
    out.append(
        record(
            'Example 9 and T39, coins 2, the county on: "B has 1 coin, knocks, and is alone lowest: he owes two coins, '
            'pays his last one into the kitty, still owes one and has none: B is eliminated" (deal 2: lives 2, one coin '
            "paid). A, on the county after deal 3, loses a life in deal 4 with no coin: eliminated. C wins with every "
            "coin of the game.",
            3, {"coins": 2}, e9, game([2, 3, 1], [0, 0, 6], 0, True),
        )
    )  # fmt: skip
    toak = {
        "off": ([1, 0, 0], [2, 3, 3], 1),
        "30": ([1, 0, 1], [2, 3, 2], 2),
        "30.5": ([0, 0, 1], [3, 3, 2], 1),
    }
    spellings: list[tuple[Any, str]] = [
        ("off", "off"), (False, "off"), (None, "off"), ("(left out)", "off"),
        (30, "30"), ("30", "30"), (True, "30"), (30.5, "30.5"), ("30.5", "30.5"),
    ]  # fmt: skip
    for spelling, meaning in spellings:
        d = Deal(3, "C", {"A": ["S7", "H7", "D7"], "B": ["HK", "HQ", "HJ"], "C": ["CA", "CK", "C9"]}, "C5")
        d.churn("A").act("B knock").churn("C", "A")
        lives, coins, kitty = toak[meaning]
        rules = {} if spelling == "(left out)" else {"three_of_a_kind": spelling}
        out.append(
            record(
                f"Option three_of_a_kind spelt {json.dumps(spelling) if spelling != '(left out)' else 'not at all'} "
                f'(T45) means {meaning}. Example 2: "S7 H7 D7: 7; with three_of_a_kind 30 (or 30½)". B knocks with '
                "HK HQ HJ = 30, C holds CA CK C9 = 30: off, A's 7 is lowest; 30, A and C tie the knocker (T23b); "
                "30.5, the knocker ties C (T23b).",
                3, rules, [d.scored("showdown", lives, coins)], game([1, 1, 1], coins, kitty, False),
            )
        )  # fmt: skip
    for on in (False, True):
        d = knock_round(3, {"A": ["H2", "H3", "H4"], "B": ["DA", "D2", "D3"], "C": ["S9", "ST", "SJ"]})
        lives, coins, kitty = ([0, 1, 0], [3, 2, 3], 1) if on else ([2, 0, 0], [1, 3, 3], 2)
        out.append(
            record(
                f'Option straight_flush {"on" if on else "off"}. Example 2: "H9 HT HJ: 29; with straight_flush 30. '
                'H2 H3 H4: 9; with straight_flush 30. DA D2 D3: 16 either way (no low ace)." A knocks with H2 H3 H4.',
                3, {"straight_flush": on}, [d.scored("showdown", lives, coins)], game([1, 1, 1], coins, kitty, False),
            )
        )  # fmt: skip
    d = Deal(3, "C", {"A": ["HK", "HT", "C4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"]}, "C5", ["H2"])
    d.act("A take stock", "A discard C4").churn("B", "C").act("A knock").churn("B", "C")
    out.append(
        record(
            'Option min_knock, example 11: "With min_knock 21, A holding HK HT C4 (20) may not knock; after taking H2 '
            'and discarding C4 (22) he may knock at the start of his next turn." Shown A 22, B 17, C 22.',
            3, {"min_knock": 21}, [d.scored("showdown", [0, 1, 0], [3, 2, 3])], game([1, 1, 1], [3, 2, 3], 1, False),
        )
    )  # fmt: skip
    d = Deal(2, "B", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"]}, "C5")
    d.churn("A", "B").act("A knock").churn("B")
    out.append(
        record(
            'Option knock_in_first_round false (T35: "a knock is allowed once the deal has had as many turns as there '
            'are active players"): A knocks at the third turn.',
            2, {"knock_in_first_round": False}, [d.scored("showdown", [0, 1], [3, 2])], game([1, 1], [3, 2], 1, False),
        )
    )  # fmt: skip
    d1 = Deal(3, "C", {"A": ["CJ", "C9", "H2"], "B": ["SA", "S9", "D3"], "C": ["HK", "HQ", "H5"]}, "C5")
    d1.act("B look", "A throw").scored("throw_down", [2, 0, 0], [1, 3, 3])
    d2 = Deal(3, "A", {"A": ["DT", "D9", "D3"], "B": ["HA", "HK", "H4"], "C": ["S9", "S8", "C2"]}, "C5")
    d2.act("B look", "B knock", "A look").churn("C", "A").scored("showdown", [0, 0, 1], [1, 3, 2])
    out.append(
        record(
            "Option throw_down (T30-T32, T40, T41), with the hands of example 6: B looks out of turn; A throws down "
            "unseen at his first turn and counts as the knocker: alone lowest, two lives. Deal 2: B looks, then knocks "
            "(T41); A looks out of turn; taking a card counts as looking.",
            3, {"throw_down": True}, [d1, d2], game([1, 1, 1], [1, 3, 2], 3, False),
        )
    )  # fmt: skip
    d = Deal(2, "B", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"]}, "C5")
    d.churn(*("AB" * 22 + "A"))
    out.append(
        record(
            'Option stock_out void (T28): "if nobody has knocked, the deal ends with no showdown and no lives lost." '
            "Two players take the 45 cards of the stock (example 13: 52 - 3n - 1).",
            2, {"stock_out": "void"}, [d.scored("void", [0, 0], [3, 3])], game([1, 1], [3, 3], 0, False),
        )
    )  # fmt: skip
    d = Deal(3, "C", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"]}, "C5")
    d.churn(*("ABC" * 13 + "AB")).act("C knock").churn("A")
    last = d.pile[-1]
    d.act("B take discard", "B discard C2")
    out.append(
        record(
            'Option stock_out void with a knock pending (T28, T43): "the remaining last turns are played with the '
            'discard pile only": C knocks with one card left in the stock; A takes it; B must take the discard pile\'s '
            f"top card ({last}) and discards another. Shown A 25, B S9 S8 {last} = 17, C 22.",
            3, {"stock_out": "void"}, [d.scored("showdown", [0, 1, 0], [3, 2, 3])], game([1, 1, 1], [3, 2, 3], 1, False),
        )
    )  # fmt: skip
    d = Deal(2, "B", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"]}, "C5")
    d.churn(*("AB" * 22 + "A")).restock().act("B knock").churn("A")
    out.append(
        record(
            'A record with a restock (T28, T42, example 13: "When a turn ends with the stock empty and stock_out is '
            'reshuffle, the discard pile but its top card becomes the new stock"). After 45 turns the stock is '
            "rebuilt from 45 cards; B knocks and is alone lowest (T23a).",
            2, {"stock_out": "reshuffle"}, [d.scored("showdown", [0, 2], [3, 1])], game([1, 1], [3, 1], 2, False),
        )
    )  # fmt: skip
    d = Deal(3, "C", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"]}, "C5")
    d.churn(*("ABC" * 14)).restock().churn(*("ABC" * 14)).restock().churn("A").act("B knock").churn("C", "A")
    out.append(
        record(
            "Two restocks in one deal, in the order the stock was rebuilt (RECORDS.md, T28): 42 turns empty the "
            "first stock, 42 more the second. B knocks, alone lowest.",
            3, {}, [d.scored("showdown", [0, 2, 0], [3, 1, 3])], game([1, 1, 1], [3, 1, 3], 2, False),
        )
    )  # fmt: skip
    d = Deal(2, "B", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"]}, "C5")
    d.churn(*("AB" * 22)).act("A knock").churn("B")
    out.append(
        record(
            'T33: "no reshuffle (and no restock in the record) happens in a turn that ends the deal": B\'s last turn '
            "after A's knock takes the stock's last card and ends the deal in the showdown.",
            2, {}, [d.scored("showdown", [0, 1], [3, 2])], game([1, 1], [3, 2], 1, False),
        )
    )  # fmt: skip
    for stock_out in ("void", "reshuffle"):
        d = Deal(2, "B", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"]}, "C5")
        d.churn(*("AB" * 22 + "A"))
        out.append(
            record(
                f'Option max_turns 45, stock_out {stock_out}, T33: "a deal whose max_turns-th turn empties the stock '
                'ends turn_limit, not void" (and is not restocked); T29: no lives are lost.',
                2, {"max_turns": 45, "stock_out": stock_out}, [d.scored("turn_limit", [0, 0], [3, 3])],
                game([1, 1], [3, 3], 0, False),
            )
        )  # fmt: skip
    d = knock_round(
        4, {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DA", "DK", "D3"], "D": ["C3", "C4", "S2"]}
    )
    out.append(
        record(
            'Option max_deals 1, T38: "A game that reaches max_deals has complete: true; nobody takes the kitty; the '
            "active players are ranked by coins (equal coins share), then the eliminated in reverse order of "
            'elimination." Coins 1, county false: D is out.',
            4, {"coins": 1, "county": False, "max_deals": 1},
            [d.scored("showdown", [0, 0, 0, 1], [1, 1, 1, 0], [3])], game([1, 1, 1, 4], [1, 1, 1, 0], 1, True),
        )
    )  # fmt: skip
    d = knock_round(3, {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DA", "DK", "D3"]})
    out.append(
        record(
            "Option max_deals 1 with 3 players (T38): the active ranked by coins, B with 2 coins is 3rd.",
            3, {"max_deals": 1}, [d.scored("showdown", [0, 1, 0], [3, 2, 3])], game([1, 3, 1], [3, 2, 3], 1, True),
        )
    )  # fmt: skip
    d = knock_round(3, {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"]})
    every = {
        "coins": 3, "county": True, "three_of_a_kind": "off", "straight_flush": False, "min_knock": 0,
        "knock_in_first_round": True, "throw_down": False, "stock_out": "reshuffle", "max_turns": 300,
        "max_deals": 500, "turn_seconds": -1, "max_timeouts": 0, "house_rule": "deal with a smile",
    }  # fmt: skip
    out.append(
        record(
            'Every option written out with its default; T44: "Unknown keys in rules are ignored (turn_seconds only '
            'has to be a number)": house_rule is ignored, turn_seconds -1 is a number.',
            3, every, [d.scored("showdown", [0, 1, 0], [3, 2, 3])], game([1, 1, 1], [3, 2, 3], 1, False),
        )
    )  # fmt: skip
    d = Deal(2, "B", {"A": ["HA", "HK", "H4"], "B": ["S9", "S8", "C2"]}, "C5")
    d.churn(*("AB" * 22 + "A"))
    out.append(
        record(
            "RECORDS.md: a record whose last deal stops in the middle is incomplete, never scored: here it stops "
            "where the stock ran out, before the record's restock.",
            2, {}, [d], game([1, 1], [3, 3], 0, False),
        )
    )  # fmt: skip
    return out


# --- differ.jsonl ---------------------------------------------------------------------------


def differ(base: list[dict[str, Any]]) -> list[dict[str, Any]]:
    whole = base[0]
    out = []

    def variant(note: str, expect: list[str], change: Any, source: dict[str, Any] = whole) -> None:
        r = copy.deepcopy(source)
        change(r)
        r["note"] = note
        r["expect"] = expect
        out.append(r)

    def put(path: list[Any], value: Any) -> Any:
        def change(r: dict[str, Any]) -> None:
            node = r
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value

        return change

    def drop(path: list[Any]) -> Any:
        def change(r: dict[str, Any]) -> None:
            node = r
            for key in path[:-1]:
                node = node[key]
            del node[path[-1]]

        return change

    variant(
        "Example 12 with deal 1 dealt by A: T6 makes the last seat (C) the first dealer.",
        ["deals[0].dealer"],
        put(["deals", 0, "dealer"], 0),
    )
    variant(
        "Example 12 with deal 2 ended by a showdown: C made 31.",
        ["deals[1].result.end"],
        put(["deals", 1, "result", "end"], "showdown"),
    )
    variant(
        'Example 12, deal 3, with the knocker alone lowest losing one life: T23a "the knocker loses two lives".',
        ["deals[2].result.lives"], put(["deals", 2, "result", "lives"], [0, 1, 0]),
    )  # fmt: skip
    variant(
        "Example 12, deal 3, with the coins of a wrong lowest player.", ["deals[2].result.coins"],
        put(["deals", 2, "result", "coins"], [2, 1, 2]),
    )  # fmt: skip
    variant(
        "Example 12, deal 3, with B not eliminated: on the county he is out when he owes a coin and has none (T25).",
        ["deals[2].result.eliminated"], put(["deals", 2, "result", "eliminated"], []),
    )  # fmt: skip
    variant(
        'Example 12 with A and B sharing a place: "Places: the winner first, then the others in the reverse order '
        'of their elimination" (T27).', ["result.places"], put(["result", "places"], [2, 2, 1]),
    )  # fmt: skip
    variant(
        'Example 12 without the kitty going to the winner: T36 "result.coins gives the winner his coins plus the '
        'kitty, and result.kitty is 0".', ["result.coins", "result.kitty"],
        lambda r: r["result"].update(coins=[0, 0, 2], kitty=7),
    )  # fmt: skip
    variant(
        "Example 12 cut short after deal 3 but said complete.",
        ["result.complete"],
        put(["result", "complete"], True),
        base[1],
    )
    variant("Example 12 with deal 4's result left out.", ["deals[3].result"], drop(["deals", 3, "result"]))
    variant("Example 12 with the game's result left out.", ["result"], drop(["result"]))
    variant(
        "Example 12 with deal 5's lives left out of its result.",
        ["deals[4].result.lives"],
        drop(["deals", 4, "result", "lives"]),
    )
    variant(
        "Example 12 stopping in deal 6 with a result for it: a deal that stops mid-way is never scored.",
        ["deals[5].result"], put(["deals", 5, "result"], {"end": "showdown", "lives": [2, 0, 0], "coins": [0, 0, 2], "eliminated": [0]}),
        base[2],
    )  # fmt: skip
    variant("Example 12 writing complete as 1: true is not 1.", ["result.complete"], put(["result", "complete"], 1))
    t45 = next(r for r in base if r["rules"] == {"three_of_a_kind": "30.5"})
    variant(
        "The three_of_a_kind record with the results of 30 under 30.5 (T10: 30.5 is above any 30 flush).",
        ["deals[0].result.lives", "deals[0].result.coins", "result.coins", "result.kitty"],
        lambda r: (r["deals"][0]["result"].update(lives=[1, 0, 1], coins=[2, 3, 2]), r["result"].update(coins=[2, 3, 2], kitty=2)),
        t45,
    )  # fmt: skip
    return out


# --- error.jsonl ----------------------------------------------------------------------------


def errors(base: list[dict[str, Any]]) -> list[dict[str, Any]]:
    whole = base[0]
    out: list[dict[str, Any]] = []

    def bad(kind: str, expect: str, r: Any, note: str = "") -> None:
        if isinstance(r, dict):
            r = dict(r, note=note or kind, kind=kind, expect=expect)
        out.append(r)

    def changed(source: dict[str, Any], **keys: Any) -> dict[str, Any]:
        r = copy.deepcopy(source)
        r.update(keys)
        return r

    def one_deal(n: int, rules: dict[str, Any], d: Deal) -> dict[str, Any]:
        return record("", n, rules, [d], game([1] * n, [3] * n, 0, False))

    def fresh(
        n: int = 3, stock: list[str] | None = None, hands: dict[str, list[str]] | None = None, pile: str = "C5"
    ) -> Deal:
        base_hands = {
            "A": ["HA", "HK", "H4"],
            "B": ["S9", "S8", "C2"],
            "C": ["DT", "D9", "D3"],
            "D": ["CK", "CQ", "C3"],
        }
        return Deal(n, LETTERS[n - 1], hands or {k: base_hands[k] for k in LETTERS[:n]}, pile, stock)

    # The line itself.
    out.append({"kind": "not JSON", "expect": "not JSON", "raw": '{"game": "thirty-one", "players": ["ann", "bob"'})
    bad("not an object", "a record is a JSON object", ["thirty-one", "ann", "bob"])
    bad("no game", "game:", {k: v for k, v in whole.items() if k != "game"})
    bad("another game", "game:", changed(whole, game="chess"))
    # Players.
    bad("one player", "2 to 9 players", changed(whole, players=["ann"]))
    bad("ten players", "2 to 9 players", changed(whole, players=[f"p{i}" for i in range(10)]))
    bad("a player twice", "ann sits twice", changed(whole, players=["ann", "bob", "ann"]))
    bad("a player who is no name", "players:", changed(whole, players=["ann", 7, "cyd"]))
    # Rules (T44, T45).
    bad("rules that are no object", "rules:", changed(whole, rules=[3]))
    bad("an impossible option (T44)", "coins must be 1 or more", changed(whole, rules={"coins": 0}))
    bad("min_knock above 31 (T44)", "min_knock", changed(whole, rules={"min_knock": 32}))
    bad("a wrong type for an option (T44)", "county", changed(whole, rules={"county": "yes"}))
    bad("three_of_a_kind spelt wrong (T45)", "three_of_a_kind", changed(whole, rules={"three_of_a_kind": 29}))
    bad("turn_seconds no number (T44)", "turn_seconds must be a number", changed(whole, rules={"turn_seconds": "fast"}))
    bad("stock_out unknown", "stock_out", changed(whole, rules={"stock_out": "deal again"}))
    # Deals.
    bad("no deals", "deals:", {k: v for k, v in whole.items() if k != "deals"})
    bad("a deal that is no object", "deal 2: a deal is an object", changed(whole, deals=[whole["deals"][0], "deal 2"]))
    r = copy.deepcopy(whole)
    del r["deals"][1]["deck"]
    bad("no deck", "deal 2: deck", r)
    r = copy.deepcopy(whole)
    r["deals"][0]["deck"] = r["deals"][0]["deck"][:51]
    bad("a deck of 51 cards", "deal 1: deck: the 52 cards, each once (DA missing)", r)
    r = copy.deepcopy(whole)
    r["deals"][0]["deck"][5] = r["deals"][0]["deck"][4]
    bad("a card twice in the deck", "twice", r)
    r = copy.deepcopy(whole)
    r["deals"][0]["deck"][0] = "H1"
    bad("no card in the deck", 'deal 1: deck: not a card: "H1"', r)
    r = copy.deepcopy(whole)
    r["deals"][2]["restocks"] = "none"
    bad("restocks that are no list", "deal 3: restocks:", r)
    r = copy.deepcopy(whole)
    del r["deals"][0]["actions"]
    bad("no actions", "deal 1: actions:", r)
    r = copy.deepcopy(whole)
    r["deals"][0]["actions"][1] = 1
    bad("an action that is no text", "deal 1, action 2: an action is a text", r)
    r = copy.deepcopy(whole)
    r["deals"][2]["actions"][4] = "B knock"
    bad("an action without a seat number", 'deal 3, action 5 "B knock": an action is "<seat> <action>"', r)
    r = copy.deepcopy(whole)
    r["deals"][2]["actions"][4] = "1 pass"
    bad("an action that is none", 'deal 3, action 5 "1 pass": not an action', r)
    # Actions the rules refuse.
    r = copy.deepcopy(whole)
    r["deals"][0]["actions"][0] = "1 knock"
    bad("out of turn", 'deal 1, action 1 "1 knock": not your turn', r)
    r = copy.deepcopy(whole)
    r["deals"][0]["actions"][2] = "1 discard S7"
    bad("a card not held", 'deal 1, action 3 "1 discard S7": you do not hold S7', r)
    r = copy.deepcopy(whole)
    r["deals"][0]["actions"][1] = "7 take stock"
    bad("a seat not at the table", 'deal 1, action 2 "7 take stock": seat 7 is not at this table', r)
    r = copy.deepcopy(whole)
    r["deals"][3]["actions"][0] = "1 take stock"
    bad("an eliminated seat acts", 'deal 4, action 1 "1 take stock": you are out of this game', r)
    d = fresh(2, ["HQ"]).act("A take stock", "A discard HQ", "B take discard")
    d.actions.append("1 discard HQ")
    bad(
        "the card just taken from the pile (T14, example 3)", 'deal 1, action 4 "1 discard HQ": you took HQ from the discard pile',
        one_deal(2, {}, d), 'Example 3: "B takes SK from the discard pile. He may not discard SK in this turn."',
    )  # fmt: skip
    d = fresh(3).act("A knock", "B take stock", "B discard C3", "C knock")
    bad("a second knock (T21)", 'deal 1, action 4 "2 knock": seat 0 has knocked already', one_deal(3, {}, d))
    d = fresh(3, hands={"A": ["HK", "HT", "C4"], "B": ["S9", "S8", "C2"], "C": ["DT", "D9", "D3"]}).act("A knock")
    bad(
        "a knock below min_knock (example 11)", 'deal 1, action 1 "0 knock": you may knock only with a hand worth 21 or more; yours is worth 20',
        one_deal(3, {"min_knock": 21}, d), 'Example 11: "With min_knock 21, A holding HK HT C4 (20) may not knock".',
    )  # fmt: skip
    d = fresh(2).churn("A").act("B knock")
    bad(
        "a knock in the first round (T35)",
        'deal 1, action 3 "1 knock": nobody may knock before every player has had a turn',
        one_deal(2, {"knock_in_first_round": False}, d),
    )
    d = fresh(3).act("A look")
    bad("look without throw_down (T40)", 'deal 1, action 1 "0 look": there is nothing to look at', one_deal(3, {}, d))
    d = fresh(3).act("B look", "B look")
    bad(
        "a second look (T40)",
        'deal 1, action 2 "1 look": you have looked at your hand already',
        one_deal(3, {"throw_down": True}, d),
    )
    d = fresh(3).act("A look", "A throw")
    bad(
        "a throw-down after a look (T31)",
        'deal 1, action 2 "0 throw": you have looked at your hand',
        one_deal(3, {"throw_down": True}, d),
    )
    d = fresh(3).churn("A", "B", "C").act("A throw")
    bad(
        "a throw-down after the first turn (T31)",
        'deal 1, action 7 "0 throw": a throw-down is made at the start of your first turn only',
        one_deal(3, {"throw_down": True}, d),
    )
    d = fresh(3).act("A throw")
    bad(
        "a throw-down without throw_down", 'deal 1, action 1 "0 throw": throwing down is not played', one_deal(3, {}, d)
    )
    d = fresh(3).churn(*("ABC" * 13 + "AB")).act("C knock").churn("A").act("B take stock")
    bad(
        "take stock from an empty stock (T43)",
        'deal 1, action 86 "1 take stock": the stock is empty',
        one_deal(3, {"stock_out": "void"}, d),
    )
    r = copy.deepcopy(whole)
    r["deals"][1]["actions"].append("0 take stock")
    bad(
        "an action after a 31 ended the deal (T16)",
        'deal 2, action 5 "0 take stock": the deal is over: it ended (thirty_one) after action 4',
        r,
    )
    e8 = next(x for x in base if x["note"].startswith("Example 8"))
    r = copy.deepcopy(e8)
    r["deals"][0]["actions"] = ["0 take stock"]
    bad(
        "an action after a dealt 31 (T16, T32)",
        'deal 1, action 1 "0 take stock": the deal is over: it ended (thirty_one) when dealt',
        r,
    )
    # Restocks (T42).
    with_restock = next(x for x in base if x["note"].startswith("A record with a restock"))
    r = copy.deepcopy(with_restock)
    r["deals"][0]["restocks"] = []
    bad(
        "a missing restock (T42)",
        'deal 1, action 91 "1 knock": restock 1 is missing: the stock ran out at the end of action 90',
        r,
    )
    r = copy.deepcopy(with_restock)
    r["deals"][0]["restocks"].append(list(r["deals"][0]["restocks"][0]))
    bad("an unused restock (T42)", "deal 1, restock 2: not used: the deal uses 1", r)
    r = copy.deepcopy(with_restock)
    r["deals"][0]["restocks"][0] = r["deals"][0]["restocks"][0][1:]
    bad(
        "a restock short of a card (T42)",
        "deal 1, restock 1 (after action 90): not the discard pile without its top card, 45 cards",
        r,
    )
    r = copy.deepcopy(with_restock)
    top = r["deals"][0]["actions"][89].split()[-1]
    r["deals"][0]["restocks"][0][0] = top
    bad("a restock holding the pile's top card (T42)", f"holds {top}", r)
    r = copy.deepcopy(with_restock)
    r["deals"][0]["restocks"][0][3] = "X1"
    bad("a restock card that is none", 'deal 1, restock 1: not a card: "X1"', r)
    no_restock = next(x for x in base if x["note"].startswith("T33"))
    r = copy.deepcopy(no_restock)
    r["deals"][0]["restocks"] = [sorted(r["deals"][0]["deck"][7:], key=PACK.index)]
    bad("a restock in a turn that ends the deal (T33)", "deal 1, restock 1: not used: the deal uses none", r)
    void = next(x for x in base if x["rules"] == {"stock_out": "void"} and x["deals"][0]["result"]["end"] == "void")
    r = copy.deepcopy(void)
    r["deals"][0]["restocks"] = [sorted(r["deals"][0]["deck"][7:], key=PACK.index)]
    bad("a restock with stock_out void", "not used: the deal uses none (stock_out void", r)
    # Deals that stop, and deals after the end.
    r = copy.deepcopy(whole)
    r["deals"][1]["actions"] = r["deals"][1]["actions"][:2]
    bad("a deal before the last stops mid-way", "deal 2: stops after action 2; only a record's last deal may stop", r)
    r = copy.deepcopy(whole)
    r["deals"].append(copy.deepcopy(r["deals"][5]))
    bad("a deal after the game ended (T27)", "deal 7: the game ended after deal 6 (one player left)", r)
    for r in out:
        if isinstance(r, dict) and "note" in r and not r["note"]:
            r["note"] = r["kind"]
    return out


def write(name: str, records: list[Any]) -> None:
    with open(HERE / name, "w", encoding="utf-8") as f:
        for r in records:
            if isinstance(r, dict) and "raw" in r:
                f.write(r["raw"] + "\n")
            else:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")


def main() -> None:
    good = agree()
    write("agree.jsonl", good)
    write("differ.jsonl", differ(good))
    write("error.jsonl", errors(good))


if __name__ == "__main__":
    main()
