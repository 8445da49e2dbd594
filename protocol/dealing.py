"""Moved to ``protocol.skat.dealing``: this path stays an alias of that very module, so
imports written before the move keep working (``import protocol.dealing`` gives the same module)."""

import sys

from .skat import dealing as _module

sys.modules[__name__] = _module
