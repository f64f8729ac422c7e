"""Every SimLab world as a PettingZoo environment (docs/PETTINGZOO.md): ``env(world, task=..., settings=...,
render_mode=...)`` is a ``pettingzoo.AECEnv`` whose agents are the family's roles, with the Gymnasium spaces
the family declares (``WorldFamily.spaces``), recorded as an ordinary SimLab episode (``env.save(path)``).

Needs the optional extra: ``pip install 'simlab[pettingzoo]'`` (pettingzoo and gymnasium). Headless: no Qt.
"""

from simlab.pettingzoo.env import SimLabEnv, env, parallel_env, text_view
from simlab.pettingzoo.spaces import (
    CHARSET,
    RoleSpaces,
    WorldSpaces,
    answer_reply,
    field_space,
    form_reply,
    form_values,
    text,
)

__all__ = [
    "CHARSET",
    "RoleSpaces",
    "SimLabEnv",
    "WorldSpaces",
    "answer_reply",
    "env",
    "field_space",
    "form_reply",
    "form_values",
    "parallel_env",
    "text",
    "text_view",
]
