"""Moved to ``protocol.skat.game``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.skat_game`` gives the same module)."""

import sys

from .skat import game as _module

sys.modules[__name__] = _module
