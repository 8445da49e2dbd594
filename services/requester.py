"""Request/reply with one reply subscription and one timer per inbox, not per request.

nats-py's ``Client.request`` sets every call up from scratch: a NUID token plus two random
bytes, a future with a done-callback, an ``asyncio.wait_for`` (its own timer handle, a second
future and one more turn of the event loop when the answer comes), its header block encoded
key by key through a regular expression, and every answer handed to the reply subscription's
own task through a queue before it reaches the waiting caller (one more turn). That is 26-33 us
of client CPU per call on this project's VMs, paid on every append and every command
(``python -m bench requests`` measures it next to this module's, in the same run).

``Requester`` keeps what is per inbox per inbox:

* one wildcard subscription ``<prefix>.*`` under the connection's permitted inbox prefix (a
  player's ``_INBOX.<player>``: the broker lets a player receive nowhere else, and the services
  answer nowhere else), with a random part so that nobody guesses the inbox;
* answers are matched in the connection's read loop, synchronously, by the reply subject
  ``<prefix>.<n>`` (``n`` a counter) to a dict of futures: no queue, no subscription task. This
  uses nats-py's own single-answer hook (a subscription's ``future``, which its old-style
  requests use) with an object that routes each message to its request's future. An answer for
  no pending request (late, duplicated or foreign) is dropped;
* one timer for all time-outs: armed at the earliest deadline, it fails what is due with
  ``nats.errors.TimeoutError`` and re-arms for the next (with one time-out value, it fires about
  once per time-out, whatever the rate of requests);
* a header block may come encoded (``encode_headers``), once per append rather than once per
  attempt.

Behaviour is that of ``nc.request`` where callers can tell: a time-out raises
``nats.errors.TimeoutError`` (an ``asyncio.TimeoutError``), the broker's "no responders" status
(503) raises ``NoRespondersError``, a closed connection ``ConnectionClosedError``. Differences:
requests pending when the connection closes fail at once with ``ConnectionClosedError`` (nc.request
waits out its time-out); a cancelled caller's entry is removed at once. Across a reconnect
nats-py subscribes the inbox again; requests in flight then time out and are retried by their
callers as before (the store's with the same ``Nats-Msg-Id`` and expected sequence, a player's
command with the same ``at``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Final

import nats.errors
from nats.aio.client import Client, _validate_subject
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.protocol.command import hpub_cmd, pub_cmd

NO_RESPONDERS: Final = "503"
"""The status header the broker answers with when no subscriber listens to a request."""
_BAD_HEADER = re.compile(r"[\r\n]")
_BAD_KEY = re.compile(r"[\s:]")
_CLOSE_WATCH: Final = "skatbus-requester-close"
_ATTRIBUTE: Final = "_skatbus_requester"


def encode_headers(headers: Mapping[str, str]) -> bytes:
    """A NATS header block (``NATS/1.0`` + ``Key: value`` lines), as nats-py writes it; a key
    with white space or a colon, or a value with a line break, is refused (``ValueError``): it
    would smuggle another header or protocol line in."""
    lines = ["NATS/1.0\r\n"]
    for key, value in headers.items():
        if not key or _BAD_KEY.search(key) or _BAD_HEADER.search(value):
            raise ValueError(f"header {key!r} cannot be sent as it is")
        lines.append(f"{key}: {value}\r\n")
    lines.append("\r\n")
    return "".join(lines).encode()


class _Router:
    """Stands in for the single future of a nats-py subscription: ``Client._process_msg``
    calls ``set_result(msg)`` for each message of such a subscription, in the read loop."""

    __slots__ = ("waiting",)

    def __init__(self, waiting: dict[str, tuple[asyncio.Future[Msg], float]]) -> None:
        self.waiting = waiting

    def cancelled(self) -> bool:
        return False

    def set_result(self, msg: Msg) -> None:
        entry = self.waiting.pop(msg.subject, None)
        if entry is not None and not entry[0].done():
            entry[0].set_result(msg)


class Requester:
    """Requests through one reply inbox ``<prefix>.<n>``; ``prefix`` None: the connection's own
    inbox prefix plus a NUID (what ``nc.request`` uses), else e.g. ``_INBOX.<player>.<random>``."""

    def __init__(self, nc: Client, prefix: str | None = None) -> None:
        self.nc = nc
        self.prefix = prefix
        self._waiting: dict[str, tuple[asyncio.Future[Msg], float]] = {}
        self._router = _Router(self._waiting)
        self._sub: Subscription | None = None
        self._subscribing = asyncio.Lock()
        self._next = 0
        self._base = ""
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self.timed_out = 0
        """Requests that timed out, since start (for tests and logs)."""

    @property
    def pending(self) -> int:
        """Requests waiting for their answer."""
        return len(self._waiting)

    async def start(self) -> None:
        """Subscribe the inbox (done by the first request if not before; idempotent)."""
        async with self._subscribing:  # one subscription, however many first requests at once
            if self._sub is not None and not self.nc.is_closed:
                return
            if self.prefix is None:
                self.prefix = self.nc.new_inbox()
            # No cb: nats-py then delivers through ``_future`` (our router) in its read loop.
            sub = await self.nc.subscribe(f"{self.prefix}.*", future=self._router)  # type: ignore[arg-type]
            # Pending requests fail when the connection closes: nats-py cancels the waiters it
            # finds in a subscription's ``_pending_next_msgs_calls`` then, so one of ours is there.
            watch: asyncio.Future[Msg] = asyncio.get_running_loop().create_future()
            watch.add_done_callback(self._on_close_watch)
            if sub._pending_next_msgs_calls is not None:
                sub._pending_next_msgs_calls[_CLOSE_WATCH] = watch
            self._base = f"{self.prefix}."
            self._sub = sub

    async def request(
        self,
        subject: str,
        payload: bytes = b"",
        timeout: float = 2.0,
        headers: Mapping[str, str] | None = None,
        header: bytes | None = None,
    ) -> Msg:
        """Publish ``payload`` to ``subject`` with a reply inbox and return the answer. Headers as
        a mapping or already encoded (``header``, from ``encode_headers``). Raises
        ``nats.errors.TimeoutError`` after ``timeout`` s, ``NoRespondersError`` when nobody
        listens, what ``nc.publish`` raises (``ConnectionClosedError``, ...)."""
        if self._sub is None or self.nc.is_closed:
            if self.nc.is_closed:
                raise nats.errors.ConnectionClosedError
            await self.start()
        if headers is not None:
            header = encode_headers(headers)
        self._next += 1
        reply = f"{self._base}{self._next}"
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Msg] = loop.create_future()
        deadline = loop.time() + timeout
        self._waiting[reply] = (future, deadline)
        if self._timer is None or deadline < self._timer_at:
            self._arm(loop, deadline)
        try:
            await _publish(self.nc, subject, reply, payload, header)
            msg = await future
        finally:
            self._waiting.pop(reply, None)
        if msg.headers and msg.headers.get("Status") == NO_RESPONDERS:
            raise nats.errors.NoRespondersError
        return msg

    def _arm(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = at
        self._timer = loop.call_at(at, self._sweep)

    def _sweep(self) -> None:
        """Fail every request whose deadline has passed; re-arm for the earliest left."""
        self._timer = None
        if not self._waiting:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        closed = self.nc.is_closed
        due = [reply for reply, (_, deadline) in self._waiting.items() if deadline <= now or closed]
        for reply in due:
            future, _ = self._waiting.pop(reply)
            if future.done():
                continue
            if closed:  # closed by a drain, which leaves no subscription for nats-py to cancel
                future.set_exception(nats.errors.ConnectionClosedError())
            else:
                self.timed_out += 1
                future.set_exception(nats.errors.TimeoutError())
        if self._waiting:
            # A timer may fire a little early (millisecond clocks): never re-arm in the past.
            self._arm(loop, max(now + 0.001, min(deadline for _, deadline in self._waiting.values())))

    def _on_close_watch(self, watch: asyncio.Future[Msg]) -> None:
        """The connection closed (or our subscription ended): nothing will answer now."""
        self._sub = None
        self._fail_all(cancel=False)

    def _fail_all(self, cancel: bool) -> None:
        """Fail every pending request with ``ConnectionClosedError``, or cancel them."""
        waiting = list(self._waiting.values())
        self._waiting.clear()
        for future, _ in waiting:
            if not future.done():
                if cancel:
                    future.cancel()
                else:
                    future.set_exception(nats.errors.ConnectionClosedError())
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def close(self, cancel: bool = False) -> None:
        """Unsubscribe the inbox; pending requests fail with ``ConnectionClosedError`` (or are
        cancelled, ``cancel``). A later request subscribes again."""
        sub, self._sub = self._sub, None
        if sub is not None:
            watch = (sub._pending_next_msgs_calls or {}).pop(_CLOSE_WATCH, None)
            if watch is not None:
                watch.remove_done_callback(self._on_close_watch)
                watch.cancel()
            try:
                await sub.unsubscribe()
            except nats.errors.Error:
                pass  # the connection is closed or draining: the server forgot the inbox anyway
        self._fail_all(cancel)


async def _publish(nc: Client, subject: str, reply: str, payload: bytes, header: bytes | None) -> None:
    """``nc.publish`` with the header block already encoded: the same checks in the same order,
    then the same protocol line into nats-py's pending buffer and its flusher."""
    if not nc._skip_subject_validation:
        _validate_subject(subject)
    if nc.is_closed:
        raise nats.errors.ConnectionClosedError
    if nc.is_draining_pubs:
        raise nats.errors.ConnectionDrainingError
    size = len(payload)
    if not nc.is_connected and (nc._max_pending_size <= 0 or size + nc._pending_data_size > nc._max_pending_size):
        raise nats.errors.OutboundBufferLimitError  # reconnecting, and no room to buffer it
    if size > nc._max_payload:
        raise nats.errors.MaxPayloadError
    cmd = pub_cmd(subject, reply, payload) if header is None else hpub_cmd(subject, reply, header, payload)
    nc.stats["out_msgs"] += 1
    nc.stats["out_bytes"] += size
    await nc._send_command(cmd)
    if nc._flush_queue is not None and nc._flush_queue.empty():
        await nc._flush_pending()


def for_connection(nc: Client) -> Requester:
    """The connection's own requester (inbox under its inbox prefix), shared by every user of
    ``nc`` (each event store on it, the SDK's hello): one reply subscription per connection.
    Kept on the connection object itself, so that it lives and goes with it (a weak-keyed
    registry would keep every connection alive: the requester refers to its connection)."""
    requester = getattr(nc, _ATTRIBUTE, None)
    if not isinstance(requester, Requester):
        requester = Requester(nc)
        setattr(nc, _ATTRIBUTE, requester)
    return requester
