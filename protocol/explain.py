"""Saying why a log cannot be read, in words a person can act on.

Two things every reader of a log meets and must not misreport:

- An event this skatbus does not know (``UnknownEvent``: a newer type or version). Folds skip
  it, so that a service keeps running through a rolling upgrade, but then the next event often
  seems to break a rule ("the log must start with table_opened", "TrickTaken does not
  follow"), which sends the reader hunting for a bug that is not there. ``newer_event`` is the
  one sentence for it: what was written, what this version reads, and that upgrading fixes it.
- An event that differs from the one the rules derive: ``differences`` names the fields that
  differ with both values (``result.scores: expected [48, -48, 0], found [480, -48, 0]``),
  never a repr of the whole event, which runs to hundreds of characters and hides the field.

Pure functions, no I/O; every fold and every checker in skatbus words its findings with them.
"""

from __future__ import annotations

import json
from typing import Any, Final

import msgspec

from .events import UnknownEvent

MAX_FIELDS: Final = 2
"""Differing fields named in one line before the rest are counted (``... and 3 more``)."""
MAX_VALUE: Final = 32
"""Characters of one value in a difference before it is cut (``...``)."""


def known_versions(name: str) -> list[int]:
    """The versions of event type ``name`` (``card_played``) that this skatbus reads."""
    from .registry import event_types  # the games import this package: asked at call time

    versions = []
    for tag in event_types():
        kind, _, version = tag.partition("/")
        if kind == name and version.isdigit():
            versions.append(int(version))
    return sorted(versions)


def newer_event(event: UnknownEvent) -> str:
    """``card_played/7 was written by a newer skatbus (this one reads card_played/1); upgrade
    to read it``: the reason a table with ``event`` in its log cannot be read here."""
    tag = f"{event.type}/{event.version}"
    versions = known_versions(event.type)
    if not versions:
        reads = f"no {event.type}"
    elif len(versions) == 1:
        reads = f"{event.type}/{versions[0]}"
    else:
        reads = f"{event.type}/{versions[0]}..{versions[-1]}"
    if versions and event.version < versions[0]:
        return f"{tag} is older than any event this skatbus reads (it reads {reads})"
    return f"{tag} was written by a newer skatbus (this one reads {reads}); upgrade to read it"


def _plain(value: Any) -> Any:
    return msgspec.to_builtins(value)


def _text(value: Any) -> str:
    """A value as JSON, cut to ``MAX_VALUE`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "..."


def _leaves(value: Any) -> bool:
    """Whether a list is one value (a hand, a score line): a list of plain values."""
    return all(not isinstance(v, (dict, list, tuple)) for v in value)


def field_differences(expected: Any, found: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Every field in which ``found`` differs from ``expected`` (structs or JSON values), as
    (path, expected, found); a list of plain values (a hand, a score line) is one field."""
    expected, found = _plain(expected), _plain(found)
    if isinstance(expected, dict) and isinstance(found, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in [*expected, *(k for k in found if k not in expected)]:
            inner = f"{path}.{key}" if path else str(key)
            if key not in found or key not in expected:
                out.append((inner, expected.get(key), found.get(key)))
            else:
                out += field_differences(expected[key], found[key], inner)
        return out
    if (
        isinstance(expected, (list, tuple))
        and isinstance(found, (list, tuple))
        and len(expected) == len(found)
        and not (_leaves(expected) and _leaves(found))
    ):
        out = []
        for i, (a, b) in enumerate(zip(expected, found, strict=True)):
            out += field_differences(a, b, f"{path}[{i}]")
        return out
    if isinstance(expected, (list, tuple)) and isinstance(found, (list, tuple)):
        return [] if list(expected) == list(found) else [(path, list(expected), list(found))]
    return [] if expected == found and type(expected) is type(found) else [(path, expected, found)]


def differences(expected: Any, found: Any, limit: int = MAX_FIELDS) -> str:
    """The differing fields in one short text: ``result.scores: expected [48, 0, 0], found
    [480, 0, 0]; bock_deals_left: expected 0, found 3`` (at most ``limit`` fields, then ``...
    and N more``); ``a different event`` when they are not even of one type."""
    if type(expected) is not type(found) and isinstance(expected, msgspec.Struct):
        return f"expected {type(expected).__name__}, found {type(found).__name__}"
    found_fields = field_differences(expected, found)
    if not found_fields:
        return "no field differs"
    parts = [f"{path or 'the value'}: expected {_text(a)}, found {_text(b)}" for path, a, b in found_fields[:limit]]
    more = len(found_fields) - limit
    return "; ".join(parts) + (f"; ... and {more} more" if more > 0 else "")
