"""``python -m services NAME [--nats URL ...]``: run one service in this process.

What ``skat service`` and ``skat up`` start, without the rest of the command line: the bus
layer runs on its own (``skatbus`` builds on it, never the other way round).
"""

from __future__ import annotations

import argparse
import sys

from .connection import SettingsError, add_arguments, from_args
from .main import SERVICES, service_main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services", description="run one skatbus service")
    parser.add_argument("name", choices=list(SERVICES))
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        settings = from_args(args)
    except SettingsError as exc:
        print(f"services: {exc}", file=sys.stderr)
        return 2
    assert settings is not None
    return service_main(args.name, settings)


if __name__ == "__main__":
    sys.exit(main())
