"""The puzzles world family (COMMA): a solver sees a puzzle module, an expert holds its manual."""
