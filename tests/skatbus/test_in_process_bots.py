"""In-process bots: a Python class seated by its spec (``module:Class``, ``file.py:Class``) in
``skat tournament`` (through the five services), ``skatbus.evaluate``, ``skatbus.thirty_one_eval``
and ``skat match``; what a bot that raises or answers illegally costs (one log line, the
default move, a count); and every mistake in a spec as one line and exit code 2.

The classes below are loaded by their spec ``tests.skatbus.test_in_process_bots:NAME`` (an
importable module), examples/my_bot.py by its path."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
import structlog
from nats.aio.client import Client

from protocol import registry
from protocol.events import PlayerTimedOut, SeatWithdrawn
from protocol.rejection import Rejection
from protocol.skat import commands as sc
from protocol.skat.rules import Rules
from protocol.thirty_one import ThirtyOneRules
from protocol.tournament import TournamentConfig
from protocol.wire import OpenTable
from skatbus import bot_loader
from skatbus.bot_guard import ILLEGAL, NOT_A_COMMAND, RAISED, Guarded, default_move, judge
from skatbus.bots import make_bot
from skatbus.cli import main
from skatbus.errors import UsageError
from skatbus.evaluate import evaluate
from skatbus.evaluate import main as evaluate_main
from skatbus.match import Match, play_match
from skatbus.player import RemotePlayer
from skatbus.sprt import SprtSpec
from skatbus.thirty_one_eval import evaluate as t31_evaluate
from skatbus.thirty_one_eval import main as t31_main
from skatbus.tournament_cli import _check_classes, add_arguments, resume_conflict, seats
from tests.bus import Stack, open_table, wait_closed

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "examples/my_bot.py:MyBot"
EXAMPLE_T31 = "examples/my_bot.py:MyThirtyOneBot"
HERE = "tests.skatbus.test_in_process_bots"
SKAT = [sys.executable, "-m", "skatbus.cli"]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("SKAT_NATS")}


class SeededBot:
    """Remembers its seed; plays the first legal move."""

    def __init__(self, seed: str = "") -> None:
        self.seed = seed

    def act(self, obs: Any) -> Any:
        return obs.view.legal[0]


class PlainBot:
    """No constructor arguments at all."""

    def act(self, obs: Any) -> Any:
        return obs.view.legal[-1]


class RaisingBot:
    """Raises on every turn."""

    def act(self, obs: Any) -> Any:
        raise ZeroDivisionError("a bug in act")


class IllegalBot:
    """Answers every turn with a bid of 1 (on no ladder: never legal)."""

    def act(self, obs: Any) -> Any:
        return sc.Bid(value=1)


class WordsBot:
    """Answers with text, not a command."""

    def act(self, obs: Any) -> Any:
        return "pass"


class RaisingT31Bot:
    game = "thirty-one"

    def act(self, obs: Any) -> Any:
        raise RuntimeError("a Thirty-one bug")


class AsyncBot:
    async def act(self, obs: Any) -> Any:
        return obs.view.legal[0]


class NeedsArgs:
    def __init__(self, model: str) -> None:
        self.model = model

    def act(self, obs: Any) -> Any:
        return obs.view.legal[0]


class BrokenInit:
    def __init__(self, seed: str = "") -> None:
        raise OSError("no model file")

    def act(self, obs: Any) -> Any:
        return obs.view.legal[0]


class NoAct:
    def play(self, obs: Any) -> Any:
        return obs.view.legal[0]


class ChessBot:
    game = "chess"

    def act(self, obs: Any) -> Any:
        return obs.view.legal[0]


Random = PlainBot
"""A class whose name would be taken for the built-in bot ``random``."""
not_a_class = 3


# --- the default move -----------------------------------------------------------------------------


def _turns(game_name: str, rules: Any, tables: int, players: int) -> Any:
    """Every turn of ``tables`` random games: (game, state, seat)."""
    game = registry.get(game_name)
    for t in range(tables):
        rng = random.Random(t)
        state = game.new_state()
        state.apply(game.open_event(f"t{t}", [f"p{i}" for i in range(players)], rules, f"s{t}", {}))
        while not state.closed:
            owed = game.due(state)
            if owed is not None:
                state.apply(owed)
                continue
            yield game, state, state.to_move
            for event in game.decide(state, state.to_move, rng.choice(game.view(state, state.to_move).legal)):
                state.apply(event)


@pytest.mark.parametrize(
    ("game", "rules", "players"),
    [
        ("skat", Rules(rounds=1, kontra=True, ramsch=True), 3),
        ("skat", Rules(rounds=1, players=4), 4),
        ("thirty-one", ThirtyOneRules(), 3),
        ("thirty-one", ThirtyOneRules(throw_down=True, three_of_a_kind="30.5"), 4),
    ],
)
def test_the_default_move_from_a_view_is_the_one_the_services_play(game: str, rules: Any, players: int) -> None:
    """``default_move(view)`` is ``default_action(state, seat)`` at every turn of random games."""
    turns = 0
    for g, state, seat in _turns(game, rules, 40, players):
        assert default_move(g.view(state, seat)) == g.default_action(state, seat)
        turns += 1
    assert turns > 500


def test_a_failed_turn_in_the_engine_is_the_default_move() -> None:
    """A guarded bot that raises, answers illegally or with no command plays the default move."""
    for bot, fault in ((RaisingBot(), RAISED), (IllegalBot(), ILLEGAL), (WordsBot(), NOT_A_COMMAND)):
        guarded = Guarded(bot, "p")
        turns = 0
        with structlog.testing.capture_logs() as logged:
            for g, state, seat in _turns("skat", Rules(rounds=1), 2, 3):
                obs = g.update_type(view=g.view(state, seat), your_turn=True, index=state.events)
                assert guarded.act(obs) == g.default_action(state, seat)
                turns += 1
        assert guarded.faults == turns == len(logged) and guarded.by_fault == {fault: turns}
        assert {e["fault"] for e in logged} == {fault}


def test_the_guard_reads_commands_as_the_services_do() -> None:
    """``at`` is ignored and a discard may name its cards in either order; show and resign are
    judged by the rules' conditions."""
    for g, state, seat in _turns("skat", Rules(rounds=3), 30, 3):
        v = g.view(state, seat)
        for action in v.legal:
            assert judge(v, msgspec.structs.replace(action, at=7)) == ("", action)
            if isinstance(action, sc.Discard):
                assert judge(v, sc.Discard(cards=action.cards[::-1])) == ("", action)
        for offer in (sc.SHOW, sc.RESIGN):
            allowed = not isinstance(g.decide(state, seat, offer), Rejection)
            assert (judge(v, offer)[0] == "") == allowed, (v.phase, offer)


# --- the loader -----------------------------------------------------------------------------------


def test_specs_name_their_entrants_and_seed_as_built_in_bots_are() -> None:
    seeded = make_bot(f"{HERE}:SeededBot", "s/1")
    assert isinstance(seeded, Guarded) and seeded.bot.seed == "s/1" and seeded.name == "SeededBot"
    assert isinstance(make_bot(f"{HERE}:PlainBot", "s/1"), Guarded)
    assert bot_loader.entrant_name(f"alice={EXAMPLE}") == "alice"
    assert bot_loader.entrant_name(EXAMPLE) == "MyBot" and bot_loader.bot_of(f"alice={EXAMPLE}") == EXAMPLE
    assert not bot_loader.is_spec("heuristic") and bot_loader.is_spec(EXAMPLE)


def test_a_file_is_loaded_without_leaving_its_directory_on_sys_path(tmp_path: Path) -> None:
    (tmp_path / "helper_for_bot.py").write_text("MOVE = 0\n")
    (tmp_path / "bot_file.py").write_text(
        "from helper_for_bot import MOVE\n\nclass FileBot:\n    def act(self, obs):\n        return obs.view.legal[MOVE]\n"
    )
    before = list(sys.path)
    bot = make_bot(f"{tmp_path}/bot_file.py:FileBot")
    assert type(bot.bot).__name__ == "FileBot"  # type: ignore[attr-defined]
    assert sys.path == before


def _args(*argv: str) -> tuple[argparse.Namespace, dict[str, Any]]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    return args, {a.dest: a.default for a in parser._actions}


def test_tournament_seats_classes_by_name_and_a_resume_keeps_them() -> None:
    args, defaults = _args("--bots", f"{EXAMPLE},{EXAMPLE},mine={HERE}:SeededBot")
    entrants, bots, _ = seats(args)
    assert entrants == ["MyBot", "MyBot-2", "mine"]
    assert bots == {"MyBot": EXAMPLE, "MyBot-2": EXAMPLE, "mine": f"{HERE}:SeededBot"}
    stored = TournamentConfig(id="t", entrants=entrants, bots=bots, rules=Rules(rounds=1))
    _check_classes("t", stored)  # loads: resumable
    args.resume = "t"
    assert resume_conflict(args, defaults, stored) is None  # the same --bots again
    other, _ = _args("--bots", f"{EXAMPLE},{EXAMPLE},{HERE}:SeededBot", "--resume", "t")
    assert "drop --bots" in (resume_conflict(other, defaults, stored) or "")
    gone = TournamentConfig(id="t", entrants=["X"], bots={"X": f"{HERE}:Gone"}, rules=Rules(rounds=1))
    with pytest.raises(UsageError, match="its entrant X is the class .* has no 'Gone'"):
        _check_classes("t", gone)


MISTAKES: dict[str, tuple[str, str]] = {
    # name: (spec, what the one line must say)
    "no module": ("nosuchmodule:Bot", "no module named 'nosuchmodule'"),
    "no file": ("{tmp}/missing.py:Bot", "no such file"),
    "not a .py file": ("{tmp}/notes.txt:Bot", "not a .py file"),
    "no class": (f"{HERE}:Gone", "has no 'Gone'"),
    "not a class": (f"{HERE}:not_a_class", "not_a_class is not a class but of type int"),
    "no act": (f"{HERE}:NoAct", "has no act method"),
    "import raises": (
        "{tmp}/raises.py:Bot",
        "importing {tmp}/raises.py raised ValueError: at import (raises.py line 1)",
    ),
    "syntax error": ("{tmp}/syntax.py:Bot", "raised SyntaxError"),
    "missing dependency": ("{tmp}/needs.py:Bot", "raised ModuleNotFoundError: No module named 'nosuchdependency'"),
    "constructor needs an argument": (f"{HERE}:NeedsArgs", "constructor needs model"),
    "constructor raises": (f"{HERE}:BrokenInit", "BrokenInit(seed) raised OSError: no model file"),
    "not a game": (f"{HERE}:ChessBot", "game = 'chess' is no game"),
    "a Skat bot at Thirty-one": (EXAMPLE, "MyBot plays skat, not thirty-one"),
    "a name like a built-in": (f"{HERE}:Random", "looks like the built-in bot 'random'"),
    "a bad name": (f"bad name={EXAMPLE}", "must be 1-64 letters"),
    "no class after the colon": ("examples/my_bot.py:", "want MODULE:CLASS"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("specs")
    (tmp / "notes.txt").write_text("")
    (tmp / "raises.py").write_text('raise ValueError("at import")\n')
    (tmp / "syntax.py").write_text("class Bot(:\n")
    (tmp / "needs.py").write_text("import nosuchdependency\n")
    return str(tmp)


@pytest.mark.parametrize("case", list(MISTAKES))
def test_a_mistaken_spec_is_one_line_and_exit_code_2(
    case: str, files: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("SKAT_NATS_URL", raising=False)
    spec, says = (text.format(tmp=files) for text in MISTAKES[case])
    game = ["--game", "thirty-one"] if "Thirty-one" in case else []
    code = main(["tournament", *game, "--bots", f"{spec},random,random", "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("skat tournament") and says in err, err
    assert not (tmp_path / "runs").exists()  # refused before anything was made


@pytest.mark.parametrize(
    ("run", "says"),
    [
        (lambda: evaluate_main(["nosuchmodule:Bot", "random", "random"]), "no module named 'nosuchmodule'"),
        (lambda: evaluate_main([EXAMPLE_T31, "random", "random"]), "plays thirty-one, not skat"),
        (lambda: evaluate_main([f"{HERE}:AsyncBot", "random", "random"]), "act is async"),
        (lambda: t31_main(["--bots", f"{EXAMPLE},random,random"]), "MyBot plays skat, not thirty-one"),
        (lambda: main(["match", f"{HERE}:NoAct", "random"]), "has no act method"),
        (lambda: main(["match", EXAMPLE, "random", "--game", "thirty-one"]), "plays skat, not thirty-one"),
        (lambda: main(["match", f"{HERE}:BrokenInit", "random"]), "raised OSError: no model file"),
    ],
)
def test_evaluate_and_match_refuse_a_mistaken_spec_in_one_line(
    run: Any, says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    try:
        code = run()
    except SystemExit as exc:  # argparse's exit
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and says in err, err


# --- the pure engine: evaluate, Thirty-one's evaluation, match ---------------------------------------


def test_evaluate_plays_classes_from_a_file_and_a_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    bots = [EXAMPLE, f"{HERE}:SeededBot", "random"]
    ev = evaluate(bots, deals=18, seed="ipb", rules=Rules(seeger_fabian=True, rounds=1))
    assert [s.name for s in ev.stats] == ["MyBot", "SeededBot", "random"]
    assert all(s.deals == 18 and s.faults == 0 for s in ev.stats)
    again = evaluate(bots, deals=18, seed="ipb", rules=Rules(seeger_fabian=True, rounds=1))
    assert [s.sf for s in again.stats] == [s.sf for s in ev.stats]  # seeded as built-in bots are


def test_evaluate_counts_the_faults_of_a_raising_bot_one_line_each(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    with structlog.testing.capture_logs() as logged:
        assert evaluate_main([f"{HERE}:RaisingBot", EXAMPLE, "random", "--deals", "18", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    faults = [e for e in logged if e["event"] == "bot_fault"]
    assert faults and all(e["fault"] == RAISED and e["error"] == "ZeroDivisionError: a bug in act" for e in faults)
    assert all({"player", "table", "index", "seat", "default"} <= set(e) for e in faults)
    assert f"#0 RaisingBot {len(faults)}" in out, out


def test_thirty_one_evaluation_plays_a_class_and_counts_faults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    with structlog.testing.capture_logs() as logged:
        ev = t31_evaluate([EXAMPLE_T31, f"{HERE}:RaisingT31Bot", "random"], games=6, seed="ipb")
    assert [e.name for e in ev.entries] == ["MyThirtyOneBot", "RaisingT31Bot", "random"]
    faults = [e for e in logged if e["event"] == "bot_fault"]
    assert ev.entries[1].faults == len(faults) > 0 and ev.entries[0].faults == ev.entries[2].faults == 0


def test_a_match_of_classes_counts_the_candidates_faults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    clean = play_match(Match("skat", EXAMPLE, "random", SprtSpec(h1=5.0, min_pairs=2), max_pairs=3))
    assert clean.pairs == 3 and clean.candidate_faults == clean.baseline_faults == 0
    with structlog.testing.capture_logs() as logged:
        faulty = play_match(Match("skat", f"{HERE}:IllegalBot", "random", SprtSpec(h1=5.0, min_pairs=2), max_pairs=3))
    assert faulty.candidate_faults == len([e for e in logged if e["event"] == "bot_fault"]) > 0
    assert faulty.to_json()["candidate_faults"] == faulty.candidate_faults


# --- tournaments through the services -------------------------------------------------------------


async def _skat(*argv: str, timeout: float = 150) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *SKAT, *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=ROOT
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _results(out: Path) -> dict[str, Any]:
    (found,) = out.glob("t-*/results.json")
    results: dict[str, Any] = json.loads(found.read_text())
    return results


@pytest.mark.timeout(180)
async def test_a_skat_tournament_of_classes_through_the_services(stack: Stack, tmp_path: Path) -> None:
    """Six entrants over a series (two tables of three): the example class twice, by its path,
    and three classes of this module, two of them failing every turn; no turn times out (a
    failed one is played by default at once), each fault is one log line and counted, and the
    signed run verifies."""
    bots = [EXAMPLE, EXAMPLE, f"{HERE}:RaisingBot", f"illegal={HERE}:IllegalBot", f"{HERE}:WordsBot", "random"]
    code, out, err = await _skat(
        "tournament", "--nats", stack.url, "--bots", ",".join(bots), "--series", "1", "--rounds", "1",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    results = _results(tmp_path)
    players = {s["player"]: s for s in results["standings"]}
    assert set(players) == {"MyBot", "MyBot-2", "RaisingBot", "illegal", "WordsBot", "random"}
    assert all(s["timeouts"] == 0 for s in players.values()), players
    assert results["config"]["bots"]["illegal"] == f"{HERE}:IllegalBot"
    faults = results["faults"]
    assert faults["MyBot"] == faults["MyBot-2"] == faults["random"] == 0
    assert faults["RaisingBot"] > 0 and faults["illegal"] > 0 and faults["WordsBot"] > 0
    lines = [json.loads(line) for line in err.splitlines() if '"bot_fault"' in line]
    assert len(lines) == sum(faults.values())
    by = {p: [e for e in lines if e["player"] == p] for p in ("RaisingBot", "illegal", "WordsBot")}
    assert {e["fault"] for e in by["RaisingBot"]} == {RAISED} and {e["fault"] for e in by["illegal"]} == {ILLEGAL}
    assert {e["fault"] for e in by["WordsBot"]} == {NOT_A_COMMAND}
    assert all(e["error"] == "ZeroDivisionError: a bug in act" for e in by["RaisingBot"])
    assert all(e["table"] and isinstance(e["index"], int) for e in lines)
    assert "Traceback" not in err and "never retrieved" not in err
    assert "RaisingBot" in out and "fault" in out  # the printed warning
    run = next(tmp_path.glob("t-*"))
    verified = await _skat("verify", str(run))
    assert verified[0] == 0, verified


@pytest.mark.timeout(180)
async def test_a_thirty_one_tournament_of_a_class_through_the_services(stack: Stack, tmp_path: Path) -> None:
    code, out, err = await _skat(
        "tournament", "--nats", stack.url, "--game", "thirty-one", "--coins", "2",
        "--bots", f"{EXAMPLE_T31},{HERE}:RaisingT31Bot,random", "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    results = _results(tmp_path)
    assert {s["player"] for s in results["standings"]} == {"MyThirtyOneBot", "RaisingT31Bot", "random"}
    assert all(s["timeouts"] == 0 for s in results["standings"])
    assert results["faults"]["MyThirtyOneBot"] == 0 and results["faults"]["RaisingT31Bot"] > 0
    assert "never retrieved" not in err and "Traceback" not in err


class AsyncRaisingBot:
    async def act(self, obs: Any) -> Any:
        await asyncio.sleep(0)
        raise KeyError("an async bug")


@pytest.mark.timeout(120)
async def test_a_remote_player_whose_bot_raises_plays_the_default_move_at_once(
    stack: Stack, nc: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """``RemotePlayer`` guards any bot it is given (built-in or not, plain or async): the table
    never waits for a raising bot's clock (turns of 60 s would outlast the test), no task
    exception goes unretrieved, and each failed turn is one ``bot_fault`` line and counted."""
    players = [
        RemotePlayer(nc, "ann", make_bot("random", "a")),
        RemotePlayer(nc, "bob", RaisingBot()),
        RemotePlayer(nc, "cyd", AsyncRaisingBot()),
    ]
    with structlog.testing.capture_logs() as logged:
        for p in players:
            await p.start()
        request = OpenTable(
            table="raise", players=["ann", "bob", "cyd"], rules=Rules(rounds=1, turn_seconds=60), seed="r"
        )
        assert (await open_table(nc, request)).ok
        log = await wait_closed(nc, "raise", timeout=90)
        for p in players:
            await p.stop()
    assert not [e for e in log if isinstance(e, PlayerTimedOut)]
    lines = [e for e in logged if e["event"] == "bot_fault"]
    assert players[0].faults == 0 and players[1].faults > 0 and players[2].faults > 0
    assert len(lines) == players[1].faults + players[2].faults
    assert {e["error"] for e in lines if e["player"] == "cyd"} == {"KeyError: 'an async bug'"}
    assert "never retrieved" not in caplog.text


# --- a slow plain act runs in a thread of its own ---------------------------------------------------


class SleepyBot:
    """A plain ``act`` that sleeps past a one-second clock, noting the threads it ran in and
    whether two of its calls ever overlapped."""

    nap = 2.5
    threads: set[int] = set()
    overlapped = False

    def __init__(self) -> None:
        self.busy = False

    def act(self, obs: Any) -> Any:
        SleepyBot.overlapped |= self.busy
        self.busy = True
        SleepyBot.threads.add(threading.get_ident())
        time.sleep(self.nap)
        self.busy = False
        return obs.view.legal[0]


async def test_a_threaded_guard_calls_a_plain_act_off_the_loop_one_call_at_a_time() -> None:
    """From a loop, ``act`` of an in-process class is a coroutine whose bot runs in a thread of
    its own, one call at a time; without one (the pure engine) it is a plain call."""
    made = bot_loader.make(f"{HERE}:SeededBot")
    assert made.threaded and not bot_loader.make(f"{HERE}:AsyncBot").threaded
    obs = next(_observations())
    ran: list[int] = []

    class Counting:
        active = 0

        def act(self, o: Any) -> Any:
            Counting.active += 1
            ran.append(Counting.active)
            time.sleep(0.02)
            Counting.active -= 1
            return o.view.legal[0]

    guard = Guarded(Counting(), "p", threaded=True)
    answers = await asyncio.gather(*(guard.act(obs) for _ in range(4)))
    assert answers == [obs.view.legal[0]] * 4 and ran == [1, 1, 1, 1]
    assert await asyncio.to_thread(guard.act, obs) == obs.view.legal[0]  # no loop in that thread: plain


def _observations() -> Any:
    """The first turns of a random Skat game, as what ``act`` reads of them (``view``, ``index``)."""
    for game, state, seat in _turns("skat", Rules(rounds=1), 1, 3):
        yield SimpleNamespace(view=game.view(state, seat), index=0)


@pytest.mark.timeout(60)
async def test_a_slow_plain_bot_costs_only_its_own_seat_its_time(stack: Stack, nc: Client) -> None:
    """A plain ``act`` sleeping 2.5 s at 1 s clocks, seated as ``RemotePlayer``s on one
    connection as the tournament runner seats its bots: only its seat times out (and is
    withdrawn after two); the built-in bots beside it never do, and its calls never overlap."""
    SleepyBot.threads.clear()
    SleepyBot.overlapped = False
    players = [
        RemotePlayer(nc, "ann", make_bot("random", "a")),
        RemotePlayer(nc, "bob", make_bot(f"{HERE}:SleepyBot")),
        RemotePlayer(nc, "cyd", make_bot("random", "c")),
    ]
    for p in players:
        await p.start()
    try:
        request = OpenTable(
            table="sleepy", players=["ann", "bob", "cyd"], rules=Rules(rounds=1, turn_seconds=1, max_timeouts=2),
            seed="s",
        )  # fmt: skip
        assert (await open_table(nc, request)).ok
        log = await wait_closed(nc, "sleepy", timeout=45)
    finally:
        for p in players:
            await p.stop()
    timed_out = [e.seat for e in log if isinstance(e, PlayerTimedOut)]
    assert timed_out and set(timed_out) == {1}, timed_out
    assert [e.seat for e in log if isinstance(e, SeatWithdrawn)] == [1]
    assert SleepyBot.threads and threading.get_ident() not in SleepyBot.threads and not SleepyBot.overlapped
