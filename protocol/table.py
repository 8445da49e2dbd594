"""Moved to ``protocol.skat.table``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.table`` gives the same module)."""

import sys

from .skat import table as _module

sys.modules[__name__] = _module
