"""A remote bot in raw JSON, written from docs/bots.md alone: nothing but nats-py and json.

It asks for JSON updates, answers each prompt (stamped with ``at``: the same command again until
it is answered or the deadline passes, and again for a prompt of that index re-sent after it got
no answer), logs a disconnect in one line, reads the table's game
and rules from its own view, gives its nonce to a tournament that lists it, and stops when that
tournament is over (the runner's ``"finished": true`` announcement on
``skat.public.tournament.<id>``, or, if it missed that, the copy kept in stream ``SKATEND``,
which it asks for after every reconnect and at the start for a tournament id given).

    python examples/json_bot.py alice nats://127.0.0.1:4222 [TOURNAMENT]
"""

import asyncio
import json
import secrets
import sys
import time

import nats

RETRY = {"busy", "unavailable", "rate_limited", "no_table"}
LOST = (OSError, asyncio.TimeoutError, nats.errors.UnexpectedEOF, nats.errors.StaleConnectionError)


def choose(view):
    """The first legal action, but pass while bidding and knock with 25 or more at Thirty-one."""
    legal = view["legal"]
    if view.get("table_game") == "thirty-one":
        knock = next((a for a in legal if a["type"] == "knock"), None)
        return knock if knock and view.get("hand_value", 0) >= 25 else legal[0]
    return next((a for a in legal if a["type"] == "pass"), legal[0])


async def main(player, url, tournament=None):
    answered = {}  # table -> the highest prompt index whose command got a reply
    sent = {}  # table -> (index, command) of the last prompt a command was made for
    rules_seen = {}  # table -> (game, rules), as the views say
    tournaments = {tournament} if tournament else set()  # the ones that listed us
    nonces = {}  # tournament -> the nonce we give it
    over = asyncio.Event()

    async def hello():
        await nc.request(f"skat.hello.{player}", b'{"format": "json"}', timeout=2)

    async def on_update(msg):
        table = msg.subject.split(".")[3]  # skat.view.<player>.<table>
        update = json.loads(msg.data)
        view = update["view"]
        if table not in rules_seen:
            rules_seen[table] = (view.get("table_game"), view.get("rules"))
            print(json.dumps({"table": table, "game": view.get("table_game"), "rules": view.get("rules")}), flush=True)
        index = update.get("index", 0)  # JSON leaves out every field at its default
        if not update.get("your_turn") or answered.get(table, -1) >= index:
            return  # not a prompt, or one whose command was answered
        if sent.get(table, (-1,))[0] != index:  # a new prompt; one re-sent gets the same command again
            sent[table] = (index, json.dumps({**choose(view), "at": index}).encode())
        deadline = update.get("deadline") or time.time() + 60
        while time.time() < deadline + 5:  # 5 s more: our clock is not the services'
            try:
                reply = await nc.request(f"skat.cmd.{player}.{table}", sent[table][1], timeout=2)
            except nats.errors.Error:  # no answer, nobody listening, disconnected
                await asyncio.sleep(0.5)
                continue  # the same command again: it cannot count twice (at)
            if json.loads(reply.data).get("code") not in RETRY:
                answered[table] = index  # taken, or refused for good (stale: an earlier attempt landed)
                return
            await asyncio.sleep(0.1)

    async def on_announcement(msg):
        await announced(msg.subject, msg.data)

    async def announced(subject, data):
        body = json.loads(data)
        tid = body.get("tournament")
        if subject != f"skat.public.tournament.{tid}" or player not in body.get("entrants", []):
            return  # believed only on its own tournament's subject; not ours
        tournaments.add(tid)
        if body.get("finished"):
            print(f"tournament {tid} is over", flush=True)
            over.set()
        elif body.get("open"):  # nonces are open: give ours (the first one counts, repeats are fine)
            nonce = json.dumps({"type": "nonce", "nonce": nonces.setdefault(tid, secrets.token_hex(16))})
            try:
                await nc.request(f"skat.cmd.{player}.tournament.{tid}", nonce.encode(), timeout=2)
            except (nats.errors.TimeoutError, nats.errors.NoRespondersError):
                pass  # the announcement comes again every second while nonces are open

    async def missed_the_end():
        """The last announcement of each of our tournaments, as the stream SKATEND keeps it."""
        for tid in list(tournaments):
            try:
                kept = await nc.request(f"$JS.API.DIRECT.GET.SKATEND.skat.public.tournament.{tid}", b"", timeout=2)
            except nats.errors.Error:
                continue  # no tournament has ended on this server yet
            if kept.data:  # empty with a 404 status: nothing kept for it
                await announced(kept.headers["Nats-Subject"], kept.data)

    async def disconnected():
        print(f"{player}: disconnected, reconnecting", file=sys.stderr, flush=True)

    async def error(exc):  # one line, not nats-py's traceback; a lost connection: disconnected says it
        if not isinstance(exc, LOST):
            print(f"{player}: nats error: {exc!r}", file=sys.stderr, flush=True)

    async def reconnected():  # must not raise: nats-py would take it for a failed reconnect
        print(f"{player}: reconnected", file=sys.stderr, flush=True)
        try:
            await hello()
        except nats.errors.Error:
            pass  # the services are not back yet: they re-send their pending prompts when they are
        await missed_the_end()

    nc = await nats.connect(
        url,
        inbox_prefix=f"_INBOX.{player}",
        max_reconnect_attempts=-1,
        reconnected_cb=reconnected,
        disconnected_cb=disconnected,
        error_cb=error,
    )
    await nc.subscribe(f"skat.view.{player}.*", cb=on_update)
    await nc.subscribe("skat.public.tournament.*", cb=on_announcement)
    await hello()
    await missed_the_end()
    await over.wait()  # play until the tournament is over
    await nc.drain()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
