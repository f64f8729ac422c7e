"""What one agent's view alone tells about a rooms question, and what a solver may learn from the benchmark.

Two things decide whether a question measures communication rather than a prior:

* **What a single view rules out** (:func:`ruled_out`): the options one agent's own view, with the question
  and its options, proves wrong (an anchor option it does not see, a count below what it sees, a candidate it
  sees beaten by another it sees, a map that misplaces one of its own objects). The necessity filter
  (:func:`needs_both_views`) keeps a question only when neither view rules anything out. The one structural
  exception is the Helper on anchor recognition: the answer is the one object both see, so every distractor
  is unseen by one of the two and some view can always prune; SimLab's anchor distractors are all in the
  Answerer's view (who holds the question), and the Helper, who is never shown the options, could prune.
  ``Helper alone`` here means the Helper's view with the question text and options, never the Answerer's
  pictures (its view and the map).
* **What a solver can learn from the other questions** (:func:`option_features`): short strings per option,
  such as its text, its object category, a count's rank among the options or its offset from what a view
  counts. A feature whose options are right more often than chance is a prior; the balanced selection
  (:mod:`simlab.worlds.rooms.balance`) evens them out and the validity report's solvers
  (:mod:`simlab.worlds.rooms.validity`) exploit whatever is left.
"""

from __future__ import annotations

import math
import re

from simlab.worlds.rooms.model import Camera, Scene
from simlab.worlds.rooms.observations import ANSWERER, HELPER
from simlab.worlds.rooms.tasks import MAP_TOLERANCE, Question, Views, corner_distance, map_layout, map_point

VIEW_SOLVERS: tuple[str, ...] = (ANSWERER, HELPER)
HELPER_MAY_PRUNE: frozenset[str] = frozenset({"anchor", "counting"})
"""Tasks on which the Helper's view alone may rule options out (see the module docstring)."""
_MODE = re.compile(r"\b(closest|farthest|nearest|furthest)\b", re.IGNORECASE)


def _seen(views: Views, role: str) -> set[str]:
    return set(views.answerer_visible if role == ANSWERER else views.helper_visible)


def _camera(views: Views, role: str) -> Camera:
    return views.answerer if role == ANSWERER else views.helper


# ---- what one view rules out ---------------------------------------------------------------------------------
def ruled_out(question: Question, scene: Scene, views: Views, role: str) -> frozenset[str]:
    """The option letters ``role``'s own view (with the question and options, not the other's pictures)
    proves wrong."""
    seen = _seen(views, role)
    task, objects = question.task, question.option_objects
    if task == "anchor":
        return frozenset(k for k, v in objects.items() if str(v) not in seen)
    if task == "counting":
        own = _own_count(question, scene, seen)
        return frozenset(k for k, v in objects.items() if own is not None and int(v) < own)
    if task == "distance":
        return _distance_ruled_out(question, scene, seen)
    if task == "mapping" and role == ANSWERER:
        return frozenset({"yes"}) if _own_marks_wrong(question, scene, views) else frozenset()
    return frozenset()  # direction: the target is out of the Answerer's sight; the Helper lacks its pose


def needs_both_views(question: Question, scene: Scene, views: Views) -> bool:
    """The necessity filter: True when neither view alone rules an option out (the Helper may on the tasks
    of :data:`HELPER_MAY_PRUNE`)."""
    if ruled_out(question, scene, views, ANSWERER):
        return False
    return question.task in HELPER_MAY_PRUNE or not ruled_out(question, scene, views, HELPER)


def _own_count(question: Question, scene: Scene, seen: set[str]) -> int | None:
    category = question.details.get("category")
    if category is None:
        return None
    return sum(1 for i in seen if scene.object(i).category == category)


def distance_mode(question: Question) -> str:
    """``closest`` or ``farthest``: from the question's details, else from its (possibly paraphrased) text."""
    mode = question.details.get("mode")
    if mode in ("closest", "farthest"):
        return str(mode)
    found = _MODE.search(question.text)
    return "farthest" if found and found.group(1).lower() in ("farthest", "furthest") else "closest"


def _distance_ruled_out(question: Question, scene: Scene, seen: set[str]) -> frozenset[str]:
    """With the target in sight, every candidate in sight but the best of them (two or more in sight)."""
    if question.target not in seen:
        return frozenset()
    box = scene.object(question.target).bbox
    dist = {k: corner_distance(box, scene.object(str(v)).bbox) for k, v in question.option_objects.items() if v in seen}
    if len(dist) < 2:
        return frozenset()
    pick = min if distance_mode(question) == "closest" else max
    best = pick(sorted(dist), key=dist.__getitem__)
    return frozenset(k for k in dist if k != best)


def _own_marks_wrong(question: Question, scene: Scene, views: Views) -> bool:
    """Whether the map draws one of the Answerer's own objects away from where it sees it."""
    ids = sorted({*views.answerer_visible, *views.helper_visible})
    shown = map_layout(scene, ids, views.answerer, question.map_swap)
    return any(
        math.dist(shown[i], map_point(views.answerer, scene.object(i).center)) > MAP_TOLERANCE
        for i in views.answerer_visible
        if i in shown
    )


# ---- what a solver may learn ------------------------------------------------------------------------------
def option_features(question: Question, scene: Scene, views: Views, solver: str) -> dict[str, tuple[str, ...]]:
    """Per option letter, the features ``solver`` sees: ``blind`` the option's text, its object's category and,
    for counts, its rank among the options; a view solver (``answerer``, ``helper``) also what its own view
    says about the option (its distance from the agent, a count's offset from the agent's own count, whether
    it sees the candidate and how far the candidate is from a target it sees)."""
    out = {k: _blind(question, scene, k) for k in question.option_objects}
    if solver in VIEW_SOLVERS:
        for k, extra in _view_features(question, scene, views, solver).items():
            out[k] = out[k] + extra
    return out


def all_features(question: Question, scene: Scene, views: Views) -> dict[str, tuple[str, ...]]:
    """Per option letter, every solver's features (what the balanced selection evens out), but the Helper's
    own where it may prune by design (:data:`HELPER_MAY_PRUNE`: there they cannot be evened out)."""
    out: dict[str, tuple[str, ...]] = option_features(question, scene, views, "blind")
    held = (ANSWERER,) if question.task in HELPER_MAY_PRUNE else VIEW_SOLVERS
    for solver in held:
        for k, feats in option_features(question, scene, views, solver).items():
            out[k] = tuple(dict.fromkeys(out[k] + feats))
    return out


def _blind(question: Question, scene: Scene, letter: str) -> tuple[str, ...]:
    value = question.option_objects[letter]
    if question.task == "mapping":
        return (f"text:{letter}",)
    text = question.options[list(question.option_objects).index(letter)]
    feats = [f"text:{text.strip().lower()}"]
    if question.task in ("anchor", "distance") and scene.has(str(value)):
        feats.append(f"category:{scene.object(str(value)).category}")
    if question.task == "counting":
        rank = sorted(int(v) for v in question.option_objects.values()).index(int(value))
        feats.append(f"rank:{rank}")
    return tuple(feats)


def _view_features(question: Question, scene: Scene, views: Views, role: str) -> dict[str, tuple[str, ...]]:
    seen, camera, tag = _seen(views, role), _camera(views, role), role
    objects = question.option_objects
    out: dict[str, tuple[str, ...]] = {k: () for k in objects}
    if question.task == "anchor":
        for k, v in objects.items():
            if str(v) in seen:
                obj = scene.object(str(v))
                away = round(math.dist(camera.position, obj.center))
                out[k] = (f"{tag}.metres-away:{away}", f"size:{obj.size_class}")
    elif question.task == "counting":
        own = _own_count(question, scene, seen)
        if own is not None:
            out = {k: (f"{tag}.count{int(v) - own:+d}",) for k, v in objects.items()}
    elif question.task == "distance":
        out = _distance_features(question, scene, seen, tag)
    return out


def _distance_features(question: Question, scene: Scene, seen: set[str], tag: str) -> dict[str, tuple[str, ...]]:
    """Whether the view sees each candidate and, when it sees the target too, the candidate's distance from
    the target in half metres."""
    sees_target = question.target in seen
    out: dict[str, tuple[str, ...]] = {}
    for k, v in question.option_objects.items():
        feats = [f"{tag}.sees:{_yes(v in seen)}/target:{_yes(sees_target)}"]
        if sees_target and v in seen and question.target is not None:
            d = corner_distance(scene.object(question.target).bbox, scene.object(str(v)).bbox)
            feats.append(f"{tag}.metres-from-target:{round(d * 2) / 2}/{distance_mode(question)}")
        out[k] = tuple(feats)
    return out


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
