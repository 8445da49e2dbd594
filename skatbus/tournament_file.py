"""tournament.jsonl: a tournament's own log in its run folder, one JSON event per line.

Why a file. The tournament's log (``SKATTOUR``) holds what ``skat verify`` needs besides the
tables: the schedule, the commitment, the nonces as they were given and closed, the series
drawn later. In the run folder it is what the operator signs and what anyone can check, with
no broker at hand. Each line is the event's tagged JSON (``type``: ``tournament_created/1``,
``nonce_given/1``, ...), as msgspec writes the ``TournamentEvent`` union.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import msgspec

from protocol.tournament import TournamentEvent

_DECODER: Final = msgspec.json.Decoder(TournamentEvent)
_ENCODER: Final = msgspec.json.Encoder()


class TournamentLogError(ValueError):
    """A tournament.jsonl line that is no tournament event (the message names the line)."""


def write_tournament_log(path: Path, events: Sequence[TournamentEvent]) -> None:
    """Write ``events`` to ``path``, one per line, replacing the file in one step (a reader
    never sees half of it)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        for event in events:
            f.write(_ENCODER.encode(event) + b"\n")
    os.replace(tmp, path)


def read_tournament_log(path: Path) -> list[TournamentEvent]:
    """The events of a tournament.jsonl. ``TournamentLogError`` names the first line that is
    not one (blank lines are skipped); ``OSError`` when the file cannot be read."""
    return parse_tournament_log(path.read_bytes(), path.name)


def parse_tournament_log(data: bytes, name: str = "tournament.jsonl") -> list[TournamentEvent]:
    """``read_tournament_log`` of a file's bytes (``skat verify`` checks the very bytes it read
    once); ``name`` names the file in the error."""
    events: list[TournamentEvent] = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            events.append(_DECODER.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise TournamentLogError(f"{name} line {number}: not a tournament event ({exc})") from None
    return events
