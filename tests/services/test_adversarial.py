"""The attacker's view: a player (mallory) who publishes only where the broker lets a player
publish (``skat.cmd.mallory.>``, ``skat.hello.mallory``, any reply subject), and reads only
what a player may read. Nothing she does may write into a log beyond her own legal moves, show
her a card the rules have not revealed, or disturb the other tables.

The broker's own refusals (other players' subjects, the log, JetStream's API) are tested with
real per-player users in test_auth.py; here the services are the target.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

import msgspec
import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.events import (
    MSGPACK,
    CardPlayed,
    CardsShown,
    DealDealt,
    Event,
    GameDeclared,
    KontraSaid,
    SkatTaken,
    TableOpened,
)
from protocol.skat import cards as C
from protocol.skat.commands import Bid, Pass, PickUpSkat, PlayCard
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, fold
from protocol.skat.views import SPECTATOR, view
from protocol.subjects import (
    command_subject,
    is_token,
    parse_log_subject,
    parse_view_subject,
    public_subject,
    table_log,
    view_subject,
)
from protocol.wire import OpenTable, Reply, Update, decode, encode
from services.main import wait_ready
from services.store import STREAM, EventStore
from skatbus.bots import HashedBot
from skatbus.local import play_table
from skatbus.player import Inbox, RemotePlayer
from tests.bus import Stack, open_table, wait_closed

pytestmark = pytest.mark.timeout(240)


def _pure(table: str, players: list[str], rules: Rules, seed: str, policy: str) -> list[Event]:
    return play_table(table, players, [HashedBot(policy)] * len(players), rules, seed).log  # type: ignore[no-any-return]


class Recorder:
    """Everything the services publish to players and spectators, as received."""

    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.views: list[Msg] = []
        self.public: list[Msg] = []
        self.elsewhere: list[Msg] = []
        self._subs: list[object] = []

    async def start(self, elsewhere: Iterable[str] = ()) -> None:
        async def on_view(msg: Msg) -> None:
            self.views.append(msg)

        async def on_public(msg: Msg) -> None:
            self.public.append(msg)

        async def on_elsewhere(msg: Msg) -> None:
            self.elsewhere.append(msg)

        self._subs.append(await self.nc.subscribe("skat.view.>", cb=on_view))
        self._subs.append(await self.nc.subscribe("skat.public.>", cb=on_public))
        for subject in elsewhere:
            self._subs.append(await self.nc.subscribe(subject, cb=on_elsewhere))
        await self.nc.flush()


async def _seat_everyone(nc: Client, names: Iterable[str], policy: str) -> list[RemotePlayer]:
    players = [RemotePlayer(nc, name, HashedBot(policy)) for name in names]
    for p in players:
        await p.start()
    await nc.flush()
    return players


# --- what a player receives ------------------------------------------------------------------


class Entitlement:
    """Which cards each seat (and a spectator) may know at each log position, by the rules:
    its own dealt hand, the skat once it took it, every card played or shown, and an ouvert
    declarer's hand once play begins. Worked out from the log, independently of the views code."""

    def __init__(self, log: list[Event]) -> None:
        self.known: list[dict[int, frozenset[str]]] = []
        """Per position i (after events 0..i-1): seat -> cards it may know (SPECTATOR: public)."""
        state = TableState()
        own: dict[int, set[str]] = {}
        public: set[str] = set()
        self.known.append({SPECTATOR: frozenset()})
        for event in log:
            state.apply(event)
            if isinstance(event, DealDealt):
                public = set()
                own = {seat: set(event.hands[i]) for i, seat in enumerate(event.seats)}
            elif isinstance(event, SkatTaken):
                own[event.seat] |= set(event.cards)
            elif isinstance(event, CardPlayed):
                public.add(event.card)
            elif isinstance(event, CardsShown):
                public |= set(event.cards)
            deal = state.deal
            if (
                deal is not None
                and deal.declaration is not None
                and deal.declaration.ouvert
                and deal.phase == "playing"
            ):
                public |= set(C.codes(deal.hands[deal.declarer]))
            entry = {seat: frozenset(cards | public) for seat, cards in own.items()}
            entry[SPECTATOR] = frozenset(public)
            self.known.append(entry)

    def allowed(self, index: int, seat: int) -> frozenset[str]:
        entry = self.known[index]
        return entry.get(seat, entry[SPECTATOR])


def _cards_in(obj: object) -> set[str]:
    """Every card code anywhere in a message, as JSON would carry it."""
    text = msgspec.json.encode(obj).decode()
    return {code for code in C.CODES if f'"{code}"' in text}


AUDITED = [
    # (table, players, rules, seed): Kontra/Re with Bock, Ramsch, four players, duplicates.
    ("au-kontra", ["ann", "bob", "mallory"], Rules(rounds=2, kontra=True, bock=True, turn_seconds=60), "au-1"),
    ("au-ramsch", ["ann", "bob", "mallory"], Rules(rounds=2, ramsch=True, kontra=True, turn_seconds=60), "au-2"),
    ("au-four", ["ann", "bob", "mallory", "dan"], Rules(rounds=1, players=4, kontra=True, turn_seconds=60), "au-3"),
    ("au-dup-a", ["ann", "bob", "mallory"], Rules(rounds=1, turn_seconds=60), "au-dup"),
    ("au-dup-b", ["mallory", "ann", "bob"], Rules(rounds=1, turn_seconds=60), "au-dup"),
]


async def test_every_message_a_player_or_spectator_receives_shows_only_revealed_cards(stack: Stack, nc: Client) -> None:
    recorder = Recorder(nc)
    await recorder.start()
    players = await _seat_everyone(nc, ["ann", "bob", "mallory", "dan"], "audit")
    mallory = next(p for p in players if p.player == "mallory")
    for table, names, rules, seed in AUDITED:
        assert (await open_table(nc, OpenTable(table=table, players=names, rules=rules, seed=seed))).ok
    logs = {table: await wait_closed(nc, table) for table, *_ in AUDITED}
    assert await mallory.hello() == 0  # the hello answer: a count, nothing else
    for p in players:
        await p.stop()
    await asyncio.sleep(0.2)  # the last public events

    for table, names, rules, seed in AUDITED:
        assert logs[table] == _pure(table, names, rules, seed, "audit")
    # The tables cover the corners where cards change hands or are laid open.
    every = [e for log in logs.values() for e in log]
    assert any(isinstance(e, KontraSaid) for e in every)
    assert any(isinstance(e, GameDeclared) and e.game.ouvert for e in every), "no ouvert game: pick other seeds"
    assert any(type(e).__name__ == "DealScored" and e.result.kind == "ramsch" for e in every)  # type: ignore[attr-defined]

    entitled = {table: Entitlement(log) for table, log in logs.items()}
    seats = {table: names for table, names, *_ in AUDITED}
    checked = 0
    for msg in recorder.views:
        player, table = parse_view_subject(msg.subject)
        update: Update = decode(msg.data, Update)
        assert update.view.table == table and update.view.seat == seats[table].index(player)
        seat = seats[table].index(player)
        seen = _cards_in(update)
        extra = seen - entitled[table].allowed(update.index, seat)
        assert not extra, f"{player} saw {sorted(extra)} at {table}:{update.index}"
        # And the view is exactly the engine's view of that position, with no seed anywhere.
        assert update.view == view(fold(logs[table][: update.index]), seat)
        checked += 1
    for msg in recorder.public:
        table = msg.subject.rpartition(".")[2]
        index = int((msg.headers or {})["Skat-Index"])
        event = MSGPACK.decode(msg.data)
        extra = _cards_in(event) - entitled[table].allowed(index + 1, SPECTATOR)
        assert not extra, f"the public feed showed {sorted(extra)} at {table}:{index}"
        if isinstance(event, (TableOpened, DealDealt)):
            assert event.seed == ""
        checked += 1
    assert checked > 500


# --- odd tokens and spoofed reply subjects ---------------------------------------------------

ODD_TABLES = ["*", ">", "real.*", "*.x", "real.bid", "a" * 65, "rëal", "real$", "%2A", "-", "_INBOX"]
SPOOFED_REPLIES = [
    "_INBOX.ann.stolen",  # another player's inbox
    "_INBOX.mallory",  # no token after the prefix
    "_INBOX.mallory.*",
    "_INBOX.malloryx.y",
    "skat.log.real.card_played",  # the log itself
    "skat.view.ann.real",
    "skat.public.real",
    "skat.cmd.ann.nosuch",
]


async def test_odd_tokens_and_spoofed_replies_change_nothing(stack: Stack, nc: Client) -> None:
    names = ["ann", "bob", "mallory"]
    rules = Rules(rounds=2, kontra=True, turn_seconds=60)
    recorder = Recorder(nc)
    await recorder.start(elsewhere=["_INBOX.ann.stolen", "skat.log.>", "skat.cmd.ann.nosuch", "skat.view.ann.real.>"])
    answers: list[Msg] = []

    async def on_answer(msg: Msg) -> None:
        answers.append(msg)

    await nc.subscribe("_INBOX.mallory.ok.*", cb=on_answer)
    players = await _seat_everyone(nc, names, "odd")
    assert (await open_table(nc, OpenTable(table="real", players=names, rules=rules, seed="real"))).ok
    # Mallory tries every odd table token, every command, and every reply subject, while the
    # real table plays (her own bot plays it honestly).
    # Mallory's own connection: the broker answers "no responders" (503) to the sender alone.
    attacker = await nats.connect(stack.url)
    payloads = [
        encode(PickUpSkat()),
        encode(Bid(value=18)),
        encode(Pass()),
        b'{"type":"play","card":"CJ"}',
        encode(PlayCard(card="SA")),
    ]
    for i, token in enumerate(ODD_TABLES):
        for j, data in enumerate(payloads):
            await attacker.publish(f"skat.cmd.mallory.{token}", data, reply=f"_INBOX.mallory.ok.{i}-{j}")
            await attacker.publish(
                f"skat.cmd.mallory.{token}", data, reply=SPOOFED_REPLIES[(i + j) % len(SPOOFED_REPLIES)]
            )
    for reply in SPOOFED_REPLIES:
        for data in payloads:
            await attacker.publish("skat.cmd.mallory.real", data, reply=reply)
        await attacker.publish("skat.hello.mallory", b"", reply=reply)
    await attacker.flush()
    log = await wait_closed(nc, "real")
    for p in players:
        await p.stop()
    await attacker.close()
    await asyncio.sleep(0.3)

    assert log == _pure("real", names, rules, "real", "odd")  # as if she had done nothing
    info = await nc.jetstream().stream_info(STREAM, subjects_filter="skat.log.>")
    tables = {parse_log_subject(s)[0] for s in (info.state.subjects or {})}
    assert tables == {"real"}, tables
    assert len(await EventStore(nc).read("real")) == len(log)  # nothing stored beside the events
    # Nothing was published where she pointed the replies; only the store's own events on the log.
    on_log = [m for m in recorder.elsewhere if m.subject.startswith("skat.log.")]
    assert all(
        m.subject.startswith("skat.log.real.") and (m.headers or {}).get("Nats-Msg-Id", "").startswith("real:")
        for m in on_log
    ), [
        (m.subject, m.headers, m.data[:40])
        for m in on_log
        if not (m.headers or {}).get("Nats-Msg-Id", "").startswith("real:")
    ]
    assert len(on_log) == len(log)
    assert not [m for m in recorder.elsewhere if not m.subject.startswith("skat.log.")]
    # Every view went to a real player at the real table.
    for msg in recorder.views:
        player, table = parse_view_subject(msg.subject)
        assert table == "real" and decode(msg.data, Update).view.table == "real"
    # The odd tokens were refused with a reason, into her own inbox.
    got = {ODD_TABLES[int(m.subject.split(".")[-1].split("-")[0])]: decode(m.data, Reply).code for m in answers}
    for token, code in got.items():
        assert code == ("no_table" if is_token(token) else "bad_subject"), (token, code)
    # Every odd id is answered, extra tokens (a dot in the id) too (tests/services/test_bad_subjects.py).
    assert {"*", ">", "a" * 65, "rëal", "real$", "real.*", "*.x", "real.bid"} <= set(got)
    assert all(stack.alive(n) for n in ("dealer", "bidding", "play", "scoring", "views"))


def test_subject_ids_are_checked_in_one_place() -> None:
    for good in ["t1", "A-b_9", "x" * 64]:
        assert is_token(good)
    for bad in ["", "*", ">", "a.b", "x" * 65, "t1\n", "ä", " ", "a b", "a\x00"]:
        assert not is_token(bad)
        for make in (table_log, public_subject, lambda t: command_subject("p", t), lambda t: view_subject(t, "t")):
            with pytest.raises(ValueError):
                make(bad)


async def test_the_store_refuses_to_read_or_write_under_an_odd_id(nc: Client) -> None:
    store = EventStore(nc)
    await store.ensure_stream()
    for bad in ["*", ">", "a.b"]:
        with pytest.raises(ValueError):
            await store.read(bad)
        with pytest.raises(ValueError):
            await store.append(bad, 0, TableOpened(table=bad, players=[], rules=Rules(), seed=""), 0)


# --- floods ---------------------------------------------------------------------------------


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def test_a_flood_of_commands_hellos_and_large_messages_costs_the_others_nothing(
    nats_server: object, nc: Client
) -> None:
    from services.main import wait_ready

    stack = Stack(nats_server.url)  # type: ignore[attr-defined]
    stack.env["SKAT_PLAYER_RATE"] = "200"
    stack.start_all()
    try:
        await wait_ready(stack.url)
        names = ["ann", "bob", "cyd"]
        rules = Rules(rounds=1, kontra=True, turn_seconds=60)
        players = await _seat_everyone(nc, names, "calm")
        notices: list[Msg] = []

        async def on_notice(msg: Msg) -> None:
            notices.append(msg)

        await nc.subscribe("_INBOX.mallory.flood.>", cb=on_notice)
        # She sits at a table of her own (so the services listen to her), and floods.
        assert (
            await open_table(
                nc, OpenTable(table="hers", players=["mallory", "x1", "x2"], rules=Rules(turn_seconds=600))
            )
        ).ok
        for t in ("calm1", "calm2", "calm3"):
            assert (await open_table(nc, OpenTable(table=t, players=names, rules=rules, seed=t))).ok
        rss_before = {name: _rss_mb(ps[0].pid) for name, ps in stack.procs.items()}
        # Ten times her rate for two seconds: commands to real and made-up tables, hellos, and
        # messages of 60 KB.
        big = b"{" + b" " * 60_000 + b"}"
        started = time.monotonic()
        sent = 0
        while (now := time.monotonic()) - started < 2.0:
            # Paced by the clock, not by sleeps: ten times her rate however slow the machine.
            due = int((now - started) * 10 * 200)
            while sent < due:
                table = "hers" if sent % 2 else f"nosuch{sent % 100}"
                await nc.publish(
                    f"skat.cmd.mallory.{table}", encode(Bid(value=18)), reply=f"_INBOX.mallory.flood.{sent}"
                )
                sent += 1
            await nc.publish("skat.hello.mallory", b"", reply=f"_INBOX.mallory.flood.h{sent}")
            await nc.publish("skat.cmd.mallory.hers", big, reply=f"_INBOX.mallory.flood.b{sent}")
            await asyncio.sleep(0.02)
        flooded = time.monotonic() - started
        elapsed = flooded + 0.5  # (and a little for the last to be read)
        logs = {t: await wait_closed(nc, t, timeout=60) for t in ("calm1", "calm2", "calm3")}
        for p in players:
            await p.stop()
        for t, log in logs.items():
            assert log == _pure(t, names, rules, t, "calm")
        assert sent >= 9 * 200 * (flooded - 0.1)  # ten times her rate
        # Beyond her burst, the services closed her door: the broker answered "no responders"
        # (503) to the rest, so the services read about one burst, not the flood.
        answered = [m for m in notices if not (m.headers or {}).get("Status")]
        refused_by_broker = [m for m in notices if (m.headers or {}).get("Status") == "503"]
        assert len(answered) <= 2 * 2 * 200 + 50, (len(answered), sent)
        assert len(refused_by_broker) > sent / 2, (len(refused_by_broker), sent)
        limited = [m for m in answered if b"rate_limited" in m.data]
        # Told once per closing of her door, and once a second about made-up tables.
        assert 1 <= len(limited) <= 3 + elapsed, len(limited)
        for name, procs in stack.procs.items():
            assert _rss_mb(procs[0].pid) - rss_before[name] < 40, f"{name} grew under the flood"
        assert all(stack.alive(n) for n in ("dealer", "bidding", "play", "scoring", "views"))
    finally:
        stack.stop()


# --- the player's own choice of encoding -----------------------------------------------------


async def test_a_player_asks_for_json_updates_itself_and_keeps_them_across_a_restart(stack: Stack, nc: Client) -> None:
    names = ["ann", "bob", "jay"]
    others = await _seat_everyone(nc, ["ann", "bob"], "js")
    jay = RemotePlayer(nc, "jay", HashedBot("js"), json=True)
    await jay.start()
    assert await jay.hello() == 0  # says it wants JSON; no prompt pending yet
    raw: list[bytes] = []

    async def on_update(msg: Msg) -> None:
        raw.append(msg.data)

    await nc.subscribe("skat.view.jay.*", cb=on_update)
    rules = Rules(rounds=1, turn_seconds=60)
    assert (await open_table(nc, OpenTable(table="js1", players=names, rules=rules, seed="js1"))).ok
    await wait_closed(nc, "js1")
    stack.kill("views")  # the choice is kept in the store, not in the process
    stack.start("views")
    await wait_ready(stack.url)  # prompts do not wait for views (bidding and play send them), the hello below does
    assert (await open_table(nc, OpenTable(table="js2", players=names, rules=rules, seed="js2"))).ok
    await wait_closed(nc, "js2")
    for p in [*others, jay]:
        await p.stop()
    assert raw and all(data.startswith(b"{") for data in raw), [
        (i, d[:60]) for i, d in enumerate(raw) if not d.startswith(b"{")
    ]
    assert {msgspec.json.decode(d)["view"]["table"] for d in raw} == {"js1", "js2"}
    # A hello that cannot be read is answered with the reason, and changes nothing.
    inbox = Inbox(nc, "jay")
    await inbox.start()
    answer = msgspec.json.decode((await inbox.request("skat.hello.jay", b'{"format": "xml"}', 2.0)).data)
    assert "error" in answer and answer["prompts"] == 0


async def test_asking_for_a_table_before_it_opens_does_not_hide_it_from_its_players(stack: Stack, nc: Client) -> None:
    """Table ids can be guessed (tournaments number them). Mallory asks for one just before it
    opens; the services remember "no such table" for her only, never for its players."""
    names = ["ann", "bob", "cyd"]
    players = await _seat_everyone(nc, names, "soon")
    inbox = Inbox(nc, "mallory")
    await inbox.start()
    for _ in range(3):
        answer = decode((await inbox.request("skat.cmd.mallory.soon", encode(Bid(value=18)), 2.0)).data, Reply)
        assert answer.code == "no_table"
    rules = Rules(rounds=1, turn_seconds=60)
    assert (await open_table(nc, OpenTable(table="soon", players=names, rules=rules, seed="soon"))).ok
    log = await wait_closed(nc, "soon")
    for p in players:
        await p.stop()
    assert log == _pure("soon", names, rules, "soon", "soon")
    assert not [r for p in players for r in p.rejections] and not any(p.retries for p in players)
