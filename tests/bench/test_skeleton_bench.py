"""``python -m bench skeleton``: the protocol's minimal message pattern, the floor the pipeline
section measures the stack against. Its appends are guarded as the services' are (a wrong
expected sequence or a repeated message id stores nothing and is refused), every step stores
exactly one event in the stream, and the section reports what it claims. No speed is asserted."""

from __future__ import annotations

import asyncio
import re

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from bench import __main__ as cli
from bench import skeleton


def _figure(output: str, name: str) -> tuple[float, str]:
    lines = [l for l in output.splitlines() if l.strip().startswith(name)]
    assert lines, f"no {name!r} in\n{output}"
    rest = lines[0].strip()[len(name) :]
    number = re.match(r"\s+([\d,.]+)", rest)
    assert number, lines[0]
    return float(number.group(1).replace(",", "")), rest


async def test_the_responder_appends_guarded_and_refuses_a_wrong_expectation(nc: Client) -> None:
    await skeleton.ensure_stream(nc)
    responder = skeleton.Responder(nc)
    await responder.start()
    prompts: asyncio.Queue[Msg] = asyncio.Queue()
    await nc.subscribe(f"{skeleton.PREFIX}.view.*.*", cb=prompts.put)

    async def command(table: str, data: bytes = skeleton.COMMAND) -> bytes:
        msg = await nc.request(f"{skeleton.PREFIX}.cmd.{table}s0.{table}", data, timeout=2.0)
        return msg.data

    assert await command("g1") == skeleton.REPLY
    prompt = await asyncio.wait_for(prompts.get(), 2.0)
    assert prompt.subject == f"{skeleton.PREFIX}.view.g1s1.g1"  # the next seat's prompt
    assert await command("g1", skeleton.LAST_COMMAND) == skeleton.REPLY
    assert await skeleton.stored(nc) == 2 and prompts.empty()  # the last step prompts nobody

    responder.tables["g1"] = [2, 1]  # a writer that missed the latest event: wrong expectation
    assert (await command("g1")).startswith(b"refused")
    responder.tables["g1"] = [1, 2]  # an index already written: the same message id again
    assert (await command("g1")).startswith(b"refused")
    assert await skeleton.stored(nc) == 2 and responder.refused == 2 and responder.appended == 2


def test_the_skeleton_section_reports_events_messages_and_cpu(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tables, steps = 3, 40
    monkeypatch.setattr(skeleton, "sizes", lambda opts: {"tables": tables, "steps": steps})
    assert cli.main(["skeleton", "--quick"]) == 0
    out = capsys.readouterr().out

    rate, line = _figure(out, "skeleton stored events/s")
    assert rate > 0 and f"{tables * steps} events at {tables} tables" in line
    # Per step: command, append, reply and prompt in; their deliveries and the ack out (a
    # table's last step prompts nobody). A pattern with a message more or less shows here.
    for direction in ("into", "out of"):
        per_event, _ = _figure(out, f"skeleton messages {direction} the server per stored event")
        assert 3.5 < per_event <= 4.1, out
    # CPU comes in 10 ms clock ticks (/proc/<pid>/stat): a run this short may read 0 anywhere.
    _, cpu = _figure(out, "skeleton CPU us per stored event, all processes")
    assert "responder + server, without the players" in cpu
    for name in ("nats-server", "skeleton players", "skeleton responder"):
        assert re.search(rf"^\s+{name}\s+[\d,.]+\s+us", out, re.M), name
