"""The bounds of every count and size the command line takes, in one place.

Each flag's ``--help`` says its bound, and the README's command sections repeat the ones worth knowing. A value
past one is refused with exit status 2, naming the flag, the bound and why, before any work starts (argparse
checks the flags through :class:`simlab.options.Bound`; a run config's values are checked where the run is
planned). World settings and generate options carry their own bounds (``Field(le=...)`` in each family's
models; ``python main.py worlds`` lists them).
"""

from __future__ import annotations

MAX_TASKS = 100_000
"""Tasks one ``generate`` makes (or a run that generates its own), unless the family declares fewer
(:attr:`simlab.core.family.TaskSource.max_tasks`): the quick generators make 100,000 in about 20 seconds, and a
run keeps its tasks in ``run.json`` (tens of megabytes for 100,000)."""

MAX_REPEATS = 1_000
"""``run --repeats``: the papers play a task one to five times."""

MAX_RUN_EPISODES = 100_000
"""Episodes of one run, tasks times repeats: each is a file and an index line, and the plan is held in memory."""

MAX_SEED = 2**63 - 1
"""Seeds are 0 to 2^63 - 1, the range :func:`simlab.core.seeding.stable_seed` draws from: a signed 64-bit
integer, which other tools reading ``run.json`` can hold."""

MAX_CONCURRENCY = 256
"""Episodes or requests in flight at once: each is a thread with its own world, agents and connection."""

MAX_PROCESSES = 64
"""Worker processes of a batch (``run --processes``): each imports SimLab and holds its own model clients."""

MAX_EPISODE_TIMEOUT_S = 7 * 24 * 3600.0
"""``run --episode-timeout``: a week (0 means no timeout)."""

MAX_WAIT_S = MAX_EPISODE_TIMEOUT_S
"""A model request's ``timeout``, ``max_wait_s`` and backoffs (agents' settings, ``judge`` flags): a week too."""

MAX_RETRIES = 100
"""A model request's ``max_retries``: each retry may wait up to ``max_backoff_s`` before it."""

MAX_TURNS = 10_000
"""``run --turns``: the largest turn budget a bundled world takes (the world's own bound then applies)."""

MAX_JUDGE_RUNS = 20
"""``judge --runs``: each run asks about every item again (the papers average two or three)."""

MAX_TEMPERATURE = 2.0
"""``judge --temperature``: the range OpenAI-compatible endpoints accept, 0 to 2."""

MAX_FRAMES = 500
"""Frames of one animation (a turn each): every frame is held in memory until the file is written (1.4 MB at
800x600, so 700 MB), and 500 frames play for four minutes at two a second."""


def shown(value: object) -> str:
    """A value for a message: its first 40 characters, or an integer's size when it is too long to show (one of
    thousands of digits cannot even be printed)."""
    if isinstance(value, int) and abs(value) >= 10**40:
        return f"(an integer of {value.bit_length():,} bits)"
    try:
        return repr(value)[:40]
    except ValueError:  # an integer of thousands of digits inside a list or a table
        return f"(a {type(value).__name__} holding a number too long to show)"
