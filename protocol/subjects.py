"""NATS subject names. Identity lives in the subject, so the server can enforce who sees what.

- ``skat.log.<table>.<event>``  the table's append-only log (JetStream stream ``SKAT``); one
  subject per event kind so services consume only the kinds they react to, while
  ``skat.log.<table>.*`` is the whole table.
- ``skat.cmd.<player>.<table>``  a player's commands (request/reply).
- ``skat.view.<player>.<table>`` the player's private views and turn prompts.
- ``skat.public.<table>``        the table's redacted public feed, for spectators.
- ``skat.admin.*``               opening tables and other operator requests.
- ``skat.health.<service>``      each running service instance answers (readiness checks).
- ``skat.hello.<player>``        a player (re)connecting asks for its pending prompts again.
"""

from __future__ import annotations

import re
from typing import Final

STREAM: Final = "SKAT"
LOG_ALL: Final = "skat.log.>"
COMMANDS_ALL: Final = "skat.cmd.*.*"
ADMIN_OPEN: Final = "skat.admin.open"

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def hello_subject(player: str) -> str:
    return f"skat.hello.{player}"


def is_inbox(subject: str | None) -> bool:
    """Replies go only to reply inboxes: a services user answering whatever reply subject a
    player names could be made to publish into the log or into someone else's views."""
    return bool(subject) and subject.startswith("_INBOX.")  # type: ignore[union-attr]


def health_subject(service: str) -> str:
    return f"skat.health.{service}"


def check_token(kind: str, value: str) -> str:
    """Table and player ids become subject tokens: letters, digits, ``_`` and ``-`` only."""
    if not _TOKEN.match(value):
        raise ValueError(f"{kind} id {value!r} must be 1-64 letters, digits, '_' or '-'")
    return value


def event_name(tag: str) -> str:
    """``card_played/1`` -> ``card_played``."""
    return tag.partition("/")[0]


def log_subject(table: str, event: str) -> str:
    return f"skat.log.{table}.{event}"


def table_log(table: str) -> str:
    return f"skat.log.{table}.*"


def log_kind(event: str) -> str:
    """Every table's events of one kind: what a service's consumer filters on."""
    return f"skat.log.*.{event}"


def command_subject(player: str, table: str) -> str:
    return f"skat.cmd.{player}.{table}"


def view_subject(player: str, table: str) -> str:
    return f"skat.view.{player}.{table}"


def public_subject(table: str) -> str:
    return f"skat.public.{table}"


def parse_log_subject(subject: str) -> tuple[str, str]:
    """(table, event kind) of a log subject."""
    _, _, table, event = subject.split(".", 3)
    return table, event


def parse_command_subject(subject: str) -> tuple[str, str]:
    """(player, table) of a command subject."""
    _, _, player, table = subject.split(".", 3)
    return player, table
