"""Reading live models' CRAFT replies: directors' think/message tags and the builder's colon-format moves."""

from __future__ import annotations

import pytest

from simlab.worlds import get_family
from simlab.worlds.blocks.model import Move
from simlab.worlds.blocks.replies import ReplyError, parse_builder_reply, parse_director_reply


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "<think>D1 sees red</think>\n<message>Put a small red at (0,0).</message>",
            ("D1 sees red", "Put a small red at (0,0)."),
        ),
        ("<THINK> x </Think><MESSAGE> go </message>", ("x", "go")),
        ("<message>no reasoning given</message>", (None, "no reasoning given")),
        ("<message>unclosed to the end\n", (None, "unclosed to the end")),
        ("<think>unclosed think<message>m</message>", ("unclosed think", "m")),
        ("Sure!\n<think></think><message>m</message> trailing", (None, "m")),
    ],
)
def test_director_replies(text, expected):
    assert parse_director_reply(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "no <message>"),
        ("<think>only thinking</think>", "no <message>"),
        ("<message>  </message>", "empty"),
        # SmolLM2-135M in `make live-check`: prose naming the tags opened an unclosed block that ran to the end
        (
            "This is a short version... (no <message> block). Reply again:\n\nYour private thoughts inside "
            "<think>, then your message for the builder.",
            "holds a <think> or <message> tag",
        ),
        ("<message>put <message>red</message> at (0,0)</message>", "holds a <think> or <message> tag"),
        ("<message>go</think> left</message>", "holds a <think> or <message> tag"),
    ],
)
def test_director_replies_without_a_message_are_errors(text, reason):
    with pytest.raises(ReplyError, match=reason):
        parse_director_reply(text)


PLACE_GS = Move.place("gs", (0, 1), 0).to_json()
PLACE_BL = Move.place("bl", (1, 0), 0, (2, 0)).to_json()
REMOVE = Move.remove((0, 2), 2).to_json()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PLACE:gs:(0,1):0:CONFIRM:D1 asked for it", PLACE_GS),
        ("PLACE:gs:0,1:0", PLACE_GS),
        ("place : GS : ( 0 , 1 ) : layer 0 : confirm : D1: and D2 agree", PLACE_GS),
        ("PLACE:gs:[0, 1]:L0:D1 said so", PLACE_GS),
        ("**PLACE:gs:(0,1):0:CONFIRM:ok**", PLACE_GS),
        ("`PLACE:bl:(1,0):0:(2,0):CONFIRM:D2 and D3 agree`", PLACE_BL),
        ("I follow D2.\n\nPLACE:bl:1,0:0:2,0:CONFIRM:D2", PLACE_BL),
        ("PLACE bl @ (1,0) layer 0 -> (2,0)", PLACE_BL),
        ("- PLACE gs @ (0,1) layer 0", PLACE_GS),
        ("REMOVE:(0,2):2:CONFIRM:excess block", REMOVE),
        ("REMOVE @ (0,2) layer 2", REMOVE),
        ("REMOVE:(1,0):0:(2,0):CONFIRM:wrong domino", Move.remove((1, 0), 0, (2, 0)).to_json()),
        ("CLARIFY:Which layer, D1?", Move.clarify("Which layer, D1?").to_json()),
        ("CLARIFY: What's the colour?", Move.clarify("What's the colour?").to_json()),
        ('CLARIFY:\n\n"Which cell?"', Move.clarify("Which cell?").to_json()),
        ("We should place it carefully.\nPLACE:gs:(0,1):0:CONFIRM:ok", PLACE_GS),
        ("PLACE:xx:(0,1):0\nPLACE:gs:(0,1):0", PLACE_GS),  # a bad line, then a good one
    ],
)
def test_builder_replies(text, expected):
    assert parse_builder_reply(text) == expected
    Move.from_json(expected)  # what the world reads


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "no PLACE, REMOVE or CLARIFY"),
        ("I think we should place the green one.", "no PLACE, REMOVE or CLARIFY"),
        ("PLACE:xx:(0,1):0", "unknown block code 'xx'"),
        ("PLACE:gs:(0,1)", "PLACE needs PLACE:block:position:layer"),
        ("PLACE:gs:(0,1):CONFIRM:ok", "PLACE needs"),
        ("REMOVE:(a,b):0", "not a cell"),
        ("REMOVE:(0,1):top", "not a number"),
        ("CLARIFY:", "needs a question"),
        ("PLACE gs @ the corner", "colon format"),
        ("__import__('os').system('x')", "no PLACE, REMOVE or CLARIFY"),
    ],
)
def test_unreadable_builder_replies_say_why(text, reason):
    with pytest.raises(ReplyError, match=reason):
        parse_builder_reply(text)


def test_reply_errors_are_value_errors():
    assert issubclass(ReplyError, ValueError)


def test_every_listed_candidate_copied_whole_is_the_move_it_lists():
    """Models copied the candidate listing but dropped a large block's second cell (span_missing errors): the
    listing is now in the reply format, so a line copied whole (with a rationale) is exactly its move."""
    family = get_family("blocks")
    candidates = []
    for task in family.tasks.generate(4, 0):
        world = family.world(task, family.default_settings)
        world.reset(1)
        while (role := world.agent_selection) != "builder":
            world.step(family.agents["oracle"](role, None, {}).act(world.observe(role)))
        observation = world.observe("builder")
        listing = observation.text.split("copy one whole line to play it):\n", 1)[1].split("\n\n", 1)[0]
        assert len(listing.splitlines()) == len(observation.data["candidates"])
        for line, move in zip(listing.splitlines(), observation.data["candidates"], strict=True):
            assert parse_builder_reply(f"{line}:CONFIRM:the directors asked for it") == move
            candidates.append(move)
    assert any("span_to" in move for move in candidates)  # large blocks are among them
