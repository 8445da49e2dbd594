"""``skat play``'s command line for both games: mistakes are one line and exit code 2, found
before anything starts; ``skat play --game thirty-one`` runs its stack with users, lists its
table in the lobby (the game named) and opens the person's seat, and nobody else's token does.

The whole game in the browser is tests/skatbus/test_web_thirty_one.py (through the same
``PlaySession`` this command runs).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from protocol.skat.rules import Rules
from protocol.thirty_one import ThirtyOneRules
from skatbus.cli import main
from skatbus.web.play_options import PlaySpec, play_spec
from skatbus.web.server import SEAT_COOKIE
from tests.skatbus.commands import stop_gently

from .test_web_seats import _first, _nats_server_of, _printed, _private_dir, _refuses_strangers, _status, _token

MISTAKES: dict[str, tuple[list[str], str]] = {
    # name: (arguments after `skat play`, what the one line must say)
    "a Skat option at Thirty-one": (["--game", "thirty-one", "--kontra"], "--kontra is an option of Skat"),
    "rounds at Thirty-one": (["--game", "thirty-one", "--rounds", "2"], "--rounds is an option of Skat"),
    "players at Thirty-one": (["--game", "thirty-one", "--players", "4"], "you and the --vs bots"),
    "a Thirty-one option at Skat": (["--coins", "2"], "--coins is an option of Thirty-one, not of Skat"),
    "a Thirty-one switch at Skat": (["--no-county"], "--no-county is an option of Thirty-one"),
    "a Skat bot at Thirty-one": (["--game", "thirty-one", "--vs", "heuristic,pimc"], "unknown bot 'pimc'"),
    "an unknown bot": (["--game", "thirty-one", "--vs", "nobody"], "its built-in bots: heuristic, random"),
    "no bots": (["--game", "thirty-one", "--vs", ","], "2 to 9 players"),
    "ten players": (["--game", "thirty-one", "--vs", ",".join(["random"] * 9)], "2 to 9 players"),
    "a seat beyond the table": (["--game", "thirty-one", "--seat", "3"], "seats 0 to 2"),
    "a negative seat": (["--seat", "-1"], "seats 0 to 2"),
    "a seat that is no number": (["--seat", "two"], "invalid int value"),
    "an unknown game": (["--game", "chess"], "invalid choice"),
    "no coins": (["--game", "thirty-one", "--coins", "0"], "--coins must be 1 or more"),
    "an impossible knock": (["--game", "thirty-one", "--min-knock", "40"], "--min-knock must be 0 to 31"),
    "three of a kind at 29": (["--game", "thirty-one", "--three-of-a-kind", "29"], "invalid choice"),
    "no time to move": (["--game", "thirty-one", "--turn-seconds", "0"], "--turn-seconds must be"),
    "Skat: three bots at three seats": (["--vs", "random,random,random"], "3 bots for the 2 other seats"),
    "Skat: no rounds": (["--rounds", "0"], "--rounds must be at least 1"),
    "a bad player id": (["--game", "thirty-one", "--player", "a.b"], "--player"),
    "a bad address": (["--game", "thirty-one", "--listen", "here"], "want HOST:PORT"),
}


@pytest.mark.parametrize("case", list(MISTAKES))
def test_a_mistake_is_one_line_and_exit_code_2(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv, says = MISTAKES[case]
    try:
        code = main(["play", *argv])
    except SystemExit as exc:  # argparse's own mistakes (a bad number, an unknown choice) exit here
        code = exc.code if isinstance(exc.code, int) else 1
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("skat play"), lines[0]
    assert says.lower() in lines[0].lower(), lines[0]


def _spec(*argv: str) -> PlaySpec:
    import argparse

    from skatbus.web.play_options import add_play_arguments

    parser = argparse.ArgumentParser(prog="skat play")
    add_play_arguments(parser)
    return play_spec(parser.parse_args(list(argv)))


def test_the_options_make_the_rules_and_the_seats() -> None:
    spec = _spec(
        "--game", "thirty-one", "--vs", "heuristic,random,heuristic", "--seat", "2", "--coins", "5",
        "--min-knock", "21", "--throw-down", "--no-county", "--three-of-a-kind", "--stock-out", "void",
        "--no-knock-in-first-round", "--straight-flush", "--max-turns", "80", "--max-deals", "40",
    )  # fmt: skip
    assert spec.rules == ThirtyOneRules(
        coins=5, min_knock=21, throw_down=True, county=False, three_of_a_kind="30", stock_out="void",
        knock_in_first_round=False, straight_flush=True, max_turns=80, max_deals=40, turn_seconds=120.0,
    )  # fmt: skip
    assert spec.players == ["heuristic", "random", "you", "heuristic-2"]
    assert spec.ids == ["heuristic", "random", "heuristic-2"]
    default = _spec("--game", "thirty-one")
    assert default.rules == ThirtyOneRules(turn_seconds=120.0)
    skat = _spec("--vs", "random,heuristic,pimc", "--players", "4", "--kontra", "--rounds", "2")
    assert skat.rules == Rules(rounds=2, players=4, kontra=True, turn_seconds=120.0)
    assert skat.players == ["you", "random", "heuristic", "pimc"]


async def test_skat_play_thirty_one_runs_its_table_with_users(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "play", "--game", "thirty-one", "--vs", "random,heuristic"]
        + ["--seat", "1", "--coins", "2", "--listen", "127.0.0.1:0"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
    )
    try:
        (table,) = await _printed(proc, r"Table (\S+): you \(you, seat 1\) against random, heuristic; Thirty-one")
        (seat,) = await _printed(proc, r"(http://127\.0\.0\.1:\d+/play/you\?token=\S+)")
        url = seat.group(1)
        base = url.split("/play/")[0]
        cmd = _nats_server_of(proc.pid)
        await _refuses_strangers(cmd)
        keys = _private_dir(cmd)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            lobby = await _first(http, base + "/events/lobby", lambda m: bool(m.get("tables")))
            (listed,) = lobby["tables"]
            assert listed["table"] == table.group(1) and listed["game"] == "thirty-one"
            assert listed["title"] == "Thirty-one" and listed["players"] == ["random", "you", "heuristic"]
            mine = _token(url)
            cookie = {"Cookie": f"{SEAT_COOKIE}you={mine}"}
            message = await _first(http, base + "/events/play/you", lambda m: m.get("kind") == "seat", cookie)
            view = message["update"]["view"]
            assert message["game"] == "thirty-one" and view["seat"] == 1 and len(view["hand"]) == 3
            assert view["rules"]["coins"] == 2 and view["coins"] == [2, 2, 2]
            for wrong in ("", "?token=" + mine[::-1]):
                assert await _status(http, "GET", base + "/events/play/you" + wrong, {}, b"") == 403
        proc.send_signal(15)
        assert await asyncio.to_thread(proc.wait, 60) in (0, 143)
        assert not keys.exists(), "the keys were left behind"
    finally:
        stop_gently(proc)
