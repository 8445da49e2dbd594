"""The engine-level contract every registered game meets (``test_contract.py``), in the spirit of
OpenSpiel's random_sim_test: random tables of every game in ``protocol.registry``, driven through
``protocol.game.Game`` only (``engine.py``), checked against what each seat may know
(``knowledge.py``)."""
