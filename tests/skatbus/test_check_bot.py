"""``skat check-bot``: the built-in bots and the Node.js example pass it; bots broken in one way
each fail the check for that way, with a message that says what to fix; the transcript in
docs/protocol.md is what a real run records.

check-bot and the bots run as processes, as a bot author runs them: check-bot first (it says
where to connect), then the bot, pointed at check-bot's relay.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from services.connection import ConnectionSettings
from services.natsserver import free_port
from skatbus.check_bot import TRANSCRIPT_BEGIN, read_transcript, record_transcript
from tests.bus import Stack

ROOT = Path(__file__).resolve().parents[2]
NODE_BOT = ROOT / "examples" / "node-bot"


async def _check(args: Sequence[str], bot: Sequence[str], timeout: float = 150.0, cwd: Path = ROOT) -> tuple[int, str]:
    """Run ``skat check-bot ARGS --port P``; once it says where to connect, start ``bot`` (with
    ``{url}`` in it replaced by the relay's address); check-bot's exit code and output."""
    port = free_port()
    checker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skatbus.cli", "check-bot", "--wait", "60", *args, "--port", str(port),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
    )  # fmt: skip
    assert checker.stdout is not None
    output: list[str] = []
    proc: subprocess.Popen[bytes] | None = None
    try:
        async with asyncio.timeout(timeout):
            while line := (await checker.stdout.readline()).decode():
                output.append(line)
                if line.startswith("Start your bot") and proc is None:
                    url = f"nats://127.0.0.1:{port}"
                    proc = subprocess.Popen(
                        [part.replace("{url}", url) for part in bot],
                        cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
                    )  # fmt: skip
            code = await checker.wait()
    finally:
        if checker.returncode is None:
            checker.kill()
            await checker.wait()
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(proc.wait, 10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return code, "".join(output)


def _skat_bot(name: str, player: str) -> list[str]:
    return [sys.executable, "-m", "skatbus.cli", "bot", name, "--player", player, "--nats", "{url}"]


def _broken_bot(kind: str, player: str) -> list[str]:
    return [sys.executable, "-m", "tests.skatbus.broken_bot", kind, "--player", player, "--nats", "{url}"]


def _line(output: str, status: str, check: str) -> bool:
    return any(line.split()[:2] == [status, check] for line in output.splitlines() if line.strip())


@pytest.mark.timeout(200)
async def test_heuristic_bot_passes_against_the_embedded_stack() -> None:
    """No --nats: check-bot starts its own server and services; every check runs and passes."""
    code, out = await _check(["alice"], _skat_bot("heuristic", "alice"))
    assert code == 0, out
    for check in (
        "connect",
        "hello",
        "inbox",
        "msgpack",
        "json",
        "at",
        "refusals",
        "repeat",
        "stale",
        "reconnect",
        "deadline",
    ):
        assert _line(out, "PASS", check), (check, out)
    assert "11 checks: 11 passed, 0 failed, 0 skipped" in out


@pytest.mark.timeout(200)
async def test_random_bot_passes_against_running_services(stack: Stack) -> None:
    code, out = await _check(["bob", "--nats", stack.url], _skat_bot("random", "bob"))
    assert code == 0, out
    assert "0 failed" in out, out


@pytest.mark.timeout(300)
async def test_node_example_passes_as_it_is(stack: Stack, node: str) -> None:
    """The Node.js bot reads JSON only and asks for it in its hello, so it passes without help
    (the msgpack check is skipped: the platform sends it no msgpack)."""
    bot = [node, "bot.js", "--player", "nodebot", "--nats", "{url}"]
    code, out = await _check(["nodebot", "--nats", stack.url], bot, cwd=NODE_BOT)
    assert code == 0, out
    assert _line(out, "SKIP", "msgpack") and _line(out, "PASS", "json") and _line(out, "PASS", "reconnect"), out


@pytest.mark.timeout(120)
async def test_a_bot_that_ignores_json_fails_the_json_check(stack: Stack) -> None:
    code, out = await _check(["carl", "--nats", stack.url, "--only", "json"], _broken_bot("no-json", "carl"))
    assert code == 1, out
    assert _line(out, "FAIL", "json"), out
    assert "no command came; the table timed you out" in out and "read JSON updates" in out, out
    assert _line(out, "PASS", "hello") and _line(out, "SKIP", "msgpack"), out


@pytest.mark.timeout(120)
async def test_a_bot_that_retries_stale_forever_fails_the_stale_check(stack: Stack) -> None:
    code, out = await _check(["dora", "--nats", stack.url, "--only", "stale"], _broken_bot("stale-forever", "dora"))
    assert code == 1, out
    assert _line(out, "FAIL", "stale"), out
    assert "and you sent it" in out and "treat stale as final" in out, out


@pytest.mark.timeout(120)
async def test_a_bot_that_never_says_hello_fails_hello_and_reconnect(stack: Stack) -> None:
    """Without a hello after the reconnect, the prompt sent while it was away never reaches it."""
    code, out = await _check(["emil", "--nats", stack.url, "--only", "reconnect"], _broken_bot("no-hello", "emil"))
    assert code == 1, out
    assert _line(out, "FAIL", "hello") and _line(out, "FAIL", "reconnect"), out
    assert "said no hello" in out and "send a request to skat.hello.emil" in out, out


@pytest.mark.timeout(120)
async def test_a_bot_that_answers_a_repeated_prompt_again_fails_the_repeat_check(stack: Stack) -> None:
    code, out = await _check(["gina", "--nats", stack.url, "--only", "repeat"], _broken_bot("no-dedupe", "gina"))
    assert code == 1, out
    assert _line(out, "FAIL", "repeat"), out
    assert "and you answered it" in out and "ignore a prompt at or below it" in out, out


@pytest.mark.timeout(120)
async def test_a_slow_bot_fails_the_deadline_check(stack: Stack) -> None:
    args = ["hank", "--nats", stack.url, "--only", "deadline", "--short-deadline", "2"]
    code, out = await _check(args, _broken_bot("slow", "hank"))
    assert code == 1, out
    assert _line(out, "FAIL", "deadline"), out
    assert "past the deadline" in out and "answer well before update.deadline" in out, out


async def test_nobody_connects_fails_connect(stack: Stack) -> None:
    code, out = await _check(["fred", "--nats", stack.url, "--wait", "1"], ["true"])
    assert code == 1 and _line(out, "FAIL", "connect"), out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bad id"], "player id 'bad id'"),
        ([], "required: ID"),
        (["ann", "--only", "nope"], "--only takes"),
        (["ann", "--short-deadline", "0"], "--short-deadline"),
    ],
)
def test_usage_mistakes_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skatbus.cli", "check-bot", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def _normalised(lines: list[str]) -> list[str]:
    """What does not change between runs: no deadlines (wall clock), no update that only marks
    the deal's end (the views service may fold it into the next deal's), and no plain view
    that is not a turn prompt: the views service sends those to the seats not to move, as its
    own, possibly later, state has it (the turn prompts come from bidding and play)."""
    out = []
    for line in lines:
        doc = json.loads(line)
        data = doc.get("data")
        if isinstance(data, dict) and "view" in data:
            if data["view"].get("phase") in ("between_deals", "closed") or data["view"].get("deal", 0) > 1:
                continue
            if not data.get("your_turn"):
                continue
            data.pop("deadline", None)
        out.append(json.dumps(doc, sort_keys=True))
    return sorted(out)


@pytest.mark.timeout(120)
async def test_the_transcript_in_the_docs_is_what_a_run_records(stack: Stack) -> None:
    """docs/protocol.md's example deal is regenerated by
    ``python -m skatbus.check_bot --transcript --write docs/protocol.md``; a fresh run records
    the same messages (up to deadlines and the order of a reply and the next update)."""
    docs = ROOT / "docs" / "protocol.md"
    assert TRANSCRIPT_BEGIN in docs.read_text()
    documented = read_transcript(docs)
    recorded = await record_transcript(ConnectionSettings((stack.url,)))
    kinds = {next(iter(json.loads(line))) for line in documented}
    assert kinds == {"send", "receive"}, kinds
    assert _normalised(recorded) == _normalised(documented), (
        "docs/protocol.md's transcript is out of date: python -m skatbus.check_bot --transcript --write docs/protocol.md"
    )


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.timeout(90)
async def test_sigterm_stops_check_bot_and_its_embedded_stack() -> None:
    """Waiting for a bot that never comes: SIGTERM ends check-bot (exit 130, one line) and the
    server and services it started."""
    checker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skatbus.cli", "check-bot", "ivan", "--port", str(free_port()),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert checker.stdout is not None and checker.stderr is not None
    try:
        seen = b""
        async with asyncio.timeout(60):
            while not seen.endswith(b"connect...\n"):
                line = await checker.stdout.readline()
                assert line, (seen + await checker.stderr.read()).decode()
                seen += line
        children = _children(checker.pid)
        checker.send_signal(signal.SIGTERM)
        async with asyncio.timeout(20):
            code = await checker.wait()
    finally:
        if checker.returncode is None:
            checker.kill()
            await checker.wait()
    assert code == 130
    assert (await checker.stderr.read()).decode().strip() == "skat check-bot: interrupted"
    # The children end with it; give a busy machine a moment to let them go (a zombie is gone).
    async with asyncio.timeout(10):
        while running := [c for c in children if _alive(c)]:
            await asyncio.sleep(0.1)
    assert not running, children


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
