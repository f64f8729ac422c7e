"""Hidden tic-tac-toe as SimLab sees it: one :class:`~simlab.core.family.WorldFamily`, registered by this
package's entry point ``[project.entry-points."simlab.worlds"] tictactoe = "hidden_tictactoe.family:FAMILY"``.

Importing this module must stay cheap: it names its pictures by string (``views``) and imports no renderer.
"""

from __future__ import annotations

from simlab.core.family import PlotSpec, SeriesSpec, TaskSource, WorldFamily

from hidden_tictactoe import protocol, tasks
from hidden_tictactoe.agents import AGENTS
from hidden_tictactoe.board import LINE_KINDS
from hidden_tictactoe.roles import PALETTE, PLAYER, ROLES, SEER
from hidden_tictactoe.world import HiddenTicTacToe, TicTacToeSettings

PLOTS = (
    PlotSpec(
        "Progress on the safe line",
        "share marked",
        (SeriesSpec.of_metric("progress", (0, 121, 107), "progress"),),
        y_range=(0.0, 1.0),
    ),
    PlotSpec(
        "Mines",
        "count",
        (
            SeriesSpec.of_metric("mines stepped on", (205, 35, 35), "mines_hit"),
            SeriesSpec.of_metric("lives left", (69, 90, 100), "lives_left"),
        ),
        steps=True,
    ),
)

FAMILY = WorldFamily(
    name="tictactoe",
    description="Hidden tic-tac-toe: a seer who sees hidden mines guides a player to mark the one safe line",
    world=HiddenTicTacToe,
    roles=ROLES,
    tasks=TaskSource(
        generate=tasks.generate,
        load=tasks.load,
        write=tasks.write,
        validate=tasks.validate,
        options=tasks.GenerateOptions,
        groups=LINE_KINDS,
        group_of=tasks.group_of,
        group_label="line",
        n_help="how many boards",
    ),
    settings=TicTacToeSettings,
    agents=AGENTS,
    default_agents={SEER: "oracle", PLAYER: "scripted"},
    protocol=protocol.protocol,
    reply_form=protocol.reply_form,
    views="hidden_tictactoe.presentation:VIEWS",
    palette=PALETTE,
    plots=PLOTS,
    headline_metrics=("progress", "win", "mines_hit", "turns_used"),
    spaces="hidden_tictactoe.spaces:spaces",
)
