"""Moved to ``protocol.skat.scoring``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.scoring`` gives the same module)."""

import sys

from .skat import scoring as _module

sys.modules[__name__] = _module
