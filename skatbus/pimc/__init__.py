"""``pimc``: a search bot. Perfect-information Monte Carlo over worlds sampled from what a seat
knows (``worlds``), each solved by a double-dummy solver (``solver``); bidding and declaring
from the heuristic's fitted model (``bot``)."""

from .bot import PimcBot

__all__ = ["PimcBot"]
