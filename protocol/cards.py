"""Moved to ``protocol.skat.cards``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.cards`` gives the same module)."""

import sys

from .skat import cards as _module

sys.modules[__name__] = _module
