"""Scripted model replies for the fake OpenAI server: a model that plays the blocks protocol correctly.

Directors always ask for the first verified candidate; the builder copies the first candidate line of its
prompt (the listing is in the reply format) and adds its rationale, or asks to clarify when there is none.
Tests and benchmarks of live runs use it so the world advances while the transport is what is under test.
"""

from __future__ import annotations

import re
from typing import Any

from simlab.testing.openai_server import last_user_text

DIRECTOR_SAYS = "<think>My wall shows the next block.</think>\n<message>Take the first candidate.</message>"
CANDIDATE = re.compile(r"^(?:PLACE|REMOVE):\S+$", re.MULTILINE)


def builder_says(body: dict[str, Any]) -> str:
    """The first verified candidate line of the builder's prompt, copied whole, with a rationale."""
    found = CANDIDATE.search(last_user_text(body))
    if found is None:
        return "CLARIFY:Which block next?"
    return f"{found.group(0)}:CONFIRM:the directors asked for the first candidate"


BLOCKS_SCRIPT = {"You are director": DIRECTOR_SAYS, "You are the builder": builder_says}
"""Marker -> reply for :func:`simlab.testing.openai_server.scripted_replies`."""
