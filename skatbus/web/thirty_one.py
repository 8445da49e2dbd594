"""What a spectator's page gets from a Thirty-one table: the public view and the score sheet.

The view is ``protocol.thirty_one.views.view(state, SPECTATOR)``, the redaction of the public
feed: coins, kitty, the discard pile in order, the stock's size, whose turn, the knocker and
the last turns owed, the eliminated seats, the hands shown at a deal's end, the places once the
table is closed; never a hand, the stock's cards, or a card someone took from the stock. The
sheet is the table's ``SheetRow`` per deal, with the hands that deal's end showed (public: a
showdown shows every hand, a 31 its holders'), so the page can show any past deal's result.

Every message carries ``index``, the number of the table's events it reflects.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from protocol.thirty_one.events import T31DealEnded
from protocol.thirty_one.state import ThirtyOneState
from protocol.thirty_one.views import SPECTATOR, view

GAME: Final = "thirty-one"
_ENCODER = msgspec.json.Encoder()


def thirty_one_message(state: ThirtyOneState, ended: dict[int, T31DealEnded]) -> bytes:
    """The spectator's message: the view, the sheet (with each deal's shown hands), the
    places once closed, the position. ``ended``: the table's ``t31_deal_ended`` by deal."""
    sheet: list[dict[str, Any]] = []
    for row in state.sheet:
        end = ended.get(row.deal)
        sheet.append({**msgspec.to_builtins(row), "shown": end.shown if end is not None else []})
    message = {
        "kind": "table",
        "game": GAME,
        "index": state.events,
        "closed": state.closed,
        "complete": state.complete,
        "view": view(state, SPECTATOR) if state.opened else None,
        "sheet": sheet,
        "places": state.places() if state.closed else [],
    }
    return _ENCODER.encode(message)
