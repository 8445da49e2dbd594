"""`skat run` (what `make run` does) serves the live page while it plays, and says where."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path


def test_skat_run_serves_the_live_page_while_it_plays(tmp_path: Path) -> None:
    env = {**os.environ, "SKAT_LOG_LEVEL": "warning"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "run", "--groups", "1", "--rounds", "1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            found = re.match(r"Watch it live in a browser: (http://127\.0\.0\.1:\d+)", line)
            if found:
                url = found.group(1)
                break
        assert url is not None, "no address of the live page"
        with urllib.request.urlopen(url + "/", timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        rest = proc.stdout.read()
        assert proc.wait(timeout=240) == 0
        assert "Results:" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_no_web_leaves_the_page_out(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skatbus.cli", "run", "--groups", "1", "--rounds", "1", "--no-web"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert "Watch it live" not in done.stdout and "Results:" in done.stdout
