"""`skat run` (what `make run` does) serves the live page while it plays, and says where."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.skatbus.commands import stop_gently


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
        stop_gently(proc)


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


def test_a_human_entrant_gets_a_seat_page_in_a_tournament(tmp_path: Path) -> None:
    """``skat tournament --remote ann --human``: ann's seat is served by the live page (with its
    token), the table waits for her, and SIGTERM stops it all."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "tournament", "--remote", "ann", "--human"]
        + ["--groups", "1", "--rounds", "1", "--turn-seconds", "60"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
    )
    try:
        assert proc.stdout is not None
        seat_url = None
        for line in proc.stdout:
            found = re.search(r"ann plays in the browser at: (http://127\.0\.0\.1:\d+/play/ann\?token=\S+)", line)
            if found:
                seat_url = found.group(1)
                break
        assert seat_url is not None, "no seat address for ann"
        # The token moves into a cookie on the first visit (a redirect): keep cookies, as a browser.
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with browser.open(seat_url, timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        with pytest.raises(urllib.error.HTTPError) as refused:  # the seat without the token
            urllib.request.urlopen(seat_url.split("?")[0], timeout=10)
        assert refused.value.code == 403
        proc.send_signal(15)
        assert proc.wait(timeout=60) == 143
    finally:
        stop_gently(proc)


def test_human_without_remote_players_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skatbus.cli", "tournament", "--human"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--remote" in done.stderr
