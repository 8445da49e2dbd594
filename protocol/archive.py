"""The archive format: a table's events as JSON lines, ``{"table": T, "index": N, "at": A, "event": {...}}``.

Tournaments write it, ``skat iss import`` writes it, ``skat replay`` and ``skat iss export``
read it: one definition here keeps them in step. The event is its bare tagged JSON (the type
tag carries the version); an event type or version this version of skatbus does not know is
read as ``UnknownEvent``, as in the store.

``at`` is when the event was stored (RFC 3339 UTC to the millisecond,
``2026-12-02T08:01:02.123Z``): what think times, clocks and a record's date are computed from.
It is optional: archives written before it existed, and imported records without dates, have
none, and every reader takes a line without it.
"""

from __future__ import annotations

from typing import Any, Final, Union

import msgspec

from .clocks import parse_stamp, stamp_text
from .events import Event, UnknownEvent
from .registry import event_types


class Line(msgspec.Struct):
    """One archive line, its event still encoded."""

    table: str
    index: int
    event: msgspec.Raw
    at: str | None = None
    """When the event was stored (RFC 3339 UTC), if the writer knew; ``time`` reads it."""

    @property
    def time(self) -> float | None:
        """``at`` as Unix time; None when the line has none or it is not a time stamp."""
        if not self.at:
            return None
        try:
            return parse_stamp(self.at)
        except ValueError:
            return None


_LINE: Final = msgspec.json.Decoder(Line)
_FIELDS: Final = msgspec.json.Decoder(dict[str, Any])


def encode_line(table: str, index: int, event: Event | UnknownEvent, *, at: float | str | None = None) -> bytes:
    """One archive line; ``at``, when the event was stored (Unix time, or an RFC 3339 stamp such
    as the server's, written to the millisecond), is left out when unknown."""
    stamp = b""
    if at is not None and at != "":
        text = stamp_text(at if isinstance(at, int | float) else parse_stamp(at))
        stamp = b',"at":' + msgspec.json.encode(text)
    return (
        b'{"table":' + msgspec.json.encode(table) + b',"index":' + str(index).encode() + stamp
        + b',"event":' + msgspec.json.encode(event) + b"}\n"
    )  # fmt: skip


def decode_line(line: bytes | str) -> Line:
    """Raises ``msgspec.DecodeError``/``ValidationError`` on a broken line."""
    return _LINE.decode(line)


def decode_event(raw: bytes) -> Event | UnknownEvent:
    """An archived event; an unknown type/version becomes ``UnknownEvent``."""
    try:
        event: Event = _event_decoder().decode(raw)
        return event
    except msgspec.ValidationError:
        fields = _FIELDS.decode(raw)
        tag = fields.get("type")
        if isinstance(tag, str) and tag not in event_types():
            name, _, version = tag.partition("/")
            if version.isdigit():  # a newer event, archived as itself
                return UnknownEvent(name, int(version))
            if not version and isinstance(fields.get("version"), int):  # an UnknownEvent, archived
                return UnknownEvent(name, fields["version"])
        raise


_DECODER: list[Any] = []


def _event_decoder() -> Any:
    """One JSON decoder of the tagged union of every registered game's events."""
    if not _DECODER:
        kinds = tuple(event_types().values())
        _DECODER.append(msgspec.json.Decoder(Union[kinds]))  # noqa: UP007 (built at run time)
    return _DECODER[0]
