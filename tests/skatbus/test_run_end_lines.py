"""The lines after the standings fit 80 columns too: the tournament's files, seed, signature and
next steps (paths and keys whole, commands broken as a shell reads them), and a match's header
and verdict, which spell the unit out as the standings' legend does."""

from __future__ import annotations

import shlex

import pytest

from skatbus.cli import main
from skatbus.standings_text import WIDTH, command_lines, format_run_files, spelled_out

TID = "t-261202-035232-ecc85f5820b4482e"
KEY = "UBD7QCKLGY63RMC55P5WT75REHNXI4A2EKFFGMCW6M5KN3FIECJBED4N"


def _results(game: str) -> dict[str, object]:
    return {
        "game": game,
        "files": {
            "results": f"runs/{TID}/results.json",
            "standings_csv": f"runs/{TID}/standings.csv",
            "archive": f"runs/{TID}/archive.jsonl",
            "ratings": "runs/ratings.json",
        },
        "fairness": {"seed": "0123456789abcdef" * 2, "commitment": "cb679b9b38eceba7" * 4, "nonces": ["a", "b"]},
        "signed_by": KEY,
    }


def _commands(text: str) -> list[str]:
    """The shell commands in ``text``, continuation lines joined as a shell joins them."""
    out, pending = [], ""
    for line in text.splitlines():
        line = line.strip()
        if pending or ".venv/bin/skat " in line or line.startswith("check it all: ") or line.startswith("see them: "):
            line = pending + line.split(": ", 1)[-1] if not pending and ": skat " in line else pending + line
            if line.endswith(" \\"):
                pending = line[:-1]
                continue
            pending = ""
            out.append(line[line.index(".venv/bin/skat ") :] if ".venv/bin/skat " in line else line)
    return out


@pytest.mark.parametrize("game", ["skat", "thirty-one"])
def test_the_run_files_fit_and_their_commands_paste(game: str) -> None:
    text = format_run_files(_results(game), "runs", next_steps=True)
    assert all(len(line) <= WIDTH for line in text.splitlines()), text
    assert KEY in text and f"runs/{TID}/archive.jsonl" in text  # never broken
    commands = _commands(text)
    assert f".venv/bin/skat replay runs/{TID}/archive.jsonl --table 1" in commands, commands
    assert f"skat verify runs/{TID}" in commands and "skat ratings --runs runs" in commands
    for command in commands:
        assert shlex.split(command)[0] in ("skat", ".venv/bin/skat"), command
    without = format_run_files(_results(game), "runs", next_steps=False)
    assert "Next:" not in without and "Results: " in without


def test_a_command_breaks_only_between_words() -> None:
    lines = command_lines("skat " + " ".join(f"--option{i} value{i}" for i in range(12)), "    ")
    assert len(lines) > 1 and all(len(line) <= WIDTH for line in lines)
    assert all(line.endswith(" \\") for line in lines[:-1])
    assert " ".join(line.removesuffix(" \\").strip() for line in lines).startswith("skat --option0 value0 --option1")


def test_the_unit_is_spelled_out() -> None:
    assert spelled_out("H1 mean 5 SF/deal; and 3 SF/deal", "SF/deal", define=True) == (
        "H1 mean 5 Seeger-Fabian points per deal (SF/deal); and 3 SF/deal"
    )
    assert spelled_out("by >= 5 SF/deal (LLR", "SF/deal") == "by >= 5 Seeger-Fabian points per deal (LLR"
    assert spelled_out("0.2 place points/game", "place points/game") == "0.2 place points/game"


def test_skat_match_prints_no_line_wider_than_80(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "heuristic", "random", "--max-pairs", "20"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= WIDTH for line in lines), lines
    assert "Seeger-Fabian points per deal (SF/deal)" in " ".join(line.strip() for line in lines[:3])
