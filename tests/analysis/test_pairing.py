"""Which episodes of two runs played the same task: the same (task id, repeat) and the same recorded task, the
one test ``report`` and the app pair by; runs of another seed hold other tasks under the same ids."""

from __future__ import annotations

from simlab.analysis.compare import compare_runs, name_runs
from simlab.analysis.pairing import pair_by_task, recorded_tasks, same_task, task_key
from simlab.core.recording import load_run


def _keyed(*summaries: dict) -> list[tuple]:
    return [(task_key(s), s["episode_id"]) for s in summaries]


def test_the_same_task_id_and_repeat_pair_the_first_of_each_in_order():
    mine = _keyed(
        {"episode_id": "a1", "task_id": "t1", "repeat": 0},
        {"episode_id": "a2", "task_id": "t1", "repeat": 1},
        {"episode_id": "a3", "task_id": "t2", "repeat": 0},
        {"episode_id": "a4"},  # no task id: never paired
    )
    theirs = _keyed(
        {"episode_id": "b1", "task_id": "t1", "repeat": 1},
        {"episode_id": "b2", "task_id": "t1", "repeat": 0},
        {"episode_id": "b3", "task_id": "t1", "repeat": 0},  # the same key again: the first one is paired
        {"episode_id": "b4", "task_id": "t3", "repeat": 0},
        {"episode_id": "b5"},
    )
    pairing = pair_by_task(mine, {}, theirs, {})
    assert pairing.pairs == [("a1", "b2"), ("a2", "b1")] and pairing.differing == []
    assert task_key({"task_id": "t1", "repeat": 2.0}) == ("t1", 2) and task_key({"task_id": 7}) == ("7", None)


def test_a_task_id_naming_another_task_is_not_paired_and_a_run_that_does_not_say_is_taken_at_its_word():
    one = {"tasks": [{"id": "t1", "blocks": [1, 2]}, {"id": "t2", "blocks": [3]}]}
    reordered = {"tasks": [{"blocks": [1, 2], "id": "t1"}, {"id": "t2", "blocks": [4]}]}
    mine, theirs = recorded_tasks(one), recorded_tasks(reordered)
    assert same_task("t1", mine, theirs)  # the same task, its keys in another order
    assert not same_task("t2", mine, theirs)
    assert same_task("t2", mine, {}) and same_task("t9", mine, theirs)  # not recorded: taken at its word
    assert recorded_tasks({}) == {} and recorded_tasks({"tasks": "not a list"}) == {}
    keyed = _keyed({"episode_id": "a", "task_id": "t1", "repeat": 0}, {"episode_id": "b", "task_id": "t2", "repeat": 0})
    pairing = pair_by_task(keyed, mine, keyed, theirs)
    assert pairing.pairs == [("a", "a")] and pairing.differing == [("b", "b")]


def test_two_runs_of_different_seeds_share_ids_but_no_task(record):
    """Runs made like ``run --world blocks --episodes 3 --seed 3`` and ``--seed 0``: the report and the pairing
    agree that no task is shared though every (task id, repeat) is."""
    a, b = load_run(record(episodes=3, turns=4, seed=3)), load_run(record(episodes=3, turns=4, seed=0))
    keys = [task_key(s) for s in a.summaries]
    assert keys == [task_key(s) for s in b.summaries] and len(keys) == 3  # structure_000-r0... in both
    pairing = pair_by_task(
        [(task_key(s), s) for s in a.summaries],
        recorded_tasks(a.config),
        [(task_key(s), s) for s in b.summaries],
        recorded_tasks(b.config),
    )
    assert pairing.pairs == [] and len(pairing.differing) == 3
    (comparison,) = compare_runs(name_runs([a, b])).comparisons
    assert (comparison.shared, comparison.different) == (0, 3)
    (same,) = compare_runs(name_runs([b, b])).comparisons  # the same tasks: every one is shared

    assert (same.shared, same.different) == (3, 0)
