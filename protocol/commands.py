"""Moved to ``protocol.skat.commands``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.commands`` gives the same module)."""

import sys

from .skat import commands as _module

sys.modules[__name__] = _module
