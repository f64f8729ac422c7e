"""What a family declares for PettingZoo (:class:`WorldSpaces`, one :class:`RoleSpaces` per role) and the
generic conversions between Gymnasium values and SimLab's observations and replies.

A role's action space is built from a :class:`~simlab.core.family.ReplyForm`, the same schema a person's
form is built from: the message and reasoning boxes become ``Text`` entries, each typed field a space of its
kind (a choice or a whole number ``Discrete``, a cell ``MultiDiscrete``, a flag ``Discrete(2)``, a decimal
``Box``, text and code ``Text``); an optional field adds ``NAME_given`` (``Discrete(2)``: 0 leaves it out),
and the answer buttons one ``Discrete`` over the answers. The role's observation space is ``Dict(text=Text)``
plus, when it has pictures, ``images``: one ``Box(uint8, (height, width, 3))`` per picture.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces
from PIL import Image

from simlab.core.family import FormField, ReplyForm
from simlab.core.world import Observation, Reply
from simlab.render.images import fit


def _characters(*ranges: tuple[int, int]) -> str:
    return "".join(chr(c) for low, high in ranges for c in range(low, high + 1) if chr(c).isprintable())


CHARSET: str = "\n\t" + _characters(
    (0x20, 0x7E),  # ASCII
    (0xA0, 0x17F),  # Latin-1 and Latin Extended-A: accents, currency, degrees, x
    (0x2010, 0x205E),  # dashes, quotes, bullets, ellipsis
    (0x20A0, 0x20C0),  # currency signs
    (0x2190, 0x22FF),  # arrows, mathematical operators
    (0x2500, 0x25FF),  # box drawing, blocks, geometric shapes
    (0xFFFD, 0xFFFD),  # what stands for any other character
)
"""Every character a SimLab text space holds: what the worlds write, and what agents' messages are made of."""
REPLACEMENT = "\ufffd"
"""What an observation shows for a character outside :data:`CHARSET` (an agent's emoji); the recording keeps
the exact text."""
_ALLOWED = frozenset(CHARSET)
MESSAGE_LENGTH = 1000
"""Longest message, reasoning or line of text an action holds."""
CODE_LENGTH = 4000
"""Longest program (a ``code`` field)."""
TEXT_LENGTH = 100_000
"""Longest observation text; a longer one leaves out its oldest shared history, as a model agent's does."""

ReadReply = Callable[[Mapping[str, Any], Observation], Reply]
"""``(action values, the observation it answers) -> Reply``."""
Mask = Callable[[Observation], dict[str, Any]]
"""``observation -> action mask``: one entry per action key (None: any value), PettingZoo's ``action_mask``."""


def text(max_length: int = MESSAGE_LENGTH) -> spaces.Text:
    """A text of 0..``max_length`` characters of :data:`CHARSET` ("" stands for nothing said)."""
    return spaces.Text(max_length, min_length=0, charset=CHARSET)


@dataclass(frozen=True)
class RoleSpaces:
    """One role in PettingZoo terms.

    ``form`` is the role's reply form with fixed choices (the action space is built from it); ``read`` turns
    an action into the :class:`Reply` the world judges (default: the form's own reading, :func:`form_reply`);
    ``pictures`` maps each picture the role may be given to the ``(width, height)`` of its box (a picture is
    scaled down into it, keeping its aspect; one the observation lacks is black); ``mask`` gives the
    ``action_mask`` of an observation when only some values are legal (PettingZoo's samplers honour it)."""

    form: ReplyForm
    pictures: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    read: ReadReply | None = None
    mask: Mask | None = None

    def action_space(self) -> spaces.Dict:
        """A new action space (each agent gets its own object, so seeding one does not seed another)."""
        entries: dict[str, spaces.Space[Any]] = {}
        if self.form.message is not None:
            entries["message"] = text()
        if self.form.reasoning is not None:
            entries["reasoning"] = text()
        for spec in self.form.fields:
            entries[spec.name] = field_space(spec)
            if spec.optional:
                entries[f"{spec.name}_given"] = spaces.Discrete(2)
        if self.form.answers is not None:
            entries[self.form.answers.name] = field_space(self.form.answers)
        return spaces.Dict(entries)

    def action(self, values: Mapping[str, Any] | None = None, message: str = "", reasoning: str = "") -> dict[str, Any]:
        """The action that stands for the form filled in with ``values`` (field name -> value as the form
        holds it: a choice's name, a cell ``[i, j]``, a flag's value; an answer by its name) and the texts:
        what an agent that thinks in the world's own terms (an oracle's candidate move) sends. Fields not
        given take their lowest value; optional ones are left out."""
        values = values or {}
        out: dict[str, Any] = {}
        if self.form.message is not None:
            out["message"] = message
        if self.form.reasoning is not None:
            out["reasoning"] = reasoning
        for spec in self.form.fields:
            out[spec.name] = field_sample(spec, values.get(spec.name))
            if spec.optional:
                out[f"{spec.name}_given"] = int(values.get(spec.name) is not None)
        if self.form.answers is not None:
            out[self.form.answers.name] = field_sample(self.form.answers, values.get(self.form.answers.name))
        return out

    def observation_space(self) -> spaces.Dict:
        """A new observation space: the text and, when the role has pictures, one box per picture."""
        entries: dict[str, spaces.Space[Any]] = {"text": text(TEXT_LENGTH)}
        if self.pictures:
            boxes: dict[str, spaces.Space[Any]] = {
                name: spaces.Box(0, 255, (h, w, 3), np.uint8) for name, (w, h) in self.pictures.items()
            }
            entries["images"] = spaces.Dict(boxes)
        return spaces.Dict(entries)

    def reply(self, action: Mapping[str, Any], observation: Observation) -> Reply:
        """The reply ``action`` stands for at ``observation``."""
        return (self.read or form_reply(self.form))(action, observation)

    def observe(self, observation: Observation) -> dict[str, Any]:
        """``observation`` as a value of :meth:`observation_space`."""
        out: dict[str, Any] = {"text": observation_text(observation, TEXT_LENGTH)}
        if self.pictures:
            out["images"] = {name: picture_array(observation, name, size) for name, size in self.pictures.items()}
        return out


@dataclass(frozen=True)
class WorldSpaces:
    """What a family declares for PettingZoo (``WorldFamily.spaces`` names a function ``(task, settings) ->
    WorldSpaces``): a :class:`RoleSpaces` per role; the ``reward``, a value of the episode's latest scores
    (every role is rewarded with its change at each step, counted from 0 before the first, so a role's rewards
    add up to the value the episode ends with); ``parallel``: every role acts exactly once per cycle, in role
    order, and an episode ends only at the end of a cycle (PettingZoo's ``aec_to_parallel`` needs that)."""

    roles: Mapping[str, RoleSpaces]
    reward: Callable[[Mapping[str, float]], float]
    parallel: bool = False


# ---- actions ----------------------------------------------------------------------------------------------


def field_space(spec: FormField) -> spaces.Space[Any]:
    """The space of one form field's value."""
    if spec.kind == "choice":
        return spaces.Discrete(len(spec.choices))
    if spec.kind == "int":
        return spaces.Discrete(spec.high - spec.low + 1, start=spec.low)
    if spec.kind == "cell":
        return spaces.MultiDiscrete([spec.high + 1, spec.high + 1])
    if spec.kind == "flag":
        return spaces.Discrete(2)
    if spec.kind == "number":
        return spaces.Box(float(spec.low), float(spec.high), (), np.float64)
    return text(CODE_LENGTH if spec.kind == "code" else MESSAGE_LENGTH)


def field_value(spec: FormField, value: Any) -> Any:
    """A sampled value as the form holds it: the choice's name, plain ints, a cell as ``[i, j]``, a flag's
    value or None, a decimal to two places, text as it is."""
    if spec.kind == "choice":
        return spec.choices[int(value)]
    if spec.kind == "int":
        return int(value)
    if spec.kind == "cell":
        return [int(v) for v in value]
    if spec.kind == "flag":
        return spec.value if int(value) else None
    if spec.kind == "number":
        return round(float(value), 2)
    return str(value)


def field_sample(spec: FormField, value: Any) -> Any:
    """The inverse of :func:`field_value`: a form's value (None: the field's lowest) as a value of its space."""
    if spec.kind == "choice":
        return spec.choices.index(value) if value is not None else 0
    if spec.kind == "cell":
        return np.array(value if value is not None else [0, 0], dtype=np.int64)
    if spec.kind == "flag":
        return int(value is not None and value == spec.value)
    if spec.kind == "number":
        return np.float64(spec.low if value is None else value)
    if spec.kind == "int":
        return int(spec.low if value is None else value)
    return "" if value is None else str(value)


def form_values(form: ReplyForm, action: Mapping[str, Any]) -> dict[str, Any]:
    """The form's field values an action holds (an optional field whose ``NAME_given`` is 0 left out)."""
    out = {}
    for spec in form.fields:
        if spec.name in action and (not spec.optional or int(action.get(f"{spec.name}_given", 0))):
            out[spec.name] = field_value(spec, action[spec.name])
    return out


def form_reply(form: ReplyForm) -> ReadReply:
    """A form's own reading of an action: the message and reasoning ("" is none) and the action its fields
    build, as the form a person fills in sends them."""

    def read(action: Mapping[str, Any], observation: Observation) -> Reply:
        return form.reply(str(action.get("message", "")), str(action.get("reasoning", "")), form_values(form, action))

    return read


def answer_reply(form: ReplyForm, action: Mapping[str, Any]) -> Reply:
    """The reply of the answer button an action picks (the form must have answers)."""
    assert form.answers is not None
    return form.answer(str(field_value(form.answers, action[form.answers.name])))


# ---- observations -----------------------------------------------------------------------------------------


def observation_text(observation: Observation, max_length: int) -> str:
    """The observation's text within ``max_length`` characters of :data:`CHARSET`: the oldest shared history
    left out first (saying so, as for a model with a short context), then cut; other characters replaced."""
    keep = len(observation.history)
    fitted = observation
    while len(fitted.text) > max_length and keep > 1:  # with_history(0) would keep it all
        keep //= 2
        fitted = observation.with_history(keep)
    said = fitted.text[:max_length]
    return "".join(c if c in _ALLOWED else REPLACEMENT for c in said)


def picture_array(observation: Observation, name: str, size: tuple[int, int]) -> np.ndarray:
    """The observation's picture ``name`` scaled down into ``size`` (width, height), centred on black, as
    ``uint8`` (height, width, 3); all black when the observation has no such picture."""
    width, height = size
    canvas = Image.new("RGB", (width, height))
    if name in observation.images:
        picture = fit(observation.images[name].convert("RGB"), width, height)
        canvas.paste(picture, ((width - picture.width) // 2, (height - picture.height) // 2))
    return np.asarray(canvas, dtype=np.uint8)
