"""What check-bot checks and the advice it gives: the checks in report order, and their time limits."""

from __future__ import annotations

from typing import Final

CHECKS: Final[dict[str, str]] = {
    "connect": "connects to the server",
    "hello": "says hello when it connects",
    "inbox": "asks for every reply in its own inbox",
    "msgpack": "answers prompts sent in msgpack",
    "json": "answers prompts sent in JSON",
    "at": "stamps every command with the index of its prompt",
    "refusals": "sends only commands the table accepts",
    "repeat": "answers a prompt sent twice only once",
    "stale": "lets a superseded prompt go after its stale refusal",
    "reconnect": "says hello after a dropped connection and answers the prompt it missed",
    "deadline": "answers within a short deadline",
}
"""Every check, in the order of the report."""
TABLE_CHECKS: Final = ("msgpack", "json", "repeat", "stale", "reconnect", "deadline")
"""The checks that play a table of their own (``--only`` chooses among them; the others judge
the traffic of whichever tables ran)."""
TURN_SECONDS: Final = 10.0
RECONNECT_TURN_SECONDS: Final = 20.0
"""Room for a client's reconnect back-off (2 s by default in nats.go, nats.js and nats-py)."""
HELLO_WAIT: Final = 10.0
WATCH: Final = 1.5
"""Seconds a table is held still while check-bot watches the bot's reaction to what it sent."""
TABLE_LIMIT: Final = 120.0
MOVED_ON: Final = frozenset({"stale", "no_deal", "table_closed", "not_seated", "out_of_turn"})
"""What a command for a prompt the table has moved past is answered: stale, unless the deal or
the table ended first, or the service that judged it had not read the latest event yet (then
the old position looks current, and the command is out of turn). Not the bot's mistake when
the prompt was superseded."""

INBOX_FIX: Final = (
    'connect with the inbox prefix _INBOX.{id} (nats.go: nats.CustomInboxPrefix("_INBOX.{id}"), nats.js: '
    'inboxPrefix: "_INBOX.{id}", nats-py: inbox_prefix="_INBOX.{id}"): the services answer only into '
    "_INBOX.{id}.…, and with skat auth the server lets you subscribe to nothing else, so without it every "
    "request times out"
)
MSGPACK_FIX: Final = (
    'decode msgpack updates (the default encoding), or ask for JSON: send {{"format": "json"}} as the body '
    "of your hello before your first table opens; if your operator seats you with JSON updates (skat tournament "
    "--remote {id}:json), run check-bot with --json"
)
JSON_FIX: Final = (
    "read JSON updates: they leave out every field at its default (your_turn false, legal empty, deadline 0, "
    "index 0, ...), so read a missing field as its default; event types in history carry a version "
    "({event})"
)
AT_FIX: Final = 'add "at": <the prompt\'s index> to every command (update.index of the prompt it answers)'
LEGAL_FIX: Final = (
    'answer only prompts (your_turn true) and pick one of view.legal, unchanged but for "at" (resign and '
    "show are the only commands allowed that are not listed)"
)
T31_LEGAL_FIX: Final = (
    'answer only prompts (your_turn true) and pick one of view.legal, unchanged but for "at" (only look, at a '
    "table with throw_down, may be sent out of turn)"
)
MALFORMED_FIX: Final = 'send an object with "type" and its fields (skat schema prints them), JSON or msgpack'
T31_MALFORMED_FIX: Final = (
    'send an object with "type" and its fields, JSON or msgpack: {{"type": "take", "source": "stock"}}, '
    '{{"type": "discard", "card": "S7"}}, {{"type": "knock"}} (docs/bots.md has them all)'
)
HELLO_FIX: Final = (
    "after connecting and after every reconnect, send a request to skat.hello.{id} (empty body, or "
    '{{"format": "json"}} / {{"format": "msgpack"}}), once your subscription to skat.view.{id}.* is in place'
)
DEDUPE_FIX: Final = (
    "remember the highest prompt index you answered (per table) and ignore a prompt at or below it: the "
    "services send a pending prompt again after a reconnect (yours or theirs) and after every hello"
)
STALE_FIX: Final = (
    "treat stale as final: the table has moved past that prompt, drop it (retry only busy, unavailable, "
    "rate_limited and no_table; stale after your own retry means the first attempt landed)"
)
RECONNECT_FIX: Final = (
    "reconnect forever with a short wait (nats.go: nats.MaxReconnects(-1), nats.js: maxReconnectAttempts: -1, "
    "nats-py: max_reconnect_attempts=-1)"
)
DEADLINE_FIX: Final = (
    "answer well before update.deadline (Unix time in seconds, not milliseconds): tables may give as little "
    "as {short:g} s per move"
)


class CheckError(Exception):
    """The checks cannot go on (a refused table, a server that went away): one line for the user."""
