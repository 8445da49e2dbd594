"""Tournament options from flags and from a config file; the schedule they make."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from protocol.tournament import TournamentConfig, schedule
from skatbus.errors import UsageError
from skatbus.tournament_cli import add_arguments, apply_config_file, config_from


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(argv)
    apply_config_file(args, {a.dest: a.default for a in parser._actions}, parser._actions)
    return args


def test_config_file_fills_options_and_flags_win(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('rounds = 5\nkontra = true\nduplicate = false\nbots = ["heuristic", "random", "random"]\n')
    config = config_from(_parse(["--config", str(path), "--rounds", "7"]))
    assert config.rules.rounds == 7  # the flag
    assert config.rules.kontra and not config.duplicate  # the file
    assert config.entrants == ["heuristic", "random", "random-2"]


def test_unknown_option_in_config_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"roundz": 3}')
    with pytest.raises(UsageError, match="roundz"):
        _parse(["--config", str(path)])


def test_remote_players_get_a_secret_seed_and_an_id_that_does_not_show_it() -> None:
    config = config_from(_parse(["--remote", "alice:json", "--bots", "heuristic,random"]))
    assert config.entrants == ["alice", "heuristic", "random"] and config.formats == {"alice": "json"}
    assert config.seed != "skatbus" and config.seed not in config.id
    assert config_from(_parse([])).seed == "skatbus"  # built-in bots only: reproducible by default


def test_duplicate_schedule_rotates_every_entrant_through_every_seat() -> None:
    config = TournamentConfig(id="x", entrants=["a", "b", "c"], groups=2)
    tables = schedule(config)
    assert len(tables) == 6
    for group in range(2):
        rotations = [t for t in tables if t.group == group]
        assert len({t.seed for t in rotations}) == 1
        for seat in range(3):
            assert sorted(t.players[seat] for t in rotations) == ["a", "b", "c"]
