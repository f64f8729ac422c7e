"""``report --figures``: every family's analysis figures from small scripted runs, each CSV checked against
numbers recomputed here from the recorded episodes in another way (summaries, the families' own series)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from simlab.analysis.figures import write_figures, x_limits
from simlab.cli import main
from simlab.core.episode import Episode
from simlab.core.errors import SimlabError
from simlab.core.family import FigureData, FigurePoint, FigureSeries, lineup
from simlab.core.recording import INDEX_FILE, load_run
from simlab.runner.batch import RunConfig, run
from simlab.worlds.blocks.metrics import oracle_removes
from simlab.worlds.rooms.family import mentions_per_turn

RUNS = {
    "blocks": RunConfig("blocks", seed=1, episodes=3, agents=["builder=scripted:0.4"], settings={"turns": 6}),
    "rooms": RunConfig("rooms", seed=0, episodes=3, agents=["answerer=oracle", "helper=oracle"]),
    "boards": RunConfig("boards", seed=0, episodes=4, agents=["robot=random"]),
    "puzzles": RunConfig("puzzles", seed=0, episodes=6, agents=["solver=random"], settings={"turns": 6}),
}


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list[Episode], Path]]:
    """Each family's run, its episodes and the folder its figures were written to."""
    out: dict[str, tuple[list[Episode], Path]] = {}
    for name, config in RUNS.items():
        folder = tmp_path_factory.mktemp(name)
        run(config, folder / "run")
        recorded = load_run(folder / "run")
        write_figures(recorded, folder / "figures")
        out[name] = (recorded.episodes(), folder / "figures")
    return out


def rows(folder: Path, name: str) -> dict[tuple[str, str], float]:
    """``(series, x) -> y`` of one figure's CSV."""
    with (folder / f"{name}.csv").open(encoding="utf-8") as f:
        return {(r["series"], r["x"]): float(r["y"]) for r in csv.DictReader(f)}


def metric(episode: Episode, name: str) -> float:
    return float(episode.summary["metrics"][name])


def pooled(episodes: list[Episode], rate: Callable[[Episode], float], weight: Callable[[Episode], float]) -> float:
    """A per-episode rate turned back into a share of all the turns it was taken over."""
    return sum(rate(e) * weight(e) for e in episodes) / sum(weight(e) for e in episodes)


def available(episode: Episode) -> float:
    return metric(episode, "oracle_availability") * metric(episode, "turns_used")


def test_blocks_taxonomy_and_outcomes_pool_the_summaries_rates(drawn):
    episodes, folder = drawn["blocks"]
    label = lineup(episodes[0])
    taxonomy = rows(folder, "blocks_failure_taxonomy")
    for name in ("correct", "engine-layer", "wrong-position", "clarify"):
        expected = pooled(episodes, lambda e, n=name: metric(e, f"tax_{n}"), available)
        assert taxonomy[(label, name)] == pytest.approx(expected)
    assert sum(taxonomy.values()) == pytest.approx(1.0)
    outcomes = rows(folder, "blocks_turn_outcomes")
    turns = sum(metric(e, "turns_used") for e in episodes)
    assert outcomes[(label, "oracle available")] == pytest.approx(sum(map(available, episodes)) / turns)
    followed = sum(metric(e, "tax_correct") * available(e) for e in episodes) / turns
    assert outcomes[(label, "oracle followed")] == pytest.approx(followed)


def test_blocks_remove_rates_per_turn_follow_the_actions_and_the_oracle_series(drawn):
    episodes, folder = drawn["blocks"]
    label = lineup(episodes[0])
    removes = rows(folder, "blocks_removes_per_turn")
    for turn in range(1, 7):
        played = [e for e in episodes if e.last_turn >= turn]
        attempted = [
            e
            for e in played
            if any(v.kind == "action" and v.data["action"]["action"] == "remove" for v in e.events_of_turn(turn))
        ]
        assert removes[(f"attempted ({label})", str(turn))] == pytest.approx(len(attempted) / len(played))
        oracle = [e for e in played if oracle_removes(e)[turn] > oracle_removes(e)[turn - 1]]
        assert removes[(f"oracle ({label})", str(turn))] == pytest.approx(len(oracle) / len(played))


def test_rooms_words_accuracy_and_objects_per_turn(drawn):
    episodes, folder = drawn["rooms"]
    label = lineup(episodes[0])
    (((series, x), accuracy),) = rows(folder, "rooms_words_vs_accuracy").items()
    words = sum(len(m.data["text"].split()) for e in episodes for m in e.messages()) / len(episodes)
    assert series == label
    assert float(x) == pytest.approx(words)
    assert accuracy == pytest.approx(sum(metric(e, "accuracy") for e in episodes) / len(episodes))
    objects = rows(folder, "rooms_objects_per_turn")
    spoken = {m.turn for e in episodes for m in e.messages()}
    assert {int(x) for _, x in objects} == spoken
    for turn in spoken:
        said = [e for e in episodes if any(m.turn == turn for m in e.messages())]
        mean = sum(mentions_per_turn(e)[turn] for e in said) / len(said)
        assert objects[(label, str(turn))] == pytest.approx(mean)


def test_puzzles_success_by_budget_and_category(drawn):
    episodes, folder = drawn["puzzles"]
    label = lineup(episodes[0])
    budget = rows(folder, "puzzles_success_by_budget")
    assert sorted(int(x) for _, x in budget) == list(range(1, 7))
    wins = [e for e in episodes if e.summary["outcome"] == "success"]
    assert budget[(label, "6")] == pytest.approx(len(wins) / len(episodes))
    assert [budget[(label, str(b))] for b in range(1, 7)] == sorted(budget.values())
    categories = rows(folder, "puzzles_psr_by_category")
    for (_, category), value in categories.items():
        members = [metric(e, "psr") for e in episodes if category in e.summary["categories"]]
        assert value == pytest.approx(sum(members) / len(members))


def test_boards_repair_rates_by_component_count(drawn):
    episodes, folder = drawn["boards"]
    label = lineup(episodes[0])
    rates = rows(folder, "boards_repair_rates")
    for count in {int(metric(e, "components")) for e in episodes}:
        bucket = [e for e in episodes if metric(e, "components") == count]
        for name, key in (("clarification", "clarifications"), ("correction", "corrections")):
            share = sum(metric(e, key) > 0 for e in bucket) / len(bucket)
            assert rates[(f"{name} ({label})", str(count))] == pytest.approx(share)
    success = rows(folder, "boards_repair_success")
    clarified = [e for e in episodes if metric(e, "clarifications") > 0]
    assert {x for (s, x) in success if s.startswith("after clarification")} == {
        str(int(metric(e, "components"))) for e in clarified
    }


def test_every_figure_has_a_png_and_an_svg_with_something_drawn(drawn):
    for _, folder in drawn.values():
        for table in folder.glob("*.csv"):
            png = Image.open(table.with_suffix(".png")).convert("L")
            assert png.getextrema()[0] < 128 < png.getextrema()[1], table.name
            assert "<svg" in table.with_suffix(".svg").read_text(encoding="utf-8")


def test_the_same_run_gives_the_same_bytes(drawn, tmp_path):
    _, folder = drawn["blocks"]
    recorded = load_run(folder.parent / "run")
    again = write_figures(recorded, tmp_path)
    for path in again:
        if path.suffix in (".csv", ".svg"):
            assert path.read_bytes() == (folder / path.name).read_bytes(), path.name


def test_report_figures_prints_the_files_and_an_empty_run_is_refused(drawn, tmp_path, capsys):
    _, folder = drawn["puzzles"]
    assert main(["report", str(folder.parent / "run"), "--figures", str(tmp_path / "cli")]) == 0
    assert f"wrote {tmp_path / 'cli' / 'puzzles_success_by_budget.svg'}" in capsys.readouterr().err
    empty = tmp_path / "empty"
    run(RUNS["puzzles"], empty)
    (empty / INDEX_FILE).write_text("", encoding="utf-8")
    with pytest.raises(SimlabError, match="no finished episodes"):
        write_figures(load_run(empty), tmp_path / "none")


def test_numbered_bars_go_in_numeric_order_whichever_series_names_them_first():
    from simlab.analysis.figures import bar_categories
    from simlab.core.family import FigureData, FigurePoint, FigureSeries

    data = FigureData(
        "bar",
        "components",
        "rate",
        (
            FigureSeries("a", (FigurePoint(5, 0.1), FigurePoint(3, 0.2))),
            FigureSeries("b", (FigurePoint(4, 0.3), FigurePoint(3, 0.4))),
        ),
    )
    assert bar_categories(data) == ["3", "4", "5"]
    words = FigureData("bar", "", "", (FigureSeries("a", (FigurePoint("wrong", 1.0), FigurePoint("clarify", 2.0))),))
    assert bar_categories(words) == ["wrong", "clarify"]


def test_near_equal_x_values_keep_their_size_instead_of_a_zoomed_spread():
    def scatter(*xs: float) -> FigureData:
        return FigureData("scatter", "words", "accuracy", (FigureSeries("a", tuple(FigurePoint(x, 0.5) for x in xs)),))

    low, high = x_limits(scatter(178.662, 178.670))  # the rooms words-vs-accuracy figure drew this spread
    assert low < 178.662 - 10 and high > 178.670 + 10 and abs((low + high) / 2 - 178.666) < 1e-9
    assert x_limits(scatter(10.0, 30.0)) is None  # a real spread: the plot's own scaling
    assert x_limits(scatter(0.0, 0.001)) == (-0.0995, 0.1005)  # small numbers: at least a unit of size
