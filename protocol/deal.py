"""Moved to ``protocol.skat.deal``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.deal`` gives the same module)."""

import sys

from .skat import deal as _module

sys.modules[__name__] = _module
