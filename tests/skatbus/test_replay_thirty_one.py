"""``skat replay`` of Thirty-one tables: the terminal replay, ``--verify``, ``--summary``,
``--list``, ``--to``, the interactive one and the HTML page.

The archive is two whole games played through the engine by seeded random players
(``thirty_one_tables``): three players under the default rules (a 31, showdowns, restocks,
time-outs), four under throw_down, stock_out void and a turn limit (looks, a throw-down, a void
deal, a turn limit, eliminations). Expected lines are built here from the events themselves
(an action in the record text of ``protocol.thirty_one.commands``, the hands from the dealt
deck) and the places from the engine's fold, never from the replay's own code.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol import registry
from protocol.events import Event, PlayerTimedOut, TableClosed
from protocol.thirty_one import Discard, Knock, Look, Take, Throw, hand_value, points
from protocol.thirty_one.events import (
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Discarded,
    T31Knocked,
    T31Looked,
    T31Restocked,
    T31Threw,
    T31Took,
)
from protocol.thirty_one.rules import ThirtyOneRules
from skatbus import replay_cli
from skatbus.cli import main as cli_main
from skatbus.replay import TableLog

from .thirty_one_tables import example_12, tables, write_archive

ENDS = {
    "thirty_one": "31",
    "showdown": "showdown",
    "throw_down": "throw-down",
    "void": "void",
    "turn_limit": "turn limit",
}
"""How the replay names each end (the rules page's words)."""


@pytest.fixture(scope="module")
def logs() -> dict[str, list[Event]]:
    out = tables()
    every = [e for events in out.values() for e in events]
    ends = {e.end for e in every if isinstance(e, T31DealEnded)}
    assert ends == set(ENDS), ends  # the tests below need every way a deal can end
    for kind in (T31Restocked, T31Looked, T31Threw, PlayerTimedOut):
        assert any(isinstance(e, kind) for e in every), kind
    assert any(isinstance(e, T31DealScored) and e.eliminated for e in every)
    return out


@pytest.fixture
def archive(tmp_path: Path, logs: dict[str, list[Event]]) -> Path:
    return write_archive(tmp_path / "archive.jsonl", logs)


def _cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main(["replay", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _players(events: list[Event]) -> list[str]:
    return list(events[0].players)  # type: ignore[attr-defined]


def _action(e: Event, players: list[str]) -> str | None:
    """The line of a seat's action: ``<seat> <player>: <record text>`` (a take names its card)."""
    if isinstance(e, T31Took):
        text = f"{Take(source=e.source)} ({e.card})"
    elif isinstance(e, T31Discarded):
        text = str(Discard(card=e.card))
    elif isinstance(e, T31Knocked):
        text = str(Knock())
    elif isinstance(e, T31Looked):
        text = str(Look())
    elif isinstance(e, T31Threw):
        text = str(Throw())
    else:
        return None
    return f"{e.seat} {players[e.seat]}: {text}"


def _dealt_hands(e: T31Dealt) -> dict[int, list[str]]:
    """Each seat's hand as dealt (RECORDS.md: one card at a time, from the dealer's left)."""
    m = len(e.order)
    return {seat: [str(e.deck[i * m + j]) for i in range(3)] for j, seat in enumerate(e.order)}


def _rules(events: list[Event]) -> ThirtyOneRules:
    return msgspec.convert(events[0].rules, ThirtyOneRules)  # type: ignore[attr-defined]


def _value(cards: list[str], rules: ThirtyOneRules) -> str:
    return f"{points(hand_value(cards, rules)):g}"


def _steps(out: str) -> dict[int, str]:
    """``[ pos] text`` lines by position."""
    return {int(m[1]): m[2] for m in re.finditer(r"^\[\s*(\d+)\] (.*)$", out, re.M)}


def _ranked_places(events: list[Event]) -> list[tuple[int, str]]:
    state = registry.fold(events)
    places = state.places()
    players = _players(events)
    return sorted(((places[s], players[s]) for s in range(len(players))), key=lambda x: (x[0], players.index(x[1])))


# --- the rules page's worked example 12 -----------------------------------------------------


def test_example_12_replayed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Example 12, "a whole game" (three players A, B, C, seats 0, 1, 2, 3 coins each):

    | deal | dealer | what happens | lives lost | coins A B C | kitty |
    | 1 | C | A knocks on his first turn; shown A 25, B 17, C 22 | B 1 | 3 2 3 | 1 |
    | 2 | A | C makes 31 | A 1, B 1 | 2 1 3 | 3 |
    | 3 | B | B knocks; shown A 23, B 20, C 28: B alone lowest | B 2: ..., eliminated (3rd) | 2 0 3 | 4 |
    | 4 | C | C knocks; shown A 14, C 26 | A 1 | 1 - 3 | 5 |
    | 5 | A | A knocks; shown A 27, C 27: the knocker tied | C 1 | 1 - 2 | 6 |
    | 6 | C | A knocks; shown A 19, C 24: A alone lowest | A 2: ..., eliminated (2nd) | 0 - 2 | 7 |

    "C wins and takes the kitty: 2 + 7 = 9 coins"."""
    path = write_archive(tmp_path / "example.jsonl", {"golden": example_12()})
    code, out, _ = _cli(str(path), capsys=capsys)
    assert code == 0
    texts = list(_steps(out).values())
    assert [t for t in texts if " dealt by " in t] == [f"deal {n} dealt by {d}" for n, d in enumerate("CABCAC", 1)]
    assert [t for t in texts if " scored: " in t] == [
        "deal 1 scored: lives lost: B 1; coins A 3, B 2, C 3; kitty 1",
        "deal 2 scored: lives lost: A 1, B 1; coins A 2, B 1, C 3; kitty 3",
        "deal 3 scored: lives lost: B 2; coins A 2, B 0, C 3; kitty 4; eliminated: B",
        "deal 4 scored: lives lost: A 1; coins A 1, C 3; kitty 5",
        "deal 5 scored: lives lost: C 1; coins A 1, C 2; kitty 6",
        "deal 6 scored: lives lost: A 2; coins A 0, C 2; kitty 7; eliminated: A",
    ]
    ended = [t for t in texts if " ended: " in t]
    shown = [[int(v) for v in re.findall(r"= (\d+)", t)] for t in ended]
    assert shown == [[25, 17, 22], [31], [23, 20, 28], [14, 26], [27, 27], [19, 24]]
    assert [t.split(": ", 1)[1].split(":")[0] for t in ended] == [
        "showdown after 0 A's knock", "31", "showdown after 1 B's knock", "showdown after 2 C's knock",
        "showdown after 0 A's knock", "showdown after 0 A's knock",
    ]  # fmt: skip
    assert texts[-1] == "table closed: one player left; places: 1 C (9 coins), 2 A (0 coins), 3 B (0 coins)"
    code, out, _ = _cli(str(path), "--summary", capsys=capsys)
    assert out.splitlines()[0] == (
        "table golden (Thirty-one): A, B, C; 6 deals; places: 1 C (9 coins), 2 A (0 coins), 3 B (0 coins)"
    )


# --- verify --------------------------------------------------------------------------------


def test_verify_agrees_with_the_fold(
    archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    for table, events in logs.items():
        code, out, _ = _cli(str(archive), "--table", table, "--verify", capsys=capsys)
        state = registry.fold(events)
        assert code == 0
        assert out.strip() == f"ok: {len(events)} events, {len(state.sheet)} deals, the lives, coins and places follow"
    code, out, _ = _cli(str(archive), "--verify", capsys=capsys)
    total = sum(len(events) for events in logs.values())
    assert code == 0 and out.strip() == f"all 2 tables verify ({total} events; 2 Thirty-one)"


def _first(events: list[Event], kind: type, where: Any = lambda e: True) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, kind) and where(e))


def _tamper_took(raw: list[dict[str, Any]], events: list[Event]) -> int:
    k = _first(events, T31Took, lambda e: e.source == "stock")
    taken = raw[k]["card"]
    raw[k]["card"] = next(c for c in ("HA", "S2", "D7") if c != taken)  # not the stock's top card
    return k


def _tamper_lives(raw: list[dict[str, Any]], events: list[Event]) -> int:
    k = _first(events, T31DealScored, lambda e: any(e.lives))
    raw[k]["lives"] = [0] * len(raw[k]["lives"])  # a deal that cost lives, scored as if it cost none
    return k


def _tamper_deck(raw: list[dict[str, Any]], events: list[Event]) -> int:
    k = [i for i, e in enumerate(events) if isinstance(e, T31Dealt)][1]
    deck = raw[k]["deck"]
    deck[0], deck[1] = deck[1], deck[0]  # still the 52 cards, not the seed's order
    return k


def _tamper_end(raw: list[dict[str, Any]], events: list[Event]) -> int:
    k = _first(events, T31DealEnded, lambda e: e.end == "showdown")
    raw[k]["end"] = "void"
    return k


def _tamper_knock(raw: list[dict[str, Any]], events: list[Event]) -> int:
    k = _first(events, T31Knocked)
    del raw[k]  # the knock gone: the next event is no longer what the table allows
    return k


@pytest.mark.parametrize("tamper", [_tamper_took, _tamper_lives, _tamper_deck, _tamper_end, _tamper_knock])
def test_verify_detects_a_tampered_log(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str], tamper: Any
) -> None:
    events = logs["t31-a"] if tamper is not _tamper_end else logs["t31-b"]
    raw = [msgspec.to_builtins(e) | {"type": type(e).__struct_config__.tag} for e in events]
    k = tamper(raw, events)
    path = tmp_path / "bad.jsonl"
    with open(path, "wb") as f:
        for index, event in enumerate(raw):
            f.write(msgspec.json.encode({"table": "t", "index": index, "event": event}) + b"\n")
    code, out, _ = _cli(str(path), "--verify", capsys=capsys)
    assert code == 1 and out.startswith(f"t: event {k}:"), out


# --- the terminal ----------------------------------------------------------------------------


def test_step_through_shows_every_event_of_the_archive(
    archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every event in order; each action in its record text; each deal as dealt (every hand
    with its value, the discard, the stock's order); restocks; every end with each shown hand's
    value; lives, coins and kitty after each deal; eliminations; the places the fold gives."""
    for table, events in logs.items():
        code, out, _ = _cli(str(archive), "--table", table, capsys=capsys)
        assert code == 0
        lines = _steps(out)
        assert list(lines) == list(range(len(events)))
        players, rules = _players(events), _rules(events)
        gone: set[int] = set()  # seats eliminated by an earlier deal: no coins to show
        for i, e in enumerate(events):
            text = lines[i]
            action = _action(e, players)
            if action is not None:
                assert text == action
            elif isinstance(e, T31Dealt):
                assert text == f"deal {e.deal} dealt by {players[e.dealer]}"
                block = out.split(f"] {text}\n", 1)[1].split("\n[", 1)[0].splitlines()
                for seat, hand in _dealt_hands(e).items():
                    row = next(r for r in block if r.split()[:2] == [str(seat), players[seat]])
                    assert sorted(row.split()[2:5]) == sorted(hand) and row.split()[5] == _value(hand, rules)
                m = len(e.order)
                assert f"  discard pile: {e.deck[3 * m]}" in block
                stock = e.deck[3 * m + 1 :]
                assert f"  stock, {len(stock)} cards (top first): {' '.join(stock)}" in block
            elif isinstance(e, T31Restocked):
                assert text.endswith(f"{len(e.stock)} cards (top first): {' '.join(e.stock)}")
            elif isinstance(e, T31DealEnded):
                assert text.startswith(f"deal {e.deal} ended: {ENDS[e.end]}")
                for seat, cards in enumerate(e.shown):
                    if cards:
                        shown = re.search(rf"{seat} {players[seat]} (\S\S) (\S\S) (\S\S) = ([\d.]+)", text)
                        assert shown is not None and sorted(shown.groups()[:3]) == sorted(cards)
                        assert shown[4] == _value(list(cards), rules)
                if e.end in ("void", "turn_limit"):
                    assert "no lives lost" in text
            elif isinstance(e, T31DealScored):
                assert text.startswith(f"deal {e.deal} scored: ")
                lost = [f"{players[s]} {n}" for s, n in enumerate(e.lives) if n]
                assert (f"lives lost: {', '.join(lost)};" if lost else "no lives lost;") in text
                coins = text.split("; coins ", 1)[1].split(";", 1)[0]
                assert coins == ", ".join(f"{players[s]} {c}" for s, c in enumerate(e.coins) if s not in gone)
                assert f"; kitty {e.kitty}" in text
                gone |= set(e.eliminated)
                if e.eliminated:
                    assert text.endswith("eliminated: " + ", ".join(players[s] for s in e.eliminated))
            elif isinstance(e, PlayerTimedOut):
                assert text == f"{e.seat} {players[e.seat]} timed out"
            elif isinstance(e, TableClosed):
                ranked = ", ".join(rf"{p} {name} \(\d+ coins\)" for p, name in _ranked_places(events))
                assert re.fullmatch(rf"table closed: {e.reason}; places: {ranked}", text), text


def test_one_deal(archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]) -> None:
    events = logs["t31-b"]
    scored = [e for e in events if isinstance(e, T31DealScored)]
    deal = next(e.deal for e in scored if e.eliminated)
    code, out, _ = _cli(str(archive), "--table", "t31-b", "--deal", str(deal), capsys=capsys)
    assert code == 0
    first = _first(events, T31Dealt, lambda e: e.deal == deal)
    last = _first(events, T31DealScored, lambda e: e.deal == deal)
    assert list(_steps(out)) == list(range(first, last + 1))
    code, _, err = _cli(str(archive), "--table", "t31-b", "--deal", str(len(scored) + 1), capsys=capsys)
    assert code == 2 and "no deal" in err


def test_summary_is_one_line_per_table(
    archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _cli(str(archive), "--summary", capsys=capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == "2 tables" and lines[-2] == ""
    assert len(lines) == len(logs) + 2  # no blank line between one-line tables
    for line, (table, events) in zip(lines, logs.items(), strict=False):
        state = registry.fold(events)
        places = ", ".join(
            f"{p} {name} ({state.coins[_players(events).index(name)]} coins)" for p, name in _ranked_places(events)
        )
        assert line == (
            f"table {table} (Thirty-one): {', '.join(_players(events))}; {len(state.sheet)} deals; places: {places}"
        )


def test_list_names_the_game(archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(str(archive), "--list", capsys=capsys)
    assert code == 0
    for line, (table, events) in zip(out.splitlines(), logs.items(), strict=True):
        deals = sum(isinstance(e, T31DealScored) for e in events)
        assert table in line and f"{deals:>3} deals" in line and line.endswith("Thirty-one")


def test_to_shows_every_hand(archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]) -> None:
    events = logs["t31-b"]
    n = [i for i, e in enumerate(events) if isinstance(e, T31Took)][40]
    code, out, _ = _cli(str(archive), "--table", "t31-b", "--to", str(n), capsys=capsys)
    assert code == 0
    assert out.startswith(f"after event {n}: {_action(events[n], _players(events))}\n")
    state = registry.fold(events[: n + 1])
    players = _players(events)
    for seat in range(len(players)):
        row = next(r for r in out.splitlines() if r.split()[:2] == [str(seat), players[seat]])
        if state.deal.dealt_in(seat):
            assert sorted(row.split()[2 : 2 + len(state.deal.hands[seat])]) == sorted(state.deal.hands[seat])
        else:
            assert row.split()[2] == "out"
    assert f"discard pile (top last): {' '.join(state.deal.pile)}; stock {len(state.deal.stock)} cards" in out
    assert f"kitty {state.kitty}" in out


def test_interactive_moves_by_knock_and_deal(logs: dict[str, list[Event]]) -> None:
    import io

    from skatbus.replay_nav import navigate

    events = logs["t31-a"]
    answers = iter(["t", "t", "d", "b", "3", "e 20"])

    def read(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    out = io.StringIO()
    assert navigate([TableLog("t31-a", list[Any](events))], read, out) == 0
    shown = [int(m) for m in re.findall(r"^\[\s*(\d+)\]", out.getvalue(), re.M)]
    stops = [
        i
        for i, e in enumerate(events)
        if isinstance(e, (T31Knocked, T31Threw, T31Restocked, T31DealEnded, T31DealScored))
    ]
    deals = [i for i, e in enumerate(events) if isinstance(e, T31Dealt)]
    d3 = _first(events, T31Dealt, lambda e: e.deal == 3)
    after = next(i for i in deals if i > stops[1])
    assert shown == [0, stops[0], stops[1], after, after - 1, d3, 20]
    assert "t: next knock, restock, end or score" in out.getvalue()


# --- HTML ----------------------------------------------------------------------------------


class _Page(HTMLParser):
    """The deal sections of the page: per deal, its steps' texts and positions, and the cards
    of the hands-as-dealt table."""

    def __init__(self) -> None:
        super().__init__()
        self.deals: dict[int, dict[str, Any]] = {}
        self.deal: int | None = None
        self.li: dict[str, str] | None = None
        self.in_dealt = False
        self.scripts = 0
        self.data = ""
        self.in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and "data-deal" in a:
            self.deal = int(a["data-deal"] or 0)
            self.deals[self.deal] = {"steps": [], "dealt": ""}
        elif tag == "li" and self.deal is not None and "data-step" in a:
            self.li = {"step": a["data-step"] or "", "position": a["data-position"] or "", "text": ""}
        elif tag == "table" and "dealt" in (a.get("class") or ""):
            self.in_dealt = True
        elif tag == "script":
            self.scripts += 1
            self.in_data = a.get("id") == "replay-data"

    def handle_endtag(self, tag: str) -> None:
        if tag == "li" and self.li is not None and self.deal is not None:
            self.deals[self.deal]["steps"].append(self.li)
            self.li = None
        elif tag == "table":
            self.in_dealt = False
        elif tag == "section":
            self.deal = None
        elif tag == "script":
            self.in_data = False

    def handle_data(self, data: str) -> None:
        if self.li is not None:
            self.li["text"] += data
        if self.in_dealt and self.deal is not None:
            self.deals[self.deal]["dealt"] += data + " "
        if self.in_data:
            self.data += data


def test_html_holds_every_deal_without_a_script(
    tmp_path: Path, archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = logs["t31-b"]
    out = tmp_path / "t31.html"
    code, msg, _ = _cli(str(archive), "--table", "t31-b", "--html", str(out), capsys=capsys)
    state = registry.fold(events)
    assert code == 0 and msg.strip() == f"wrote {out} ({len(state.sheet)} deals of table t31-b)"
    page_text = out.read_text()
    assert "http://" not in page_text and "https://" not in page_text and " src=" not in page_text
    page = _Page()
    page.feed(page_text)
    assert list(page.deals) == [row.deal for row in state.sheet]
    players = _players(events)
    for deal, found in page.deals.items():
        first = _first(events, T31Dealt, lambda e, d=deal: e.deal == d)
        last = _first(events, T31DealScored, lambda e, d=deal: e.deal == d)
        assert [int(s["position"]) for s in found["steps"]] == list(range(first, last + 1))
        assert [int(s["step"]) for s in found["steps"]] == list(range(last - first + 1))
        for s in found["steps"]:
            action = _action(events[int(s["position"])], players)
            if action is not None:
                assert s["text"] == action
        dealt = events[first]
        assert isinstance(dealt, T31Dealt)
        for hand in _dealt_hands(dealt).values():
            assert all(card in found["dealt"].split() for card in hand)
    data = json.loads(page.data)
    assert [d["deal"] for d in data["deals"]] == list(page.deals)
    assert [len(d["steps"]) for d in data["deals"]] == [len(d["steps"]) for d in page.deals.values()]


def test_html_of_a_broken_log_shows_up_to_the_break(logs: dict[str, list[Event]]) -> None:
    from skatbus.replay_html import render_html

    events: list[Any] = list(logs["t31-a"])
    k = [i for i, e in enumerate(events) if isinstance(e, T31Discarded)][12]
    del events[k]
    page, count = render_html(TableLog("t31-a", events))
    parsed = _Page()
    parsed.feed(page)
    assert count == len(parsed.deals) and count >= 1
    last = list(parsed.deals.values())[-1]["steps"][-1]
    assert int(last["position"]) == k - 1
    assert f"The log breaks the rules at event {k}" in page


def test_html_in_a_real_browser(tmp_path: Path, archive: Path, logs: dict[str, list[Event]]) -> None:
    from .test_replay import _browser, _chromium

    if _chromium() is None:
        pytest.skip("chromium not found: apt-get install -y chromium (Debian) to run the browser test")
    events = logs["t31-a"]
    page = tmp_path / "t31.html"
    assert cli_main(["replay", str(archive), "--table", "t31-a", "--html", str(page)]) == 0
    first = _first(events, T31Dealt, lambda e: e.deal == 2)
    k = next(i - first for i in range(first + 5, len(events)) if _action(events[i], _players(events)))
    run = _browser(page, "--dump-dom", f"{page.resolve().as_uri()}#deal=2&step={k}", profile=str(tmp_path / "p"))
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    assert 'data-deal="2"' in dom and f'data-step="{k}"' in dom.split("<body", 1)[1][:200]
    state = registry.fold(events[: first + k + 1])
    seats = dom.split('id="seats"', 1)[1].split('id="middle"', 1)[0]
    held = [c for s in state.active for c in state.deal.hands[s]]
    assert sorted(re.findall(r'data-card="(\w\w)"', seats)) == sorted(held)
    action = _action(events[first + k], _players(events))
    assert action is not None and action in dom.split('id="event"', 1)[1][:300]


# --- an archive of both games ------------------------------------------------------------------


def test_an_archive_of_both_games(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    from .test_replay import _table_log

    skat = _table_log("t-s", "replay/both", rounds=1)
    path = write_archive(tmp_path / "both.jsonl", {"t-s": skat, **logs})
    code, out, _ = _cli(str(path), "--list", capsys=capsys)
    assert code == 0 and [ln.rsplit("  ", 1)[1] for ln in out.splitlines()] == ["Skat", "Thirty-one", "Thirty-one"]
    code, out, _ = _cli(str(path), "--verify", capsys=capsys)
    assert code == 0 and out.strip().endswith("events; 1 Skat, 2 Thirty-one)")
    code, out, _ = _cli(str(path), "--summary", capsys=capsys)
    assert code == 0 and out.startswith("table t-s (Skat): ")
    assert "table t31-a (Thirty-one): " in out and "Seeger-Fabian" in out
    import io

    answers = iter(["2", "l 1"])

    def read(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    buf = io.StringIO()
    assert replay_cli.run(_nav_args(str(path)), out=buf, read=read) == 0
    shown = buf.getvalue()
    assert "[   0] table t31-a opened: Thirty-one, ann, bob, cid" in shown
    assert shown.index("t31-a opened") < shown.index("[   0] table t-s opened: alice, bob, carol")


def _nav_args(*argv: str) -> Any:
    import argparse

    parser = argparse.ArgumentParser()
    replay_cli.register(parser.add_subparsers())
    return parser.parse_args(["replay", *argv])


def test_a_game_without_a_replay_is_said(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    from protocol.events import TableOpenedV2

    other = [TableOpenedV2(table="t-x", game="no-such-game", players=["ann", "bob"])]
    path = write_archive(tmp_path / "x.jsonl", {"t31-a": logs["t31-a"], "t-x": other})
    code, out, _ = _cli(str(path), "--verify", capsys=capsys)
    assert code == 1 and "t-x (no-such-game): event 0: " in out and "cannot replay" in out
    code, _, err = _cli(str(path), "--table", "t-x", "--summary", capsys=capsys)
    assert code == 2 and "cannot replay" in err and "Traceback" not in err
    assert cli_main(["report", str(path)]) == 0
    page = (tmp_path / "report.html").read_text()
    assert "1 table(s) of &#x27;no-such-game&#x27; left out" in page
