"""A remote bot in raw JSON, written from docs/bots.md alone: nothing but nats-py and json.

It asks for JSON updates, answers each prompt once (stamped with ``at``), reads the table's game
and rules from its own view, and stops when the tournament that lists it is over (the runner's
``"finished": true`` announcement on ``skat.public.tournament.<id>``).

    python examples/json_bot.py alice nats://127.0.0.1:4222
"""

import asyncio
import json
import sys

import nats

RETRY = {"busy", "unavailable", "rate_limited", "no_table"}


def choose(view):
    """The first legal action, but pass while bidding and knock with 25 or more at Thirty-one."""
    legal = view["legal"]
    if view.get("table_game") == "thirty-one":
        knock = next((a for a in legal if a["type"] == "knock"), None)
        return knock if knock and view.get("hand_value", 0) >= 25 else legal[0]
    return next((a for a in legal if a["type"] == "pass"), legal[0])


async def main(player, url):
    answered = {}  # table -> the highest prompt index answered
    rules_seen = {}  # table -> (game, rules), as the views say
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
            return
        answered[table] = index
        command = json.dumps({**choose(view), "at": index}).encode()
        for _ in range(5):
            try:
                reply = json.loads((await nc.request(f"skat.cmd.{player}.{table}", command, timeout=2)).data)
            except (nats.errors.TimeoutError, nats.errors.NoRespondersError):
                continue  # no answer: the same command again (it cannot count twice)
            if reply.get("code") not in RETRY:
                return
            await asyncio.sleep(0.1)

    async def on_announcement(msg):
        body = json.loads(msg.data)
        if body.get("finished") and player in body.get("entrants", []):
            print(f"tournament {body['tournament']} is over", flush=True)
            over.set()

    async def reconnected():
        await hello()

    nc = await nats.connect(url, inbox_prefix=f"_INBOX.{player}", max_reconnect_attempts=-1, reconnected_cb=reconnected)
    await nc.subscribe(f"skat.view.{player}.*", cb=on_update)
    await nc.subscribe("skat.public.tournament.*", cb=on_announcement)
    await hello()
    await over.wait()  # play until the tournament is over
    await nc.drain()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
