"""Scripted model replies for the fake OpenAI server: a model that plays the blocks protocol correctly.

Directors always ask for the first verified candidate; the builder answers with the first candidate listed in
its prompt, in the CRAFT colon format (or asks to clarify when there is none). Tests and benchmarks of live
runs use it so the world advances while the transport is what is under test.
"""

from __future__ import annotations

import re
from typing import Any

from simlab.testing.openai_server import last_user_text

DIRECTOR_SAYS = "<think>My wall shows the next block.</think>\n<message>Take the first candidate.</message>"
CANDIDATE = re.compile(r"- PLACE (\w\w) @ \((\d),(\d)\) layer (\d)(?: -> \((\d),(\d)\))?")


def builder_says(body: dict[str, Any]) -> str:
    """The first verified candidate of the builder's prompt, in the CRAFT colon format."""
    found = CANDIDATE.search(last_user_text(body))
    if found is None:
        return "CLARIFY:Which block next?"
    code, i, j, layer, si, sj = found.groups()
    span = f":({si},{sj})" if si is not None else ""
    return f"PLACE:{code}:({i},{j}):{layer}{span}:CONFIRM:the directors asked for the first candidate"


BLOCKS_SCRIPT = {"You are director": DIRECTOR_SAYS, "You are the builder": builder_says}
"""Marker -> reply for :func:`simlab.testing.openai_server.scripted_replies`."""
