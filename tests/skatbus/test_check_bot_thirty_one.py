"""``skat check-bot ID --game thirty-one``: the built-in Thirty-one heuristic passes every check;
a bot that plays an illegal move, one that never answers and one that does not stamp ``at`` each
fail, with the line that says why; the two bots of docs/bots.md pass; the Thirty-one transcript
in docs/protocol.md is what a real run records.

As in test_check_bot.py, check-bot and the bots run as processes, the way a bot author runs them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from services.connection import ConnectionSettings
from skatbus.check_bot import read_transcript, record_transcript
from skatbus.check_bot.transcript import markers
from tests.bus import Stack
from tests.skatbus.test_check_bot import ROOT, _check, _line

GAME = ["--game", "thirty-one"]


def _t31_bot(name: str, player: str) -> list[str]:
    return [sys.executable, "-m", "skatbus.cli", "bot", name, "--game", "thirty-one", "--player", player, "--nats", "{url}"]  # fmt: skip


def _broken(kind: str, player: str) -> list[str]:
    return [sys.executable, "-m", "tests.skatbus.broken_t31_bot", kind, "--player", player, "--nats", "{url}"]


def _lines_after(output: str, status: str, check: str) -> str:
    """The lines a check's verdict has under it (expected, happened, fix), as one text."""
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:2] == [status, check])
    below = []
    for line in lines[at + 1 :]:
        if not line.startswith("        "):
            break
        below.append(line.strip())
    return "\n".join(below)


@pytest.mark.timeout(200)
async def test_the_heuristic_thirty_one_bot_passes_every_check(stack: Stack) -> None:
    code, out = await _check(["tess", "--nats", stack.url, *GAME], _t31_bot("heuristic", "tess"))
    assert code == 0, out
    assert "skat check-bot tess --game thirty-one:" in out, out
    assert "skat bot random --game thirty-one --player tess" in out, out
    assert "11 checks: 11 passed, 0 failed, 0 skipped" in out, out
    for check in ("msgpack", "json", "deadline"):
        # Every table check plays its game to the table's close.
        assert re.search(r"in a whole game of \d+ deals?$", _lines_after(out, "PASS", check)), (check, out)


@pytest.mark.timeout(120)
async def test_a_bot_that_plays_an_illegal_move_fails(stack: Stack) -> None:
    code, out = await _check(["ivy", "--nats", stack.url, *GAME, "--only", "msgpack"], _broken("illegal", "ivy"))
    assert code == 1, out
    assert _line(out, "FAIL", "msgpack") and _line(out, "FAIL", "refusals"), out
    happened = _lines_after(out, "FAIL", "msgpack")
    assert re.search(
        r'happened: the prompt at index \d+ \(take, msgpack, 10 s to answer\): your \{"type":"discard",', happened
    ), out
    assert "was refused: illegal: take a card first (from the stock or the discard pile)" in happened, out
    assert "pick one of view.legal" in happened and "only look, at a table with throw_down" in happened, out
    assert "illegal: take a card first" in _lines_after(out, "FAIL", "refusals"), out
    assert _line(out, "PASS", "hello") and _line(out, "PASS", "at"), out


@pytest.mark.timeout(150)
async def test_a_bot_that_never_answers_fails(stack: Stack) -> None:
    code, out = await _check(["sam", "--nats", stack.url, *GAME], _broken("silent", "sam"))
    assert code == 1, out
    for check in ("msgpack", "json"):
        assert _line(out, "FAIL", check), out
        assert re.search(r"happened: the prompt at index \d+ \(take, \w+, 10 s to answer\): no command came; the table timed you out", _lines_after(out, "FAIL", check)), out  # fmt: skip
    for check in ("repeat", "stale", "reconnect", "deadline"):
        assert _line(out, "SKIP", check), out
    assert "not run: the bot answered no prompt, in either encoding" in out, out
    assert _line(out, "PASS", "hello") and _line(out, "SKIP", "at"), out


@pytest.mark.timeout(120)
async def test_a_bot_that_does_not_stamp_at_fails_the_at_check(stack: Stack) -> None:
    code, out = await _check(["noah", "--nats", stack.url, *GAME, "--only", "msgpack"], _broken("no-at", "noah"))
    assert code == 1, out
    assert _line(out, "FAIL", "at"), out
    happened = _lines_after(out, "FAIL", "at")
    assert re.search(r'happened: (\d+) of \1 commands had none, e.g. \{"type":"(take|discard|knock)"', happened), out
    assert 'add "at": <the prompt\'s index> to every command' in happened, out
    assert _line(out, "PASS", "refusals"), out  # taken, only not matched to a prompt


def _example(title: str) -> str:
    """The code block after ``<!-- example: TITLE -->`` in docs/bots.md."""
    text = (ROOT / "docs" / "bots.md").read_text()
    start = text.index(f"<!-- example: {title} -->")
    block = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert block is not None, title
    return block.group(1)


@pytest.mark.timeout(200)
async def test_the_python_bot_of_the_docs_passes(stack: Stack, tmp_path: Path) -> None:
    bot = tmp_path / "knocker.py"
    bot.write_text(_example("thirty-one python bot"))
    args = ["kim", "--nats", stack.url, *GAME, "--only", "msgpack,reconnect"]
    code, out = await _check(args, [sys.executable, str(bot), "kim", "{url}"])
    assert code == 0, out
    assert _line(out, "PASS", "msgpack") and _line(out, "PASS", "reconnect") and "0 failed" in out, out


@pytest.mark.timeout(200)
async def test_the_raw_json_bot_of_the_docs_passes(stack: Stack, tmp_path: Path) -> None:
    """It asks for JSON in its hello: the platform sends it no msgpack (skipped)."""
    bot = tmp_path / "json_bot.py"
    bot.write_text(_example("thirty-one json bot"))
    args = ["jay", "--nats", stack.url, *GAME, "--only", "json,repeat,stale,reconnect"]
    code, out = await _check(args, [sys.executable, str(bot), "jay", "{url}"])
    assert code == 0, out
    for check in ("hello", "inbox", "json", "at", "refusals", "repeat", "stale", "reconnect"):
        assert _line(out, "PASS", check), (check, out)
    assert _line(out, "SKIP", "msgpack") and "asking for json" in out, out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check-bot", "ann", "--game", "rummy"], "argument --game: invalid choice: 'rummy'"),
        (["bot", "pimc", "--game", "thirty-one", "--player", "ann"], "unknown bot 'pimc' for Thirty-one (pimc is a bot of Skat); its built-in bots: heuristic, random"),
        (["bot", "random", "--game", "rummy", "--player", "ann"], "no built-in bots for the game 'rummy'"),
    ],
)  # fmt: skip
def test_usage_mistakes_are_one_line_and_exit_2(argv: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skatbus.cli", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def _normalised(lines: list[str]) -> list[str]:
    """What does not change between runs: no deadlines (wall clock), and of the updates that are
    not turn prompts only the last, the ``closed`` view (the views service may fold a deal's
    end, its score and the table's close into fewer updates, as its own state has them when it
    sends; the turn prompts come from the events that make them)."""
    out = []
    for line in lines:
        doc = json.loads(line)
        data = doc.get("data")
        if isinstance(data, dict) and "view" in data:
            if not data.get("your_turn") and data["view"].get("phase") != "closed":
                continue
            data.pop("deadline", None)
        out.append(json.dumps(doc, sort_keys=True))
    return sorted(out)


@pytest.mark.timeout(120)
async def test_the_thirty_one_transcript_in_the_docs_is_what_a_run_records(stack: Stack) -> None:
    """docs/protocol.md's example game is regenerated by ``python -m skatbus.check_bot
    --transcript --game thirty-one --write docs/protocol.md``; a fresh run records the same
    messages (up to deadlines, folded updates and the order of a reply and the next update)."""
    docs = ROOT / "docs" / "protocol.md"
    begin, end = markers("thirty-one")
    assert begin in docs.read_text() and end in docs.read_text()
    documented = read_transcript(docs, "thirty-one")
    recorded = await record_transcript(ConnectionSettings((stack.url,)), "thirty-one")
    assert _normalised(recorded) == _normalised(documented), (
        "docs/protocol.md's Thirty-one transcript is out of date: "
        "python -m skatbus.check_bot --transcript --game thirty-one --write docs/protocol.md"
    )
    # What the transcript is there to show: take, discard, the stale repeat, a knock, the end.
    sent = [json.loads(line)["data"] for line in documented if "send" in json.loads(line)]
    assert [c.get("type") for c in sent[1:]] == ["take", "take", "discard", "knock"], sent
    replies = [
        json.loads(line)["data"] for line in documented if json.loads(line).get("receive", "").startswith("_INBOX")
    ]
    assert [r.get("code", "") for r in replies[1:]] == ["", "stale", "", ""], replies
    views = [json.loads(line)["data"]["view"] for line in documented if "view" in (json.loads(line)["data"] or {})]
    assert views[-1]["phase"] == "closed" and views[-1]["places"] == [1, 2], views[-1]
    assert all(v["game"] == "thirty-one" and v["rules"]["coins"] == 1 for v in views)


def test_the_view_example_in_bots_md_is_the_transcripts_first_prompt() -> None:
    """docs/bots.md shows a Thirty-one prompt by hand (laid out, its deck cut short): it is the
    first prompt of docs/protocol.md's recorded transcript, field for field."""
    text = (ROOT / "docs" / "bots.md").read_text()
    section = text[text.index("### The view, in JSON") :]
    block = re.search(r"```json\n(.*?)```", section, re.S)
    assert block is not None
    shown = json.loads(block.group(1))
    first = next(
        json.loads(line)["data"]
        for line in read_transcript(ROOT / "docs" / "protocol.md", "thirty-one")
        if json.loads(line)["data"] and json.loads(line)["data"].get("your_turn")
    )
    dealt, real = shown["view"]["history"][0], first["view"]["history"][0]
    assert dealt["deck"][-1] == "..." and dealt["deck"][:-1] == real["deck"][: len(dealt["deck"]) - 1]
    dealt["deck"] = real["deck"]
    shown.pop("deadline"), first.pop("deadline")  # wall clock: another run's in every run
    assert shown == first
