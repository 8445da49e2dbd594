"""Moved to ``protocol.skat.knowledge``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.knowledge`` gives the same module)."""

import sys

from .skat import knowledge as _module

sys.modules[__name__] = _module
