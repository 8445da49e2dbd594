"""Moved to ``protocol.skat.views``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.views`` gives the same module)."""

import sys

from .skat import views as _module

sys.modules[__name__] = _module
