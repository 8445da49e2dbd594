"""``python -m bench steps``: where one table's time goes, step by step.

One table alone plays through the five services (as in ``pipeline``'s one-table run). Then its
log is read back and the time between consecutive events, by the server's own stamps, is
grouped by what the step is: a turn (prompt, the bot, its command, the append), a service's own
second append (a trick after its card), a hand-over to another service through its consumer
(the dealer after a score, scoring after a deal's end). And each command -> next prompt sample
is placed in the log by the time its prompt arrived, to say how many of the slowest 1 % wait
for a new deal (the last card's trick, the deal's end, its score, the next deal, five appends
through three services). These are the figures behind the latency notes of issue 13.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import statistics
import subprocess
import sys

import nats

from protocol.events import (
    BidMade,
    CardPlayed,
    DealDealt,
    DealEnded,
    DealScored,
    Event,
    GameDeclared,
    Passed,
    TrickTaken,
)
from services.main import SERVICES, stop_processes, wait_ready
from services.natsserver import EmbeddedServer
from services.store import EventStore

from . import Options, Row
from .pipeline import _run, run_stack

STEPS: list[tuple[str, tuple[type[Event], ...], tuple[type[Event], ...]]] = [
    ("a card -> the next card (a turn: prompt, bot, command, append)", (CardPlayed,), (CardPlayed,)),
    ("a card -> the trick it completes (play's second append)", (CardPlayed,), (TrickTaken,)),
    ("a new deal -> its first bid or pass (a turn after the dealer's prompt)", (DealDealt,), (BidMade, Passed)),
    ("the declaration -> the first card (a turn after bidding's prompt)", (GameDeclared,), (CardPlayed,)),
    ("a deal's end -> its score (scoring, through its consumer)", (DealEnded,), (DealScored,)),
    ("a score -> the next deal (the dealer, through its consumer)", (DealScored,), (DealDealt,)),
]


def _sizes(opts: Options) -> dict[str, int]:
    return {"rounds": 2 if opts.quick else 8}


async def _measure(opts: Options) -> list[Row]:
    with EmbeddedServer() as server:
        nc = await nats.connect(server.url)
        await EventStore(nc).ensure_stream()
        env = {**os.environ, "SKAT_LOG_LEVEL": "warning"}
        procs = [
            subprocess.Popen([sys.executable, "-m", "skatbus.cli", "service", name, "--nats", server.url], env=env)
            for name in SERVICES
        ]
        try:
            await wait_ready(server.url)
            await run_stack(server.url, 1, 1, prefix="warm")  # every service warm, every cache filled
            _, _, _, watch = await run_stack(server.url, 1, _sizes(opts)["rounds"], prefix="steps")
            log = await EventStore(nc).read("steps0")
        finally:
            await nc.close()
            await asyncio.to_thread(stop_processes, procs)
    times = [stored.time for stored in log]
    kinds = [type(stored.event) for stored in log]
    rows = []
    for label, before, after in STEPS:
        gaps = [
            1e6 * (times[i + 1] - times[i])
            for i in range(len(log) - 1)
            if issubclass(kinds[i], before) and issubclass(kinds[i + 1], after)
        ]
        if gaps:
            median = statistics.median(gaps)
            rows.append(Row(label, median, "us", note=f"median of {len(gaps)}, between the two events' server stamps"))
    samples = sorted(zip(watch.samples, watch.at), reverse=True)
    slowest = samples[: max(1, len(samples) // 100)]

    def waits_for_a_new_deal(arrived: float) -> bool:
        last = bisect.bisect_right(times, arrived) - 1  # the last event stored before the prompt came
        return last >= 0 and kinds[last] is DealDealt

    boundary = sum(waits_for_a_new_deal(arrived) for _, arrived in slowest)
    rows.append(
        Row(
            "slowest 1 % of command -> next prompt: share waiting for a new deal",
            100 * boundary / len(slowest),
            "%",
            note=f"{boundary} of the {len(slowest)} slowest of {len(samples)} samples: the prompt after a deal's"
            " last card, whose trick, end, score and next deal are five appends through play, scoring and the dealer",
        )
    )
    inside = sorted(s for s, arrived in samples if not waits_for_a_new_deal(arrived))
    if inside:
        rows.append(
            Row(
                "command -> next prompt p99 within a deal",
                1e6 * inside[min(len(inside) - 1, int(0.99 * len(inside)))],
                "us",
                note=f"{len(inside)} samples: every one but the first prompt of each new deal",
            )
        )
    return rows


def run(opts: Options) -> list[Row]:
    rows: list[Row] = _run(_measure(opts))
    return rows
