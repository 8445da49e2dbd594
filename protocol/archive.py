"""The archive format: a table's events as JSON lines, ``{"table": T, "index": N, "event": {...}}``.

Tournaments write it, ``skat iss import`` writes it, ``skat replay`` and ``skat iss export``
read it: one definition here keeps them in step. The event is its bare tagged JSON (the type
tag carries the version); an event type or version this version of skatbus does not know is
read as ``UnknownEvent``, as in the store.
"""

from __future__ import annotations

from typing import Any, Final, Union

import msgspec

from .events import Event, UnknownEvent
from .registry import event_types


class Line(msgspec.Struct):
    """One archive line, its event still encoded."""

    table: str
    index: int
    event: msgspec.Raw


_LINE: Final = msgspec.json.Decoder(Line)
_FIELDS: Final = msgspec.json.Decoder(dict[str, Any])


def encode_line(table: str, index: int, event: Event | UnknownEvent) -> bytes:
    return (
        b'{"table":' + msgspec.json.encode(table) + b',"index":' + str(index).encode()
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
