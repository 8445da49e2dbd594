"""Moved to ``protocol.skat.games``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.games`` gives the same module)."""

import sys

from .skat import games as _module

sys.modules[__name__] = _module
