"""``skat tournament --time-control B+I``: into every table's rules, for Skat and Thirty-one;
a mistake is one line; ``--resume`` refuses a different one."""

from __future__ import annotations

import argparse

import pytest

from protocol.clocks import TimeControl
from skatbus.cli import main
from skatbus.errors import UsageError
from skatbus.tournament_cli import add_arguments, check_args, config_from, resume_conflict


def _args(*argv: str) -> tuple[argparse.Namespace, dict[str, object]]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv)), {a.dest: a.default for a in parser._actions}


def test_the_time_control_goes_into_every_tables_rules() -> None:
    args, _ = _args("--time-control", "120+2")
    check_args(args)
    config = config_from(args)
    assert config.table_rules().time_control == TimeControl(budget=120, increment=2)
    args, _ = _args("--game", "thirty-one", "--time-control", "60")
    check_args(args)
    assert config_from(args).table_rules().time_control == TimeControl(budget=60, increment=0)
    args, _ = _args()
    check_args(args)
    assert config_from(args).table_rules().time_control is None


@pytest.mark.parametrize("bad", ["", "fast", "0+2", "120-2", "120+2+2"])
def test_a_time_control_that_is_none_is_refused(bad: str) -> None:
    args, _ = _args("--time-control", bad)
    with pytest.raises(UsageError, match="--time-control"):
        check_args(args)


def test_a_mistaken_time_control_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "--time-control", "soon"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("skat tournament") and "BUDGET+INCREMENT" in err[0], err


@pytest.mark.parametrize("large", ["1000000+0", "99999999999999+0"])
def test_a_budget_over_the_maximum_is_one_line_and_exit_2(large: str, capsys: pytest.CaptureFixture[str]) -> None:
    """It was written as ``1e+06+0`` and parsed again: a traceback. Now refused, naming the maximum."""
    assert main(["tournament", f"--time-control={large}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("skat tournament: --time-control: "), err
    assert "at most 999999 seconds" in err[0], err


def test_resume_refuses_another_time_control_and_takes_the_same() -> None:
    args, _ = _args("--time-control", "120+2")
    check_args(args)
    stored = config_from(args)
    again, defaults = _args("--resume", stored.id, "--time-control", "120+2.0")
    check_args(again)
    assert resume_conflict(again, defaults, stored) is None
    other, defaults = _args("--resume", stored.id, "--time-control", "60+1")
    check_args(other)
    assert "time-control = '120+2'" in (resume_conflict(other, defaults, stored) or "")
