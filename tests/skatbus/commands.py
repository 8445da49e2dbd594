"""Stopping a ``skat`` command a test started as a process."""

from __future__ import annotations

import subprocess


def stop_gently(proc: subprocess.Popen[str]) -> None:
    """SIGTERM first, so that the command stops its server and services itself; SIGKILL only if
    it does not end (its children then get the kernel's parent-death signal)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
