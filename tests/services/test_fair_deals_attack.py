"""Fair deals attacked from a remote entrant's seat: can it learn the seed, or predict a deal?

Issue 23 promises that, with remote entrants, nothing a player receives lets it predict a deal
better than chance. These tests play fair tournaments of many entrants through a real
nats-server and the real services, with one remote entrant played by the SDK, and record
everything that entrant could receive under ``skat auth``'s permissions: its views
(``skat.view.<remote>.>``), its reply inbox (``_INBOX.<remote>.>``) and the whole public feed
(``skat.public.>``: every table's feed and the tournament's announcements). Then they look for

- any secret the deals follow from (the server seed, each table seed, each deal seed, the
  nonces' digest, a built-in bot's seed) in any message: as text, as hex of its text, as raw
  bytes and base64, as any 64-bit piece of it, and in every string the message decodes to;
- any card of another seat in a view or on the public feed before the rules show it;
- the cards of the remote entrant's own deal shown by another table that plays the same deal
  (duplicate across the tables of a series) while its own deal is still being played.

The last one was a hole while the tables of a series shared their deals with remote entrants
seated: every player may read every table's public feed, so a remote entrant could watch its own
deal played at a sibling table first (81 of 84 hidden cards placed). Duplicate series are now for
built-in bots only (``protocol.tournament`` refuses them with remote entrants, and the command
line turns duplicate off), and these tests hold the configuration the command line makes to it.
The nonce desk is attacked on its own (refusals, spoofed reply subjects, a
flood), the command line's seed checks and ids are checked as an entrant would exploit them, and
``skat auth``'s permissions are checked to keep the tournament's own log (which holds the seed in
its first event) away from players.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import io
import json
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol import fairness
from protocol.events import (
    MSGPACK,
    CardPlayed,
    CardsShown,
    DealDealt,
    DealEnded,
    DealScored,
    Discarded,
    Event,
    GameDeclared,
    SkatTaken,
    TableClosed,
    TableOpened,
    TableOpenedV2,
    TrickTaken,
)
from protocol.skat import cards as skat_cards
from protocol.skat.dealing import deal_from_seed, deal_seed
from protocol.thirty_one import state as t31_state
from protocol.thirty_one.cards import HIDDEN, PACK
from protocol.thirty_one.events import (
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Discarded,
    T31Restocked,
    T31Took,
)
from protocol.tournament import (
    NonceGiven,
    NoncesClosed,
    TableSpec,
    TournamentConfig,
    TournamentCreated,
    TournamentEvent,
    TournamentState,
    fold_tournament,
    schedule,
    table_feed,
)
from services.auth import SERVICE_USER, write_auth
from services.connection import open_connection
from services.natsserver import EmbeddedServer, free_port
from services.store import EventStore
from skatbus.bots import make_bot
from skatbus.cli import main
from skatbus.errors import UsageError
from skatbus.nonces import NonceDesk, announce_subject, request_subject
from skatbus.player import Inbox
from skatbus.sdk import play
from skatbus.tournament import TournamentLog, bot_seed, run_tournament
from skatbus.tournament_cli import add_arguments, apply_config_file, check_args, config_from, seed_weakness
from tests.bus import Stack

REMOTE = "remote-eve"
"""The remote entrant whose seat the attack is made from."""

SKAT_CODES = frozenset(skat_cards.CODES)
T31_CODES = frozenset(PACK)

SKAT_ARGS = [
    "--remote", REMOTE, "--bots", "heuristic,random,stepping-random,random,heuristic",
    "--series", "2", "--rounds", "1", "--turn-seconds", "20",
]  # fmt: skip
"""Six Skat entrants (two tables of three per series), two series of one round a table."""

T31_ARGS = [
    "--game", "thirty-one", "--remote", REMOTE, "--bots", "random,heuristic,random,heuristic,random,heuristic",
    "--players", "3", "--series", "1", "--coins", "1", "--turn-seconds", "20",
]  # fmt: skip
"""Seven Thirty-one entrants: a table of three and one of four, one series."""


# --- the command line, as the operator runs it ---------------------------------------------


def _args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(argv)
    apply_config_file(args, {a.dest: a.default for a in parser._actions}, parser._actions)
    return args


def cli_config(argv: list[str]) -> TournamentConfig:
    """The tournament ``skat tournament ARGV`` would run: checked and made by the command line's
    own functions, so a fix there (not only in the runner) is what these tests see."""
    args = _args(argv)
    check_args(args)
    return config_from(args)


# --- what a player receives ----------------------------------------------------------------


@dataclass
class Received:
    subject: str
    data: bytes


@dataclass
class Public:
    """One event of a table's public feed, numbered in the order it arrived."""

    seq: int
    table: str
    event: Event


class PlayerFeed:
    """Everything ``player`` may receive under ``skat auth``: its views, its reply inbox and the
    public feed (tables and tournament announcements), recorded in the order they arrive.

    Each subscription's messages arrive in order; the public feed, one subscription written by
    the views service, gives the order in which a player saw the tables' events."""

    def __init__(self, nc: Client, player: str) -> None:
        self.nc, self.player = nc, player
        self.messages: list[Received] = []
        self.public: list[Public] = []
        self.announcements: list[dict[str, Any]] = []
        self.views: list[tuple[str, bytes]] = []
        """(table, data) of every view, in order."""
        self.inbox: list[bytes] = []
        self._changed = asyncio.Event()

    async def start(self) -> None:
        await self.nc.subscribe(f"skat.view.{self.player}.>", cb=self._on_view)
        await self.nc.subscribe(f"_INBOX.{self.player}.>", cb=self._on_inbox)
        await self.nc.subscribe("skat.public.>", cb=self._on_public)
        await self.nc.flush()

    def _keep(self, msg: Msg) -> None:
        self.messages.append(Received(msg.subject, bytes(msg.data)))
        self._changed.set()

    async def _on_view(self, msg: Msg) -> None:
        self.views.append((msg.subject.split(".", 3)[3], bytes(msg.data)))
        self._keep(msg)

    async def _on_inbox(self, msg: Msg) -> None:
        self.inbox.append(bytes(msg.data))
        self._keep(msg)

    async def _on_public(self, msg: Msg) -> None:
        rest = msg.subject.removeprefix("skat.public.")
        if rest.startswith("tournament."):
            self.announcements.append(json.loads(msg.data))
        else:
            event = MSGPACK.decode(msg.data)
            if isinstance(event, Event):
                self.public.append(Public(len(self.public), rest, event))
        self._keep(msg)

    async def wait(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``done()`` holds (re-checked on every message), at most ``timeout`` s."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not done():
            left = end - loop.time()
            if left <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
        return True

    def closed_tables(self) -> set[str]:
        return {p.table for p in self.public if isinstance(p.event, TableClosed)}

    def of(self, table: str) -> list[Public]:
        return [p for p in self.public if p.table == table]


# --- a tournament with one remote entrant ----------------------------------------------------


@dataclass
class Run:
    config: TournamentConfig
    results: dict[str, Any]
    events: list[TournamentEvent]
    state: TournamentState
    logs: dict[str, list[Event]]
    """Every table's stored log (what only the services and the operator can read)."""
    feed: PlayerFeed
    nonce: str = ""
    """The nonce the test gave as the remote entrant before its bot connected (empty: the SDK's)."""
    refused_second: dict[str, Any] = field(default_factory=dict)

    def remote_tables(self) -> list[TableSpec]:
        return [t for t in self.state.tables if REMOTE in t.players]

    def others_of(self, spec: TableSpec) -> list[TableSpec]:
        return [t for t in self.state.tables if t.series == spec.series and t.table != spec.table]


def _nonce_request(nonce: object) -> bytes:
    return json.dumps({"type": "nonce", "nonce": nonce}).encode()


async def play_tournament(
    nc: Client, server: EmbeddedServer, stack: Stack, out: Path, config: TournamentConfig, bot: Any, nonce_first: bool
) -> Run:
    """Run ``config`` through the services with ``REMOTE`` played by ``bot`` through the SDK,
    while a second connection records all that ``REMOTE`` may receive. ``nonce_first``: the
    test, as ``REMOTE``, gives the first nonce (and tries a second one) before the bot connects;
    else the SDK's nonce giver does."""
    spy = await nats.connect(server.url)
    feed = PlayerFeed(spy, REMOTE)
    await feed.start()
    stop = asyncio.Event()
    player: asyncio.Future[Any] | None = None
    nonce, second = "", {}
    try:
        if not nonce_first:
            player = asyncio.ensure_future(play(bot, REMOTE, stack.url, stop=stop))
        tour = asyncio.ensure_future(run_tournament(nc, config, out_dir=out, out=io.StringIO()))
        if nonce_first:
            assert await feed.wait(lambda: any(a.get("open") for a in feed.announcements), 30), "no announcement"
            inbox = Inbox(spy, REMOTE)
            await inbox.start()
            nonce = secrets.token_hex(16)
            subject = request_subject(REMOTE, config.id)
            first = json.loads((await inbox.request(subject, _nonce_request(nonce.upper()), 5.0)).data)
            assert first["ok"] and first["nonce"] == nonce, first  # normalised to lower case
            second = json.loads((await inbox.request(subject, _nonce_request(secrets.token_hex(16)), 5.0)).data)
            await inbox.stop()
            player = asyncio.ensure_future(play(bot, REMOTE, stack.url, stop=stop))
        results = await asyncio.wait_for(tour, 150)
        tables = {t.table for t in fold_tournament(await TournamentLog(nc).read(config.id)).tables}
        if table_feed(config) == "withheld":
            # Duplicate tables with a remote entrant seated: nothing of them reaches a player's
            # public feed (their spectator feed is on skat.watch.<table>, which no player may read).
            assert not {p.table for p in feed.public} & tables, "a withheld table's feed reached the public feed"
        else:
            assert await feed.wait(lambda: feed.closed_tables() >= tables, 15), "the public feed missed a table's end"
    finally:
        stop.set()
        if player is not None:
            await player
        await spy.close()
    events = await TournamentLog(nc).read(config.id)
    state = fold_tournament(events)
    store = EventStore(nc)
    logs = {t.table: [s.event for s in await store.read(t.table) if isinstance(s.event, Event)] for t in state.tables}
    return Run(config, results, events, state, logs, feed, nonce, second)


# --- the secrets a deal follows from ---------------------------------------------------------


def deal_secrets(run: Run) -> dict[str, str]:
    """Every secret a card follows from, by name: the server seed, the nonces' digest, each
    table seed (``TournamentState.table_seed`` and ``fairness.group_seed``, which must agree),
    each deal's seed (as ``deal_seed`` gives it and as the log stores it, Thirty-one's restock
    seeds too), and each built-in bot's seed."""
    config, state = run.config, run.state
    assert state.digest is not None
    found = {"server seed": config.seed, "nonces digest": state.digest}
    for spec in state.tables:
        seed = state.table_seed(spec)
        assert seed == fairness.group_seed(config.seed, config.id, spec.group, state.digest)
        found[f"table seed of {spec.table}"] = seed
        deals = sum(isinstance(e, (DealDealt, T31Dealt)) for e in run.logs[spec.table])
        assert deals > 0, spec.table
        for n in range(1, deals + 2):
            found[f"deal seed {n} of {spec.table}"] = deal_seed(seed, n)
            for k in range(1, 4):
                found[f"restock seed {k} of deal {n} of {spec.table}"] = t31_state.restock_seed(deal_seed(seed, n), k)
        for e in run.logs[spec.table]:
            if isinstance(e, (DealDealt, T31Dealt)):
                assert e.seed, "a dealt deal stores its seed"
                found[f"stored seed of deal {e.deal} of {spec.table}"] = e.seed
    for entrant in config.bots:
        found[f"bot seed of {entrant}"] = bot_seed(config, entrant)
    return found


_HEX = re.compile(r"[0-9a-f]{16,}")
PIECE = 16
"""Hex digits of a secret's piece looked for (64 bits: a piece that short already narrows a
search a lot, and a random match of 64 bits is out of the question)."""


class SecretFinder:
    """Finds any of ``secrets`` in a message, in the forms a careless encoder might use."""

    def __init__(self, named: dict[str, str]) -> None:
        self.forms: list[tuple[str, bytes]] = []
        self.pieces: dict[str, str] = {}
        for name, value in named.items():
            text = value.encode()
            self.forms += [(name, text), (f"{name} (hex of its text)", text.hex().encode())]
            self.forms.append((f"{name} (base64 of its text)", base64.b64encode(text)))
            hexpart = value.split("/")[0].lower()
            if re.fullmatch(r"[0-9a-f]+", hexpart) and len(hexpart) % 2 == 0:
                raw = bytes.fromhex(hexpart)
                self.forms += [(f"{name} (raw bytes)", raw), (f"{name} (base64)", base64.b64encode(raw))]
                for k in range(len(hexpart) - PIECE + 1):
                    self.pieces.setdefault(hexpart[k : k + PIECE], name)

    def in_bytes(self, data: bytes) -> list[str]:
        found = [name for name, form in self.forms if form in data]
        text = data.decode("latin-1").lower()
        for run in _HEX.findall(text):
            for k in range(len(run) - PIECE + 1):
                name = self.pieces.get(run[k : k + PIECE])
                if name is not None:
                    found.append(f"64 bits of {name}")
        return found

    def in_decoded(self, data: bytes) -> list[str]:
        """The strings the message decodes to (JSON or msgpack), joined: an escaped or binary
        field is looked into as well."""
        try:
            decoded = msgspec.json.decode(data) if data[:1] in (b"{", b"[") else msgspec.msgpack.decode(data)
        except (msgspec.DecodeError, ValueError):
            return []
        joined = "\x00".join(_strings(decoded)).encode()
        return self.in_bytes(joined)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (bytes, bytearray, memoryview)):
        yield bytes(value).hex()
        yield bytes(value).decode("latin-1")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def assert_no_secret(run: Run) -> None:
    finder = SecretFinder(deal_secrets(run))
    # The capture holds what it must: a view of every deal the remote entrant was dealt (each
    # seat gets one at a new deal, as its prompt or its view) and its replies. How many messages
    # that is depends on the deals (a Thirty-one deal knocked at once is short), so no count.
    dealt = sum(isinstance(e, (DealDealt, T31Dealt)) for t in run.remote_tables() for e in run.logs[t.table])
    assert dealt >= 1 and len(run.feed.views) >= dealt and run.feed.inbox, "the capture caught too little"
    leaks = []
    for m in run.feed.messages:
        for name in finder.in_bytes(m.data) + finder.in_decoded(m.data):
            leaks.append(f"{m.subject}: {name}")
    assert leaks == [], leaks[:10]
    # The finder can find: the seeds are there in what only the operator reads (the stored logs).
    stored = b"".join(MSGPACK.encode(e) for log in run.logs.values() for e in log)
    assert finder.in_bytes(stored), "the secret finder finds nothing even where the seeds are"


# --- what a seat may know of its cards -------------------------------------------------------


def _decode(data: bytes) -> Any:
    return msgspec.json.decode(data) if data[:1] == b"{" else msgspec.msgpack.decode(data)


def cards_in(value: object, codes: frozenset[str]) -> set[str]:
    return {s for s in _strings(value) if s in codes}


def _current_deal(log: list[Event], index: int, kind: type[Event]) -> tuple[Any, list[Event]] | None:
    events = log[:index]
    starts = [i for i, e in enumerate(events) if isinstance(e, kind)]
    if not starts:
        return None
    return events[starts[-1]], events[starts[-1] :]


def skat_known(log: list[Event], index: int, seat: int) -> set[str]:
    """The cards ``seat`` (-1: a spectator) may know after the first ``index`` events of a Skat
    table, by the rules, worked out from the log itself: its own hand, the skat once it took it,
    every card played or shown, an ouvert declarer's hand (but not its discard), and once the
    deal is over, all of it."""
    found = _current_deal(log, index, DealDealt)
    if found is None:
        return set()
    dealt, events = found
    known: set[str] = set()
    if seat in dealt.seats:
        known |= set(dealt.hands[dealt.seats.index(seat)])
    took: dict[int, list[str]] = {}
    put: dict[int, list[str]] = {}
    ouvert = None
    for e in events:
        if isinstance(e, CardPlayed):
            known.add(e.card)
        elif isinstance(e, (TrickTaken, CardsShown)):
            known |= set(e.cards)
        elif isinstance(e, SkatTaken):
            took[e.seat] = list(e.cards)
            if e.seat == seat:
                known |= set(e.cards)
        elif isinstance(e, Discarded):
            put[e.seat] = list(e.cards)
        elif isinstance(e, GameDeclared) and e.game.ouvert:
            ouvert = e.seat
        elif isinstance(e, (DealEnded, DealScored)):
            known |= {c for h in dealt.hands for c in h} | set(dealt.skat)
    if ouvert is not None:
        hand = set(dealt.hands[dealt.seats.index(ouvert)]) | set(took.get(ouvert, []))
        known |= hand - set(put.get(ouvert, []))
    return known


def t31_known(log: list[Event], index: int, seat: int) -> set[str]:
    """The cards ``seat`` (-1: a spectator) may know after the first ``index`` events of a
    Thirty-one table: its three dealt cards, the discard pile's first card, every card taken
    from the pile or discarded, the cards it took from the stock, and the hands shown at the end."""
    found = _current_deal(log, index, T31Dealt)
    if found is None:
        return set()
    dealt, events = found
    m = len(dealt.order)
    known = {dealt.deck[k] for k in range(min(3 * m, len(dealt.deck))) if dealt.order[k % m] == seat}
    if 3 * m < len(dealt.deck):
        known.add(dealt.deck[3 * m])
    for e in events:
        if isinstance(e, T31Took) and (e.seat == seat or e.source == "discard"):
            known.add(e.card)
        elif isinstance(e, T31Discarded):
            known.add(e.card)
        elif isinstance(e, T31DealEnded):
            known |= {c for hand in e.shown for c in hand}
    return known


def assert_views_show_only_what_the_rules_show(
    run: Run, codes: frozenset[str], known: Callable[[list[Event], int, int], set[str]]
) -> None:
    """Every card in every view the remote entrant got was one its seat may know at the view's
    position in the log; and the check has teeth: most views leave cards unknown."""
    checked = hidden_somewhere = 0
    for table, data in run.feed.views:
        update = _decode(data)
        index, view = update["index"], update["view"]
        log = run.logs[table]
        seat = log[0].players.index(REMOTE)  # type: ignore[attr-defined]
        assert view["seat"] == seat
        allowed = known(log, index, seat)
        shown = cards_in(view, codes)
        assert shown <= allowed, f"{table} at {index}: the view shows {sorted(shown - allowed)} of another seat"
        checked += 1
        hidden_somewhere += bool(codes - allowed - shown)
    assert checked >= 4 * len(run.remote_tables()) and 2 * hidden_somewhere > checked


def assert_public_feed_redacted(run: Run) -> None:
    """The public feed (which every player reads) carries no seed and no hidden card: checked
    event by event against the rules, not against the redaction code."""
    for p in run.feed.public:
        e = p.event
        if isinstance(e, (TableOpened, TableOpenedV2)):
            assert e.seed == "", p
        elif isinstance(e, DealDealt):
            assert e.seed == "" and not e.skat and not any(e.hands), p
        elif isinstance(e, (SkatTaken, Discarded)):
            assert e.cards == [], p
        elif isinstance(e, T31Dealt):
            face_up = 3 * len(e.order)
            assert e.seed == "" and all(c == HIDDEN for k, c in enumerate(e.deck) if k != face_up), p
        elif isinstance(e, T31Took) and e.source == "stock":
            assert e.card == HIDDEN, p
        elif isinstance(e, T31Restocked):
            assert all(c == HIDDEN for c in e.stock), p


def assert_ids_carry_nothing_of_the_seed(run: Run) -> None:
    config = run.config
    assert re.fullmatch(r"t-\d{6}-\d{6}-[0-9a-f]{16}", config.id), config.id
    for spec in run.state.tables:
        assert re.fullmatch(rf"{re.escape(config.id)}-s{spec.series}t\d+", spec.table), spec.table
    assert not SecretFinder({"server seed": config.seed}).in_bytes(config.id.encode())


def assert_the_announcements(run: Run) -> None:
    """The announcement says what an entrant needs and nothing more; it commits to the seed."""
    every = [a for a in run.feed.announcements if a.get("tournament") == run.config.id]
    # The last one says that the tournament finished (so that bots stop), and only that.
    assert every and every[-1] == {
        "type": "tournament", "tournament": run.config.id, "game": run.config.game,
        "entrants": [REMOTE], "open": False, "finished": True,
    }  # fmt: skip
    said = every[:-1]
    assert said and said[0]["open"] and not said[-1]["open"]
    for a in said:
        assert set(a) == {"type", "tournament", "game", "commitment", "entrants", "nonces_close", "open"}, a
        assert a["commitment"] == fairness.commitment(run.config.seed) and a["entrants"] == [REMOTE]


# --- the honest remote entrant: no seed, no hidden card -------------------------------------


async def test_a_remote_entrant_of_a_fair_skat_tournament_learns_no_seed_and_no_hidden_card(
    stack: Stack, nc: Client, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    config = cli_config(SKAT_ARGS)
    assert config.many and config.fair == fairness.SCHEME and seed_weakness(config.seed) is None
    run = await play_tournament(nc, nats_server, stack, tmp_path, config, make_bot("random", "eve"), nonce_first=True)
    assert len(run.state.tables) == 4 and len(run.remote_tables()) == 2
    assert_no_secret(run)
    assert_public_feed_redacted(run)
    assert_views_show_only_what_the_rules_show(run, SKAT_CODES, skat_known)
    assert_ids_carry_nothing_of_the_seed(run)
    assert_the_announcements(run)
    # The first nonce counts, a second one is refused, and the deals follow from the first.
    assert run.refused_second["code"] == "nonce_taken" and not run.refused_second["ok"]
    nonces = {REMOTE: run.nonce}
    assert [e for e in run.events if isinstance(e, NonceGiven)] == [NonceGiven(player=REMOTE, nonce=run.nonce)]
    fair = json.loads((tmp_path / config.id / "results.json").read_text())["fairness"]
    assert fair["nonces"] == nonces and fair["nonces_digest"] == fairness.nonces_digest(nonces)
    assert fair["seed"] == config.seed and fair["commitment"] == fairness.commitment(config.seed)
    for spec in run.state.tables:
        opened = run.logs[spec.table][0]
        assert isinstance(opened, TableOpened)
        table_seed = fairness.group_seed(config.seed, config.id, spec.group, fairness.nonces_digest(nonces))
        assert opened.seed == table_seed
        assert opened.seed != fairness.group_seed(config.seed, config.id, spec.group, fairness.nonces_digest({}))
        first = next(e for e in run.logs[spec.table] if isinstance(e, DealDealt))
        hands, _ = deal_from_seed(deal_seed(table_seed, 1))
        assert [skat_cards.codes(h) for h in hands] == [list(h) for h in first.hands]


async def test_a_remote_entrant_of_a_fair_thirty_one_tournament_learns_no_seed_and_no_hidden_card(
    stack: Stack, nc: Client, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    config = cli_config(T31_ARGS)
    bot = make_bot("random", "eve", "thirty-one")
    run = await play_tournament(nc, nats_server, stack, tmp_path, config, bot, nonce_first=False)
    assert sorted(len(t.players) for t in run.state.tables) == [3, 4]
    assert_no_secret(run)
    assert_public_feed_redacted(run)
    assert_views_show_only_what_the_rules_show(run, T31_CODES, t31_known)
    assert_ids_carry_nothing_of_the_seed(run)
    assert_the_announcements(run)
    # The SDK's nonce is the one in the results and in every deal.
    given = [e for e in run.events if isinstance(e, NonceGiven)]
    assert [g.player for g in given] == [REMOTE]
    acked = [a for a in map(_decode, run.feed.inbox) if isinstance(a, dict) and a.get("nonce")]
    assert acked and all(a["ok"] and a["nonce"] == given[0].nonce for a in acked)
    assert run.results["fairness"]["nonces"] == {REMOTE: given[0].nonce}
    digest = fairness.nonces_digest({REMOTE: given[0].nonce})
    for spec in run.state.tables:
        table_seed = fairness.group_seed(config.seed, config.id, spec.group, digest)
        dealt = [e for e in run.logs[spec.table] if isinstance(e, T31Dealt)]
        assert [d.seed for d in dealt] == [t31_state.deal_seed(table_seed, d.deal) for d in dealt]


# --- the attack: watch the other table of the series ----------------------------------------


class TableWatcher:
    """A remote entrant that plays as ``inner`` but, at its first turn of each deal, waits (well
    inside its turn time) until another table of its series has finished that deal. It needs
    nothing but the public feed, which every player may read, and the table names, which say
    which tables are of one series (``<tournament>-s<series>t<table>``)."""

    def __init__(self, inner: Any, feed: PlayerFeed, scored: type[Event], patience: float = 3.0) -> None:
        self.inner, self.feed, self.scored, self.patience = inner, feed, scored, patience
        self.waited: set[tuple[str, int]] = set()

    def _other_finished(self, table: str, deal: int) -> bool:
        series = table.rsplit("t", 1)[0] + "t"
        others = {p.table for p in self.feed.public if p.table.startswith(series) and p.table != table}
        return bool(others) and all(
            any(
                (isinstance(p.event, self.scored) and p.event.deal >= deal)  # type: ignore[attr-defined]
                or isinstance(p.event, TableClosed)
                for p in self.feed.of(other)
            )
            for other in others
        )

    async def act(self, update: Any) -> Any:
        key = (update.view.table, update.view.deal)
        if key not in self.waited:
            self.waited.add(key)
            await self.feed.wait(lambda: self._other_finished(*key), self.patience)
        return self.inner.act(update)


def _revealed(event: Event) -> set[str]:
    """The cards a public event shows."""
    if isinstance(event, CardPlayed):
        return {event.card}
    if isinstance(event, (TrickTaken, CardsShown)):
        return set(event.cards)
    if isinstance(event, T31Dealt):
        return {c for c in event.deck if c != HIDDEN}
    if isinstance(event, (T31Took, T31Discarded)):
        return {str(event.card)} - {HIDDEN}
    if isinstance(event, T31DealEnded):
        return {c for hand in event.shown for c in hand}
    return set()


@dataclass
class Leak:
    """What another table's public feed showed of one of the remote entrant's deals before that
    deal was scored at the entrant's own table."""

    table: str
    deal: int
    by: str
    """The other table, which played the same deal (the same deal seed, as the stored logs say)."""
    cards: set[str] = field(default_factory=set)
    """Cards of the deal the entrant could not know yet (not its own, not shown at its table)."""
    guesses: list[tuple[str, int]] = field(default_factory=list)
    """Where the entrant can place such a card from the other table's public feed alone: (card,
    position). Skat: the position (0 forehand, 1 middlehand, 2 rearhand) that played it there,
    so it is in that position's hand here. Thirty-one: the other table's face-up card, deck
    position ``3 * players there``, so it is at that position of this deck too."""
    right: int = 0
    """Guesses the entrant's own deal (its stored log) bears out."""

    def __repr__(self) -> str:
        return f"{self.table} deal {self.deal}: {len(self.cards)} cards shown by {self.by}, placed {self.right}"


def cross_table_leaks(run: Run, dealt_kind: type[Event], scored_kind: type[Event]) -> tuple[list[Leak], int]:
    """For each deal of each of the remote entrant's tables that it is dealt in, whatever
    another table of its series that plays the very same deal showed on its public feed before
    the entrant's own deal was scored (in the order the public feed arrived). Also how many of
    its deals another table played too."""
    skat = dealt_kind is DealDealt
    leaks: list[Leak] = []
    shared = 0
    for spec in run.remote_tables():
        mine = run.logs[spec.table]
        seat = spec.players.index(REMOTE)
        own_public = run.feed.of(spec.table)
        for dealt in (e for e in mine if isinstance(e, dealt_kind)):
            n = dealt.deal  # type: ignore[attr-defined]
            seated = dealt.seats if skat else dealt.order  # type: ignore[attr-defined]
            if seat not in seated:
                continue  # out of the deal (a table of four's dealer, an eliminated seat)
            own = (skat_known if skat else t31_known)(mine, mine.index(dealt) + 1, seat)
            dealt_at = [p.seq for p in own_public if isinstance(p.event, dealt_kind) and p.event.deal == n]  # type: ignore[attr-defined]
            scored_at = [p.seq for p in own_public if isinstance(p.event, scored_kind) and p.event.deal == n]  # type: ignore[attr-defined]
            start, end = (dealt_at or [0])[0], (scored_at or [len(run.feed.public)])[0]
            for other in run.others_of(spec):
                twins = {e.deal for e in run.logs[other.table] if isinstance(e, dealt_kind) and e.seed == dealt.seed}  # type: ignore[attr-defined]
                if not twins:
                    continue
                shared += 1
                leak = Leak(spec.table, n, other.table)
                known = set(own)
                current, seats = 0, []
                for p in run.feed.public[:end]:
                    if p.table == spec.table and p.seq >= start:
                        known |= _revealed(p.event)
                    if p.table != other.table:
                        continue
                    if isinstance(p.event, dealt_kind):
                        current = p.event.deal  # type: ignore[attr-defined]
                        seats = list(p.event.seats if skat else p.event.order)  # type: ignore[attr-defined]
                    if current not in twins:
                        continue
                    news = _revealed(p.event) - known
                    leak.cards |= news
                    if skat and isinstance(p.event, CardPlayed) and p.event.card in news:
                        leak.guesses.append((p.event.card, seats.index(p.event.seat)))
                    elif not skat and isinstance(p.event, T31Dealt) and len(seats) != len(seated) and news:
                        leak.guesses.append((next(iter(news)), 3 * len(seats)))
                for card, position in leak.guesses:
                    if skat:
                        leak.right += card in dealt.hands[position]  # type: ignore[attr-defined]
                    else:
                        leak.right += dealt.deck[position] == card  # type: ignore[attr-defined]
                if leak.cards:
                    leaks.append(leak)
    return leaks, shared


def describe(leaks: list[Leak], shared: int, chance: str) -> str:
    guesses = sum(len(leak.guesses) for leak in leaks)
    right = sum(leak.right for leak in leaks)
    return (
        f"{len(leaks)} of the remote entrant's deals ({shared} shared with another table) were shown at another "
        f"table before they were scored at its own; from that table's public feed alone it placed {right} of "
        f"{guesses} cards it could not see in the right place of its own deal (chance: {chance}): {leaks[:3]}"
    )


async def test_a_remote_entrant_watching_the_other_table_of_its_series_learns_nothing_of_its_skat_deal(
    stack: Stack, nc: Client, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    config = cli_config(SKAT_ARGS)
    spy = await nats.connect(nats_server.url)
    watch_feed = PlayerFeed(spy, REMOTE)
    await watch_feed.start()
    try:
        bot = TableWatcher(make_bot("random", "eve"), watch_feed, DealScored)
        run = await play_tournament(nc, nats_server, stack, tmp_path, config, bot, nonce_first=False)
    finally:
        await spy.close()
    leaks, shared = cross_table_leaks(run, DealDealt, DealScored)
    assert leaks == [], describe(
        leaks, shared, "about one in two: a card it cannot see is in one of two hands or the skat"
    )


async def test_a_remote_entrant_watching_the_other_table_of_its_series_learns_nothing_of_its_thirty_one_deal(
    stack: Stack, nc: Client, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    config = cli_config(T31_ARGS)
    spy = await nats.connect(nats_server.url)
    watch_feed = PlayerFeed(spy, REMOTE)
    await watch_feed.start()
    try:
        bot = TableWatcher(make_bot("random", "eve", "thirty-one"), watch_feed, T31DealScored)
        run = await play_tournament(nc, nats_server, stack, tmp_path, config, bot, nonce_first=False)
    finally:
        await spy.close()
    leaks, shared = cross_table_leaks(run, T31Dealt, T31DealScored)
    # The table of three and the table of four deal from the same pack: the other table's face-up
    # card is a card of the watcher's stock or of an opponent's hand, shown as its deal starts.
    assert leaks == [], describe(leaks, shared, "about one in 40: the cards it cannot see")


# --- the nonce desk, attacked ------------------------------------------------------------------


def _desk_config(remote: list[str]) -> TournamentConfig:
    seed = fairness.new_server_seed()
    entrants = [*remote, "heuristic", "random"]
    return TournamentConfig(
        id="deskattack",
        entrants=entrants,
        bots={"heuristic": "heuristic", "random": "random"},
        series=1,
        duplicate=False,
        fair=fairness.SCHEME,
        seed=seed,
        commitment=fairness.commitment(seed),
        nonce_seconds=60.0,
    )


async def _player(server: EmbeddedServer, player: str) -> Client:
    return await nats.connect(server.url, inbox_prefix=f"_INBOX.{player}")


async def test_the_nonce_desk_refuses_every_odd_request_and_keeps_the_first_nonce(
    nc: Client, nats_server: EmbeddedServer
) -> None:
    remote = ["remote-a", "remote-b", "remote-c", "remote-d"]
    config = _desk_config(remote)
    state = TournamentState()
    state.apply(TournamentCreated(config=config, tables=schedule(config)))
    logged: list[TournamentEvent] = []

    async def append(event: TournamentEvent) -> None:
        logged.append(event)

    desk = NonceDesk(nc, state, remote, append, config.nonce_seconds)
    await desk.start()
    collecting = asyncio.ensure_future(desk.collect())
    conns = {p: await _player(nats_server, p) for p in [*remote, "mallory", "heuristic"]}
    subject = {p: request_subject(p, config.id) for p in conns}

    async def ask(player: str, body: bytes) -> dict[str, Any]:
        reply = await conns[player].request(subject[player], body, timeout=5.0)
        answer = msgspec.json.decode(reply.data) if reply.data[:1] == b"{" else msgspec.msgpack.decode(reply.data)
        assert isinstance(answer, dict)
        return answer

    try:
        first = secrets.token_hex(32)
        asked = await ask("remote-a", b'{"type": "commitment"}')
        assert asked["ok"] and asked["commitment"] == config.commitment and asked["open"] and not asked.get("nonce")
        # Who is no remote entrant gives no nonce: a stranger, and a built-in bot's id.
        for who in ("mallory", "heuristic"):
            assert (await ask(who, _nonce_request(first)))["code"] == "not_entrant"
        # Malformed: not JSON nor msgpack, another type, a list, too long.
        for body in (
            b"not json",
            b'{"type": "hello"}',
            b"[1, 2]",
            b'{"type": "nonce", "nonce": "' + b"a" * 2000 + b'"}',
        ):
            assert (await ask("remote-a", body))["code"] == "malformed", body[:40]
        # A bad nonce: not hex, too short, too long, not a string.
        for bad in ("xyz" * 10, "abcd", "a" * 129, 12345678901234567890):
            assert (await ask("remote-a", _nonce_request(bad)))["code"] == "bad_nonce", bad
        # The first nonce counts (in msgpack too); the same one again is fine; another is refused.
        taken = await ask("remote-a", msgspec.msgpack.encode({"type": "nonce", "nonce": first}))
        assert taken["ok"] and taken["nonce"] == first
        assert (await ask("remote-a", _nonce_request(first.upper())))["ok"]
        other = await ask("remote-a", _nonce_request(secrets.token_hex(32)))
        assert other["code"] == "nonce_taken" and not other["ok"]
        assert (await ask("remote-a", b'{"type": "commitment"}'))["nonce"] == first
        await _no_answer_off_the_senders_inbox(nc, nats_server, conns["remote-b"], subject["remote-b"])
        await _a_flood_is_dropped_and_another_entrant_is_answered(conns, subject, desk)
        # The window ends with remote-d silent: the nonces close, and a nonce after that is refused.
        desk.closes_at = time.time()
        await asyncio.wait_for(collecting, 10)
        late = await ask("remote-d", _nonce_request(secrets.token_hex(32)))
        assert late["code"] == "closed"
        assert (await ask("remote-a", _nonce_request(first)))["ok"]  # its own, still the one that counts
    finally:
        collecting.cancel()
        await desk.stop()
        for c in conns.values():
            await c.close()
    given = [e for e in logged if isinstance(e, NonceGiven)]
    closed = [e for e in logged if isinstance(e, NoncesClosed)]
    assert [g.player for g in given] == ["remote-a", "remote-b", "remote-c"] and given[0].nonce == first
    assert len(closed) == 1 and closed[0].nonces == {g.player: g.nonce for g in given}
    assert closed[0].digest == fairness.nonces_digest(closed[0].nonces) and logged[-1] is closed[0]


async def _no_answer_off_the_senders_inbox(nc: Client, server: EmbeddedServer, sender: Client, subject: str) -> None:
    """A request of remote-b's whose reply subject is not remote-b's own inbox (another player's
    inbox, a log subject, none) gets no answer and gives no nonce; then one with its own inbox is
    answered. The desk answers in the order it was asked, from one connection, so once the last
    answer arrived at a listener of everything, an answer to the earlier ones would have too."""
    everything = await nats.connect(server.url)
    heard: list[str] = []

    async def on_any(msg: Msg) -> None:
        heard.append(msg.subject)

    await everything.subscribe(">", cb=on_any)
    await everything.flush()
    spoofed = ["_INBOX.remote-a.stolen.1", "skat.log.sometable.deal_dealt", "_INBOX.>", "_INBOX.remote-b"]
    for reply in spoofed:
        await sender.publish(subject, _nonce_request(secrets.token_hex(32)), reply=reply)
    await sender.publish(subject, _nonce_request(secrets.token_hex(32)))  # no reply subject at all
    answer = await sender.request(subject, b'{"type": "commitment"}', timeout=5.0)
    assert json.loads(answer.data)["ok"] and not json.loads(answer.data).get("nonce")  # none of them counted
    assert await _eventually(lambda: answer.subject in heard), "the listener of everything missed the answer"
    await everything.close()
    answered = [reply for reply in spoofed if reply in heard]
    assert answered == [], f"the desk answered on {answered}"


async def _a_flood_is_dropped_and_another_entrant_is_answered(
    conns: dict[str, Client], subject: dict[str, str], desk: NonceDesk
) -> None:
    """remote-c floods the desk; remote-b's nonce, asked after the flood reached the server, is
    still answered, and most of the flood is dropped unread (the desk's rate limit per player)."""
    flooder = conns["remote-c"]
    answers = await flooder.subscribe("_INBOX.remote-c.flood.*")
    sent = 300
    dropped_before = desk.limits.dropped
    for k in range(sent):
        await flooder.publish(subject["remote-c"], b'{"type": "commitment"}', reply=f"_INBOX.remote-c.flood.{k}")
    await flooder.flush()
    b_nonce = secrets.token_hex(32)
    reply = await conns["remote-b"].request(subject["remote-b"], _nonce_request(b_nonce), timeout=5.0)
    assert json.loads(reply.data) | {"nonces_close": 0} == {
        "ok": True, "tournament": "deskattack", "commitment": desk.config.commitment, "nonce": b_nonce,
        "nonces_close": 0, "open": True,
    }  # fmt: skip
    await flooder.flush()
    answered = 0
    with contextlib.suppress(TimeoutError, nats.errors.TimeoutError):
        while True:
            await answers.next_msg(timeout=0.5)
            answered += 1
    await answers.unsubscribe()
    assert 1 <= answered < sent // 2, answered
    assert desk.limits.dropped - dropped_before == sent - answered  # each one answered or dropped unread
    # The flooder's bucket refills: its own nonce is taken a moment later.
    for _ in range(50):
        try:
            msg = await flooder.request(subject["remote-c"], _nonce_request(secrets.token_hex(32)), timeout=0.3)
        except (TimeoutError, nats.errors.TimeoutError):
            continue
        assert json.loads(msg.data)["ok"]
        return
    raise AssertionError("the flooder never got its nonce in")


# --- the command line --------------------------------------------------------------------------


def test_a_weak_seed_with_remote_entrants_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKAT_NATS_URL", raising=False)
    out = tmp_path / "runs"
    (tmp_path / "weak.toml").write_text(f'seed = "league-2026"\nremote = ["{REMOTE}"]\n')
    for argv in (
        [*SKAT_ARGS, "--seed", "league-2026"],
        [*T31_ARGS, "--seed", "league-2026"],
        [*SKAT_ARGS, "--seed", ""],
        [
            "--config",
            str(tmp_path / "weak.toml"),
            "--bots",
            "heuristic,random,random,heuristic,random",
            "--series",
            "2",
        ],
    ):
        code = main(["tournament", *argv, "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert len(err.strip().splitlines()) == 1 and err.startswith("skat tournament"), err
        assert "--seed" in err and "Traceback" not in err, err
    assert not out.exists(), "a refused tournament created its results directory"
    # A secret of 128 random bits passes, and is the seed the deals follow from.
    strong = secrets.token_hex(16)
    config = cli_config([*SKAT_ARGS, "--seed", strong])
    assert config.seed == strong and config.commitment == fairness.commitment(strong)


def test_remote_entrants_get_a_random_seed_and_ids_that_say_nothing_of_it() -> None:
    """Without --seed: a fresh random seed of 128 bits or more whenever an entrant is remote
    (the guessable default 'skatbus' only among built-in bots, whose commitment anyone can
    check against 'skatbus'). The ids are new each run whatever the seed; the same seed under
    another id deals other cards."""
    seeds = [cli_config(SKAT_ARGS).seed for _ in range(3)] + [cli_config(T31_ARGS).seed]
    assert len(set(seeds)) == 4
    for seed in seeds:
        assert seed_weakness(seed) is None and len(seed) >= 32 and seed != "skatbus"
    builtin_only = cli_config(["--bots", "heuristic,random,stepping-random,random,heuristic,random"])
    assert builtin_only.seed == "skatbus" and not [e for e in builtin_only.entrants if e not in builtin_only.bots]
    strong = secrets.token_hex(16)
    a, b = cli_config([*SKAT_ARGS, "--seed", strong]), cli_config([*SKAT_ARGS, "--seed", strong])
    assert a.id != b.id and strong not in a.id
    # Not even a short hash of the seed: the random parts of two ids of one seed share no 24 bits.
    mine_id, their_id = a.id.rsplit("-", 1)[1], b.id.rsplit("-", 1)[1]
    assert not {mine_id[k : k + 6] for k in range(11)} & {their_id[k : k + 6] for k in range(11)}
    other_seed = cli_config([*SKAT_ARGS, "--seed", secrets.token_hex(16), "--id", a.id])
    # The schedule (table names and seats) is the same under another seed: nothing of the seed in it.
    assert [(t.table, t.players, t.seed) for t in schedule(a)] == [
        (t.table, t.players, t.seed) for t in schedule(msgspec.structs.replace(other_seed, entrants=a.entrants))
    ]
    for spec in schedule(a):
        assert spec.table.startswith(f"{a.id}-s") and spec.seed == ""  # no seed in a TableSpec either
    digest = fairness.nonces_digest({})
    mine, theirs = (fairness.group_seed(strong, c.id, 1, digest) for c in (a, b))
    assert mine != theirs
    assert deal_from_seed(deal_seed(mine, 1)) != deal_from_seed(deal_seed(theirs, 1))
    with pytest.raises(UsageError, match="--seed"):
        cli_config([*SKAT_ARGS, "--seed", "0123456789abcdef"])


# --- skat auth: the tournament log is not a player's ------------------------------------------


async def test_under_skat_auth_a_remote_entrant_gives_its_nonce_but_cannot_read_the_tournament_log(
    tmp_path: Path,
) -> None:
    """The tournament's first event holds the whole configuration, the server seed included, in
    the ``SKATTOUR`` stream (``skat.tournament.<id>``): without ``skat auth`` any client may read
    it. Under ``skat auth`` the broker keeps a player off it, while the nonce protocol still works
    through the player's own subjects."""
    auth = write_auth(tmp_path / "auth", [REMOTE], store_dir=str(tmp_path / "js"), listen=("127.0.0.1", free_port()))
    server = EmbeddedServer(config=auth.config, host=auth.host, port=auth.port, tls=auth.tls).start()
    errors: list[str] = []

    async def error_cb(exc: Exception) -> None:
        errors.append(str(exc).lower())

    services = player = None
    try:
        services = await open_connection(auth.settings(SERVICE_USER, server.url))
        player = await open_connection(
            auth.settings(REMOTE, server.url), inbox_prefix=f"_INBOX.{REMOTE}", error_cb=error_cb
        )
        config = msgspec.structs.replace(_desk_config([REMOTE]), id="authattack")
        tlog = TournamentLog(services)
        await tlog.ensure_stream()
        created = TournamentCreated(config=config, tables=schedule(config))
        await tlog.append(config.id, created)
        stored = await TournamentLog(services).read(config.id)
        assert isinstance(stored[0], TournamentCreated) and stored[0].config.seed == config.seed  # it is there
        heard: list[Msg] = []

        async def spy(msg: Msg) -> None:
            heard.append(msg)

        await player.subscribe("skat.tournament.>", cb=spy)
        assert await _eventually(lambda: any("permissions violation" in e and "skat.tournament" in e for e in errors))
        await player.publish(f"$JS.API.STREAM.MSG.GET.{'SKATTOUR'}", b'{"seq": 1}', reply=f"_INBOX.{REMOTE}.x")
        assert await _eventually(lambda: any("permissions violation" in e and "$js.api" in e for e in errors))
        # The nonce protocol through the player's own subjects: announcement in, nonce out, answer back.
        state = TournamentState()
        state.apply(created)
        logged: list[TournamentEvent] = []

        async def append(event: TournamentEvent) -> None:
            logged.append(event)
            await tlog.append(config.id, event)

        announced: list[dict[str, Any]] = []

        async def on_announcement(msg: Msg) -> None:
            announced.append(json.loads(msg.data))

        await player.subscribe(announce_subject(config.id), cb=on_announcement)
        await player.flush()
        desk = NonceDesk(services, state, [REMOTE], append, 30.0)
        await desk.start()
        collecting = asyncio.ensure_future(desk.collect())
        assert await _eventually(lambda: bool(announced), 10.0)
        nonce = secrets.token_hex(16)
        reply = await player.request(request_subject(REMOTE, config.id), _nonce_request(nonce), timeout=5.0)
        assert json.loads(reply.data)["ok"] and json.loads(reply.data)["nonce"] == nonce
        await asyncio.wait_for(collecting, 10)
        await desk.stop()
        assert isinstance(logged[-1], NoncesClosed) and logged[-1].nonces == {REMOTE: nonce}
        assert heard == [], "the tournament log reached a player"
    finally:
        for conn in (player, services):
            if conn is not None:
                await conn.close()
        server.stop()


async def _eventually(done: Callable[[], bool], timeout: float = 5.0) -> bool:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not done():
        if loop.time() > end:
            return False
        await asyncio.sleep(0.05)
    return True
