"""The loop every service shares: consume, fold, decide, append. Services differ only in what
they react to and what they own (see ``dealer.py``, ``bidding.py``, ``play.py``, ...).

A service keeps a cache of table states, each rebuilt from the log on first use and kept
current from its consumer and from the tail of the table's log. Nothing in the cache is
needed after a crash: a new instance rebuilds it. Per table, work is serialised by a lock;
different tables proceed concurrently.

- Ownership: tables are spread over partitions, and each instance of a service owns some of
  them (``services.ownership``): only the owner consumes a table's events, answers its
  players (another instance passes a command on to the owner), arms its deadlines. When an
  instance dies its partitions move to the others, which first catch up every open table of
  them from the log. The expected-sequence check of every append stays the safety net.
- Triggers: one durable pull consumer per service and partition, pulled by the partition's
  owner, filtered to the event kinds *other* services write that this one must react to (a
  service does not need its own events delivered back: it applied them when it wrote them).
  A message is acknowledged only after the service has appended everything it owes for that
  table, so a crash in between redelivers it.
- Owed events: ``protocol.table.due`` names the next derived event; the service appends it when
  ``OWNER`` says it is its own.
- Commands: player requests on ``skat.cmd.<player>.<table>`` (queue group per service); the seat
  comes from the subject, never from the payload.
- Deadlines: the service that owns the phase of the seat to move arms a timer at the time the
  last event was stored plus ``Rules.turn_seconds``; when it fires it appends the time-out and
  the default action. The deadline is rebuilt from the log after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import msgspec
import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from protocol.events import DealDealt, DealScored, Event, UnknownEvent
from protocol.lifecycle import LogError
from protocol.registry import command_head, games_knowing, is_opening, new_state, role_in, state_game
from protocol.rejection import Rejection, stale
from protocol.skat.commands import Command
from protocol.skat.game import GAME as SKAT
from protocol.subjects import (
    ADMIN_OPEN,
    PARTITIONS,
    STREAM,
    health_subject,
    is_inbox,
    is_token,
    log_kind,
    parse_command_subject,
    parse_log_subject,
    partition_log,
    partition_of,
)
from protocol.wire import OpenTable, Reply, decode, encode, sniff

from . import logs, natsfast
from .connection import each_reconnect
from .consumer import PullConsumer
from .doors import Doors
from .ownership import Ownership, forward_subject, member_id
from .prompts import FORMATS_ALL, Prompter
from .ratelimit import PlayerLimits
from .store import (
    Backoff,
    Conflict,
    EventStore,
    StoreFull,
    ack_metadata,
    index_of,
    parse_time,
    patiently,
)

ACK_WAIT = 5.0
FORWARDED_SUBJECT = "Skat-Subject"
"""Header naming the subject a command came in on, when one instance passes it to the owner."""
EVICT_AFTER = 60.0
"""Seconds a closed table stays cached: long enough for late triggers and commands."""
MAX_COMMAND_BYTES = 4096
"""The largest command we read: the biggest real one (a discard) is well under 200 bytes."""
STOP_GRACE = 5.0
"""Seconds a stopping service waits for the work under way on its tables before handing over."""
RECHECK_AFTER = 3.0
"""Seconds after taking partitions over when their open tables are read a second time: the
previous owner may have been appending when they were first read (a move, and the trick it
completes still to come)."""
SWEEP_EVERY = 30.0
"""Seconds between sweeps of the owned tables that have been quiet for ``QUIET_FOR``: the
safety net for a trigger that never came (a lost delivery, a writer that died halfway)."""
QUIET_FOR = 10.0
REPROMPT_AFTER = 3.0
"""Seconds after which the service whose phase it is sends a prompt again that another service
sent (the first bid of a deal, the first card), if the seat has not answered: that writer may
have died between its append and its prompt. A repeat is harmless (players drop it by index)."""
ABSENT_FOR = 1.0
"""Seconds a table id that has no log is remembered as absent: commands to made-up tables
then cost no store read each (a flood of them would otherwise turn into a flood of reads)."""
MAX_ABSENT = 10_000
MAX_AHEAD = 64
"""How far ahead of the cache a command's ``at`` may be before it is not worth a read."""


@dataclass
class Table:
    """A table in a service's cache."""

    id: str
    state: Any = field(default_factory=new_state)
    """The table's state as its game folds it (Skat's empty state until the first event names the game)."""
    last_seq: int = 0
    """Stream sequence of the last applied event."""
    stored_at: float | str = 0.0
    """When the last applied event was stored: unix time, or the server's stamp not yet parsed."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    timer: asyncio.TimerHandle | None = None
    broken: str = ""
    """Why the log cannot be folded (the table is left alone), or empty."""
    seated: bool = False
    """Whether its players were given doors (``services.doors``)."""
    users: int = 0
    """Tasks holding or waiting for the lock (``lock.locked()`` is False while one waits)."""
    found_nothing: bool = False
    """A read found no such table (commands waiting behind it need not read again)."""
    prompted: int = -1
    """The log position the seat to move was last prompted at (by this instance)."""
    written: int = -1
    """The position of the last event this instance appended itself."""
    last_kind: type[Event] | type[UnknownEvent] | None = None
    """The type of the last applied event."""
    reprompt: asyncio.TimerHandle | None = None
    """``REPROMPT_AFTER``: a prompt another service sent is sent again if still unanswered."""

    def cancel_timers(self) -> None:
        """The deadline and the repeat of a prompt: neither is this instance's to keep."""
        for handle in (self.timer, self.reprompt):
            if handle is not None:
                handle.cancel()
        self.timer = self.reprompt = None

    def deadline(self, heard_since: float = 0.0) -> float:
        """When the seat to move must have answered (Unix time): the turn time (none for a
        withdrawn seat) from the last event's stored time, or from ``heard_since`` if that is
        later: when the service enforcing it could first hear the seat (it took the table's
        partition over, or its connection to the broker came back). So time the services were
        away is never charged to a player. The prompt says it, and the deadline timer enforces it."""
        state = self.state
        return max(self.last_time(), heard_since) + float(state.turn_seconds(state.to_move))

    def last_time(self) -> float:
        """Unix time at which the last applied event was stored."""
        if isinstance(self.stored_at, str):
            self.stored_at = parse_time(self.stored_at)
        return self.stored_at


class Service:
    """Base class: subclasses set the class attributes and, rarely, override a hook."""

    name: ClassVar[str] = "service"
    triggers: ClassVar[tuple[str, ...]] = ()
    """Event kinds (``card_played`` ...) the consumer delivers; ``("*",)`` for all."""
    answers_malformed: ClassVar[bool] = False
    """Exactly one service answers commands that cannot be decoded."""
    enforces_turns: ClassVar[bool] = False
    """Whether this service enforces the deadline of a seat whose turn is in its role (the
    game's ``turn_role``): bidding and play."""
    door: ClassVar[str] = "skat.cmd.{player}.>"
    """The subject through which a player reaches this service (if it answers players): all
    players through its wildcard, or each seated one through its own door while someone is
    flooding (``services.doors``). ``>``, not ``*``: a table id with a dot in it makes more
    tokens, and that command must reach a service too, to be refused as ``bad_subject``."""
    skips_deals: ClassVar[bool] = False
    """The service takes no part in a deal's play, so it may jump over a deal's cards to its
    score instead of reading and folding them (``TableState.skip_to_scored``)."""
    sends_views: ClassVar[bool] = False
    """Sends players views that are not turn prompts (``services.prompts``): the views service."""
    prompts: ClassVar[bool] = False
    """Sends the seat to move its turn prompt right after appending the event that made it
    that seat's turn (``_prompt``): the dealer (a new deal), bidding and play."""
    acknowledges: ClassVar[bool] = True
    """Writers acknowledge each trigger once handled, so a crash redelivers it. A service that
    writes nothing may skip acks (one message less per event) if it recovers on start."""

    def __init__(self, nc: Client, instance: str = "") -> None:
        self.nc = nc
        self.store = EventStore(nc)
        self.tables: dict[str, Table] = {}
        self.instance = instance
        self.log = logs.get(service=self.name, instance=instance or None)
        self.conflicts = 0
        """Appends beaten by another writer since start (each costs a re-read and a second try):
        near zero when each table has one active owner (``make bench --instances``)."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._subs: list[Any] = []
        self._queues: dict[str, list[Msg]] = {}
        self._draining: set[str] = set()
        self._consumers: dict[int, PullConsumer] = {}
        self.member = member_id(instance or str(os.getpid()))
        self.ownership = Ownership(self.nc, self.name, self.member, self._claim, self._release, self.log)
        self._to_recover: set[int] = set()
        self._recovery: asyncio.Task[Any] | None = None
        self.forwarded = 0
        self._recovered_reconnects = nc.stats.get("reconnects", 0)
        """The connection's reconnect count as of the last recovery: a deadline does not fire
        while the count is ahead (``_expire``), i.e. before ``heard_since`` knows of the outage."""
        self.heard_since: dict[int, float] = {}
        """Per owned partition, since when this instance can hear its players: when it claimed
        the partition or when its connection last came back (``Table.deadline``)."""
        """Commands passed on to the instance that owns their table."""
        self.limits = PlayerLimits()
        self.reads = PlayerLimits(rate=float(os.environ.get("SKAT_PLAYER_READS", "20")))
        """A second, smaller budget per player: commands that cost a read of the store (a table
        not in the cache, a refusal to be checked against the log's tail). An honest bot needs
        almost none (it answers prompts with legal moves); a flood of refused commands would
        otherwise turn into a flood of reads."""
        self._absent: dict[str, float] = {}
        self._warned: dict[str, float] = {}
        self.doors: Doors | None = None
        self.ready = asyncio.Event()
        self.stopping = False
        """Set by ``stop``: the partitions it gives up then are not news (service_stopped is)."""
        self.prompter = Prompter(nc, self.store, self.log)

    # --- lifecycle ---------------------------------------------------------------------

    def listens_to_players(self) -> bool:
        """Whether some game's commands are this role's to answer (or it answers the unreadable)."""
        from protocol.registry import roles_answering

        return self.name in roles_answering() or self.answers_malformed

    async def start(self) -> None:
        # A service parses the headers of every event it reads: swap in the faster parser for
        # this process (done here, when a service starts, not as a side effect of an import).
        natsfast.install()
        await self.store.ensure_stream()
        if self.sends_views or self.prompts:
            # Before anything is consumed: the first prompts must go out in the right encoding.
            await self.prompter.open()
            self._subs.append(await self.nc.subscribe(FORMATS_ALL, cb=self.prompter.on_format_msg))
        if self.listens_to_players():
            self.doors = Doors(
                self.nc, self.door, self.door.format(player="*"), self.name, self.on_player_msg, log=self.log
            )
            self._subs.append(
                await self.nc.subscribe(forward_subject(self.name, self.member), cb=self._on_forwarded_msg)
            )
        if self.triggers:
            await self._ensure_consumers()
        await self.on_start()
        self._subs.append(await self.nc.subscribe(health_subject(self.name), cb=self._on_health))
        await self.ownership.start()  # claims this instance's partitions (and recovers them)
        if self.doors is not None:
            # Only now that the owners are known: a command for another instance's table is
            # passed on to it, never decided here behind the owner's back.
            await self.doors.open()
            self._subs.append(await self.nc.subscribe(ADMIN_OPEN, cb=self._on_table_opening))
        self._spawn(self._ready_after_recovery())
        self._spawn(self._sweep())
        self._spawn(each_reconnect(self.nc, self._after_reconnect))
        self.log.info("service_started", member=self.member, partitions=sorted(self.ownership.owned))

    async def _ready_after_recovery(self) -> None:
        """Ready (answering health checks) once the first recovery of every claimed partition
        is done: ``skat up`` and deployments wait for it."""
        started = time.monotonic()
        if self._recovery is not None:
            await asyncio.gather(self._recovery, return_exceptions=True)
        self.ready.set()
        self.log.info("service_ready", tables=len(self.tables), seconds=round(time.monotonic() - started, 3))

    async def _on_health(self, msg: Msg) -> None:
        """Answer ``skat.health.<service>`` once the service is ready: subscribed, consuming,
        and done with its recovery scan (so that ``skat up`` and deployments wait for it)."""
        if self.ready.is_set() and is_inbox(msg.reply):
            health = {
                "service": self.name,
                "instance": self.instance,
                "tables": len(self.tables),
                "conflicts": self.conflicts,
                "retried": self.store.retried,
                "forwarded": self.forwarded,
                "partitions": sorted(self.ownership.owned),
            }
            await self.nc.publish(msg.reply, encode(health, "json"))

    async def on_start(self) -> None:
        """Hook: extra subscriptions."""

    async def stop(self) -> None:
        # Take no new work, finish what is under way, and only then say goodbye: a move half
        # written (its trick not yet appended) when the next owner reads the log would be
        # missed by it (a service is not sent its own events back).
        self.stopping = True
        if self.doors is not None:
            await self.doors.close()
        for consumer in list(self._consumers.values()):
            await consumer.stop()
        end = time.monotonic() + STOP_GRACE
        while time.monotonic() < end and any(t.users or t.lock.locked() for t in self.tables.values()):
            await asyncio.sleep(0.02)
        await self.ownership.stop()  # the others take our partitions over at once
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        for table in self.tables.values():
            table.cancel_timers()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.log.info("service_stopped")

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.log.error("task_failed", error=repr(task.exception()))

    # --- the table cache ---------------------------------------------------------------

    def _table(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            table = self.tables[table_id] = Table(table_id)
        return table

    def _apply(self, table: Table, index: int, event: Event | UnknownEvent, seq: int, stored_at: float | str) -> bool:
        """Apply one stored event if it is the next one; False if it was already applied."""
        if table.broken or index < table.state.events:
            return False
        if index != table.state.events:
            raise LookupError(f"{table.id}: event {index} arrived before {table.state.events}")
        try:
            if index == 0 and is_opening(event):
                table.state = new_state(event)  # the first event names the game
            table.state.apply(event, clock_time(table.state, stored_at))
        except LogError as exc:
            table.broken = str(exc)
            self.log.error("log_does_not_fold", table=table.id, error=str(exc))
            return False
        self._applied(table, index, event, seq, stored_at)
        return True

    def _applied(self, table: Table, index: int, event: Event | UnknownEvent, seq: int, stored_at: float | str) -> None:
        """Bookkeeping after event ``index`` was applied to the table's state."""
        table.last_seq = seq
        table.stored_at = stored_at
        table.last_kind = type(event)
        if index == 0 and not table.seated and self.doors is not None:
            table.seated = True
            for player in table.state.players:
                self.doors.seat(player)
        self.log.debug("event", table=table.id, deal=table.state.deal_no, index=index, kind=type(event).__name__)
        self.on_applied(table, index, event)
        if table.state.closed:
            asyncio.get_running_loop().call_later(EVICT_AFTER, self._evict, table.id)

    def _evict(self, table_id: str) -> None:
        """Forget a closed table (a late command reads it back from the store if need be)."""
        table = self.tables.get(table_id)
        if table is not None and table.state.closed and (table.users or table.lock.locked()):
            asyncio.get_running_loop().call_later(EVICT_AFTER, self._evict, table_id)  # busy: later
            return
        if table is not None and table.state.closed:
            table.cancel_timers()
            self._drop(table_id)

    def _drop(self, table_id: str) -> None:
        table = self.tables.pop(table_id)
        if table.seated and self.doors is not None:
            for player in table.state.players:
                self.doors.unseat(player)
        self.forget(table_id)

    def forget(self, table_id: str) -> None:
        """Hook: drop per-table data a subclass keeps."""

    def on_applied(self, table: Table, index: int, event: Event | UnknownEvent) -> None:
        """Hook: called for every event applied to a cached table, in log order."""

    async def catch_up(self, table: Table) -> int:
        """Apply every event of the table's log that the cache has not seen yet; returns how
        many stored messages were read. Messages that are not our events (no id of this table,
        or undecodable: someone published into the log by hand) are skipped with a warning, and
        the cache moves past them so that appends carry the right expected sequence."""
        stored_list = await self.store.read(table.id, after_seq=table.last_seq)
        foreign: list[int] = []
        prefix = f"skat.log.{table.id}."
        for stored in stored_list:
            if stored.event is None or stored.index != table.state.events or not stored.subject.startswith(prefix):
                # Ours are contiguous: anything else (junk, a forged or repeated position) is
                # stepped over, so that our next append expects the right last sequence.
                foreign.append(stored.seq)
                table.last_seq = max(table.last_seq, stored.seq)
                continue
            self._apply(table, stored.index, stored.event, stored.seq, stored.stamp)
        if foreign:  # one line per read, however many: a log full of junk must not flood the logs
            self.log.warning("foreign_messages_in_log", table=table.id, count=len(foreign), first_seq=foreign[0])
        return len(stored_list)

    async def resync(self, table: Table) -> None:
        """After a conflict: read the tail; if there is nothing new, the cache is ahead of the
        log (a restored or truncated store), so rebuild the table from the log."""
        backoff = Backoff(1.0)
        while await self.catch_up(table) == 0:
            if await backoff.wait():
                continue  # a replica that lags shows nothing new yet: ask again before deciding
            self.log.warning("cache_ahead_of_log", table=table.id, last_seq=table.last_seq)
            await self.reread(table)
            return

    async def reread(self, table: Table) -> None:
        """Rebuild the table from its whole log: for a decision that must not rest on a cache
        that jumped over deals (``skip_to_scored``), or one ahead of the log."""
        table.state, table.last_seq, table.stored_at, table.broken = new_state(), 0, 0.0, ""
        table.written, table.last_kind = -1, None
        await self.catch_up(table)

    async def append(self, table: Table, events: Iterable[Event]) -> None:
        """Append events in order after the cached state, together with the derived events
        they make due that this service owns (a card and the trick it completes, the last
        trick and the deal's end), as one atomic batch; raises ``Conflict`` if beaten."""
        # The server stamps an event between this moment and its acknowledgement: a deadline
        # counted from here never promises more time than the one counted from the stamp.
        stored_at = time.time()
        planned, after = self._plan(table, list(events), stored_at)
        index = table.state.events
        try:
            seqs = await self.store.append_batch(table.id, index, planned, table.last_seq)
        except Conflict:
            self.conflicts += 1
            raise
        table.written = index + len(planned) - 1
        if after is None:
            for i, (event, seq) in enumerate(zip(planned, seqs)):
                self._apply(table, index + i, event, seq, stored_at)
            return
        table.state = after  # the copy the plan was made on: the same events applied
        for i, (event, seq) in enumerate(zip(planned, seqs)):
            self._applied(table, index + i, event, seq, stored_at)

    def _plan(self, table: Table, events: list[Event], stored_at: float = 0.0) -> tuple[list[Event], Any]:
        """``events`` and what they make due that is ours, and the state after all of them
        (None when nothing is added: the events are then applied to the cache as they are)."""
        if not self.store.atomic or table.broken:
            return events, None
        if not table.state.opened:
            return events, None  # the first event names the game: applied as it is (``_apply``)
        after = table.state.copy()
        game = state_game(after)
        try:
            for event in events:
                after.apply(event, clock_time(after, stored_at))
            planned = list(events)
            while (owed := game.due(after)) is not None and game.owner(owed) == self.name:
                after.apply(owed, clock_time(after, stored_at))
                planned.append(owed)
        except LogError:
            return events, None  # appended as they are; applying them will say what is wrong
        return (planned, after) if len(planned) > len(events) else (events, None)

    async def settle(self, table: Table, attempts: int = 8) -> None:
        """Append every derived event the table owes that this service owns."""
        for _ in range(attempts):
            if table.broken:
                return
            game = state_game(table.state)
            owed = game.due(table.state)
            if owed is None or game.owner(owed) != self.name:
                return
            try:
                await self.append(table, [owed])
            except Conflict:
                await self.resync(table)
        raise Conflict(f"{table.id}: could not append what the table owes after {attempts} attempts")

    # --- triggers ----------------------------------------------------------------------

    def trigger_kinds(self) -> tuple[str, ...]:
        """``triggers`` and what every registered game asks this role to act on."""
        from protocol.registry import triggers_of

        return tuple(dict.fromkeys((*self.triggers, *triggers_of(self.name))))

    def _durable(self, partition: int) -> str:
        return f"skat-{self.name}-p{partition}"

    async def _ensure_consumers(self) -> None:
        """Create the service's consumer of every partition (idempotent: every instance asks),
        so that whichever instance comes to own a partition finds its consumer waiting."""
        js = self.store.js

        async def ensure(partition: int) -> None:
            if self.triggers == ("*",):
                subjects = [partition_log(partition)]
            else:
                subjects = [log_kind(k, partition) for k in self.trigger_kinds()]
            config = ConsumerConfig(
                durable_name=self._durable(partition),
                # New events only: what is already stored is read by the recovery of each claimed
                # partition (a consumer added to a long-lived stream must not replay its history).
                deliver_policy=DeliverPolicy.NEW,
                ack_policy=AckPolicy.EXPLICIT if self.acknowledges else AckPolicy.NONE,
                ack_wait=ACK_WAIT,
                max_ack_pending=20_000,
                filter_subjects=subjects if len(subjects) > 1 else None,
                filter_subject=subjects[0] if len(subjects) == 1 else None,
            )
            await patiently(lambda: js.add_consumer(STREAM, config), self.store.patience, "creating a consumer")

        await asyncio.gather(*(ensure(p) for p in range(PARTITIONS)))
        with contextlib.suppress(Exception):  # the one consumer of the versions before partitions
            if await js.delete_consumer(STREAM, f"skat-{self.name}"):
                self.log.warning("legacy_consumer_deleted", consumer=f"skat-{self.name}")

    # --- ownership -----------------------------------------------------------------------

    def owns(self, table_id: str) -> bool:
        return self.ownership.owns(partition_of(table_id))

    async def _claim(self, partition: int) -> None:
        """This instance now owns ``partition``: consume its events, and catch up every open
        table of it from the log (a previous owner may have died halfway through)."""
        self.heard_since[partition] = time.time()
        if self.triggers:
            consumer = PullConsumer(self.nc, STREAM, self._durable(partition), self._on_log_msg)
            await consumer.start()
            self._consumers[partition] = consumer
        self._to_recover.add(partition)
        if self._recovery is None or self._recovery.done():
            self._recovery = self._spawn(self._recover_claimed())
        # At start every partition is claimed at once (8 lines per service, 40 before skat up says
        # "up"), and service_started lists them: a claim is news once the service is ready.
        (self.log.info if self.ready.is_set() else self.log.debug)("partition_claimed", partition=partition)

    async def _recover_claimed(self) -> None:
        await asyncio.sleep(0)  # partitions are claimed in bursts: one scan of the store for all
        while self._to_recover:
            partitions, self._to_recover = self._to_recover, set()
            await self._recover(partitions)
            asyncio.get_running_loop().call_later(RECHECK_AFTER, self._spawn_recheck, partitions)

    def _spawn_recheck(self, partitions: set[int]) -> None:
        self._spawn(self._recheck(partitions))

    async def _recheck(self, partitions: set[int]) -> None:
        """The second read of newly claimed partitions (``RECHECK_AFTER``)."""
        await self._recover(partitions & self.ownership.owned)

    async def _sweep(self) -> None:
        """Every ``SWEEP_EVERY`` seconds, refresh the owned open tables that have been quiet for
        ``QUIET_FOR`` (or are not cached at all): a table waiting for something this service
        owes must not wait for ever because the trigger for it was lost."""
        while True:
            await asyncio.sleep(SWEEP_EVERY)
            try:
                await self._recover(set(self.ownership.owned), quiet_for=QUIET_FOR)
            except Exception as exc:  # the store is away: the next sweep will do
                self._warn_once("sweep_failed", every=60.0, error=repr(exc))

    async def _release(self, partition: int) -> None:
        """Another instance owns ``partition`` now: stop consuming it and forget its tables
        (their deadlines are the new owner's; a table still busy here finishes its step, and the
        expected-sequence check keeps the two writers apart)."""
        consumer = self._consumers.pop(partition, None)
        if consumer is not None:
            await consumer.stop()
        for table_id, table in list(self.tables.items()):
            if partition_of(table_id) != partition:
                continue
            table.cancel_timers()
            if not table.users and not table.lock.locked():
                self._drop(table_id)
        (self.log.debug if self.stopping else self.log.info)("partition_released", partition=partition)

    async def _on_log_msg(self, msg: Msg) -> None:
        """Queue a trigger for its table; one worker per table drains the queue in order, so
        tables proceed concurrently and each table's events are handled in log order."""
        try:
            table_id, _ = parse_log_subject(msg.subject)
        except ValueError:
            # Not a table's event (a wildcard or junk id stored by hand, or by an old version
            # that did not check ids): never folded into anything; acknowledged so it is not
            # redelivered for ever.
            self._warn_once("invalid_log_subject", subject=msg.subject[:100])
            if self.acknowledges:
                with contextlib.suppress(Exception):
                    await msg.ack()
            return
        self._queues.setdefault(table_id, []).append(msg)
        if table_id not in self._draining:
            self._draining.add(table_id)
            self._spawn(self._drain(table_id))

    async def _drain(self, table_id: str) -> None:
        try:
            while queue := self._queues.get(table_id):
                msgs = list(queue)
                queue.clear()
                try:
                    await self._on_trigger(table_id, msgs)
                except Exception as exc:  # keep draining: writers get a redelivery anyway
                    self.log.warning("trigger_failed", table=table_id, error=repr(exc))
        finally:
            self._draining.discard(table_id)
            if not self._queues.get(table_id):
                self._queues.pop(table_id, None)

    async def _on_trigger(self, table_id: str, msgs: list[Msg]) -> None:
        table = self._table(table_id)
        try:
            async with table.lock:
                for msg in msgs:
                    index = index_of((msg.headers or {}).get("Nats-Msg-Id", ""), table_id)
                    if index == table.state.events:
                        seq, stored_at = ack_metadata(msg.reply)
                        event = self.store.codec.decode(msg.data)
                        self._apply(table, index, event, seq, stored_at)
                    elif index > table.state.events:
                        # At a table that withdraws seats every time-out counts: no deal skipped.
                        skips = (
                            self.skips_deals
                            and table.state.game == "skat"
                            and not table.state.rules.max_timeouts
                            and table.state.rules.time_control is None  # the clocks need every move
                        )
                        if not (skips and await self._skip_deal(table, index, msg)):
                            await self._catch_up_to(table, index)
                await self.settle(table)
                await self.after_change(table)
            if self.acknowledges:
                for msg in msgs:
                    await msg.ack()
        except (Conflict, StoreFull, LookupError, TimeoutError) as exc:
            # Not acknowledged: the consumer redelivers after ACK_WAIT and we try again. A
            # service that does not acknowledge tries again by itself.
            self.log.warning("trigger_failed", table=table_id, error=repr(exc))
            if not self.acknowledges:
                loop = asyncio.get_running_loop()
                loop.call_later(1.0, lambda: self._spawn(self._refresh(table_id, retries=None)))

    async def _skip_deal(self, table: Table, index: int, msg: Msg) -> bool:
        """Bring the cache to the trigger at ``index`` without reading the deal's play: the
        trigger is the deal's score (the dealer's), or the next deal right after that score
        (bidding's: then the score is one direct get). False where that does not fit (the
        cache is not in the deal the trigger ends, a log from before partitions): the caller
        reads the tail as usual."""
        state = table.state
        if table.broken or state.deal is None or state.scored or state.closed or state.paused:
            return False  # (a score never follows a pause: this cache missed the resumption)
        trigger = self.store.codec.decode(msg.data)
        seq, stored_at = ack_metadata(msg.reply)
        try:
            if isinstance(trigger, DealScored):
                state.skip_to_scored(trigger, index)
                table.last_seq, table.stored_at, table.last_kind = seq, stored_at, DealScored
                return True
            if isinstance(trigger, DealDealt) and trigger.deal == state.deal_no + 1:
                scored = await self.store.last(table.id, "deal_scored")
                if scored is None or scored.index != index - 1 or not isinstance(scored.event, DealScored):
                    return False
                state.skip_to_scored(scored.event, scored.index)
                table.last_seq, table.stored_at = scored.seq, scored.stamp
                self._apply(table, index, trigger, seq, stored_at)
                return True
        except LogError as exc:
            self.log.warning("deal_not_skipped", table=table.id, error=str(exc))
            table.state, table.last_seq, table.stored_at = new_state(), 0, 0.0  # read it whole
            table.written, table.last_kind = -1, None
        return False

    async def _catch_up_to(self, table: Table, index: int, patience: float = 3.0) -> None:
        """Read the log until it holds event ``index`` (the trigger in hand). A replica that
        answers a read may be behind the one that delivered the trigger: deciding on what it
        says would miss the very event that asked us to act, and acknowledging the trigger
        would lose it for good. So read again until it is there; if it never comes, raise (the
        trigger is not acknowledged and comes back)."""
        backoff = Backoff(patience)
        while True:
            await self.catch_up(table)
            if table.state.events > index or table.broken:
                return
            if not await backoff.wait():
                raise LookupError(f"{table.id}: the log read back ends before event {index}")
            self.store.retried += 1

    async def _refresh(
        self, table_id: str, retries: int | None = 0, delay: float = 1.0, quiet_for: float = 0.0
    ) -> None:
        """Catch a table up from the store and act on it (after a failed trigger or a
        reconnect). On failure try again later, ``retries`` times (None: until it works, the
        pause doubling up to 30 s), unless the table has moved to another instance meanwhile.
        With ``quiet_for`` (the sweep), a pending prompt is sent again only if the table has
        been quiet that long (a prompt just sent by another service is not repeated)."""
        table = self._table(table_id)
        async with table.lock:
            try:
                await self.catch_up(table)
                await self.settle(table)
                await self.after_change(table, recovering=time.time() - table.last_time() >= quiet_for)
                return
            except Exception as exc:  # one bad table must not stop the others
                self.log.warning("refresh_failed", table=table_id, error=repr(exc), retries_left=retries)
        if (retries is None or retries > 0) and (self.owns(table_id) or not self.ownership.owners):
            left = None if retries is None else retries - 1
            loop = asyncio.get_running_loop()
            loop.call_later(delay, lambda: self._spawn(self._refresh(table_id, left, min(30.0, 2 * delay))))

    async def after_change(self, table: Table, recovering: bool = False) -> None:
        """Hook: after the service caught up with a table (and appended what it owes);
        ``recovering`` after a read that may have found what nobody has prompted yet."""
        self._arm_deadline(table)
        await self._prompt(table, recovering)

    async def _prompt(self, table: Table, recovering: bool = False) -> None:
        """Send the seat to move its turn prompt, once per position, if this instance appended
        the event that made it that seat's turn: the writer prompts, right after its append,
        even where the turn passes into another service's phase (the dealer prompts a new
        deal's first bid, bidding the first card), so no consumer hop stands between an event
        and the prompt it makes due. The phase's own service, hearing of that event, leaves the
        prompt to its writer. The writer prompts even when another instance owns the table
        (the dealer instance that took a table's opening, say): nobody else knows to.

        ``recovering`` (a claimed partition, a refresh, a reconnect, a deadline): the writer
        may have died between its append and its prompt, so the owner of the table's partition
        sends the prompt where the turn is in this service's phases or this service writes
        events of the last one's kind; a repeat is harmless (players drop repeats by index).
        Besides, the phase's own service sends a prompt another service sent again if the seat
        has not answered it after ``REPROMPT_AFTER`` seconds (``_arm_deadline``)."""
        state = table.state
        if not self.prompts or state.to_move is None or table.prompted == state.events or table.broken:
            return
        if state.defaulting >= 0:
            return  # a time-out half recorded: its default action follows at once, not an answer
        if recovering and not self.owns(table.id):
            return  # a table cached here that another instance owns (the writer's own prompt went out)
        if table.written != state.events - 1:
            if not recovering:
                return  # its writer sends it
            if not (self._owns_turn(state) or state_game(state).writer(table.last_kind) == self.name):  # type: ignore[arg-type]
                return
        await self._send_prompt(table)

    async def _send_prompt(self, table: Table) -> None:
        state = table.state
        assert state.to_move is not None
        await self.prompter.send(table.id, state, state.to_move, self.deadline(table))
        table.prompted = state.events

    # --- commands ----------------------------------------------------------------------

    async def on_player_msg(self, msg: Msg) -> None:
        """What comes through a player's door (``door``)."""
        await self._on_command_msg(msg)

    async def _on_command_msg(self, msg: Msg) -> None:
        """Every command passes here first, one at a time: the sender's rate limit is checked
        before anything else is done for it (no task, no decode, no read). Over the limit, the
        command is dropped and the player is shut out for a while (``services.doors``), so that
        the broker drops the rest of the flood; the player is told once."""
        try:
            player, table_id = parse_command_subject(msg.subject)
        except ValueError:
            self._refuse_subject(msg)
            return
        if not self.limits.allow(player):
            self._bench(msg, player, sniff(msg.data))
            return
        owner = self.ownership.owner_of(partition_of(table_id))
        if owner is not None and owner != self.member and len(msg.data) <= MAX_COMMAND_BYTES:
            # Another instance owns this table: pass the command on untouched (the owner answers
            # the player directly). With nobody known to own it, it is handled here.
            self.forwarded += 1
            with contextlib.suppress(Exception):
                headers = {FORWARDED_SUBJECT: msg.subject}
                await self.nc.publish(forward_subject(self.name, owner), msg.data, reply=msg.reply, headers=headers)
            return
        await self._take_command(msg, player, table_id)

    async def _on_forwarded_msg(self, msg: Msg) -> None:
        """A command another instance passed on (it checked the sender's rate limit already):
        only services may publish here, but the subject is still validated like any other."""
        try:
            player, table_id = parse_command_subject((msg.headers or {}).get(FORWARDED_SUBJECT, ""))
        except ValueError:
            return
        if not self.limits.allow(player):  # the owner's own budget too: N instances, not N budgets
            return
        await self._take_command(msg, player, table_id)

    async def _take_command(self, msg: Msg, player: str, table_id: str) -> None:
        if len(msg.data) > MAX_COMMAND_BYTES:
            if self.answers_malformed:
                await self._reply(
                    msg,
                    Reply(ok=False, code="malformed", reason=f"a command is at most {MAX_COMMAND_BYTES} bytes"),
                    sniff(msg.data),
                    player,
                )
            return
        # Routed by its type before its table (and so its game) is known: every game knowing
        # the type decodes it (garbage is refused before any read), and the services whose role
        # answers that type somewhere take it; at the table, only the one its game names answers.
        try:
            kind, fmt = command_head(msg.data)
            knowing = games_knowing(kind)
            if not knowing:
                SKAT.decode_command(msg.data)  # says why, in the words players always got
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            if self.answers_malformed:
                await self._reply(msg, _malformed(exc), sniff(msg.data), player)
            return
        home = knowing[0][1]
        if self.name not in {role for _, role in knowing}:
            return
        decoded: dict[str, Command] = {}
        error: Exception | None = None
        for game, _ in knowing:
            try:
                decoded[game.name] = game.decode_command(msg.data)[0]
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                error = error or exc
        if not decoded:
            if self.name == home and error is not None:
                await self._reply(msg, _malformed(error), fmt, player)
            return
        self._spawn(self._on_command(msg, player, table_id, Routed(kind, home, decoded), fmt))

    async def _on_table_opening(self, msg: Msg) -> None:
        """An operator opens a table (every instance hears it, besides the dealer who answers):
        its players' doors open before its first event is even stored."""
        if self.doors is not None:  # also when not guarded: a switch may come before the table's first event
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                request: OpenTable = decode(msg.data, OpenTable)
                self.doors.expect([p for p in request.players if is_token(p)])

    def _bench(self, msg: Msg, player: str, fmt: str) -> None:
        """A player over its rate limit: close its door for a while, and say so once."""
        if self.doors is None or player in self.doors.benched_until:
            return
        seconds = self.doors.bench(player)
        asyncio.get_running_loop().call_later(seconds, self.limits.drain, player)
        self._warn_once(
            "player_benched", every=60.0, key=player, player=player, seconds=seconds, dropped=self.limits.dropped
        )
        if self.answers_malformed:
            reason = f"too many messages (limit {self.limits.rate:g}/s): ignored for {seconds:g} s"
            self._spawn(self._reply(msg, Reply(ok=False, code="rate_limited", reason=reason), fmt, player))

    def _refuse_subject(self, msg: Msg) -> None:
        """A command on a subject whose player or table is not a valid id (``*``, ``>``, extra
        tokens...): never taken as a table, never read, never answered into the log. The player
        (if its token is valid) is told once, within its rate limit."""
        tokens = msg.subject.split(".")
        player = tokens[2] if len(tokens) > 2 and is_token(tokens[2]) else None
        if player is None:
            return
        if not self.limits.allow(player):
            self._bench(msg, player, sniff(msg.data))  # odd subjects count toward a flood too
            return
        if not self.answers_malformed or (len(tokens) == 5 and tokens[3] == "tournament"):
            return  # skat.cmd.<player>.tournament.<id>: a tournament's nonce desk answers those
        reply = Reply(
            ok=False,
            code="bad_subject",
            reason="the subject must be skat.cmd.<player>.<table> with ids of letters, digits, '_' or '-'",
        )
        self._spawn(self._reply(msg, reply, sniff(msg.data), player))

    async def _on_command(self, msg: Msg, player: str, table_id: str, command: Routed, fmt: str) -> None:
        log = self.log.bind(table=table_id, player=player)
        absent_key = f"{player}.{table_id}"  # per player: no one can make a table "absent" for others
        answers = command.home == self.name  # who answers while the table's game is not known
        if table_id not in self.tables and self._absent.get(absent_key, 0.0) > time.monotonic():
            if answers:
                absent = Reply(ok=False, code="no_table", reason=f"no table {table_id!r}")
                await self._reply(msg, absent, fmt, player)
            return
        if table_id not in self.tables and not self.reads.allow(player):
            if answers and self.reads.should_notice(player):  # and otherwise dropped
                reason = "too many commands for tables not in play; slow down"
                await self._reply(msg, Reply(ok=False, code="rate_limited", reason=reason), fmt, player)
            return
        table = self._table(table_id)
        table.users += 1
        failed = False
        reply: Reply | None
        try:
            async with table.lock:
                try:
                    reply = await self._handle_command(table, player, command)
                except StoreFull as exc:
                    reply, failed = Reply(ok=False, code="unavailable", reason=str(exc)), True
                except (TimeoutError, nats.errors.Error) as exc:
                    reply, failed = (
                        Reply(ok=False, code="unavailable", reason=f"the event store did not answer: {exc!r}"[:300]),
                        True,
                    )
                await self.after_change(table)
        finally:
            table.users -= 1
        if not table.state.n and not table.users and self.tables.get(table_id) is table:
            # No such table: do not keep what a typo (or a flood) asked for, but remember for a
            # moment that it is absent for this player, so that asking again costs no read
            # (only when the store said so: an error proves nothing).
            del self.tables[table_id]
            if not failed:
                if len(self._absent) >= MAX_ABSENT:
                    self._absent.clear()
                self._absent[absent_key] = time.monotonic() + ABSENT_FOR
        if reply is None:
            return  # another service answers it at this table's game
        if reply.code in ("unavailable",) and not answers and not table.state.n:
            return  # the table's game is not known: one service says so
        log.debug("command", command=command.kind, ok=reply.ok, code=reply.code)
        await self._reply(msg, reply, fmt, player)

    def _warn_once(self, event: str, every: float = 10.0, key: str = "", **fields: object) -> None:
        """Log ``event`` at most once per ``every`` seconds (per ``key``): what an attacker can
        cause must not become a flood of log lines."""
        now = time.monotonic()
        if now - self._warned.get(event + key, -1e9) >= every:
            if len(self._warned) > 10_000:
                self._warned.clear()
            self._warned[event + key] = now
            self.log.warning(event, **fields)

    async def _handle_command(self, table: Table, player: str, routed: Routed) -> Reply | None:
        """Decide on the cached state and append with the cached last sequence: if the cache
        was stale, the append fails (``Conflict``) and we re-read and decide again. A rejection
        is only sent after checking the log's tail, so a stale cache never refuses a good move.
        The happy path therefore costs one acknowledged publish and no read."""
        fresh = False
        if table.last_seq == 0 and not table.found_nothing:
            await self.catch_up(table)
            table.found_nothing = not table.state.n
            fresh = True
        for _ in range(6):
            state = table.state  # re-read: a resync may have rebuilt it
            if table.broken:
                return Reply(ok=False, code="unavailable", reason="this table's log is damaged")
            await self.settle(table)
            result: list[Event] | Rejection
            game = state_game(state)
            chosen = routed.decoded.get(game.name) if state.n else next(iter(routed.decoded.values()))
            if not state.n:
                if routed.home != self.name:
                    return None
                result = Rejection(code="no_deal", reason=f"no table {table.id!r}")
            elif (role_in(game, routed.kind) or routed.home) != self.name:
                return None  # the service of this game's role for it answers (one service does)
            elif chosen is None:  # not a command of this table's game, or not a well-formed one
                return Reply(ok=False, code="malformed", reason=f"not a command of {game.title}: {routed.kind!r}")
            elif player not in state.players:  # seats are fixed when a table opens: no read needed
                return Reply(ok=False, code="not_seated", reason=f"{player} does not sit at table {table.id}")
            else:
                result = game.decide(state, state.players.index(player), chosen)
            command = chosen if chosen is not None else next(iter(routed.decoded.values()))
            if isinstance(result, Rejection):
                if state.n and 0 <= command.at < state.events and (late := stale(state, command)) is not None:
                    # The log has moved past the prompt this answers: refused for good, and
                    # for that reason (whatever else the cached state would say).
                    return Reply(ok=False, code=late.code, reason=late.reason)
                if state.n and command.at > state.events:
                    # The player saw a prompt this cache has not reached (another instance
                    # appended, or our consumer lags): read until we have it; never refuse a
                    # move for being ahead of us. Without the budget for it, "busy" (retry).
                    if command.at > state.events + MAX_AHEAD or not self.reads.allow(player):
                        return Reply(ok=False, code="busy", reason="the table is catching up; retry")
                    try:
                        await self._catch_up_to(table, command.at - 1, patience=1.0)
                    except LookupError:
                        return Reply(ok=False, code="busy", reason="the table is catching up; retry")
                    fresh = True
                    continue
                if not fresh and not _definitive(state, command) and self.reads.allow(player):
                    await self.catch_up(table)
                    fresh = True
                    continue
                code = "no_table" if not state.n else result.code
                return Reply(ok=False, code=code, reason=result.reason)
            index = table.state.events + len(result) - 1  # the command's own (last) event
            try:
                await self.append(table, result)  # with what it makes due, in one batch
            except Conflict:
                await self.resync(table)
                fresh = True
                continue
            try:
                await self.settle(table)
            except (Conflict, StoreFull, TimeoutError) as exc:
                # The move is recorded: say so. What the table owes is appended shortly (no
                # trigger will come for it: a service is not sent back its own events).
                self.log.warning("settle_failed", table=table.id, error=repr(exc))
                loop = asyncio.get_running_loop()
                loop.call_later(1.0, lambda: self._spawn(self._refresh(table.id, retries=None)))
            return Reply(ok=True, index=index)
        return Reply(ok=False, code="busy", reason="the table is busy; retry")

    async def _reply(self, msg: Msg, reply: Reply, fmt: str, player: str | None) -> None:
        """Answer into the sender's own inbox only (``_INBOX.<player>.``): a reply subject
        naming anything else (the log, another player's inbox) is ignored. ``player`` None is
        the operator (``skat.admin.*``, which players may not publish to): any inbox."""
        if is_inbox(msg.reply, player):
            with contextlib.suppress(Exception):
                await self.nc.publish(msg.reply, encode(reply, fmt))

    # --- deadlines ---------------------------------------------------------------------

    def deadline(self, table: Table) -> float:
        """The seat to move's deadline (``Table.deadline``): as this instance enforces it if the
        turn is in its phases, else as counted from the log alone (a prompt of another
        service's turn never promises more time than the enforcing service gives)."""
        since = self.heard_since.get(partition_of(table.id), 0.0) if self._owns_turn(table.state) else 0.0
        return table.deadline(since)

    def _owns_turn(self, state: Any) -> bool:
        return self.enforces_turns and state.to_move is not None and state_game(state).turn_role(state) == self.name

    def _arm_deadline(self, table: Table) -> None:
        """The deadline of the seat to move, if the turn is in this service's phases; and if
        another service sent its prompt, the repeat of that prompt (``REPROMPT_AFTER``)."""
        if not self.enforces_turns:
            return
        table.cancel_timers()
        state = table.state
        if table.broken or not self._owns_turn(state) or not self.owns(table.id):
            return
        # A timer handle, not a sleeping task: deadlines are re-armed after every event and
        # almost never fire, so they must be cheap to set and to cancel.
        delay = max(0.0, self.deadline(table) - time.time())
        index = state.events
        loop = asyncio.get_running_loop()
        table.timer = loop.call_later(delay, lambda: self._spawn(self._expire(table, index)))
        if table.written != index - 1 and table.prompted != index and delay > REPROMPT_AFTER:
            table.reprompt = loop.call_later(REPROMPT_AFTER, lambda: self._spawn(self._repeat_prompt(table, index)))

    async def _repeat_prompt(self, table: Table, index: int) -> None:
        """The seat has not answered a prompt another service sent (``REPROMPT_AFTER``): send
        it again, in case its writer died before sending it."""
        table.reprompt = None
        state = table.state
        if state.events == index and table.prompted != index and self._owns_turn(state) and self.owns(table.id):
            try:
                await self._send_prompt(table)
            except Exception as exc:  # the connection is down: the reconnect sends it again
                self._warn_once("reprompt_failed", error=repr(exc))

    async def _expire(self, table: Table, index: int) -> None:
        table.timer = None
        if not self.nc.is_connected or self.nc.stats.get("reconnects", 0) != self._recovered_reconnects:
            # The broker is away, or back but not yet recovered from: the seat could not be
            # heard meanwhile, and gets a whole turn once we are back (``_after_reconnect``).
            table.timer = asyncio.get_running_loop().call_later(0.5, lambda: self._spawn(self._expire(table, index)))
            return
        async with table.lock:
            try:
                await self.catch_up(table)
                state = table.state
                if state.events == index and self._owns_turn(state) and time.time() < self.deadline(table):
                    self._arm_deadline(table)  # the turn was given more time meanwhile: say so
                    if self.prompts:
                        await self._send_prompt(table)
                    return
                if state.events == index and self._owns_turn(state):
                    events = state_game(state).timeout(state)
                    if events:
                        self.log.info("timed_out", table=table.id, seat=state.to_move, index=index)
                        with contextlib.suppress(Conflict):
                            await self.append(table, events)
                # Whatever the log holds now: what it owes us (e.g. a trick whose writer died).
                await self.settle(table)
                await self.after_change(table, recovering=True)
            except Exception as exc:  # the store is slow, full or away: try again shortly
                # Nobody's move could be stored meanwhile either: the turn counts from when the
                # store answers again (``heard_since``), not from before the outage.
                self.heard_since[partition_of(table.id)] = time.time()
                self.log.warning("deadline_failed", table=table.id, error=repr(exc))
                table.timer = asyncio.get_running_loop().call_later(
                    1.0, lambda: self._spawn(self._expire(table, index))
                )

    async def _recover(self, partitions: set[int], quiet_for: float = 0.0) -> None:
        """After claiming partitions or a reconnect: catch up every open table of them, append
        what it owes us and arm its deadline, without waiting for the consumer to redeliver
        what a dead instance (or a lost connection) left unacknowledged. With ``quiet_for``,
        only the tables not cached or quiet for that long (the sweep)."""
        if not partitions:
            return
        while True:
            try:
                open_tables = [t for t in await self.store.open_tables() if partition_of(t) in partitions]
                break
            except Exception as exc:  # the store is away: keep trying, and stay not ready
                self.log.warning("recovery_failed", error=repr(exc))
                await asyncio.sleep(1.0)
        gate = asyncio.Semaphore(32)  # thousands of open tables must not mean thousands of reads at once

        async def refresh(table_id: str) -> None:
            cached = self.tables.get(table_id)
            if quiet_for and cached is not None and time.time() - cached.last_time() < quiet_for:
                return  # active: its triggers are coming
            async with gate:
                await self._refresh(table_id, quiet_for=quiet_for)

        await asyncio.gather(*(refresh(table_id) for table_id in open_tables))

    async def _after_reconnect(self) -> None:
        """Recover (events delivered while the connection was down may be lost to us) and let
        subclasses re-send what players may have missed."""
        reconnects = self.nc.stats.get("reconnects", 0)
        self.log.info("reconnected_recovering", reconnects=reconnects)
        now = time.time()
        for partition in self.ownership.owned:  # before any deadline may fire again (``_expire``)
            self.heard_since[partition] = now
        self._recovered_reconnects = reconnects
        for consumer in list(self._consumers.values()):
            await consumer.kick()
        await self._recover(set(self.ownership.owned))
        await self.on_reconnected()

    async def on_reconnected(self) -> None:
        """After a reconnect and the recovery that follows it: prompts published while the
        connection was down reached nobody, so send the pending ones again (with their
        original deadlines; players drop repeats by index)."""
        self.prompter.forget_formats()  # a change announced while we were away was missed
        for table in list(self.tables.values()):
            table.prompted = -1
            await self._prompt(table, recovering=True)


@dataclass(frozen=True)
class Routed:
    """A command read before its table's game is known: its ``type``, the role that answers it
    while the game is not known (``home``: the first game knowing the type), and its decoding
    by every game that could read it."""

    kind: str
    home: str
    decoded: dict[str, Command]


def clock_time(state: Any, stored_at: float | str) -> float | None:
    """The stored time a table's clocks are folded with (``protocol.clocks``): only at a table
    with a time control, so that the others never parse a stamp they do not need."""
    clock = getattr(state, "clock", None)
    if clock is None or clock.control is None:
        return None
    return stored_at if isinstance(stored_at, float) else parse_time(stored_at)


def _malformed(exc: Exception) -> Reply:
    return Reply(ok=False, code="malformed", reason=f"cannot read the command: {exc}"[:300])


def _definitive(state: Any, command: Command) -> bool:
    """Whether a rejection decided on the cached state stands without reading the log's tail:
    when the command answers the very position the cache is at. The cache may be behind the
    log, never ahead, so the log is then either at that position too (the same answer) or
    past it (the command is stale). Only an unstamped command, or one answering a prompt the
    cache has not seen yet, needs the read: so a bot repeating a refused command costs the
    store nothing."""
    return bool(state.n) and command.at == state.events
