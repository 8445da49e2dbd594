"""Refit the heuristic bot's hand-strength weights from its own play (offline; not used at run time).

For each deal one position is made to declare a chosen game at a bid of 18 (the other two
pass), picks up the skat, discards as ``skatbus.heuristic`` would for that game, and the
deal is played out by ``HeuristicBot`` in all three seats. Each deal gives a sample: the
features of the declarer's 10 cards before the skat ("pre"), of the 10 it kept plus the
discarded points ("post"), and whether it won. A logistic regression per game family
(suit, grand, null) and per model (pre, post) gives the weights to paste into
``services/heuristic.py``.

Games are forced where the bot could plausibly declare them (a suit game in the declarer's
longest trump suit, a grand with at least two jacks or a jack and two aces, a null with few
dangerous cards), so the fit is good where the bidding decisions are made.

    python -m skatbus.heuristic_fit --deals 6000
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from multiprocessing import Pool

from protocol.events import DealDealt
from protocol.skat import cards as C
from protocol.skat.commands import DISCARDS, PASS, PICKUP, Bid, Command, Declare, Hold
from protocol.skat.rules import Rules
from protocol.skat.views import PlayerView
from protocol.wire import Update

from . import heuristic as H
from .local import play_table

Sample = tuple[str, tuple[float, ...], bool]
"""(model name such as "suit/pre", features, won)."""

HAND_SHARE = 0.3
"""Share of the forced games played hand (the rest pick up the skat)."""


def _forced_game(hand: int, rng: random.Random) -> str | None:
    """The game to force for a 10-card hand, drawn among the families it could play."""
    options = []
    best_suit = max("CSHD", key=lambda g: ((hand & (C.JACKS | H.PLAIN["CSHD".index(g)])).bit_count(), rng.random()))
    if (hand & (C.JACKS | H.PLAIN["CSHD".index(best_suit)])).bit_count() >= 4:
        options.append(best_suit)
    jacks = (hand & C.JACKS).bit_count()
    aces = sum(hand >> H.ACE_OF[s] & 1 for s in range(4))
    if jacks >= 2 or (jacks == 1 and aces >= 2):
        options.append("G")
    if H.null_danger(hand, C.ALL & ~hand)[0] <= 3:
        options.append("N")
    return rng.choice(options) if options else None


class _Forcer:
    """Shared by the three seats of a table: makes one position declare one game per deal."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)
        self.bot = H.HeuristicBot(seed)
        self.plan: dict[int, tuple[int, str]] = {}  # deal -> (declarer seat, game)
        self.samples: dict[int, list[tuple[str, tuple[float, ...]]]] = {}

    def act(self, obs: Update) -> Command:
        v = obs.view
        first = v.legal[0]
        if v.phase == "bidding":
            dealt = next(e for e in v.history if type(e) is DealDealt)
            if v.deal not in self.plan:
                pos = self.rng.randrange(3)
                self.plan[v.deal] = (dealt.seats[pos], "")
            seat, _ = self.plan[v.deal]
            if v.seat != seat:
                return PASS
            if not self.plan[v.deal][1]:
                game = _forced_game(C.parse(v.hand), self.rng)
                if game is None:
                    self.plan[v.deal] = (seat, "-")
                    return PASS
                self.plan[v.deal] = (seat, game)
            if self.plan[v.deal][1] == "-":
                return PASS
            if isinstance(first, Hold) or any(isinstance(a, Hold) for a in v.legal):
                return next(a for a in v.legal if isinstance(a, Hold))
            bids = [a for a in v.legal if isinstance(a, Bid)]
            return bids[0] if v.bid < 18 else PASS
        if v.phase == "skat":
            game = self.plan[v.deal][1]
            if self.rng.random() < HAND_SHARE:
                hand = C.parse(v.hand)
                self.samples[v.deal] = [(f"{H.family(game)}/hand", H.features(game, hand, _forehand(v)))]
                return Declare(game=game)  # type: ignore[arg-type]
            return PICKUP
        if v.phase == "discard":
            seat, game = self.plan[v.deal]
            twelve = C.parse(v.hand)
            fh = _forehand(v)
            plan = H.plan_game(twelve, 18, fh, games=game)
            kept = twelve & ~C.mask(plan.discard)
            ten = twelve & ~C.parse(v.skat)
            pts = float(sum(C.POINTS[c] for c in plan.discard))
            fam = H.family(game)
            self.samples[v.deal] = [
                (f"{fam}/pre", H.features(game, ten, fh)),
                (f"{fam}/post", (*H.features(game, kept, fh, C.ALL & ~twelve), pts)),
            ]
            return DISCARDS[plan.discard]
        if v.phase == "declare":
            return Declare(game=self.plan[v.deal][1])  # type: ignore[arg-type]
        return self.bot.act(obs)


def _forehand(v: PlayerView) -> bool:
    dealt = next(e for e in v.history if type(e) is DealDealt)
    return dealt.seats[0] == v.seat


def _run(args: tuple[str, int]) -> list[Sample]:
    seed, deals = args
    forcer = _Forcer(seed)
    rules = Rules(rounds=max(1, deals // 3))
    run = play_table("fit", ["a", "b", "c"], [forcer, forcer, forcer], rules, seed)
    out: list[Sample] = []
    for row in run.state.sheet:
        got = forcer.samples.get(row.deal)
        if got is None or row.result.kind != "game":
            continue
        for model, f in got:
            out.append((model, f, bool(row.result.won)))
    return out


def fit_logistic(
    xs: Sequence[Sequence[float]], ys: Sequence[bool], l2: float = 1.0, iterations: int = 25
) -> list[float]:
    """Logistic regression by Newton's method with a small ridge penalty (no numpy needed)."""
    d = len(xs[0])
    w = [0.0] * d
    for _ in range(iterations):
        grad = [0.0] * d
        hess = [[0.0] * d for _ in range(d)]
        for x, y in zip(xs, ys):
            z = sum(wi * xi for wi, xi in zip(w, x))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            r = p - (1.0 if y else 0.0)
            s = p * (1 - p)
            for i in range(d):
                grad[i] += r * x[i]
                xi_s = x[i] * s
                row = hess[i]
                for j in range(i, d):
                    row[j] += xi_s * x[j]
        for i in range(d):
            for j in range(i):
                hess[i][j] = hess[j][i]
            if i:
                grad[i] += l2 * w[i]
                hess[i][i] += l2
        step = _solve(hess, grad)
        w = [wi - si for wi, si in zip(w, step)]
        if max(abs(si) for si in step) < 1e-6:
            break
    return w


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        if abs(m[r][r]) < 1e-12:
            continue
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def main(argv: Sequence[str] | None = None) -> int:
    from .cli_parser import SkatParser

    parser = SkatParser(prog="python -m skatbus.heuristic_fit")
    parser.add_argument("--deals", type=int, default=6000)
    parser.add_argument("--seed", default="fit")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dump", default="", help="also write the samples as JSON lines to this file")
    args = parser.parse_args(argv)
    chunk = 300
    tasks = [(f"{args.seed}/{i}", chunk) for i in range(max(1, args.deals // chunk))]
    with Pool(args.jobs) as pool:
        samples = [s for part in pool.map(_run, tasks) for s in part]
    if args.dump:
        with open(args.dump, "w") as f:
            for model, x, won in samples:
                f.write(json.dumps([model, list(x), won]) + "\n")
    print("MODELS: Final[dict[str, tuple[float, ...]]] = {")
    for model in H.MODELS:
        rows = [s for s in samples if s[0] == model]
        if len(rows) < 50:
            print(f"    # {model}: only {len(rows)} samples, kept as it was")
            print(f'    "{model}": {H.MODELS[model]},')
            continue
        ys = [s[2] for s in rows]
        w = fit_logistic([s[1] for s in rows], ys)
        print(f"    # {model}: {len(rows)} samples, {sum(ys) / len(ys):.1%} won")
        print(f'    "{model}": ({", ".join(f"{x:.3g}" for x in w)}),')
    print("}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
