"""The full-text index of a run (simlab/analysis/search.py): what it finds and where, incremental updates,
a damaged or foreign index rebuilt, hostile queries, and links refused."""

from __future__ import annotations

import os
import sqlite3

import pytest

from simlab.analysis.search import (
    MAX_QUERY_CHARS,
    SEARCH_FILE,
    Cancelled,
    QueryError,
    open_index,
    search_run,
    update_index,
)
from simlab.core.notes import change_notes
from simlab.core.recording import load_run
from simlab.core.writing import WriteRefused
from tests.said_run import SAID, WORDS, add_said_episode, demo_copy


@pytest.fixture
def run_dir(tmp_path):
    run = demo_copy(tmp_path)
    add_said_episode(run)
    return run


@pytest.mark.parametrize("word", sorted(WORDS))
def test_each_kind_of_text_is_found_at_its_episode_turn_and_role(run_dir, word):
    hits, _ = search_run(run_dir, word, limit=5)
    turn, role, kind = WORDS[word]
    assert (hits[0].episode_id, hits[0].turn, hits[0].role, hits[0].kind) == (SAID, turn, role, kind)


def test_a_snippet_marks_the_match_and_a_column_narrows_the_search(run_dir):
    hits, _ = search_run(run_dir, "zebracorn")
    assert "[zebracorn]" in hits[0].marked()
    assert search_run(run_dir, "kind:reasoning zebracorn")[0] == []
    # kinds are words too: kind:error finds the engine's errors and the protocol's
    assert {h.kind for h in search_run(run_dir, "kind:error", limit=200)[0]} == {"error", "protocol_error"}


def test_the_demo_runs_engine_errors_are_found_by_code(run_dir):
    hits, _ = search_run(run_dir, "wrong_layer", limit=100)
    assert len({h.episode_id for h in hits}) > 1 and all(h.kind == "error" for h in hits)


def test_an_update_reads_only_new_and_changed_episodes(run_dir):
    first = update_index(run_dir)
    assert first.rebuilt == "no index yet" and SAID in first.indexed and first.kept == 0
    stamp = os.stat(run_dir / SEARCH_FILE).st_mtime_ns
    again = update_index(run_dir)
    assert again.indexed == [] and again.kept == len(first.indexed)
    assert os.stat(run_dir / SEARCH_FILE).st_mtime_ns == stamp  # nothing changed: nothing written
    add_said_episode(run_dir, "later-r0", word="narwhalish")
    later = update_index(run_dir)
    assert later.indexed == ["later-r0"] and later.rebuilt is None
    assert search_run(run_dir, "narwhalish")[0][0].episode_id == "later-r0"


def test_a_changed_episode_is_indexed_again_and_its_old_text_forgotten(run_dir):
    update_index(run_dir)
    add_said_episode(run_dir, SAID, word="axolotlish")  # the same episode played again: the later line wins
    update = update_index(run_dir)
    assert update.indexed == [SAID]
    assert search_run(run_dir, "zebracorn")[0] == []
    assert search_run(run_dir, "axolotlish")[0][0].turn == 3


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda p: p.write_bytes(b"not a database at all" * 100), "cannot be read"),
        (lambda p: sqlite3.connect(p).execute("CREATE TABLE meta(key, value)").connection.commit(), "not a"),
    ],
)
def test_a_corrupt_or_foreign_index_is_rebuilt(run_dir, damage, why):
    damage(run_dir / SEARCH_FILE)
    update = update_index(run_dir)
    assert why in (update.rebuilt or "")
    assert search_run(run_dir, "zebracorn")[0][0].episode_id == SAID


def test_an_index_copied_from_another_run_is_rebuilt(run_dir, tmp_path):
    other = demo_copy(tmp_path / "other")
    update_index(other)
    (run_dir / SEARCH_FILE).write_bytes((other / SEARCH_FILE).read_bytes())
    (run_dir / "run.json").write_text((run_dir / "run.json").read_text().replace('"seed": 0', '"seed": 7'))
    assert "another run" in (update_index(run_dir).rebuilt or "")


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "NEAR(", "NEAR(a b, -1)", "a AND", ")(", "*", "kind:", "nosuchcolumn:x", "x\x00y", "\x1b[31m", "^"],
)
def test_hostile_queries_search_or_find_nothing(run_dir, query):
    hits, _ = search_run(run_dir, query)
    assert isinstance(hits, list)


def test_a_query_past_the_bound_is_refused_with_a_clear_error(run_dir):
    with open_index(run_dir) as index:
        assert index.search("z" * MAX_QUERY_CHARS) == []
        with pytest.raises(QueryError, match="at most 1,000 characters"):
            index.search("z" * 10**6)
        assert index.search("NEAR(" * 150) == []  # long and not FTS5: searched as a phrase
        assert index.search("") == [] and index.search("\x00") == []


def test_a_link_planted_at_the_index_is_refused_and_its_target_left_alone(run_dir, tmp_path):
    mine = tmp_path / "mine.txt"
    mine.write_text("my file")
    (run_dir / SEARCH_FILE).symlink_to(mine)
    with pytest.raises(WriteRefused, match="symbolic link"):
        update_index(run_dir)
    assert mine.read_text() == "my file"
    assert not [p for p in run_dir.iterdir() if p.name.endswith(".tmp")]


def test_an_unreadable_episode_is_reported_and_the_rest_searched(run_dir):
    (run_dir / "episodes" / f"{SAID}.json").write_text("{broken")
    update = update_index(run_dir)
    assert any(SAID in p for p in update.problems)
    assert search_run(run_dir, "wrong_layer")[0]


def test_tags_and_notes_are_found_and_follow_their_changes(run_dir):
    change_notes(run_dir, lambda n: n.add_tag(SAID, 3, "odd"))
    change_notes(run_dir, lambda n: n.set_note("structure_002-r0", None, "the builder never clarifies"))
    (hit,) = search_run(run_dir, "odd")[0]
    assert (hit.episode_id, hit.turn, hit.role, hit.kind) == (SAID, 3, "researcher", "note")
    assert search_run(run_dir, "clarifies")[0][0].episode_id == "structure_002-r0"  # the episode's own: turn 0
    unchanged = update_index(run_dir)
    assert unchanged.notes is None and unchanged.indexed == []
    change_notes(run_dir, lambda n: (n.remove_tag(SAID, 3, "odd"), n.set_bookmark(SAID, 5, True)))
    update = update_index(run_dir)
    assert update.notes == 2 and update.indexed == []  # only the notes are indexed again
    assert search_run(run_dir, "odd")[0] == []
    assert [(h.episode_id, h.turn) for h in search_run(run_dir, "bookmarked")[0]] == [(SAID, 5)]


def test_an_unreadable_notes_file_is_said_and_the_episodes_still_searched(run_dir):
    (run_dir / "notes.json").write_text('{"format": "simlab.notes", "version": 99, "marks": []}')
    hits, update = search_run(run_dir, "zebracorn")
    assert hits and any("notes are not searched" in p for p in update.problems)


def test_failure_kinds_an_episode_counts_are_found_by_name(run_dir):
    run = load_run(run_dir)
    counted = {str(s["episode_id"]) for s in run.summaries if (s.get("metrics") or {}).get("tax_wrong-colour")}
    never = {str(s["episode_id"]) for s in run.summaries} - counted - {SAID}
    assert counted and never  # the demo has both
    hits, _ = search_run(run_dir, '"tax_wrong-colour" kind:summary', limit=100)
    assert {h.episode_id for h in hits} == counted


def test_a_query_not_of_fts5_syntax_says_it_was_searched_as_a_phrase(run_dir):
    with open_index(run_dir) as index:
        found = index.find('the "zebracorn')
        assert found.as_phrase is not None and "searched as a phrase" in found.as_phrase
        assert index.find("zebracorn").as_phrase is None


def test_progress_is_told_per_episode_and_cancelling_leaves_no_index(run_dir):
    told: list[tuple[int, int]] = []
    update_index(run_dir, progress=lambda done, total: told.append((done, total)))
    total = len(load_run(run_dir).summaries)
    assert told[-1] == (total, total) and len(told) == total
    (run_dir / SEARCH_FILE).unlink()

    def stop(done: int, total: int) -> None:
        raise Cancelled

    with pytest.raises(Cancelled):
        update_index(run_dir, progress=stop)
    assert not (run_dir / SEARCH_FILE).exists()
    assert not [p for p in run_dir.iterdir() if p.name.endswith(".tmp")]
