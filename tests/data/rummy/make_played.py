"""Writes ``played.jsonl``: records of whole games the engine played with random legal actions
(``python -m tests.data.rummy.make_played`` from the repository's root).

Unlike the hand-made fixtures of ``make_records.py`` these are not independent of the engine:
they are regression data, games of every variant that both the engine's ``records.check`` and
the reference checker judged "agree" when written (tests/protocol/rummy/test_records.py checks
they still do), and ready-made input for ``skat records``. ``note`` says what each one is.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from protocol.rummy import RummyRules
from tests.games import rummy_oracle
from tests.games.test_rummy_differential import play_game, random_rules

HERE = Path(__file__).parent


def main() -> None:
    lines = []
    wanted: dict[str, bool] = {}
    seed = 0
    while len(wanted) < 8 and seed < 5000:
        rules: RummyRules = random_rules(random.Random(seed))
        taker = seed % 3 == 0
        key = f"{rules.variant}{rules.pack_count}{'t' if taker else ''}{'' if rules.ace_joins_low else 'h'}"
        if key not in wanted:
            record = play_game(seed, taker=taker, probe=0.0)
            actions = sum(len(d["actions"]) for d in record["deals"])
            if actions <= 400:
                assert rummy_oracle.check(record).status == "agree"
                note = f"seed {seed}: variant {rules.variant}, {rules.players} players, {len(rules.pack)} cards"
                note += f", {'a taker' if taker else 'uniform'}, {len(record['deals'])} deals, {actions} actions"
                lines.append(json.dumps({"note": note, **record}, ensure_ascii=False))
                wanted[key] = True
        seed += 1
    (HERE / "played.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
