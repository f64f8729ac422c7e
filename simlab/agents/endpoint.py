"""Where OpenAI-compatible requests go when no setting says: the openai SDK's own conventions."""

from __future__ import annotations

import os

OPENAI_BASE_URL = "https://api.openai.com/v1"
KEY_ENV = "OPENAI_API_KEY"


def default_base_url() -> str:
    """``$OPENAI_BASE_URL`` when set (the convention of the openai SDK, vLLM and Ollama), else OpenAI's."""
    return os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
