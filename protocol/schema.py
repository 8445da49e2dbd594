"""JSON Schema of the player protocol, generated from the msgspec types so it never drifts."""

from __future__ import annotations

import json

import msgspec

from .skat.commands import AnyCommand
from .wire import Reply, Update


def player_schema() -> str:
    """One JSON document: ``commands`` (what a player sends), ``reply`` (the answer to each),
    ``update`` (what it receives on ``skat.view.<player>.<table>``), with shared definitions."""
    (command, reply, update), components = msgspec.json.schema_components(
        [AnyCommand, Reply, Update], ref_template="#/$defs/{name}"
    )
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "skatbus player protocol",
        "properties": {"command": command, "reply": reply, "update": update},
        "$defs": components,
    }
    return json.dumps(document, indent=2, sort_keys=True)
