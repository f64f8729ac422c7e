"""``search``, ``note`` and ``notes`` on the command line, ``gui`` given a simlab:// link, and notes in the
HTML transcript."""

from __future__ import annotations

import argparse
import json

import pytest

from simlab.cli import _gui_targets, main
from simlab.core.links import turn_url
from tests.said_run import SAID, add_said_episode, demo_copy


@pytest.fixture
def run_dir(tmp_path):
    run = demo_copy(tmp_path)
    add_said_episode(run)
    return run


def test_search_prints_where_each_hit_is_and_how_to_open_it(run_dir, capsys):
    assert main(["search", str(run_dir), "quokkaplan"]) == 0
    out = capsys.readouterr().out
    assert f"{SAID}  turn 2  builder  reasoning" in out
    assert f"python main.py gui {run_dir} --episode {SAID} --turn 2" in out


def test_search_as_json_gives_the_command_and_the_link(run_dir, capsys):
    assert main(["search", str(run_dir), "same_colour", "--format", "json", "--limit", "1"]) == 0
    (hit,) = json.loads(capsys.readouterr().out)["hits"]
    assert (hit["episode_id"], hit["turn"], hit["kind"]) == (SAID, 5, "error")
    assert hit["url"] == turn_url(run_dir, SAID, 5)


def test_a_query_too_long_exits_2_with_one_line(run_dir, capsys):
    assert main(["search", str(run_dir), "x" * 10**6]) == 2
    assert "at most 1,000 characters" in capsys.readouterr().err


def test_note_then_notes_lists_it(run_dir, capsys):
    assert main(["note", str(run_dir), SAID, "--turn", "3", "--tag", "odd", "--text", "a \x1b[2J word"]) == 0
    assert main(["note", str(run_dir), SAID, "--bookmark"]) == 0
    capsys.readouterr()
    assert main(["notes", str(run_dir), "--tag", "odd"]) == 0
    assert capsys.readouterr().out == f"{SAID} turn 3  tags odd: a  [2J word\n"  # no escape reaches the terminal
    assert main(["notes", str(run_dir), "--format", "json"]) == 0
    assert [m["turn"] for m in json.loads(capsys.readouterr().out)["marks"]] == [None, 3]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["nosuch-r0", "--tag", "x"], "no episode 'nosuch-r0'"),
        ([SAID, "--turn", "7", "--tag", "x"], "has turns 0..6"),
        ([SAID], "say what to note"),
        ([SAID, "--tag", "two words"], "tag 'two words'"),
    ],
)
def test_note_refuses_what_it_cannot_note(run_dir, capsys, argv, said):
    assert main(["note", str(run_dir), *argv]) == 2
    assert said in capsys.readouterr().err
    assert not (run_dir / "notes.json").exists()


def test_the_html_transcript_shows_the_notes_beside_their_turns(run_dir, tmp_path):
    main(["note", str(run_dir), SAID, "--turn", "3", "--tag", "odd", "--text", "<script>x</script>"])
    out = tmp_path / "t.html"
    assert main(["replay", str(run_dir), "--episode", SAID, "--export", "html", "--out", str(out)]) == 0
    turn3 = out.read_text(encoding="utf-8").split('<section id="turn-3">')[1].split("</section>")[0]
    assert "<span class=tag>odd</span>" in turn3 and "&lt;script&gt;x&lt;/script&gt;" in turn3


def test_gui_takes_a_link_alone(run_dir, capsys):
    link = turn_url(run_dir, SAID, 4)
    args = argparse.Namespace(path=[link], episode=None, turn=None)
    assert _gui_targets(args) == ([run_dir], SAID, 4)
    assert main(["gui", link, "--turn", "2"]) == 2
    assert "give it alone" in capsys.readouterr().err
    assert main(["gui", "simlab://open?run=/r&cmd=x"]) == 2
    assert "unknown key 'cmd'" in capsys.readouterr().err
