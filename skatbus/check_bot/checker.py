"""The checks: tables played with the bot and two held built-in bots, judged from the traffic.

Every game is checked the same way; ``games.GAMES`` says how a game's tables are set up (its
rules, the built-in bots beside the bot, whether a table check plays the whole game).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

import msgspec
from nats.aio.client import Client

from protocol.events import TableClosed
from protocol.subjects import (
    is_inbox,
)
from protocol.wire import Hello, OpenTable

from ..player import RETRY_CODES, RemotePlayer
from ..tournament import open_table, set_paused
from .common import (
    AT_FIX,
    CHECKS,
    DEADLINE_FIX,
    DEDUPE_FIX,
    HELLO_FIX,
    HELLO_WAIT,
    INBOX_FIX,
    JSON_FIX,
    MOVED_ON,
    MSGPACK_FIX,
    RECONNECT_FIX,
    RECONNECT_TURN_SECONDS,
    STALE_FIX,
    TABLE_CHECKS,
    TURN_SECONDS,
    WATCH,
    CheckError,
)
from .games import GAMES, CheckedGame
from .relay import Relay
from .report import Result, _fail, _pass, _skip
from .traffic import Prompt, Sent, Traffic

LATE_WAIT = 5.0
"""Seconds to wait, after the bot was timed out, for its late command (to say how late it was)."""


# --- the other two seats -----------------------------------------------------------------------


Hold = Callable[[Any], Awaitable[None]]
"""Called with a held bot's update (its game's) before it moves."""


class HeldBot:
    """A built-in bot that check-bot can keep thinking: while it does, its table stands still
    (it is this seat's turn), so check-bot can send the bot something and watch what follows."""

    def __init__(self, seed: str, holds: dict[str, Hold], game: CheckedGame = GAMES["skat"]) -> None:
        self.bot = game.helper(seed)
        self.holds = holds

    async def act(self, obs: Any) -> Any:
        hold = self.holds.get(obs.view.table)
        if hold is not None:
            await hold(obs)
        return self.bot.act(obs)


# --- the checks ----------------------------------------------------------------------------------


def _answers_too_many(commands: list[Sent]) -> list[Sent]:
    """The commands for one prompt beyond the first answer and its retries: a retry is due
    only after a retry code or no answer at all. (Counted, not timed: check-bot's connection
    may see a reply before the command it answers, each subscription having its own queue.)"""
    allowed, extra = 1, []
    for s in commands:
        if allowed <= 0:
            extra.append(s)
            continue
        allowed -= 1
        if s.answer is None or (not s.answer.ok and s.answer.code in RETRY_CODES):
            allowed += 1
    return extra


def _outcome(s: Sent) -> str:
    if s.answer is None:
        return "no answer"
    return "accepted" if s.answer.ok else s.answer.code


def _phase(p: Prompt) -> str:
    return str(p.update.view.phase)


def _ago(t: float, since: float) -> str:
    return f"{t - since:.2f} s"


class Checker:
    """Runs the checks against one bot, on ``nc`` (a connection that may see and send the
    bot's subjects), and keeps their results."""

    def __init__(
        self,
        nc: Client,
        player: str,
        relay: Relay,
        out: TextIO,
        json_only: bool = False,
        short: float = 3.0,
        wait: float = 120.0,
        only: tuple[str, ...] = TABLE_CHECKS,
        game: str = "skat",
    ) -> None:
        self.nc = nc
        self.game = GAMES[game]
        self.player = player
        self.relay = relay
        self.out = out
        self.json_only = json_only
        self.short = short
        self.wait = wait
        self.only = only
        self.results: dict[str, Result] = {}
        self.run_id = secrets.token_hex(3)
        self.others = [f"cb{self.run_id}-w", f"cb{self.run_id}-e"]
        self.holds: dict[str, Hold] = {}
        self.traffic = Traffic(nc, player, default_game=game)
        self.seats: dict[str, int] = {}
        self._players: list[RemotePlayer] = []
        self._tables = 0
        self._connected_at = 0.0
        self.relay_opened = time.time()
        self.asked_format = ""

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def fix(self, text: str) -> str:
        return text.format(id=self.player, short=self.short, event=self.game.example_event)

    async def run(self) -> dict[str, Result]:
        await self.traffic.start()
        self._players = [RemotePlayer(self.nc, p, HeldBot(p, self.holds, self.game)) for p in self.others]
        for p in self._players:
            await p.start()
        await self.nc.flush()
        try:
            await self._run()
        finally:
            # Pass, fail or Ctrl-C: the tables it opened go on no longer, so the bot is not
            # prompted at them after check-bot has gone (paused: the dealer's one way to stop a table).
            cleanup = asyncio.ensure_future(self._pause_tables())
            cancelled = False
            while not cleanup.done():
                try:
                    await asyncio.shield(cleanup)
                except asyncio.CancelledError:
                    cancelled = True  # interrupted again: finish the clean-up first (it is bounded)
            for p in self._players:
                await p.stop()
            await self.traffic.stop()
            if cancelled:
                raise asyncio.CancelledError
        return self.results

    async def _pause_tables(self) -> None:
        """Pause every table of this run that has not closed (at most a few seconds)."""
        tables = [t for t in self.seats if not self.traffic.has(t, TableClosed)]
        if tables:
            with contextlib.suppress(Exception):
                await set_paused(self.nc, tables, True, "skat check-bot is done", timeout=2.0, patience=3.0)

    async def _run(self) -> None:
        if not await self._until(lambda: bool(self.relay.connections), self.wait):
            self.results["connect"] = _fail(
                "connect",
                f"a connection to 127.0.0.1:{self.relay.port} within {self.wait:g} s",
                "nothing connected",
                f"start your bot as player {self.player} with the server address above (and check it is running)",
            )
            for name in CHECKS:
                self.results.setdefault(name, _skip(name, "not run: the bot never connected"))
            return
        self._connected_at = self.relay.connections[0]
        self.say(f"connected; waiting up to {HELLO_WAIT:g} s for its hello")
        await self._until(lambda: any(h.answer is not None for h in self.traffic.hellos), HELLO_WAIT)
        await asyncio.sleep(0.2)  # a hello without an answer (a wrong inbox) is seen by now too
        self.results["connect"] = _pass(
            "connect", f"connected {_ago(self._connected_at, self.relay_opened)} after the relay opened"
        )
        self.results["hello"] = self._judge_hello()
        for name in TABLE_CHECKS:
            if name not in self.only:
                self.results[name] = _skip(name, "not run (--only)")
                continue
            if not self.relay.links and not await self._until(lambda: bool(self.relay.links), 10.0):
                self.results[name] = _skip(name, "not run: the bot is not connected (it went away)")
                continue
            if name in ("repeat", "stale", "reconnect", "deadline") and self._use_json() is None:
                self.results[name] = _skip(name, "not run: the bot answered no prompt, in either encoding (see above)")
                continue
            self.say(f"checking: {name} ({CHECKS[name]})")
            self.results[name] = await getattr(self, f"_check_{name}")()
        self.results["inbox"] = self._judge_inbox()
        self.results["at"] = self._judge_at()
        self.results["refusals"] = self._judge_refusals()

    @staticmethod
    async def _until(condition: Callable[[], bool], timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                return False
            await asyncio.sleep(0.02)
        return True

    # --- tables ---

    def _new_table(self, name: str) -> tuple[str, list[str], int]:
        table = f"check-{self.run_id}-{name}"
        seat = self._tables % 3
        self._tables += 1
        players = list(self.others)
        players.insert(seat, self.player)
        self.seats[table] = seat
        return table, players, seat

    async def _open(self, table: str, players: list[str], rules: Any, json_updates: bool) -> None:
        request = OpenTable(
            table=table,
            players=players,
            rules=rules,
            game=self.game.name,
            seed=secrets.token_hex(8),
            formats={self.player: "json"} if json_updates else {},
        )

        await self.traffic.watch(table, self.game.name)
        reply = await open_table(self.nc, request, patience=30.0)
        if not reply.ok:
            raise CheckError(f"the services refused to open table {table}: {reply.code}: {reply.reason}")

    async def _play(
        self,
        name: str,
        json_updates: bool,
        turn_seconds: float = TURN_SECONDS,
        kontra: bool = False,
        until: Callable[[str], bool] | None = None,
        whole_table: bool = False,
        hold: Callable[[str], Hold] | None = None,
        on_prompt: Callable[[str], Callable[[Prompt], Awaitable[None]]] | None = None,
        interrupt: Callable[[str], bool] | None = None,
    ) -> str:
        """Open a table for one check and wait until its first deal is scored (the rest plays
        on by itself; with ``whole_table``, until the table closes), the bot is timed out there, or
        ``until(table)``; returns the table. A game whose checks play whole games
        (``CheckedGame.whole_games``) waits for the close, ``until`` or not; ``interrupt(table)``
        ends the wait in every game."""
        table, players, seat = self._new_table(name)
        if hold is not None:
            self.holds[table] = hold(table)
        if on_prompt is not None:
            self.traffic.on_prompt[table] = on_prompt(table)
        rules = self.game.rules(turn_seconds, kontra)
        await self._open(table, players, rules, json_updates)
        whole = whole_table or self.game.whole_games
        scored = self.game.deal_scored

        def done() -> bool:
            return (
                (not whole and self.traffic.has(table, scored))
                or self.traffic.has(table, TableClosed)
                or bool(self.traffic.timed_out(table, seat))
                or (until is not None and not self.game.whole_games and until(table))
                or (interrupt is not None and interrupt(table))
            )

        await self._until(done, self.game.table_limit)
        late = self.traffic.timed_out(table, seat)
        if late:  # a slow bot's command may still come: wait a little, to say how late it was
            # (5 s whatever the turn: a bot thinking twice the turn answers a whole turn after
            # its time-out, and a loaded machine adds to that)
            await self._until(lambda: bool(self.traffic.commands(table, late[0])), LATE_WAIT)
        return table

    def _use_json(self) -> bool | None:
        """The encoding for the checks after the encoding checks: whichever the bot answers
        (None: neither)."""
        if self.json_only or self.asked_format == "json":
            return True
        mp, js = self.results.get("msgpack"), self.results.get("json")
        if mp is not None and mp.status == "FAIL":
            return True if js is not None and js.status == "PASS" else None
        if mp is None and js is not None and js.status == "FAIL":
            return None
        return False

    # --- judging prompts ---

    def _unanswered(self, table: str) -> list[Prompt]:
        """The services' prompts at ``table`` the bot did not answer in time (timed out, or
        past their deadline with no accepted command)."""
        timed_out = set(self.traffic.timed_out(table, self.seats[table]))
        now = time.time()
        return [
            p
            for p in self.traffic.first_prompts(table)
            if self.traffic.accepted(table, p.index) is None
            and (p.index in timed_out or (p.update.deadline and now > p.update.deadline + 1.0))
        ]

    def _what_happened(self, p: Prompt) -> tuple[str, str]:
        """What the bot did with an unanswered prompt, and what to fix."""
        turn = p.update.deadline - p.t if p.update.deadline else 0.0
        where = f"the prompt at index {p.index} ({_phase(p)}, {p.fmt}, {turn:.0f} s to answer)"
        mine = self.traffic.commands(p.table, p.index)
        if mine:
            first = mine[0]
            refused = next((s for s in mine if s.answer and not s.answer.ok and s.answer.code not in RETRY_CODES), None)
            if p.update.deadline and first.t > p.update.deadline:
                return (
                    f"{where}: your command came {_ago(first.t, p.t)} after it, past the deadline; the table had "
                    "timed you out",
                    self.fix(DEADLINE_FIX),
                )
            if refused is not None and refused.answer is not None:
                return (
                    f"{where}: your {refused.describe()} was refused: {refused.answer.code}: {refused.answer.reason}",
                    self.fix(AT_FIX if refused.answer.code == "stale" else self.game.legal_fix),
                )
            if not is_inbox(first.reply_to, self.player):
                return (
                    f"{where}: your {first.describe()} asked for its reply on {first.reply_to or '(no reply subject)'!r}, "
                    "so the services did not answer",
                    self.fix(INBOX_FIX),
                )
            return f"{where}: your {first.describe()} got no answer but a retry code", self.fix(self.game.legal_fix)
        later = [s for s in self.traffic.commands(p.table) if s.t >= p.t]
        if later:
            s = later[0]
            if s.command is None:
                return f"{where}: you sent {s.describe()} ({s.error})", self.fix(self.game.legal_fix)
            if s.at < 0:
                return f'{where}: you sent {s.describe()} without "at"', self.fix(AT_FIX)
            return f"{where}: you sent {s.describe()} with at={s.at}, not {p.index}", self.fix(AT_FIX)
        if any(s.answer and s.answer.ok and s.fmt for s in self.traffic.sent if self._fmt_of(s) == p.fmt):
            return (
                f"{where}: no command came (though you answered other {p.fmt} prompts); the table timed you out",
                self.fix(DEADLINE_FIX),
            )
        fix = MSGPACK_FIX if p.fmt == "msgpack" else JSON_FIX
        return f"{where}: no command came; the table timed you out", self.fix(fix)

    def _fmt_of(self, s: Sent) -> str:
        """The encoding of the prompt a command answers ("" if unknown)."""
        return next((p.fmt for p in self.traffic.prompts.get(s.table, []) if p.index == s.at), "")

    def _judge_table(self, name: str, table: str, expected: str, passed: str = "") -> Result:
        whole = self.game.whole_games and name != "reconnect"  # reconnect leaves its table to play on
        if whole:
            expected += ", through a whole game to its end"
        prompts = self.traffic.first_prompts(table)
        if not prompts:
            return _fail(
                name,
                expected,
                f"no prompt reached skat.view.{self.player}.{table} (are the services dealing?)",
                "check the stack: skat up, or run check-bot without --nats",
            )
        bad = self._unanswered(table)
        if bad:
            happened, fix = self._what_happened(bad[0])
            more = f" ({len(bad)} of {len(prompts)} prompts went unanswered)" if len(bad) > 1 else ""
            return _fail(name, expected, happened + more, fix)
        answered = [p for p in prompts if self.traffic.accepted(table, p.index) is not None]
        if not answered:
            return _fail(
                name, expected, "no prompt was answered before the table moved on", self.fix(self.game.legal_fix)
            )
        slowest = max(self.traffic.commands(table, p.index)[0].t - p.t for p in answered)
        if not whole:
            return _pass(name, passed or f"answered {len(answered)} prompts (slowest {slowest:.2f} s)")
        deals = sum(isinstance(e, self.game.deal_scored) for _, e in self.traffic.events.get(table, []))
        if not self.traffic.has(table, TableClosed):
            return _fail(
                name,
                expected,
                f"the game had not ended after {self.game.table_limit:g} s ({deals} deals scored, {len(answered)} "
                f"prompts answered, the slowest in {slowest:.2f} s)",
                f"answer every prompt at once: check-bot waits {self.game.table_limit:g} s for a game of one coin "
                "each to end (if your bot is quick, look at the services' logs)",
            )
        return _pass(
            name,
            passed
            or f"answered {len(answered)} prompts (slowest {slowest:.2f} s) in a whole game of {deals} "
            f"deal{'s' if deals != 1 else ''}",
        )

    # --- hello, inbox, at, refusals: judged on everything seen ---

    def _judge_hello(self) -> Result:
        expected = f"a request on skat.hello.{self.player} within {HELLO_WAIT:g} s of connecting, answered"
        hellos = [h for h in self.traffic.hellos if h.t >= self._connected_at]
        first = hellos[0] if hellos else None
        if first is None or first.t > self._connected_at + HELLO_WAIT:
            return _fail(
                "hello",
                expected,
                "no hello"
                if first is None
                else f"the first hello came {_ago(first.t, self._connected_at)} after connecting",
                self.fix(HELLO_FIX),
            )
        body = first.data.strip()
        if body:
            try:
                hello = msgspec.json.decode(body, type=Hello)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                return _fail(
                    "hello", expected, f"its body {first.data[:80]!r} is not a hello: {exc}", self.fix(HELLO_FIX)
                )
            self.asked_format = hello.format
        if first.answer is None:
            if not is_inbox(first.reply_to, self.player):
                return _fail(
                    "hello",
                    expected,
                    f"the hello asked for its reply on {first.reply_to or '(no reply subject)'!r}: no answer",
                    self.fix(INBOX_FIX),
                )
            return _fail("hello", expected, "the hello got no answer", "check that the views service runs")
        chose = f", asking for {self.asked_format}" if self.asked_format else ""
        return _pass(
            "hello",
            f"said hello {_ago(first.t, self._connected_at)} after connecting{chose}; answer {json.dumps(first.answer)}",
        )

    def _judge_inbox(self) -> Result:
        requests: list[tuple[str, str]] = [("hello", h.reply_to) for h in self.traffic.hellos]
        requests += [(s.describe(), s.reply_to) for s in self.traffic.sent]
        expected = f"every request (hello, command) with a reply subject under _INBOX.{self.player}."
        if not requests:
            return _fail("inbox", expected, "the bot sent no request at all", self.fix(HELLO_FIX))
        bad = [(what, reply) for what, reply in requests if not is_inbox(reply, self.player)]
        if bad:
            what, reply = bad[0]
            sent = f"{reply!r}" if reply else "no reply subject (a publish, not a request)"
            return _fail(
                "inbox",
                expected,
                f"{len(bad)} of {len(requests)} requests did not: your {what} had {sent}",
                self.fix(INBOX_FIX),
            )
        return _pass("inbox", f"all {len(requests)} requests did")

    def _moved_past(self, s: Sent) -> bool:
        """Whether the table had moved past the prompt ``s`` answers (an event at its index)."""
        return s.at >= 0 and any(i >= s.at for i, _ in self.traffic.events.get(s.table, []))

    def _prompt_indexes(self, table: str) -> set[int]:
        return {p.index for p in self.traffic.prompts.get(table, []) + self.traffic.by_checker.get(table, [])}

    def _judge_at(self) -> Result:
        sent = [s for s in self.traffic.sent if s.command is not None]
        if not sent:
            return _skip("at", "nothing to judge: the bot sent no readable command")
        expected = '"at" on every command: the index of the prompt it answers'
        missing = [s for s in sent if s.at < 0]
        if missing:
            return _fail(
                "at",
                expected,
                f"{len(missing)} of {len(sent)} commands had none, e.g. {missing[0].describe()}",
                self.fix(AT_FIX),
            )
        wrong = [s for s in sent if s.at not in self._prompt_indexes(s.table)]
        if wrong:
            s = wrong[0]
            known = sorted(i for i in self._prompt_indexes(s.table) if i <= s.at + 3)[-3:]
            return _fail(
                "at",
                expected,
                f"your {s.describe()} has at={s.at}, but no prompt had that index (the latest before it: {known})",
                self.fix(AT_FIX),
            )
        return _pass("at", f"all {len(sent)} commands did")

    def _judge_refusals(self) -> Result:
        """First attempts refused for good (not a retry code, not stale: a stale answer is the
        table having moved on, judged by the stale and repeat checks)."""
        if not self.traffic.sent:
            return _skip("refusals", "nothing to judge: the bot sent no command")
        seen: set[tuple[str, int]] = set()
        refused: list[Sent] = []
        for s in self.traffic.sent:
            key = (s.table, s.at)
            retry = s.at >= 0 and key in seen
            seen.add(key)
            if retry or s.answer is None or s.answer.ok:
                continue
            if s.answer.code in RETRY_CODES or (s.answer.code in MOVED_ON and self._moved_past(s)):
                continue
            refused.append(s)
        expected = "no command refused (other than for a prompt the table has moved past: stale, no_deal, ...)"
        if refused:
            s = refused[0]
            assert s.answer is not None
            fix = self.fix(JSON_FIX if s.answer.code == "malformed" and s.fmt == "json" else self.game.legal_fix)
            if s.answer.code == "malformed":
                fix = self.fix(self.game.malformed_fix)
            return _fail(
                "refusals",
                expected,
                f"{len(refused)} refused, e.g. your {s.describe()}: {s.answer.code}: {s.answer.reason}",
                fix,
            )
        return _pass("refusals", f"none of {len(self.traffic.sent)} commands was")

    # --- the table checks ---

    async def _check_msgpack(self) -> Result:
        expected = "a command accepted for every msgpack prompt, before its deadline"
        if self.json_only:
            return _skip(
                "msgpack", "--json: the bot is seated with JSON updates (as skat tournament --remote ID:json does)"
            )
        if self.asked_format == "json":
            return _skip("msgpack", "the bot asked for JSON in its hello, so the platform sends it no msgpack")
        table = await self._play("msgpack", json_updates=False, kontra=True)
        if self.traffic.first_prompts(table) and all(p.fmt == "json" for p in self.traffic.first_prompts(table)):
            return _skip(
                "msgpack",
                "the platform sent JSON: this player asked for JSON in a hello (the choice is kept across "
                'sessions; {"format": "msgpack"} switches back)',
            )
        return self._judge_table("msgpack", table, expected)

    async def _check_json(self) -> Result:
        expected = "a command accepted for every JSON prompt, before its deadline"
        if self.asked_format == "msgpack":
            return _skip("json", "the bot asked for msgpack in its hello, so the platform sends it no JSON")
        table = await self._play("json", json_updates=True, kontra=True)
        if self.traffic.first_prompts(table) and all(p.fmt == "msgpack" for p in self.traffic.first_prompts(table)):
            return _skip(
                "json",
                'the platform sent msgpack: this player asked for msgpack in a hello ({"format": "json"} switches)',
            )
        return self._judge_table("json", table, expected)

    async def _check_deadline(self) -> Result:
        expected = f"a command accepted for every prompt of a table with {self.short:g} s per move"
        table = await self._play("deadline", json_updates=bool(self._use_json()), turn_seconds=self.short)
        return self._judge_table("deadline", table, expected)

    async def _check_repeat(self) -> Result:
        expected = "one answer per prompt index, however often the prompt comes"
        again_at_once: set[int] = set()
        again_after: dict[int, float] = {}

        def on_prompt(table: str) -> Callable[[Prompt], Awaitable[None]]:
            async def send_twice(p: Prompt) -> None:
                if p.index not in again_at_once and len(again_at_once) < 3:
                    again_at_once.add(p.index)
                    await self.traffic.send_prompt(table, p.update, p.fmt, p.data)

            return send_twice

        def hold(table: str) -> Hold:
            async def resend_answered(obs: Any) -> None:
                if len(again_after) >= 2:
                    return
                for p in self.traffic.first_prompts(table):
                    if p.index not in again_after and self.traffic.accepted(table, p.index) is not None:
                        again_after[p.index] = time.time()
                        await self.traffic.send_prompt(table, p.update, p.fmt, p.data)
                        await asyncio.sleep(WATCH)
                        return

            return resend_answered

        table = await self._play(
            "repeat",
            json_updates=bool(self._use_json()),
            on_prompt=on_prompt,
            hold=hold,
            until=lambda t: len(again_after) >= 2 and self.traffic.has(t, self.game.deal_scored),
        )
        self.traffic.on_prompt.pop(table, None)
        self.holds.pop(table, None)
        for index in sorted(again_at_once | set(again_after)):
            mine = self.traffic.commands(table, index)
            extra = _answers_too_many(mine)
            if extra:
                how = "after your answer had landed" if index in again_after else "right after the first"
                return _fail(
                    "repeat",
                    expected,
                    f"check-bot sent the prompt at index {index} again ({how}, as the services do after a reconnect) "
                    f"and you answered it {len(mine)} times: {', '.join(_outcome(s) for s in mine)}",
                    self.fix(DEDUPE_FIX),
                )
        if not again_at_once:
            return _fail("repeat", expected, "no prompt reached the bot at this table", "see the checks above")
        result = self._judge_table("repeat", table, expected)
        if result.status != "PASS":
            return result
        return _pass(
            "repeat",
            f"{len(again_at_once)} prompts sent twice at once and {len(again_after)} again after their answer landed: "
            "each answered once",
        )

    async def _check_stale(self) -> Result:
        expected = "a prompt the table has moved past: ignored, or answered once and dropped when refused stale"
        forged: list[Prompt] = []

        def hold(table: str) -> Hold:
            async def send_superseded(obs: Any) -> None:
                if forged:
                    return
                mine = self.traffic.first_prompts(table)
                if not mine or self.traffic.accepted(table, mine[-1].index) is None:
                    return
                index = obs.index - 1  # an event by another seat: the bot never had a prompt there
                if index <= mine[-1].index:
                    return
                update = msgspec.structs.replace(mine[-1].update, index=index, deadline=time.time() + TURN_SECONDS)
                forged.append(await self.traffic.send_prompt(table, update, mine[-1].fmt))
                await asyncio.sleep(WATCH)

            return send_superseded

        table = await self._play(
            "stale",
            json_updates=bool(self._use_json()),
            hold=hold,
            # A deal may offer no moment for a superseded prompt (e.g. passed in): play on
            # through the table's deals until one came, not only its first.
            whole_table=True,
            until=lambda t: (
                bool(forged) and time.time() > forged[0].t + WATCH + 1.0 and self.traffic.has(t, self.game.deal_scored)
            ),
        )
        self.holds.pop(table, None)
        if not forged:
            result = self._judge_table("stale", table, expected)
            if result.status == "FAIL":
                return result
            return _skip("stale", "no moment came to send a superseded prompt (the bot answered too few prompts)")
        if forged[0].t + WATCH + 1.0 > time.time():
            await asyncio.sleep(forged[0].t + WATCH + 1.0 - time.time())
        p = forged[0]
        mine = self.traffic.commands(table, p.index)
        extra = _answers_too_many(mine)
        if extra:
            return _fail(
                "stale",
                expected,
                f"check-bot sent a prompt at index {p.index}, which the table had moved past; your answer was "
                f"refused ({_outcome(mine[0])}), and you sent it {len(extra)} more time{'s' if len(extra) > 1 else ''} "
                f"({', '.join(_outcome(s) for s in mine[:4])}{', ...' if len(mine) > 4 else ''})",
                self.fix(STALE_FIX),
            )
        result = self._judge_table("stale", table, expected)
        if result.status == "FAIL":
            result.happened = f"after a superseded prompt (index {p.index}): {result.happened}"
            return result
        did = f"answered it once ({_outcome(mine[0])}) and let it go" if mine else "ignored it"
        return _pass("stale", f"check-bot sent a prompt the table had moved past (index {p.index}): the bot {did}")

    async def _check_reconnect(self) -> Result:
        expected = (
            "after its connection drops: reconnect, say hello, answer the prompt sent while it was away, "
            "before its deadline"
        )
        cut: list[float] = []

        def hold(table: str) -> Hold:
            async def cut_the_bot(obs: Any) -> None:
                mine = self.traffic.first_prompts(table)
                if cut or not mine or self.traffic.accepted(table, mine[-1].index) is None:
                    return
                if not self.game.moves_again(obs.view, self.seats[table]):
                    return  # no turn of the bot's to come in this deal: its next prompt may never come
                await self.relay.cut()  # before this seat moves: the bot's next prompt goes out after
                cut.append(time.time())

            return cut_the_bot

        try:
            table = await self._play(
                "reconnect",
                json_updates=bool(self._use_json()),
                turn_seconds=RECONNECT_TURN_SECONDS,
                hold=hold,
                whole_table=True,  # as for stale: a deal may offer no moment to cut
                interrupt=lambda t: bool(cut),
            )
            self.holds.pop(table, None)
            if not cut:
                result = self._judge_table("reconnect", table, expected)
                if result.status == "FAIL":
                    return result
                return _skip("reconnect", "no moment came to drop the connection")
            self.say("  dropped the bot's connection; waiting for its next prompt to go out")

            def missed_prompt() -> Prompt | None:
                return next((p for p in self.traffic.first_prompts(table) if p.t > cut[0]), None)

            if not await self._until(lambda: missed_prompt() is not None, 30.0):
                return _skip("reconnect", "no prompt for the bot came while its connection was down")
            missed = missed_prompt()
            assert missed is not None
            await asyncio.sleep(0.5)
        finally:
            await self.relay.open()
        reopened = time.time()
        self.say("  let it connect again")
        deadline = missed.update.deadline or reopened + RECONNECT_TURN_SECONDS
        await self._until(
            lambda: (
                self.traffic.accepted(table, missed.index) is not None
                or missed.index in self.traffic.timed_out(table, self.seats[table])
            ),
            max(1.0, deadline - time.time() + 1.0),
        )
        back = [t for t in self.relay.connections if t >= reopened]
        hellos = [h for h in self.traffic.hellos if h.t >= reopened]
        answer = self.traffic.accepted(table, missed.index)
        lead = f"check-bot dropped the bot's connection; the prompt at index {missed.index} went out while it was away"
        if not back:
            return _fail(
                "reconnect",
                expected,
                f"{lead}, and it did not connect again within {deadline - reopened:.0f} s",
                self.fix(RECONNECT_FIX),
            )
        if not hellos:
            return _fail(
                "reconnect",
                expected,
                f"{lead}; it connected again after {_ago(back[0], reopened)} but said no hello, so the prompt never "
                "reached it and the table timed it out",
                self.fix(HELLO_FIX),
            )
        if answer is None:
            resent = [p for p in self.traffic.prompts.get(table, []) if p.index == missed.index and p.t >= hellos[0].t]
            happened, fix = self._what_happened(missed)
            told = (
                f"the services sent the prompt again after its hello (answer {json.dumps(hellos[0].answer)})"
                if resent
                else f"its hello (answer {json.dumps(hellos[0].answer)}) brought no prompt"
            )
            if not self.traffic.commands(table, missed.index) and resent:
                fix = (
                    f"be subscribed to skat.view.{self.player}.* again before the hello (say it from the client's "
                    "reconnected callback), and do not drop a prompt you have not answered"
                )
            return _fail("reconnect", expected, f"{lead}; {told}; {happened}", fix)
        return _pass(
            "reconnect",
            f"connected again {_ago(back[0], reopened)} after the relay reopened, said hello "
            f"(answer {json.dumps(hellos[0].answer)}), answered the missed prompt (index {missed.index}) "
            f"{max(0.0, deadline - answer.t):.1f} s before its deadline",
        )
