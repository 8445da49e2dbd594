"""``python -m bench requests`` (or ``python -m bench.requests``): client CPU per request.

What one request costs the process that sends it, in microseconds of CPU (``time.process_time``
over N calls, so the event loop's wake-ups, the socket calls and the answer's parsing count
too): nats-py's ``nc.request`` next to ``services.requester.Requester`` (one reply inbox, a dict
of futures, one time-out timer), in the same run, in alternating rounds (A/B/A/B), on uvloop as
the services run. Two kinds of request, each with one call in flight and with 32:

* request/reply to an echo responder in another process (the shape of a player's command);
* acked JetStream publishes to a file stream configured like the event store, with the
  store's guard headers (``Nats-Msg-Id``, the expected last sequence on the table's subjects):
  the shape of every append. ``nc.request`` gets the header dict as the store gave it; the
  requester encodes it (``encode_headers``) on every call, as the store does once per append.

Each side does the same work around the call (build the headers, decode the ack, keep the
table's last sequence), so the difference is the request path alone. The baseline's drift (its
slowest round over its fastest) says how noisy the machine was.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from services import natsfast
from services.children import popen
from services.natsserver import EmbeddedServer
from services.requester import Requester, encode_headers
from services.store import stream_config

from . import Options, Row, format_rows

_RESPONDER = """
import asyncio, sys, nats
async def main():
    nc = await nats.connect(sys.argv[1])
    async def echo(msg):
        await msg.respond(msg.data)
    await nc.subscribe("bench.echo", cb=echo)
    await nc.flush()
    print("ready", flush=True)
    await asyncio.Event().wait()
try:
    import uvloop
    uvloop.run(main())
except ImportError:
    asyncio.run(main())
"""
STREAM = "BENCHREQ"
IN_FLIGHT = (1, 32)

Call = Callable[[int], Awaitable[None]]
"""One request of worker ``w`` (its own table in the stream), with the same work around it on both sides."""


def _sizes(opts: Options) -> int:
    """Calls per side, scenario and round."""
    return 300 if opts.quick else 2_000


class _Js:
    """Guarded appends to one table per worker, as the store makes them."""

    def __init__(self) -> None:
        self.last: dict[int, int] = {}
        self.ids = 0
        self.decode = msgspec.json.Decoder(dict[str, Any]).decode

    def headers(self, w: int) -> tuple[str, dict[str, str]]:
        self.ids += 1
        subject = f"benchreq.t{w}.card_played"
        return subject, {
            "Nats-Msg-Id": f"t{w}:{self.ids}",
            "Nats-Expected-Last-Subject-Sequence": str(self.last.get(w, 0)),
            "Nats-Expected-Last-Subject-Sequence-Subject": f"benchreq.t{w}.>",
        }

    def acked(self, w: int, msg: Msg) -> None:
        ack = self.decode(msg.data)
        if "error" in ack:
            raise RuntimeError(f"publish refused: {ack['error']}")
        self.last[w] = int(ack["seq"])


def _calls(nc: Client, requester: Requester, js: _Js) -> dict[str, tuple[Call, Call]]:
    """Per kind of request: (nats-py's, the requester's)."""
    payload = b"x" * 60  # about one event, or one command

    async def echo_a(w: int) -> None:
        await nc.request("bench.echo", payload, timeout=2.0)

    async def echo_b(w: int) -> None:
        await requester.request("bench.echo", payload, timeout=2.0)

    async def js_a(w: int) -> None:
        subject, headers = js.headers(w)
        js.acked(w, await nc.request(subject, payload, timeout=2.0, headers=headers))

    async def js_b(w: int) -> None:
        subject, headers = js.headers(w)
        js.acked(w, await requester.request(subject, payload, timeout=2.0, header=encode_headers(headers)))

    return {
        "request/reply to another process": (echo_a, echo_b),
        "acked publish, file stream, guard headers": (js_a, js_b),
    }


async def _cpu_per_call(call: Call, n: int, in_flight: int, first_worker: int) -> float:
    """Microseconds of this process's CPU per call: ``n`` calls by ``in_flight`` workers."""
    per_worker = n // in_flight

    async def worker(w: int) -> None:
        for _ in range(per_worker):
            await call(w)

    start = time.process_time()
    await asyncio.gather(*(worker(first_worker + w) for w in range(in_flight)))
    return 1e6 * (time.process_time() - start) / (per_worker * in_flight)


async def _wait_responder(nc: Client) -> None:
    for _ in range(200):
        try:
            await nc.request("bench.echo", b"", timeout=1.0)
            return
        except Exception:
            await asyncio.sleep(0.05)
    raise RuntimeError("the echo responder did not answer")


async def _measure(opts: Options) -> list[Row]:
    natsfast.install()  # as every service does: both sides parse headers with it
    n = _sizes(opts)
    with EmbeddedServer() as server:
        proc = popen([sys.executable, "-c", _RESPONDER, server.url], stdout=subprocess.PIPE)  # dies with us
        nc = await nats.connect(server.url)
        try:
            assert proc.stdout is not None
            await asyncio.get_running_loop().run_in_executor(None, proc.stdout.readline)
            await _wait_responder(nc)
            config = stream_config()
            config.name, config.subjects = STREAM, ["benchreq.>"]
            await nc.jetstream().add_stream(config)
            requester = Requester(nc)
            await requester.start()
            calls = _calls(nc, requester, _Js())
            results: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
            for kind, (a, b) in calls.items():
                for in_flight in IN_FLIGHT:
                    # Workers of A and B append to tables of their own (their sequences differ).
                    await _cpu_per_call(a, 200, in_flight, 0)  # warm-up
                    await _cpu_per_call(b, 200, in_flight, 100)
                    runs: tuple[list[float], list[float]] = ([], [])
                    for _ in range(opts.repeats):  # A/B/A/B
                        runs[0].append(await _cpu_per_call(a, n, in_flight, 0))
                        runs[1].append(await _cpu_per_call(b, n, in_flight, 100))
                    results[kind, in_flight] = runs
            if requester.timed_out:
                raise RuntimeError(f"{requester.timed_out} requests timed out: the figures would not compare")
        finally:
            await nc.close()
            proc.terminate()
            proc.wait()
    return _rows(results, n, opts.repeats)


def _rows(results: dict[tuple[str, int], tuple[list[float], list[float]]], n: int, rounds: int) -> list[Row]:
    rows = []
    for (kind, in_flight), (a, b) in results.items():
        where = f"{kind}, {in_flight} in flight"
        drift = max(a) / min(a)
        rows.append(
            Row(
                f"{where}: nc.request",
                min(a),
                "us CPU/call",
                median=statistics.median(a),
                note=f"baseline; drift {drift:.2f}x (slowest/fastest of {rounds} rounds of {n})",
            )
        )
        ratios = [y / x for x, y in zip(a, b)]  # each B round against the A round just before it
        ratio = statistics.median(ratios)
        saved = statistics.median(x - y for x, y in zip(a, b))
        rows.append(
            Row(
                f"{where}: Requester",
                min(b),
                "us CPU/call",
                median=statistics.median(b),
                relative=ratio,
                vs=f"{ratio:.2f}x nc.request's CPU per call (median of rounds), {saved:.1f} us saved",
            )
        )
    return rows


def _run(coro: Any) -> Any:
    """On uvloop when it is there, as the services run (``services.main._run``)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def run(opts: Options) -> list[Row]:
    return _run(_measure(opts))  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.requests", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short run for smoke tests")
    parser.add_argument("--repeats", type=int, help="A/B rounds (default 7, quick 3)")
    args = parser.parse_args(argv)
    repeats = (3 if args.quick else 7) if args.repeats is None else args.repeats
    if repeats < 1:
        parser.error("--repeats must be at least 1")
    print(format_rows("[requests] client CPU per request: nc.request vs Requester", run(Options(args.quick, repeats))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
