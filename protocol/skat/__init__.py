"""Skat, the German card game (ISkO rules, ISS records), as one game package behind the game
interface (``protocol.game``; ``game.GAME`` is what the registry holds).

Its modules: ``cards``, ``rules``, ``games`` (declarations), ``dealing``, ``deal`` (one deal's
state machine), ``ends``, ``scoring``, ``table`` (the fold and what is due), ``decide``,
``views``, ``knowledge`` (what a seat knows), ``commands``, ``iss`` (ISS records). Skat's events
are in ``protocol.events`` beside the table lifecycle's, where every log written so far names
them. The old paths (``protocol.cards``, ``protocol.table``, ...) stay importable as aliases of
these modules.
"""
