"""The Node.js example bot's dependencies, for the tests that run it (``node`` fixture in
tests/conftest.py): ``npm ci`` once when examples/node-bot/node_modules is missing or holds
another version of the client than package-lock.json, under a file lock, so that two test
workers never install into the same directory at once. Skipped only when node or npm is not
installed or the npm registry cannot be reached."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

BOT_DIR = Path(__file__).resolve().parents[1] / "examples" / "node-bot"
NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH")


def _installed_version(package: str) -> str | None:
    try:
        return json.loads((BOT_DIR / "node_modules" / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def _locked_version(package: str) -> str:
    lock = json.loads((BOT_DIR / "package-lock.json").read_text())
    return lock["packages"][f"node_modules/{package}"]["version"]  # type: ignore[no-any-return]


def node_with_dependencies() -> str:
    """The node executable, with examples/node-bot's dependencies installed (``npm ci``)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("the Node.js bot test needs node and npm on PATH (not installed)")
    with open(BOT_DIR.parent / ".node-bot-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed_version("nats") != _locked_version("nats"):
            _npm_ci(npm)
    return node


def _npm_ci(npm: str) -> None:
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=BOT_DIR, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        output = done.stdout + done.stderr
        failed = done.returncode != 0
    except subprocess.TimeoutExpired as exc:
        output, failed = f"npm ci timed out after {exc.timeout} s", True
    if failed:
        if not any(code in output for code in NETWORK_ERRORS) and _registry_answers(npm):
            pytest.fail(f"npm ci in {BOT_DIR} failed:\n{output[-4000:]}")
        pytest.skip(f"the npm registry cannot be reached, so examples/node-bot cannot be installed:\n{output[-2000:]}")


def _registry_answers(npm: str) -> bool:
    try:
        return subprocess.run([npm, "ping"], cwd=BOT_DIR, capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False
