"""Tournaments of a game other than Skat, without a bus: the options and their mistakes, the
per-game bots, the tournament log (an older one means Skat), place standings with shared
places, and ratings kept apart by game.

The runs on disk are played through the pure engine (``skatbus.local.play_game_table``) and
written by the runner's own ``write_results``, so the files are the real format."""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import msgspec
import pytest

from protocol.skat.rules import Rules
from protocol.thirty_one import fold
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.tournament import (
    TableFinished,
    TournamentConfig,
    TournamentCreated,
    TournamentEvent,
    TournamentState,
    place_points,
    place_standings,
    schedule,
    table_finished,
)
from skatbus.bots import BOTS, bots_of, make_bot
from skatbus.cli import main
from skatbus.errors import UsageError
from skatbus.local import play_game_table
from skatbus.ratings import ratings_of, table_text
from skatbus.replay import read_archive
from skatbus.thirty_one_bots import HeuristicBot
from skatbus.thirty_one_bots import RandomBot as T31Random
from skatbus.tournament import format_standings, write_results
from skatbus.tournament_cli import add_arguments, apply_config_file, check_args, config_from, resume_conflict

from .localrun import make_run

T31 = "thirty-one"
T31_BOTS = {"heuristic": "heuristic", "random": "random", "random-2": "random"}


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(argv)
    apply_config_file(args, _defaults(), parser._actions)
    return args


def _defaults() -> dict[str, object]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return {a.dest: a.default for a in parser._actions}


def t31_run(out: Path, tid: str, rules: ThirtyOneRules, groups: int = 1, seed: str = "t31") -> Path:
    """A Thirty-one tournament of built-in bots through the pure engine, written as the runner
    writes one; returns runs/<tid>/."""
    config = TournamentConfig(
        id=tid,
        entrants=list(T31_BOTS),
        bots=T31_BOTS,
        groups=groups,
        seed=seed,
        game=T31,
        game_rules=msgspec.to_builtins(rules),
    )
    state, tables = TournamentState(), schedule(config)
    state.apply(TournamentCreated(config=config, tables=tables))
    logs = {}
    for spec in tables:
        bots = [make_bot(config.bots[p], f"{config.seed}/{p}", T31) for p in spec.players]
        run = play_game_table(T31, spec.table, spec.players, bots, rules, spec.seed)
        logs[spec.table] = run.log
        state.apply(table_finished(run.log))
    write_results(config, state, logs, out / tid)
    return out / tid


# --- bots per game ------------------------------------------------------------------------------


def test_each_game_has_its_own_built_in_bots() -> None:
    assert isinstance(make_bot("heuristic", "s", T31), HeuristicBot)
    assert isinstance(make_bot("random", "s", T31), T31Random)
    assert set(bots_of(T31)) == {"heuristic", "random"} and bots_of("skat") is BOTS
    assert type(make_bot("random", "s")).__module__ == "skatbus.bots"  # Skat by default, as before
    with pytest.raises(
        ValueError, match=r"unknown bot 'stepping-random' for Thirty-one \(stepping-random is a bot of Skat\)"
    ):
        make_bot("stepping-random", "s", T31)
    with pytest.raises(ValueError, match="unknown bot 'nobot'; built-in bots: heuristic, pimc, random"):
        make_bot("nobot")
    with pytest.raises(ValueError, match="no built-in bots for the game 'chess'"):
        bots_of("chess")


# --- options -------------------------------------------------------------------------------------


def test_thirty_one_options_make_its_rules_and_the_log_records_them() -> None:
    args = _parse(["--game", T31, "--players", "5", "--coins", "2", "--min-knock", "21", "--throw-down",
                   "--stock-out", "void", "--three-of-a-kind", "30.5", "--straight-flush", "--no-county",
                   "--no-knock-in-first-round", "--max-deals", "40", "--turn-seconds", "7", "--max-timeouts", "3"])  # fmt: skip
    check_args(args)
    config = config_from(args)
    assert config.game == T31 and config.seats == 5
    assert config.entrants == ["heuristic", "random", "random-2", "heuristic-2", "random-3"]
    assert config.table_rules() == ThirtyOneRules(
        coins=2, min_knock=21, throw_down=True, stock_out="void", three_of_a_kind="30.5", straight_flush=True,
        county=False, knock_in_first_round=False, max_deals=40, turn_seconds=7.0, max_timeouts=3,
    )  # fmt: skip
    tables = schedule(config)
    assert len(tables) == 3 * 5 and all(len(t.players) == 5 for t in tables)
    # The tournament log carries the game and every option; it reads back the same.
    created = TournamentCreated(config=config, tables=tables)
    back = msgspec.msgpack.decode(msgspec.msgpack.encode(created), type=TournamentEvent)
    assert isinstance(back, TournamentCreated) and back.config.table_rules() == config.table_rules()
    assert back.config.game == T31
    # --three-of-a-kind alone is 30; a config file may name the game and its options.
    assert config_from(_parse(["--game", T31, "--three-of-a-kind"])).table_rules().three_of_a_kind == "30"


def test_a_config_file_may_choose_the_game(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('game = "thirty-one"\ncoins = 4\nplayers = 4\nbots = "random,random,heuristic,random"\n')
    config = config_from(_parse(["--config", str(path), "--coins", "1"]))
    assert config.game == T31 and config.table_rules().coins == 1  # the flag wins
    assert config.entrants == ["random", "random-2", "heuristic", "random-3"]


def test_an_older_tournament_log_without_a_game_is_skat() -> None:
    """A log written before there were other games: no ``game``, ``game_rules``, ``places``."""
    old = {
        "type": "tournament_created/1",
        "config": {"id": "old", "entrants": ["a", "b", "c"], "rules": {"rounds": 2}, "groups": 1, "seed": "s"},
        "tables": [{"table": "old-g0r0", "players": ["a", "b", "c"], "seed": "s/0", "group": 0}],
    }
    event = msgspec.msgpack.decode(msgspec.msgpack.encode(old), type=TournamentEvent)
    assert isinstance(event, TournamentCreated)
    assert event.config.game == "skat" and event.config.table_rules() == Rules(rounds=2)
    # A Skat table's result is written as it always was (no empty places or coins).
    finished = TableFinished(table="t", deals=3, totals=[1, 2, 3], seeger_fabian=[4, 5, 6])
    assert msgspec.json.decode(msgspec.json.encode(finished)) == {
        "type": "table_finished/1", "table": "t", "deals": 3, "totals": [1, 2, 3], "seeger_fabian": [4, 5, 6]
    }  # fmt: skip


@pytest.mark.parametrize(
    ("stored_argv", "resume_argv", "says"),
    [
        (
            ["--game", T31],
            ["--kontra"],
            "it is a Thirty-one tournament, and --kontra is not one of its options; drop --kontra",
        ),
        ([], ["--coins", "2"], "it is a Skat tournament, and --coins is not one of its options"),
        (["--game", T31, "--coins", "2"], ["--coins", "3"], "it was created with coins = 2; drop --coins"),
        (["--game", T31], ["--game", "skat"], "it was created with game = 'thirty-one'; drop --game"),
        (["--game", T31, "--players", "4"], ["--players", "5"], "it was created with players = 4"),
    ],
)
def test_a_resume_keeps_the_game_and_its_options(stored_argv: list[str], resume_argv: list[str], says: str) -> None:
    stored = config_from(_parse(stored_argv))
    conflict = resume_conflict(_parse(["--resume", stored.id, *resume_argv]), _defaults(), stored)
    assert conflict is not None and says in conflict, conflict
    assert resume_conflict(_parse(["--resume", stored.id]), _defaults(), stored) is None


MISTAKES: dict[str, tuple[list[str], str]] = {
    "a Skat option for Thirty-one": (["--game", T31, "--kontra"], "--kontra is an option of Skat, not of Thirty-one"),
    "Skat's rounds for Thirty-one": (["--game", T31, "--rounds", "3"], "--rounds is an option of Skat"),
    "a Thirty-one option for Skat": (["--coins", "5"], "--coins is an option of Thirty-one, not of Skat: drop it"),
    "a Thirty-one flag for Skat": (["--no-county"], "--no-county is an option of Thirty-one"),
    "no such game": (["--game", "chess"], "--game chess: the games are skat, thirty-one"),
    "ten at a table": (["--game", T31, "--players", "10"], "--players 10: Thirty-one tables seat 2 to 9 players"),
    "two at Skat": (["--players", "2"], "--players 2: Skat tables seat 3 or 4 players"),
    "no coins": (["--game", T31, "--coins", "0"], "--coins must be 1 or more, not 0"),
    "knock above 31": (["--game", T31, "--min-knock", "32"], "--min-knock must be 0"),
    "no deals": (["--game", T31, "--max-deals", "0"], "--max-deals must be at least 1"),
    "a stock rule that is none": (["--game", T31, "--stock-out", "burn"], "--stock-out burn: want reshuffle or void"),
    "three of a kind at 31": (["--game", T31, "--three-of-a-kind", "31"], "--three-of-a-kind 31: want 30 or 30.5"),
    "a Skat bot at Thirty-one": (
        ["--game", T31, "--bots", "heuristic,stepping-random,random"],
        "--bots: unknown bot 'stepping-random' for Thirty-one (stepping-random is a bot of Skat); "
        "its built-in bots: heuristic, random",
    ),
    "no such bot at Thirty-one": (
        ["--game", T31, "--bots", "heuristic,pimc,rnadom"],
        "unknown bot 'pimc' for Thirty-one",
    ),
    "bots that do not fill the seats": (
        ["--game", T31, "--players", "4", "--bots", "heuristic,random"],
        "--bots names 2 bots for 4 seats: give --players 2 or name 4 bots",
    ),
    "remotes that do not fit": (
        ["--game", T31, "--players", "2", "--remote", "ann", "--remote", "bob", "--remote", "cy"],
        "3 --remote players do not fit at 2-player tables (--players 3 for 3)",
    ),
}


@pytest.mark.parametrize("case", list(MISTAKES))
def test_a_game_mistake_is_one_line_and_exit_code_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKAT_NATS_URL", raising=False)
    argv, says = MISTAKES[case]
    assert main(["tournament", *argv, "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("skat tournament: ") and says in lines[0], lines[0]
    assert not (tmp_path / "runs").exists()  # refused before anything was created
    with pytest.raises(UsageError):
        check_args(_parse(argv))


# --- standings by places ------------------------------------------------------------------------


def test_shared_places_score_alike_and_a_shared_first_place_is_a_win_for_each(tmp_path: Path) -> None:
    """One deal per table (``max_deals`` 1): the players are then ranked by coins (T38), and with
    three players two always share a place, since one deal costs one seat, two seats or the
    knocker two lives, or nobody anything. Competition ranking (T37): 1, 1, 3 or 1, 2, 2."""
    run = t31_run(tmp_path / "runs", "t31-shared", ThirtyOneRules(max_deals=1), groups=2)
    results = json.loads((run / "results.json").read_text())
    archive = read_archive(run / "archive.jsonl")
    seen_shapes = set()
    points: dict[str, list[int]] = {p: [] for p in T31_BOTS}
    wins = dict.fromkeys(T31_BOTS, 0)
    for table in results["tables"]:
        events = archive[table["table"]].events
        state = fold(events)
        coins = state.coins
        # The places by hand: one more than the seats with more coins (nobody was eliminated).
        places = [1 + sum(c > mine for c in coins) for mine in coins]
        assert table["places"] == places == state.places() and table["coins"] == coins
        seen_shapes.add(tuple(sorted(places)))
        for seat, player in enumerate(state.players):
            points[player].append(3 - places[seat])
            wins[player] += places[seat] == 1
    assert seen_shapes <= {(1, 1, 3), (1, 2, 2), (1, 1, 1)} and seen_shapes
    for row in results["standings"]:
        mine = points[row["player"]]
        assert row["place_points"] == sum(mine) and row["tables"] == 6 and row["wins"] == wins[row["player"]]
        assert row["per_table"] == pytest.approx(statistics.mean(mine))
        assert row["ci95"] == pytest.approx(1.96 * statistics.stdev(mine) / len(mine) ** 0.5)
    per_table = [r["per_table"] for r in results["standings"]]
    assert per_table == sorted(per_table, reverse=True)
    assert place_points(2, 3) == 1 and place_points(1, 4) == 3 and place_points(4, 4) == 0
    text = format_standings(results)
    assert text.splitlines()[0].split()[2:4] == ["place", "pts/table"] and "players at the table minus place" in text


def test_place_standings_fold_every_table_with_the_engine(tmp_path: Path) -> None:
    """Whole games (to the last survivor): the standings equal the places of each table's
    fold, written to results.json, standings.csv and printed."""
    run = t31_run(tmp_path / "runs", "t31-whole", ThirtyOneRules(coins=1))
    results = json.loads((run / "results.json").read_text())
    assert results["game"] == T31 and results["config"]["rules"]["coins"] == 1 and "game_rules" not in results["config"]
    assert "players at the table minus place" in results["scoring"]
    csv_rows = (run / "standings.csv").read_text().splitlines()
    assert csv_rows[0].startswith("rank,player,place_points,tables,per_table,ci95,wins")
    assert [r.split(",")[1] for r in csv_rows[1:]] == [s["player"] for s in results["standings"]]
    for table in results["tables"]:
        assert sorted(table["places"])[0] == 1 and sum(table["coins"]) == 3  # the winner holds every coin
    assert all(s["deals"] > 0 and s["tables"] == 3 for s in results["standings"])


def test_ratings_are_kept_apart_by_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``heuristic`` and ``random`` play both games: each has a Skat and a Thirty-one rating, and
    the Thirty-one ones are what the Thirty-one tables alone give."""
    mixed, alone = tmp_path / "mixed", tmp_path / "alone"
    make_run(mixed, "t-aaaaaa-261130-090000-0001", rounds=1, groups=1)
    t31_run(mixed, "t-bbbbbb-261201-090000-0002", ThirtyOneRules(coins=1), groups=2)
    t31_run(alone, "t-bbbbbb-261201-090000-0002", ThirtyOneRules(coins=1), groups=2)
    both, only = ratings_of(mixed), ratings_of(alone)
    assert both.tables_by_game == {"skat": 3, T31: 6} and only.tables_by_game == {T31: 6}
    named = sorted((r.game, r.player) for r in both.players if r.player in ("heuristic", "random"))
    assert named == [("skat", "heuristic"), ("skat", "random"), (T31, "heuristic"), (T31, "random")]
    t31_both = {r.player: (r.mu, r.sigma, r.tables) for r in both.players if r.game == T31}
    assert t31_both == {r.player: (r.mu, r.sigma, r.tables) for r in only.players}
    assert all(r.tables == 6 for r in only.players)
    listed = both.to_json()["players"]
    assert isinstance(listed, list) and {(p["game"], p["player"]) for p in listed} >= {
        ("skat", "heuristic"),
        (T31, "heuristic"),
    }
    assert "Thirty-one (6 tables):" in table_text(both) and "Skat (3 tables):" in table_text(both)
    assert main(["ratings", "--runs", str(mixed), "--game", T31, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert {p["game"] for p in shown["players"]} == {T31} and shown["tables"] == 6
    assert main(["ratings", "--runs", str(mixed), "--game", "chess"]) == 2
    assert "the games are skat, thirty-one" in capsys.readouterr().err


def test_a_table_cut_short_shares_first_place_among_its_active_seats() -> None:
    """A log that stops before the game ends: every active seat shares place 1 (T38), and the
    standings count only finished tables."""
    rules = ThirtyOneRules(coins=1)
    bots = [make_bot("heuristic", "x", T31), make_bot("random", "y", T31), make_bot("random", "z", T31)]
    log = play_game_table(T31, "cut", ["a", "b", "c"], bots, rules, "cut").log
    first_deal_scored = next(i for i, e in enumerate(log) if type(e).__name__ == "T31DealScored")
    rows = {s.player: s for s in place_standings([log[: first_deal_scored + 1]])}
    assert all(s.tables == 0 and s.deals == 1 for s in rows.values())
    whole = {s.player: s for s in place_standings([log])}
    places = fold(log).places()
    assert [whole[p].place_points for p in "abc"] == [3 - place for place in places] and 1 in places
    assert all(whole[p].tables == 1 for p in "abc")
