"""The engine's exceptions, on their own so every rules module can raise them without
importing another's state.

On the bus a refused command is a value (``decide.Rejection``, sent back to the player); in
code that drives a ``Deal`` directly, an illegal action is an ``IllegalAction`` exception, as
an illegal move is in python-chess.
"""

from __future__ import annotations

from typing import Any


class IllegalAction(ValueError):
    """An action that cannot be taken now. ``reason`` says why, in words a player can read
    (the same words a ``Rejection`` would carry)."""

    def __init__(self, action: Any, reason: str) -> None:
        super().__init__(f"illegal {action}: {reason}")
        self.action = action
        self.reason = reason
