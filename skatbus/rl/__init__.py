"""Standard reinforcement-learning environments over the pure engine (no bus): docs/research.md.

* ``SkatAECEnv`` (``skatbus.rl.aec``): PettingZoo AEC, every seat an agent, one deal an episode.
* ``SkatGymEnv`` (``skatbus.rl.gym``): Gymnasium, one learning seat against built-in bots.
* ``skatbus.rl.actions``: the fixed action index (629 actions) and legal masks.
* ``skatbus.rl.encoding``: the fixed-size observation (404 floats) of one seat.
* ``skatbus.rl.game``: ``DealGame``, one deal stepped by action index, which both drive.

The environments need the ``rl`` extra (``pip install 'skatbus[rl]'``: numpy, pettingzoo,
gymnasium); they are imported on first use, so ``skatbus.rl.actions`` and
``skatbus.rl.encoding`` cost no PettingZoo import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .aec import SkatAECEnv
    from .gym import SkatGymEnv
    from .thirty_one_aec import ThirtyOneAECEnv
    from .thirty_one_gym import ThirtyOneGymEnv

__all__ = ["SkatAECEnv", "SkatGymEnv", "ThirtyOneAECEnv", "ThirtyOneGymEnv"]


def __getattr__(name: str) -> Any:
    if name == "SkatAECEnv":
        from .aec import SkatAECEnv

        return SkatAECEnv
    if name == "SkatGymEnv":
        from .gym import SkatGymEnv

        return SkatGymEnv
    if name == "ThirtyOneAECEnv":
        from .thirty_one_aec import ThirtyOneAECEnv

        return ThirtyOneAECEnv
    if name == "ThirtyOneGymEnv":
        from .thirty_one_gym import ThirtyOneGymEnv

        return ThirtyOneGymEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
