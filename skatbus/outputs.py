"""Where commands write: checked before any work, so a path that cannot take the output is one
line (``UsageError``, exit code 2) at the start, not a traceback after a whole tournament.

A directory is probed by creating it (and its parents) and a temporary file in it: that is the
only test that holds everywhere. Permission bits alone say nothing for root (who writes through
them), for read-only mounts (``EROFS`` is no ``PermissionError``), or for a path under a file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO

from .errors import UsageError


def _reason(exc: OSError) -> str:
    return (exc.strerror or exc.__class__.__name__).lower()


def writable_dir(path: str | os.PathLike[str], flag: str = "--out") -> Path:
    """``path`` as a directory files can be written in, created if missing; else a
    ``UsageError`` naming ``flag`` and why (a file, not a directory, read-only, ...)."""
    where = Path(path)
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=where, prefix=".skat-probe-")
        os.close(fd)
        os.unlink(probe)
    except FileExistsError:
        raise UsageError(f"{flag} {path}: is a file, not a directory") from None
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {_reason(exc)}") from None
    return where


def open_output(path: str | os.PathLike[str], flag: str = "--out") -> IO[str]:
    """``path`` opened for writing text (UTF-8), or a ``UsageError`` naming ``flag`` and why."""
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {_reason(exc)}") from None


def write_failed(path: str | os.PathLike[str], exc: OSError, flag: str = "--out") -> UsageError:
    """The one line for a write that failed half-way (a full disk, a device gone)."""
    return UsageError(f"{flag} {path}: writing failed: {_reason(exc)}")
