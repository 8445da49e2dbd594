"""Moved to ``protocol.skat.rules``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.rules`` gives the same module)."""

import sys

from .skat import rules as _module

sys.modules[__name__] = _module
