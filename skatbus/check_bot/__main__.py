"""``python -m skatbus.check_bot``: the same as ``skat check-bot`` (and ``--transcript``)."""

import sys

from .cli import main

sys.exit(main())
