"""Hidden tic-tac-toe: a tiny SimLab world family installed from outside SimLab.

A seer who sees hidden mines guides a player, by messages only, to mark the one safe line of a 3x3 board.
The family is declared in :mod:`hidden_tictactoe.family` and registered through the entry point
``simlab.worlds: tictactoe``; no line of SimLab names it.
"""

__version__ = "0.1.0"
