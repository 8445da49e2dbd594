"""Moved to ``protocol.skat.iss``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.iss`` gives the same module)."""

import sys

from .skat import iss as _module

sys.modules[__name__] = _module
