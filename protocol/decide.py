"""Moved to ``protocol.skat.decide``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.decide`` gives the same module)."""

import sys

from .skat import decide as _module

sys.modules[__name__] = _module
