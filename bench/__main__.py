"""``python -m bench [section ...] [--quick] [--repeats N] [--seed S] [--instances N] [--profile]``.

Sections live in ``SECTIONS``: a name, the module that implements it and a one-line help.
A section module defines ``run(opts: Options) -> list[Row]`` and, optionally,
``profile(opts: Options) -> str``. Modules are imported only when their section runs, so a
section with heavy dependencies (the NATS pipeline) costs nothing to the others. To add one,
write ``bench/<name>.py`` and add a line to ``SECTIONS``.
"""

from __future__ import annotations

import importlib
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from . import Options, format_rows


@dataclass(frozen=True)
class Section:
    module: str
    help: str


SECTIONS: dict[str, Section] = {
    "engine": Section("bench.engine", "pure rules engine on one core: deals, fold, codec"),
    "thirty-one": Section("bench.thirty_one", "Thirty-one engine on one core: random games, next to Skat's deals"),
    "skeleton": Section(
        "bench.skeleton", "the protocol's minimal message pattern, no game logic: the floor under the stack"
    ),
    "pipeline": Section(
        "bench.pipeline", "whole deals through the five services over a real nats-server, next to the skeleton"
    ),
    "requests": Section("bench.requests", "client CPU per request: nc.request vs services.requester, A/B/A/B"),
    "steps": Section("bench.steps", "one table's time, step by step, and what its slowest prompts wait for"),
    "flood": Section("bench.flood", "other tables' latency while one player floods at 10x its rate limit"),
    "envs": Section("bench.envs", "RL env steps/s (skatbus.rl) next to the engine and OpenSpiel's skat"),
}


def _cpu() -> str:
    """The CPU model, which ``platform`` does not report on Linux; empty if unknown."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _header(opts: Options) -> str:
    import msgspec

    impl = f"{platform.python_implementation()} {platform.python_version()}"
    mode = "quick (not for comparison)" if opts.quick else "full"
    return (
        f"skatbus bench | {impl} | msgspec {msgspec.__version__} | {platform.platform()} | {_cpu()}\n"
        f"mode {mode}, {opts.repeats} timed repeats after a warm-up, best and median shown, seed {opts.seed}"
        + (f", {opts.instances} processes per service" if opts.instances > 1 else "")
    )


def main(argv: list[str] | None = None) -> int:
    from skatbus.cli_parser import SkatParser

    parser = SkatParser(
        prog="python -m bench", description="skatbus benchmarks: throughput figures next to their targets."
    )
    parser.add_argument(
        "sections",
        nargs="*",
        metavar="section",
        help="sections to run (default: all): " + "; ".join(f"{k}: {s.help}" for k, s in SECTIONS.items()),
    )
    parser.add_argument("--quick", action="store_true", help="short run for smoke tests")
    parser.add_argument("--repeats", type=int, help="timed repeats per figure (default 7, quick 3)")
    parser.add_argument("--seed", type=int, default=Options.seed, help="RNG seed of all workloads")
    parser.add_argument(
        "--instances",
        type=int,
        default=Options.instances,
        metavar="N",
        help="processes per service where a section starts the services (pipeline; default 1)",
    )
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of each section's hot loops")
    args = parser.parse_args(argv)

    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    names = args.sections or list(SECTIONS)
    repeats = args.repeats or (3 if args.quick else 7)
    if repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.instances < 1:
        parser.error("--instances must be at least 1")
    opts = Options(quick=args.quick, repeats=repeats, seed=args.seed, instances=args.instances)

    print(_header(opts), flush=True)
    for name in names:
        section = SECTIONS[name]
        module = importlib.import_module(section.module)
        print(file=sys.stdout)
        print(format_rows(f"[{name}] {section.help}", module.run(opts)), flush=True)
        if args.profile and hasattr(module, "profile"):
            print(module.profile(opts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
