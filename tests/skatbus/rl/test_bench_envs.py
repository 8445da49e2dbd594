"""``python -m bench envs`` runs, labels its figures and says when OpenSpiel is missing."""

from __future__ import annotations

import pytest

from bench import Options, envs


def test_the_envs_section_runs_and_says_when_openspiel_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    tiny = {"base": 200, "engine": 5, "game": 5, "aec": 5, "random": 2, "heuristic": 1, "spiel": 2}
    monkeypatch.setattr(envs, "_sizes", lambda opts: tiny)
    monkeypatch.setattr(envs, "have_openspiel", lambda: False)
    rows = envs.run(Options(quick=True, repeats=1))
    names = [r.name for r in rows]
    assert names[:3] == ["interpreter baseline", "engine, random actions", "DealGame, random indices"]
    assert "AEC env, masked random policy" in names and "Gym env vs heuristic bots" in names
    assert all(r.value > 0 for r in rows[:-1])
    assert rows[-1].name == "OpenSpiel skat" and "not installed" in rows[-1].note
    assert "x the engine row's actions/s" in next(r.note for r in rows if r.name.startswith("AEC"))


@pytest.mark.skipif(not envs.have_openspiel(), reason="open_spiel is not installed (the bench extra)")
def test_openspiel_skat_plays_random_deals() -> None:
    assert envs.openspiel_steps(3, 1, observe=True) == envs.openspiel_steps(3, 1, observe=False) > 60
