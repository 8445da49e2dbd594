"""NATS subject names. Identity lives in the subject, so the server can enforce who sees what.

- ``skat.log.<table>.<event>.<partition>``  the table's append-only log (JetStream stream
  ``SKAT``); one subject per event kind so services consume only the kinds they react to, while
  ``skat.log.<table>.>`` is the whole table. The last token is the table's partition
  (``partition_of``): each instance of a service owns some partitions and consumes only theirs,
  so a table has one active owner at a time (``services.ownership``). Logs written before
  partitions existed have no last token; readers accept both forms.
- ``skat.cmd.<player>.<table>``  a player's commands (request/reply). The services listen on
  ``skat.cmd.*.>`` (``services.runtime.Service.door``), not ``*.*``: a table id with a dot in it
  makes more tokens, and that command must reach them too, to be refused as ``bad_subject``.
- ``skat.view.<player>.<table>`` the player's private views and turn prompts.
- ``skat.public.<table>``        the table's redacted public feed, for spectators.
- ``skat.watch.<table>``         the same feed of a table whose feed is withheld from the players
  (a tournament's duplicate tables with remote entrants): only the operator's tools read it.
- ``skat.admin.*``               opening tables and other operator requests.
- ``skat.health.<service>``      each running service instance answers (readiness checks).
- ``skat.hello.<player>``        a player (re)connecting asks for its pending prompts again.
- ``skat.public.tournament.<id>`` a tournament's announcements (the nonces, its end); the last
  one of each tournament is kept in stream ``SKATEND``, which a player may read by one direct
  get per tournament (``tournament_end_request``), so a bot that missed the end can ask.
"""

from __future__ import annotations

import re
import zlib
from typing import Final

STREAM: Final = "SKAT"
LOG_ALL: Final = "skat.log.>"
ADMIN_OPEN: Final = "skat.admin.open"
ADMIN_PAUSE: Final = "skat.admin.pause"
"""Pause or resume a table (``protocol.wire.PauseTable``), answered by the dealer."""

PARTITIONS: Final = 8
"""How many partitions the tables are spread over. Fixed for the life of a stream: a table's
partition is part of its log subjects. Eight lets up to eight instances of a service share the
work; one instance owns them all."""

_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Matched with ``fullmatch``: ``$`` would let a trailing newline through."""


def is_token(value: str) -> bool:
    """Whether ``value`` may stand as a player or table id inside a subject."""
    return bool(_TOKEN.fullmatch(value))


def check_token(kind: str, value: str) -> str:
    """Table and player ids become subject tokens: letters, digits, ``_`` and ``-`` only.

    Anything else could change what a subject means: ``*`` and ``>`` are wildcards to every
    subscriber and reader (a "table ``*``" reads every table's log), and ``.`` adds tokens."""
    if not isinstance(value, str) or not _TOKEN.fullmatch(value):
        raise ValueError(f"{kind} id {value!r} must be 1-64 letters, digits, '_' or '-'")
    return value


ENDS_STREAM: Final = "SKATEND"
"""The stream that keeps each tournament's last announcement (``skatbus.tournament_end``)."""
TOURNAMENT_ANNOUNCEMENTS: Final = "skat.public.tournament.*"
TOURNAMENT_END_REQUESTS: Final = f"$JS.API.DIRECT.GET.{ENDS_STREAM}.{TOURNAMENT_ANNOUNCEMENTS}"
"""What a player may ask JetStream (``services.auth``): the last message of one tournament's
announcement subject in ``SKATEND``, nothing else of that stream or any other."""


def tournament_subject(tid: str) -> str:
    """A tournament's announcements: ``skat.public.tournament.<id>``."""
    return f"skat.public.tournament.{check_token('tournament', tid)}"


def tournament_end_request(tid: str) -> str:
    """The direct get that answers with tournament ``tid``'s last announcement (empty body;
    404 if there is none)."""
    return f"$JS.API.DIRECT.GET.{ENDS_STREAM}.{tournament_subject(tid)}"


def hello_subject(player: str) -> str:
    return f"skat.hello.{check_token('player', player)}"


def player_inbox(player: str) -> str:
    """The prefix of the player's reply inboxes (``_INBOX.<player>``); with ``skat auth`` the
    broker lets a player subscribe to nothing else, so replies for it must go there."""
    return f"_INBOX.{player}"


def is_inbox(subject: str | None, player: str | None = None) -> bool:
    """Whether ``subject`` is a reply inbox we may answer on: ``_INBOX.<player>.<...>`` for a
    player's message, any ``_INBOX.`` for the operator's (whom the broker trusts).

    A services user that answered whatever reply subject a player names could be made to
    publish into the log, or into another player's inbox."""
    if not subject:
        return False
    prefix = "_INBOX." if player is None else f"_INBOX.{player}."
    return subject.startswith(prefix) and len(subject) > len(prefix) and "*" not in subject and ">" not in subject


def health_subject(service: str) -> str:
    return f"skat.health.{service}"


def event_name(tag: str) -> str:
    """``card_played/1`` -> ``card_played``."""
    return tag.partition("/")[0]


def partition_of(table: str) -> int:
    """The partition of a table: a stable hash of its id (the same in every process and
    version, unlike ``hash()``), so every writer and every consumer agree on it."""
    return zlib.crc32(table.encode()) % PARTITIONS


def log_subject(table: str, event: str) -> str:
    return f"skat.log.{check_token('table', table)}.{event}.{partition_of(table)}"


def table_log(table: str) -> str:
    """Every event of one table (a valid id only: a wildcard here would mean every table)."""
    return f"skat.log.{check_token('table', table)}.>"


def log_kind(event: str, partition: int | None = None) -> str:
    """Every table's events of one kind (in one partition, if given): a consumer's filter."""
    return f"skat.log.*.{event}.{'*' if partition is None else partition}"


def legacy_log_kind(event: str) -> str:
    """The same, as written before partitions existed (no partition token)."""
    return f"skat.log.*.{event}"


def partition_log(partition: int) -> str:
    """Every event of every table in one partition (the views service's filter)."""
    return f"skat.log.*.*.{partition}"


def command_subject(player: str, table: str) -> str:
    return f"skat.cmd.{check_token('player', player)}.{check_token('table', table)}"


def view_subject(player: str, table: str) -> str:
    return f"skat.view.{check_token('player', player)}.{check_token('table', table)}"


def public_subject(table: str) -> str:
    return f"skat.public.{check_token('table', table)}"


WATCH_ALL: Final = "skat.watch.>"


def watch_subject(table: str) -> str:
    """A withheld table's spectator feed (``protocol.events.FEEDS``): the same redacted events
    as ``public_subject``, on a subject no player may subscribe to."""
    return f"skat.watch.{check_token('table', table)}"


def feed_subject(table: str, feed: str) -> str:
    """Where a table's spectator feed goes: ``public_subject`` or, withheld, ``watch_subject``."""
    return watch_subject(table) if feed == "withheld" else public_subject(table)


def _tokens(subject: str, prefix: str, count: int) -> list[str] | None:
    """The ``count`` id tokens after ``prefix`` in ``subject``, each a valid id, or None."""
    if not subject.startswith(prefix):
        return None
    tokens = subject[len(prefix) :].split(".")
    if len(tokens) != count or not all(_TOKEN.fullmatch(t) for t in tokens):
        return None
    return tokens


def parse_log_subject(subject: str) -> tuple[str, str]:
    """(table, event kind) of a log subject; ``ValueError`` unless both are valid tokens and
    the partition token, if there is one, is the table's own (legacy subjects have none)."""
    tokens = _tokens(subject, "skat.log.", 3) or _tokens(subject, "skat.log.", 2)
    if tokens is None or len(tokens) == 3 and tokens[2] != str(partition_of(tokens[0])):
        raise ValueError(f"not a log subject: {subject[:80]!r}")
    return tokens[0], tokens[1]


def parse_command_subject(subject: str) -> tuple[str, str]:
    """(player, table) of a command subject; ``ValueError`` unless both are valid ids."""
    tokens = _tokens(subject, "skat.cmd.", 2)
    if tokens is None:
        raise ValueError(f"not a command subject: {subject[:80]!r}")
    return tokens[0], tokens[1]


def parse_view_subject(subject: str) -> tuple[str, str]:
    """(player, table) of a view subject; ``ValueError`` unless both are valid ids."""
    tokens = _tokens(subject, "skat.view.", 2)
    if tokens is None:
        raise ValueError(f"not a view subject: {subject[:80]!r}")
    return tokens[0], tokens[1]


def parse_hello_subject(subject: str) -> str:
    """The player of a hello subject; ``ValueError`` unless it is a valid id."""
    tokens = _tokens(subject, "skat.hello.", 1)
    if tokens is None:
        raise ValueError(f"not a hello subject: {subject[:80]!r}")
    return tokens[0]
