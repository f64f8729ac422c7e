"""The conformance check of a family's LLM judges (:attr:`~simlab.core.family.WorldFamily.judges`).

Use it from a test with a few recorded episodes of the family::

    from simlab.testing import judge_test
    def test_my_judges(episodes):
        judge_test("blocks", episodes)

It asks no model: it checks what every request would be and that every answer could be read.
"""

from __future__ import annotations

from collections.abc import Sequence

from simlab.core.episode import Episode
from simlab.core.judging import Judge, judge_messages, read_verdict
from simlab.worlds import WorldFamily, get_family

MAX_CONTEXT = 40_000
"""Characters an item's context may have: a bound no recording, however long, may make a family exceed."""


def judge_test(family: str | WorldFamily, episodes: Sequence[Episode]) -> dict[str, int]:
    """Check every judge of ``family`` on ``episodes``; returns each judge's number of items.

    A judge has a unique name, judges this family, has instructions, questions with unique codes and
    non-empty texts, at least one run and a known way to combine them, and every label of every question is
    read back from a reply in the asked form; a ``rate`` over no items is None. Its items are deterministic
    (the same on a second call and on the episode read back from its JSON), each at a recorded turn with a
    (turn, subject) of its own and a non-empty context of at most :data:`MAX_CONTEXT` characters, from which
    the request builds."""
    fam = get_family(family) if isinstance(family, str) else family
    judges = fam.load_judges()
    names = [j.name for j in judges]
    assert len(set(names)) == len(names), f"{fam.name}: judge names repeat: {names}"
    counts: dict[str, int] = {}
    for judge in judges:
        _check_judge(fam.name, judge)
        counts[judge.name] = sum(_check_items(judge, episode) for episode in episodes)
    return counts


def _check_judge(world: str, judge: Judge) -> None:
    where = f"judge {judge.name!r}"
    assert judge.world == world, f"{where} judges {judge.world!r} episodes, declared by {world!r}"
    assert judge.instructions.strip(), f"{where} has no instructions"
    assert judge.questions, f"{where} asks no question"
    codes = [q.code for q in judge.questions]
    assert len(set(codes)) == len(codes), f"{where}: question codes repeat: {codes}"
    assert all(q.text.strip() and q.label.strip() and q.scale.labels for q in judge.questions), (
        f"{where}: empty question"
    )
    assert judge.runs >= 1, f"{where} runs {judge.runs} times"
    assert judge.combine in ("mean", "agree"), f"{where} combines runs by {judge.combine!r}"
    for k in range(max(len(q.scale.labels) for q in judge.questions)):
        picked = {q.code: list(q.scale.labels)[k % len(q.scale.labels)] for q in judge.questions}
        reply = "\n".join(f"{code}: {label} | because" for code, label in picked.items())
        verdict = read_verdict(judge, reply)
        assert verdict.labels == picked and verdict.unreadable is None, f"{where} misreads {reply!r}: {verdict}"
    if judge.rate is not None:
        assert judge.rate([]) is None, f"{where}: a rate over no items must be None"


def _check_items(judge: Judge, episode: Episode) -> int:
    where = f"judge {judge.name!r} on episode {episode.episode_id}"
    items = list(judge.items(episode))
    assert items == list(judge.items(episode)), f"{where}: items differ between two calls"
    again = list(judge.items(Episode.from_json(episode.to_json())))
    assert items == again, f"{where}: items differ on the episode read back from its JSON"
    keys = [(item.turn, item.subject) for item in items]
    assert len(set(keys)) == len(keys), f"{where}: two items share a (turn, subject): {keys}"
    for item in items:
        at = f"{where}, turn {item.turn} {item.subject!r}"
        assert 0 <= item.turn <= episode.last_turn, f"{at}: not a turn of the episode"
        assert item.context.strip(), f"{at}: empty context"
        assert len(item.context) <= MAX_CONTEXT, f"{at}: context of {len(item.context):,} characters"
        system, user = judge_messages(judge, item)
        assert system["content"] and item.context.strip() in user["content"], f"{at}: the request lacks its parts"
        assert all(f"{q.code}:" in user["content"] for q in judge.questions), f"{at}: a question is not asked"
    return len(items)
