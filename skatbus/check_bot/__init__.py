"""``skat check-bot ID``: does a remote bot play the protocol the way the platform uses it?

A bot author starts their bot separately, as player ``ID``, connected through a relay that
check-bot opens on 127.0.0.1 (so that check-bot can drop the bot's connection, and only the
bot's). check-bot then opens one table per check with the bot and two built-in bots, and
watches every message to and from the bot: its updates, commands, replies and hellos. Its own
connection is a services' one (no user in the embedded stack, ``skat-services`` with ``skat
auth``), which may see all of them, and which also lets it act as the platform: it sends a
prompt twice, sends a prompt the table has already moved past, and cuts the bot's connection
just before a prompt goes out. The two built-in bots are check-bot's own, so it can hold a table
still (by keeping one of them thinking) while it watches what the bot does.

``--game thirty-one`` checks a Thirty-one bot the same way, at Thirty-one tables (``games``:
the rules, the built-in bots beside it; every table check plays its game to the end).

The report says, per check, what was expected, what happened and what to fix. Exit code 0 when
every check passed (or was skipped), 1 when one failed, 2 when the checks could not run at all
(a usage mistake, an unreachable server).

``python -m skatbus.check_bot --transcript [--game thirty-one]`` records one short deal (a
Thirty-one game of one deal) as the messages a JSON player sends and receives: the examples in
docs/protocol.md (``--write FILE`` puts it there, between the game's markers).
"""

from .checker import Checker
from .cli import check, handle, main, register
from .common import CHECKS, TABLE_CHECKS
from .games import GAMES, CheckedGame
from .report import Result, write_report
from .transcript import TRANSCRIPT_BEGIN, markers, read_transcript, record_transcript, write_transcript

__all__ = [
    "CHECKS", "GAMES", "TABLE_CHECKS", "TRANSCRIPT_BEGIN", "CheckedGame", "Checker", "Result", "check", "handle",
    "main", "markers", "read_transcript", "record_transcript", "register", "write_report", "write_transcript",
]  # fmt: skip
