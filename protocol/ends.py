"""Moved to ``protocol.skat.ends``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.ends`` gives the same module)."""

import sys

from .skat import ends as _module

sys.modules[__name__] = _module
