"""The ten-line bot of docs/bots.md runs as printed and plays a legal table."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_runs_and_plays_a_table() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "trump_counter.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=True,
    ).stdout
    scores = ast.literal_eval(out.strip().splitlines()[-1])
    assert set(scores) == {"counter", "r1", "r2"} and all(isinstance(v, int) for v in scores.values())


def test_the_docs_show_the_example_as_it_is() -> None:
    doc = (ROOT / "docs" / "bots.md").read_text()
    shown = re.search(r"`examples/trump_counter.py`, whole:\n\n```python\n(.*?)```", doc, re.S)
    assert shown is not None
    code = (ROOT / "examples" / "trump_counter.py").read_text()
    assert shown.group(1).strip() in code
    body = code[code.index("class TrumpCounter") : code.index("if __name__")].strip().splitlines()
    assert len([line for line in body if line.strip()]) <= 14  # the class: about ten lines of logic
