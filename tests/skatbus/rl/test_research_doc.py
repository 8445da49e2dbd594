"""docs/research.md: the training loop runs as printed, and the tables match the code."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from skatbus.rl import actions as A
from skatbus.rl.encoding import SEGMENTS

DOC = Path(__file__).resolve().parents[3] / "docs" / "research.md"


def test_the_training_loop_runs_as_printed_and_updates_its_policy() -> None:
    text = DOC.read_text()
    block = re.search(r"## A training loop\n.*?```python\n(.*?)```", text, re.S)
    assert block is not None
    code = block.group(1)
    assert len([line for line in code.splitlines() if line.strip()]) <= 16  # about ten lines
    namespace: dict[str, object] = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    W = namespace["W"]
    assert isinstance(W, np.ndarray) and W.shape == (404, 629) and np.abs(W).sum() > 0
    assert namespace["episode"] == 299


def test_the_observation_table_lists_every_segment_with_its_size() -> None:
    rows = dict(re.findall(r"^\| (\w+) \| (\d+) \|", DOC.read_text(), re.M))
    assert {name: int(rows[name]) for name, _ in SEGMENTS if name in rows} == dict(SEGMENTS)


def test_the_action_table_matches_the_index() -> None:
    spans = re.findall(r"^\| (\d+)(?:-(\d+))? \| (\d+) \|", DOC.read_text(), re.M)
    covered = [(int(a), int(b or a), int(n)) for a, b, n in spans]
    assert [n for _, _, n in covered] and sum(n for _, _, n in covered) == A.N_ACTIONS
    starts = [a for a, _, _ in covered]
    assert starts == [
        0,
        A.BID_OFFSET,
        A.HOLD_INDEX,
        A.PASS_INDEX,
        A.PICKUP_INDEX,
        A.DISCARD_OFFSET,
        A.HAND_DECLARE_OFFSET,
        A.PICKUP_DECLARE_OFFSET,
        A.KONTRA_INDEX,
        A.RE_INDEX,
    ]
    assert all(b - a + 1 == n for a, b, n in covered)


def test_the_other_examples_run_as_printed() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 3
    for code in blocks[1:]:
        exec(compile(code, str(DOC), "exec"), {})
