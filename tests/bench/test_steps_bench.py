"""``python -m bench steps`` places one table's time: the gap between events by kind of step,
and what the slowest command -> next prompt samples wait for. No speed is asserted here."""

from __future__ import annotations

import re

import pytest

from bench import __main__ as cli
from bench import steps


def _figure(output: str, name: str) -> tuple[float, str]:
    lines = [line for line in output.splitlines() if line.strip().startswith(name)]
    assert lines, f"no {name!r} in\n{output}"
    rest = lines[0].strip()[len(name) :]
    number = re.match(r"\s+([\d,.]+)", rest)
    assert number, lines[0]
    return float(number.group(1).replace(",", "")), rest


def test_the_steps_section_places_one_tables_time(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(steps, "_sizes", lambda opts: {"rounds": 1})
    assert cli.main(["steps", "--quick"]) == 0
    out = capsys.readouterr().out
    turn, note = _figure(out, "a card -> the next card (a turn: prompt, bot, command, append)")
    assert turn > 0 and "median of" in note and "server stamps" in note
    # Every deal of a table played to its end has a score and, but for the last, a next deal.
    _figure(out, "a deal's end -> its score (scoring, through its consumer)")
    _figure(out, "a score -> the next deal (the dealer, through its consumer)")
    share, note = _figure(out, "slowest 1 % of command -> next prompt: share waiting for a new deal")
    assert 0 <= share <= 100 and "of the" in note
    within, _ = _figure(out, "command -> next prompt p99 within a deal")
    assert within > 0
