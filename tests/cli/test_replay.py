"""``python main.py replay``: headless exports from a run folder or an episode file, and clear errors."""

import re

import pytest
from PIL import Image

from simlab.cli import main


@pytest.fixture(scope="module")
def run_dir(record):
    return record("director=oracle", "builder=scripted", episodes=2, turns=3, seed=2)


def test_png_of_the_last_turn(run_dir, tmp_path, capsys):
    out = tmp_path / "sheet.png"
    assert main(["replay", str(run_dir), "--export", "png", "--out", str(out)]) == 0
    with Image.open(out) as image:
        assert image.size == (1600, 1000)
    assert "structure_000-r0" in capsys.readouterr().out


def test_html_of_a_chosen_episode(run_dir, tmp_path):
    out = tmp_path / "t.html"
    assert main(["replay", str(run_dir), "--episode", "structure_001-r0", "--export", "html", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "structure_001-r0" in page and len(re.findall(r'<section id="turn-', page)) == 4


def test_gif_from_an_episode_file(run_dir, tmp_path):
    out = tmp_path / "a.gif"
    episode_file = run_dir / "episodes" / "structure_000-r0.json"
    assert main(["replay", str(episode_file), "--export", "gif", "--first", "1", "--last", "2", "--out", str(out)]) == 0
    with Image.open(out) as gif:
        assert gif.n_frames == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--episode", "nope"], "no episode 'nope'"),
        (["--turn", "9"], "--turn 9"),
    ],
)
def test_errors_exit_2(run_dir, tmp_path, capsys, extra, message):
    code = main(["replay", str(run_dir), *extra, "--export", "png", "--out", str(tmp_path / "x.png")])
    assert code == 2
    assert message in capsys.readouterr().err


def test_missing_source_exits_2(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "none"), "--export", "html", "--out", str(tmp_path / "x.html")]) == 2
    assert "no such episode file or run folder" in capsys.readouterr().err


def test_bad_animation_range_exits_2(run_dir, tmp_path, capsys):
    out = tmp_path / "a.gif"
    assert main(["replay", str(run_dir), "--export", "gif", "--first", "2", "--last", "9", "--out", str(out)]) == 2
    assert "turns 2..9" in capsys.readouterr().err
