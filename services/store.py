"""The event store: every table's log in one JetStream stream, one subject family per table.

Appends are optimistic: each carries the stream sequence of the table's last event
(``Nats-Expected-Last-Subject-Sequence`` over the table's subject family), so of two writers
racing on one table exactly one wins and the other gets ``Conflict``, re-reads and re-decides.
Each append also carries the deterministic id ``<table>:<index>`` (``Nats-Msg-Id``), so a
retried publish is never stored twice. Appends are requests through the connection's one reply
inbox (``services.requester``: no per-call set-up as in ``nc.request``), their headers encoded
once per append.

nats-py's ``js.publish`` does not retry, and after a time-out the outcome is unknown (the
publish may still land after a reconnect). ``append`` therefore retries, and on a "wrong last
sequence" answer re-reads the table's tail: if the event at our index is byte-for-byte ours,
our earlier attempt landed and the append succeeded.

The broker is a distributed system: while a stream elects a leader, while a server restarts,
while a connection reconnects, requests fail with "no responders", 503 or time-outs. Appends
and reads wait these out with backoff for up to ``patience`` seconds (longer than an
election), keeping idempotence: the same message id and the same expected sequence on every
attempt.

Every table id is checked before it becomes part of a subject (``protocol.subjects``): a
``*`` or ``>`` would read, or write beside, every table's log.

Reading a table uses batched direct gets (no consumer is created per read: hundreds of
throw-away consumers exhaust the server).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Final, NamedTuple, TypeVar

import msgspec
import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import APIError

from protocol.events import MSGPACK, Codec, Event, UnknownEvent
from protocol.registry import event_types
from protocol.subjects import (
    LOG_ALL,
    STREAM,
    event_name,
    legacy_log_kind,
    log_kind,
    log_subject,
    parse_log_subject,
    table_log,
)

from . import logs
from .requester import Requester, encode_headers, for_connection

WRONG_LAST_SEQUENCE: Final = frozenset({10071, 10164})
BATCH_DUPLICATE_ID: Final = 10201
"""An atomic batch holding a message id already stored: a retry of a batch that landed."""
DUPLICATE_IN_PROCESS: Final = 10158
"""A clustered stream still working on an earlier attempt with this message id: ask again."""
DEFAULT_MAX_BYTES: Final = 1 << 30


T = TypeVar("T")


class _ApiError(msgspec.Struct):
    code: int = 0
    err_code: int = 0
    description: str = ""


class _PubAck(msgspec.Struct):
    """JetStream's answer to a publish, decoded by msgspec (nats-py decodes it with the json
    module into a dict and then a dataclass: twice the work on every append)."""

    seq: int = 0
    duplicate: bool = False
    error: _ApiError | None = None


_decode_ack = msgspec.json.Decoder(_PubAck).decode


class Conflict(Exception):
    """Another writer appended to the table first; re-read and decide again."""


class StoreFull(Exception):
    """The stream reached its size bound and refuses new events (discard=new)."""


class Unavailable(TimeoutError):
    """The store did not answer within ``patience`` (no leader, no server, no connection)."""


TRANSIENT: Final = (
    nats.errors.TimeoutError,
    asyncio.TimeoutError,
    nats.errors.NoRespondersError,
    nats.js.errors.NoStreamResponseError,
    nats.js.errors.ServiceUnavailableError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.OutboundBufferLimitError,
    nats.errors.StaleConnectionError,
)
"""What a leader election, a restarting server or a reconnecting client looks like."""


class Backoff:
    """Pauses of 50 ms doubling to 1 s, until ``patience`` seconds have passed."""

    def __init__(self, patience: float) -> None:
        self.end = time.monotonic() + patience
        self.pause = 0.05
        self.attempts = 0

    async def wait(self) -> bool:
        """Sleep before the next attempt; False if the patience is used up."""
        if time.monotonic() + self.pause > self.end:
            return False
        await asyncio.sleep(self.pause)
        self.pause = min(1.0, self.pause * 2)
        self.attempts += 1
        return True


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is the broker being briefly away (worth the same request again)."""
    return isinstance(exc, TRANSIENT) or isinstance(exc, APIError) and exc.err_code == DUPLICATE_IN_PROCESS


async def patiently(
    call: Callable[[], Awaitable[T]], patience: float, what: str, on_retry: Callable[[], None] | None = None
) -> T:
    """``call()`` until it succeeds, retrying transient failures with backoff for up to
    ``patience`` seconds; then ``Unavailable``. The one retry loop of the project: appends,
    reads and stream checks differ only in ``call`` (which must be safe to repeat)."""
    backoff = Backoff(patience)
    while True:
        try:
            return await call()
        except Exception as exc:
            if not is_transient(exc):
                raise
            error = exc
        if not await backoff.wait():
            raise Unavailable(f"{what} failed for {patience:.0f} s: {error!r}") from error
        if on_retry is not None:
            on_retry()


class Stored(NamedTuple):
    """One event as stored: stream sequence, position in the table's log, event, and when it
    was stored (kept as the server's text and parsed only when asked: most reads never need it)."""

    subject: str
    seq: int
    index: int  # type: ignore[assignment]  # a field, shadowing tuple.index on purpose
    stamp: str
    event: Event | UnknownEvent | None
    """None for a message in the table's subjects that is not one of our events (index -1)."""
    data: bytes

    @property
    def time(self) -> float:
        """Unix time at which the server stored the event."""
        return parse_time(self.stamp)


DEFAULT_REPLICAS: Final = 3
"""Replicas by default on a cluster of three or more: a majority of three copies survives the
loss of any one node; five would cost every append two more copies (``SKAT_REPLICAS=5``)."""


def replicas_setting() -> int | None:
    """The operator's choice of replicas for every stream (``SKAT_REPLICAS``, 1-5), or None when
    it is not set and the cluster decides (``cluster_replicas``)."""
    raw = os.environ.get("SKAT_REPLICAS")
    if raw is None:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= 5:
        raise ValueError(f"SKAT_REPLICAS must be a number from 1 to 5, not {raw!r}")
    return int(raw)


def cluster_replicas(nc: Client) -> int:
    """How many copies of a stream or bucket to create on the servers ``nc`` is connected to:
    ``SKAT_REPLICAS`` if set, else min(3, the cluster's size), 1 on a single server. Every
    creator of a stream or bucket asks this one function, so that no stream of the project is
    left with fewer copies than the others on the same cluster (a tournament's results were,
    when only ``skat up`` had ``SKAT_REPLICAS`` in its environment).

    The size is what the server told this client when it connected (its INFO, refreshed on
    every reconnect): ``cluster`` names the cluster a server belongs to, and ``connect_urls``
    lists the client URLs of every server of that cluster now routed to it, itself included,
    however few of them the client was given. A node that is down right now does not count:
    a stream with a replica on it could not be placed anyway, and ``ensure_stream`` raises the
    replicas when a later start sees the whole cluster. A cluster that does not advertise its
    servers (``no_advertise``) counts the servers the client was given."""
    chosen = replicas_setting()
    if chosen is not None:
        return chosen
    info = nc._server_info  # nats-py keeps the connect-time INFO only here
    if not info.get("cluster"):
        return 1
    servers = len(set(info.get("connect_urls") or ()))
    if not servers:  # no_advertise
        servers = len({(url.hostname, url.port) for url in nc.servers})
    return max(1, min(DEFAULT_REPLICAS, servers))


def stream_config(max_bytes: int = DEFAULT_MAX_BYTES, replicas: int | None = None) -> StreamConfig:
    """The ``SKAT`` stream's configuration; ``replicas`` from ``cluster_replicas`` (None:
    ``SKAT_REPLICAS``, else 1, for a stream made without a connection at hand)."""
    replicas = (replicas_setting() or 1) if replicas is None else replicas
    return StreamConfig(
        name=STREAM,
        subjects=[LOG_ALL],
        storage=StorageType.FILE,
        retention=RetentionPolicy.LIMITS,
        discard=DiscardPolicy.NEW,
        max_bytes=max_bytes,
        duplicate_window=120.0,
        allow_direct=True,
        allow_atomic=True,
        num_replicas=replicas,
    )


def msg_id(table: str, index: int) -> str:
    return f"{table}:{index}"


def index_of(msg_id_value: str, table: str) -> int:
    """The log position in ``table``'s message id ``<table>:<index>``; -1 for anything else
    (an id naming another table is never taken as a position of this one)."""
    owner, _, tail = msg_id_value.rpartition(":")
    return int(tail) if owner == table and tail.isdigit() else -1


class EventStore:
    """Append to and read from table logs in the ``SKAT`` stream."""

    def __init__(self, nc: Client, codec: Codec = MSGPACK, timeout: float = 2.0, patience: float = 30.0) -> None:
        self.nc = nc
        self.js: JetStreamContext = nc.jetstream(timeout=timeout)
        self.codec = codec
        self.timeout = timeout
        """Seconds to wait for one answer (an election answers nothing for several)."""
        self.patience = patience
        """Seconds to keep retrying what fails for a transient reason."""
        self.retried = 0
        """Attempts repeated after a transient error, since start (for the logs and tests)."""
        self._names = {t: event_name(tag) for tag, t in event_types().items()}
        self._reads: dict[str, _Read] = {}
        self.atomic = os.environ.get("SKAT_ATOMIC_BATCHES", "0") == "1"
        """Whether several events are appended as one atomic batch (``append_batch``). Off by
        default: measured with nats-server 2.15.1 (``python -m bench pipeline``), batches cost
        the server about three times the CPU per event and halved the stack's deals/s, for one
        acknowledgement saved per trick. ``SKAT_ATOMIC_BATCHES=1`` switches them on."""
        self._reads_sub: object | None = None
        self._reads_prefix = ""
        self._read_no = 0
        self.requests: Requester = for_connection(nc)
        """Acknowledged publishes go through the connection's one reply inbox
        (``services.requester``): no per-append set-up as in ``nc.request``."""

    async def ensure_stream(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        """Create the stream if it is missing, with the replicas the cluster warrants
        (idempotent; an existing stream keeps its limits, and its replicas are only ever raised,
        see ``ensure_stream`` and docs/operations.md). A stream from before atomic batches is
        allowed them (nats-server 2.12+); where the server cannot, events are appended one at
        a time."""
        config = await ensure_stream(self.js, stream_config(max_bytes, cluster_replicas(self.nc)), self.patience)
        if self.atomic and not config.allow_atomic:
            try:
                config.allow_atomic = True
                await self.js.update_stream(config)
            except Exception as exc:
                self.atomic = False
                logs.get(stream=STREAM).warning("atomic_batches_unavailable", error=repr(exc))

    def subject(self, table: str, event: Event) -> str:
        return log_subject(table, self._names[type(event)])

    async def append(self, table: str, index: int, event: Event, expected_seq: int) -> int:
        """Append ``event`` as entry ``index`` of ``table`` after stream sequence ``expected_seq``
        (0 for an empty table). Returns the new sequence; raises ``Conflict`` or ``StoreFull``."""
        data = self.codec.encode(event)
        subject = self.subject(table, event)
        my_id = msg_id(table, index)
        # Encoded once: every attempt sends the same id and the same expectation.
        headers = encode_headers(
            {
                "Nats-Msg-Id": my_id,
                "Nats-Expected-Last-Subject-Sequence": str(expected_seq),
                "Nats-Expected-Last-Subject-Sequence-Subject": table_log(table),
            }
        )

        async def attempt() -> int:
            # Unknown outcome after a time-out: it may still land. Retrying is safe (same id,
            # same expectation), and a landed attempt is recognised below.
            try:
                ack = await self._publish(subject, data, headers)
            except APIError as exc:
                if exc.err_code in WRONG_LAST_SEQUENCE:
                    landed = await self._landed(table, expected_seq, [my_id], [data])
                    if landed is not None:
                        return landed[0]
                    raise Conflict(f"{table}: entry {index} was written by someone else") from exc
                if (full := _full(exc)) is not None:
                    raise full from exc
                raise
            if ack.duplicate and not await self._same_at(ack.seq, data):
                # A clustered stream checks the id before the expected sequence: a writer
                # that lost the race at this index hears "duplicate" with the winner's seq.
                raise Conflict(f"{table}: entry {index} was written by someone else")
            return int(ack.seq)

        return await patiently(attempt, self.patience, f"append to {table}", self._count_retry)

    async def _publish(self, subject: str, data: bytes, headers: bytes | dict[str, str]) -> _PubAck:
        """An acknowledged publish, raising what ``js.publish`` raises (``APIError`` with the
        server's codes, ``NoStreamResponseError`` when no stream listens, ``nats.errors.TimeoutError``
        without an answer); ``headers`` as a dict or already encoded (``encode_headers``)."""
        try:
            if isinstance(headers, bytes):
                msg = await self.requests.request(subject, data, self.timeout, header=headers)
            else:
                msg = await self.requests.request(subject, data, self.timeout, headers=headers)
        except nats.errors.NoRespondersError:
            raise nats.js.errors.NoStreamResponseError from None
        ack = _decode_ack(msg.data)
        if ack.error is not None:
            APIError.from_error(msgspec.structs.asdict(ack.error))  # raises the matching subclass
        return ack

    async def append_batch(self, table: str, index: int, events: list[Event], expected_seq: int) -> list[int]:
        """Append ``events`` as entries ``index``, ``index + 1``, ... of ``table`` after stream
        sequence ``expected_seq``, all or none: one JetStream atomic batch (nats-server 2.12+),
        so a card and the trick it completes cost one round trip and one acknowledgement. The
        expected-sequence check guards the batch (on its first message) and every message keeps
        its deterministic id. Returns the new sequences; raises ``Conflict`` or ``StoreFull``."""
        if len(events) == 1 or not self.atomic:
            seqs = []
            for i, event in enumerate(events):
                seqs.append(await self.append(table, index + i, event, expected_seq))
                expected_seq = seqs[-1]
            return seqs
        datas = [self.codec.encode(event) for event in events]
        subjects = [self.subject(table, event) for event in events]
        ids = [msg_id(table, index + i) for i in range(len(events))]

        async def attempt() -> list[int]:
            batch = f"{table}-{index}-{secrets.token_hex(4)}"  # a new batch per attempt
            try:
                for i, (subject, data) in enumerate(zip(subjects, datas), 1):
                    headers = {"Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(i), "Nats-Msg-Id": ids[i - 1]}
                    if i == 1:
                        headers["Nats-Expected-Last-Subject-Sequence"] = str(expected_seq)
                        headers["Nats-Expected-Last-Subject-Sequence-Subject"] = table_log(table)
                    if i < len(datas):
                        await self.nc.publish(subject, data, headers=headers)
                    else:
                        headers["Nats-Batch-Commit"] = "1"
                        ack = await self._publish(subject, data, headers)
            except APIError as exc:
                if exc.err_code in WRONG_LAST_SEQUENCE or exc.err_code == BATCH_DUPLICATE_ID:
                    # Someone else wrote at our index, or an earlier attempt of ours landed.
                    landed = await self._landed(table, expected_seq, ids, datas)
                    if landed is not None:
                        return landed
                    raise Conflict(f"{table}: entry {index} was written by someone else") from exc
                if (full := _full(exc)) is not None:
                    raise full from exc
                raise
            return list(range(ack.seq - len(datas) + 1, ack.seq + 1))

        return await patiently(attempt, self.patience, f"append to {table}", self._count_retry)

    def _count_retry(self) -> None:
        self.retried += 1

    async def _same_at(self, seq: int, data: bytes) -> bool:
        part, _ = await self._direct_get({"seq": seq})  # single get by sequence
        return bool(part) and part[0].data == data

    async def _landed(self, table: str, expected_seq: int, ids: list[str], datas: list[bytes]) -> list[int] | None:
        """The sequences of our events if an earlier attempt of this append (a batch: all or
        none) was stored. The server just said something follows ``expected_seq``; a replica
        answering the read may not have it yet, so a short read is asked again before it counts."""
        want = list(zip(ids, datas))
        backoff = Backoff(1.0)
        while True:
            after = await self.read(table, after_seq=expected_seq, limit=len(want))
            got = [(msg_id(table, stored.index), stored.data) for stored in after]
            if got != want[: len(got)]:
                return None  # someone else's events
            if len(got) == len(want):
                return [stored.seq for stored in after]
            if not await backoff.wait():
                return None

    async def read(
        self, table: str, after_seq: int = 0, limit: int | None = None, kind: str | None = None
    ) -> list[Stored]:
        """The table's events with stream sequence > ``after_seq``, in order; only those of one
        ``kind`` (e.g. ``deal_scored``: a table's scores without its thousands of cards) if given."""
        if kind is not None:  # both forms: a log may hold events from before partitions existed
            subject = log_subject(table, kind)  # checks the table id before any read
            current = await self._read_subject(subject, after_seq, limit)
            legacy = await self._read_subject(f"skat.log.{table}.{kind}", after_seq, limit)
            merged = sorted(legacy + current, key=lambda stored: stored.seq)
            return merged if limit is None else merged[:limit]
        return await self._read_subject(table_log(table), after_seq, limit)

    async def _read_subject(self, subject: str, after_seq: int, limit: int | None) -> list[Stored]:
        out: list[Stored] = []
        start = after_seq + 1
        while True:
            batch = 1000 if limit is None else min(1000, limit - len(out))
            part, pending = await self._direct_get({"seq": start, "next_by_subj": subject, "batch": batch})
            out.extend(part)
            if not part or pending == 0 or (limit is not None and len(out) >= limit):
                return out
            start = part[-1].seq + 1

    async def open_tables(self) -> list[str]:
        """Tables that were opened and not closed, from the stream's subject index (one request,
        however many tables: per-subject batched gets are capped at 1,024 results)."""
        opened: set[str] = set()
        closed: set[str] = set()
        for pattern in (log_kind, legacy_log_kind):  # logs from before partitions, too
            opened.update(_tables_of(await self._subjects(pattern("table_opened"))))
            closed.update(_tables_of(await self._subjects(pattern("table_closed"))))
        return sorted(opened - closed)

    async def _subjects(self, pattern: str) -> list[str]:
        info = await patiently(
            lambda: self.js.stream_info(STREAM, subjects_filter=pattern), self.patience, "the subject index"
        )
        return sorted((info.state.subjects or {}).keys())

    async def last(self, table: str, kind: str) -> Stored | None:
        """The table's latest event of ``kind`` (one direct get), or None (also for a log
        written before partitions, which this does not look into)."""
        part, _ = await self._direct_get({"last_by_subj": log_subject(table, kind)})
        return part[0] if part else None

    async def has_event(self, table: str, kind: str) -> bool:
        """Whether the table's log holds an event of ``kind`` (a single direct get)."""
        for subject in (log_subject(table, kind), f"skat.log.{table}.{kind}"):  # and the legacy form
            part, _ = await self._direct_get({"last_by_subj": subject})
            if part:
                return True
        return False

    async def _direct_get(self, request: dict[str, object]) -> tuple[list[Stored], int]:
        """One direct get, retried while the stream is briefly unavailable."""
        return await patiently(
            lambda: self._direct_get_once(request), self.patience, "reading the store", self._count_retry
        )

    async def _direct_get_once(self, request: dict[str, object]) -> tuple[list[Stored], int]:
        """One direct get. Answers come to one long-lived wildcard inbox (``<inbox>.<n>``):
        a subscription per read would cost a SUB and an UNSUB at the server and a new
        subscription task here, for every read."""
        if self._reads_sub is None:
            self._reads_prefix = self.nc.new_inbox()
            self._reads_sub = await self.nc.subscribe(self._reads_prefix + ".*", cb=self._on_read_msg)
        self._read_no += 1
        reply = f"{self._reads_prefix}.{self._read_no}"
        read = _Read(batched="batch" in request, done=asyncio.get_running_loop().create_future())
        self._reads[reply] = read
        try:
            await self.nc.publish(f"$JS.API.DIRECT.GET.{STREAM}", _encode_json(request), reply=reply)
            status = await asyncio.wait_for(read.done, self.timeout)
        finally:
            del self._reads[reply]
        code = status.get("Status")
        if code == "204":
            return read.out, int(status.get("Nats-Num-Pending", 0) or 0)
        if code == "404":
            return read.out, 0
        if code in ("503", "408"):  # no responders / no leader yet / timed out on the server
            raise nats.errors.NoRespondersError
        raise RuntimeError(f"direct get failed: {code} {status.get('Description', '')}")

    async def _on_read_msg(self, msg: Msg) -> None:
        read = self._reads.get(msg.subject)
        if read is None or read.done.done():
            return  # a late answer to a read that gave up
        h = msg.headers or {}
        if "Status" in h and not msg.data:
            read.done.set_result(h)
            return
        subject = h.get("Nats-Subject", "")
        try:
            event: Event | UnknownEvent | None = self.codec.decode(msg.data)
            index = index_of(h.get("Nats-Msg-Id", ""), subject.split(".")[2])
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, IndexError):
            event, index = None, -1  # not ours: reported by the reader, never applied
        read.out.append(
            Stored(
                subject=subject,
                seq=int(h.get("Nats-Sequence", 0)),
                index=index,
                stamp=h.get("Nats-Time-Stamp", ""),
                event=event,
                data=msg.data,
            )
        )
        if not read.batched:  # a single get: one message, no end-of-batch
            read.done.set_result({"Status": "204"})


class _Read:
    """One direct get in flight: what has come back, and the end-of-batch status."""

    __slots__ = ("batched", "done", "out")

    def __init__(self, batched: bool, done: asyncio.Future[dict[str, str]]) -> None:
        self.batched = batched
        self.done = done
        self.out: list[Stored] = []


_encode_json = msgspec.json.Encoder().encode


async def ensure_stream(
    js: JetStreamContext,
    config: StreamConfig,
    patience: float = 30.0,
    create: Callable[[], Awaitable[object]] | None = None,
) -> StreamConfig:
    """Create ``config``'s stream if it is missing, waiting out a cluster that is still
    electing its leaders; ``create`` makes it instead of ``js.add_stream(config)`` (a key-value
    bucket's stream, which nats-py's ``create_key_value`` configures). Returns the stream's
    configuration as the server has it.

    An existing stream is kept as it is (an operator may have changed its limits), except that
    fewer replicas than ``config`` asks for are raised to that many: a stream created before
    its cluster grew, or by a version that gave it one copy where the rest had three, would
    otherwise lose its data with a single node for ever. The server copies the stream to the
    new peers while it stays available. A raise the cluster cannot place now (a node is down)
    is a warning, tried again at the next start. Replicas are never lowered here: that drops
    copies, an operator's decision (``nats stream edit --replicas``)."""

    async def attempt() -> StreamConfig:
        try:
            info = await js.stream_info(config.name or "")
        except nats.js.errors.NotFoundError:
            try:
                if create is None:
                    return (await js.add_stream(config)).config
                await create()
            except APIError as exc:  # another process created it in between
                if exc.err_code != 10058:
                    raise
            try:
                info = await js.stream_info(config.name or "")
            except nats.js.errors.NotFoundError as exc:
                # Created, but the server answering does not see it yet (a cluster's replicas
                # lag behind its meta leader): a moment later it does, so ask again.
                raise TimeoutError(f"stream {config.name} created, not visible yet") from exc
        return await _raise_replicas(js, info.config, config.num_replicas or 1)

    return await patiently(attempt, patience, f"checking stream {config.name}")


async def _raise_replicas(js: JetStreamContext, existing: StreamConfig, wanted: int) -> StreamConfig:
    """``existing`` with its replicas raised to ``wanted`` if it has fewer (see ``ensure_stream``)."""
    have = existing.num_replicas or 1
    log = logs.get(stream=existing.name)
    if have > wanted:
        log.info("stream_replicas_kept", existing=have, wanted=wanted)
    if have >= wanted:
        return existing
    try:
        updated = (await js.update_stream(dataclasses.replace(existing, num_replicas=wanted))).config
    except APIError as exc:
        if is_transient(exc):
            raise
        log.warning("stream_replicas_not_raised", existing=have, wanted=wanted, error=repr(exc))
        return existing
    log.info("stream_replicas_raised", was=have, now=wanted)
    return updated


def _full(exc: APIError) -> StoreFull | None:
    """``StoreFull`` if the server refused because the stream reached its size bound."""
    if exc.err_code == 10077 or exc.code == 503 and "maximum" in (exc.description or ""):
        return StoreFull(f"the event store is full: {exc.description}")
    return None


def _tables_of(subjects: list[str]) -> list[str]:
    """The table ids of log subjects, leaving out any that is not a valid id (a wildcard
    "table" stored by a version that did not check ids must never be read as a table)."""
    out = []
    for subject in subjects:
        with contextlib.suppress(ValueError):
            out.append(parse_log_subject(subject)[0])
    return out


def parse_time(stamp: str) -> float:
    """Unix time from the server's RFC 3339 stamp (``2026-11-30T12:41:23.62129412Z``)."""
    if not stamp:
        return 0.0
    date, _, rest = stamp.partition(".")
    frac = rest.rstrip("Z")
    whole = datetime.fromisoformat(date.rstrip("Z") + "+00:00").timestamp()
    return whole + (int(frac) / 10 ** len(frac) if frac.isdigit() else 0.0)


def ack_metadata(reply: str) -> tuple[int, float]:
    """(stream sequence, unix time) of a consumer delivery, read from its ``$JS.ACK`` reply
    subject (both the old 9-token and the newer 11/12-token form); cheaper than ``msg.metadata``."""
    tokens = reply.split(".")
    if len(tokens) == 9:
        return int(tokens[5]), int(tokens[7]) / 1e9
    return int(tokens[7]), int(tokens[9]) / 1e9
