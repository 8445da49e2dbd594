"""JSON Schema of the player protocol, generated from the msgspec types so it never drifts."""

from __future__ import annotations

import json

import msgspec

from .skat.commands import AnyCommand
from .thirty_one.commands import AnyCommand as ThirtyOneCommand
from .thirty_one.views import ThirtyOneUpdate
from .wire import Reply, Update

THIRTY_ONE = "thirty-one."
"""The prefix of Thirty-one's definitions in ``$defs``."""


def player_schema() -> str:
    """One JSON document: ``command`` (what a player sends at a Skat table), ``reply`` (the
    answer to each), ``update`` (what it receives on ``skat.view.<player>.<table>`` at a Skat
    table), and the same for Thirty-one (``thirty_one_command``, ``thirty_one_update``), with
    shared definitions. Every view names its table's game (``table_game``) and rules; every
    update, under a time control, the seat's ``clock``, ``increment`` and ``turn_seconds``
    (optional: a client that ignores unknown fields reads updates without them as before)."""
    (command, reply, update), components = msgspec.json.schema_components(
        [AnyCommand, Reply, Update], ref_template="#/$defs/{name}"
    )
    # Thirty-one's definitions under names of their own: its ``Discard`` is not Skat's.
    (t31_command, t31_update), t31_components = msgspec.json.schema_components(
        [ThirtyOneCommand, ThirtyOneUpdate], ref_template=f"#/$defs/{THIRTY_ONE}{{name}}"
    )
    components.update({f"{THIRTY_ONE}{name}": schema for name, schema in t31_components.items()})
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "skatbus player protocol",
        "properties": {
            "command": command,
            "reply": reply,
            "update": update,
            "thirty_one_command": t31_command,
            "thirty_one_update": t31_update,
        },
        "$defs": components,
    }
    return json.dumps(document, indent=2, sort_keys=True)
