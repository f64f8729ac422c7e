"""Read the robot's JSON reply: ``{"status": "code" | "clarification" | "acknowledgement", "details": ...}``.

Models wrap it in a ```json fence, put prose around it or copy the reference prompt's field markers; the
first JSON object in the text that has both fields counts. What cannot be read raises :class:`ReplyError`
with a reason the robot is told in the reference's words (:data:`PARSE_ERROR`). The details are data: code
is only ever read by :mod:`simlab.worlds.boards.interpreter`.
"""

from __future__ import annotations

import json
from typing import Any

from simlab.core.family import ReplyError

STATUSES = ("code", "clarification", "acknowledgement")
PARSE_ERROR = "Error during parsing of the generated response\n{error}\nPlease follow the response format strictly."
"""What the robot is told when its reply cannot be read (the reference's words)."""
MAX_OBJECTS = 50  # JSON objects tried before giving up (a reply is bounded by the model's max_tokens)

_DECODER = json.JSONDecoder()


def parse_robot_reply(text: str) -> dict[str, str]:
    """``{"status", "details"}`` from the robot's reply; ReplyError saying what is wrong."""
    found: Any = None
    start = (text or "").find("{")
    for _ in range(MAX_OBJECTS):
        if start < 0:
            break
        try:
            found, _end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):  # RecursionError: JSON nested past the decoder's own recursion
            found = None
        if isinstance(found, dict) and "status" in found:
            break
        start = text.find("{", start + 1)
    if not isinstance(found, dict) or "status" not in found:
        raise ReplyError('no JSON object with "status" and "details" found')
    status, details = found.get("status"), found.get("details")
    if not isinstance(status, str) or status.strip().lower() not in STATUSES:
        raise ReplyError(f'"status" must be one of {", ".join(STATUSES)}, got {str(status)[:40]!r}')
    if not isinstance(details, str) or not details.strip():
        raise ReplyError('"details" must be a non-empty string (the code, or the text of your question)')
    return {"status": status.strip().lower(), "details": details.strip()}
