"""The Figures panel on real runs of every family: the pyqtgraph items hold the numbers of the CSV that
``report --figures`` writes for the same runs, two runs are drawn side by side, the cursor follows the open
episode, Export writes the report's files, an empty figure says so, and a superseded computation is dropped."""

from __future__ import annotations

import csv
import shutil
import threading
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QApplication, QFileDialog

from simlab.analysis.figures import bar_categories, write_figures, write_run_figures
from simlab.core.recording import INDEX_FILE, Run, load_run
from simlab.gui import figures_view
from simlab.gui.figures_view import NO_DATA, SERIES_COLOURS, FiguresPanel, tick_text
from simlab.runner.batch import RunConfig, run
from simlab.worlds import get_family
from tests.analysis.test_figures import RUNS

OTHER_BLOCKS = RunConfig("blocks", seed=2, episodes=3, agents=["builder=scripted:0.7"], settings={"turns": 6})
OTHER_ROOMS = RunConfig("rooms", seed=0, episodes=3, agents=["answerer=random", "helper=oracle"])

Row = tuple[float, float | None]  # y, error


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small run of each family (the report's test runs) and a second blocks and rooms run."""
    out = {}
    for name, config in [*RUNS.items(), ("blocks-2", OTHER_BLOCKS), ("rooms-2", OTHER_ROOMS)]:
        out[name] = tmp_path_factory.mktemp(name) / "run"
        run(config, out[name])
    return out


@pytest.fixture
def panel(qtbot) -> FiguresPanel:
    widget = FiguresPanel()
    widget.resize(640, 480)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def show(qtbot, panel: FiguresPanel, *named: tuple[str, Path]) -> list[tuple[str, Run]]:
    """Open the runs in the panel and wait for their figures."""
    loaded = [(name, load_run(path)) for name, path in named]
    with qtbot.waitSignal(panel.ready, timeout=30000):
        panel.set_runs(loaded)
    return loaded


def csv_rows(path: Path) -> dict[tuple[str, str], Row]:
    """``(series, x) -> (y, error)`` of a figure's CSV."""
    with path.open(encoding="utf-8") as f:
        return {
            (r["series"], r["x"]): (float(r["y"]), float(r["error"]) if r["error"] else None) for r in csv.DictReader(f)
        }


def plot_items(panel: FiguresPanel, kind: type) -> list:
    return [item for item in panel.plot.items if isinstance(item, kind)]


def error_bars(panel: FiguresPanel) -> dict[tuple[float, float], float]:
    """``(x, y) -> error`` of every error bar drawn."""
    out = {}
    for bars in plot_items(panel, pg.ErrorBarItem):
        for x, y, top, bottom in zip(
            bars.opts["x"], bars.opts["y"], bars.opts["top"], bars.opts["bottom"], strict=True
        ):
            assert top == bottom
            out[(float(x), float(y))] = float(top)
    return out


def category_ticks(panel: FiguresPanel) -> dict[int, str]:
    """The bottom axis' fixed ticks (bars), position -> text (pyqtgraph keeps them in ``_tickLevels``)."""
    levels = panel.plot.getAxis("bottom")._tickLevels
    return dict(levels[0]) if levels else {}


def plotted(panel: FiguresPanel) -> dict[tuple[str, str], Row]:
    """What the pyqtgraph items draw, as the CSV's ``(series, x) -> (y, error)``: a bar's x is the category its
    tick names, a number is written as the CSV writes it."""
    shown = panel.current()
    assert shown is not None
    errors = error_bars(panel)
    out = {}
    if shown.data.kind == "bar":
        ticks = category_ticks(panel)
        categories = bar_categories(shown.data)
        for bars in plot_items(panel, pg.BarGraphItem):
            if bars.opts.get("brush") is None:
                continue  # the open episode's outline, not a series
            for x, y in zip(bars.opts["x"], bars.opts["height"], strict=True):
                category = categories[round(x)]
                assert ticks[round(x)] == tick_text(category)
                out[(bars.opts["name"], category)] = (float(y), errors.get((float(x), float(y))))
        return out
    for item in panel.plot.listDataItems():
        xs, ys = item.getData()
        for x, y in zip(xs, ys, strict=True):
            number = int(x) if shown.data.kind == "line" and float(x).is_integer() else float(x)
            out[(item.name(), str(number))] = (float(y), errors.get((float(x), float(y))))
    return out


@pytest.mark.parametrize("world", ["blocks", "rooms", "boards", "puzzles"])
def test_every_figure_holds_the_numbers_of_its_csv(qtbot, panel, runs, world, tmp_path):
    [(_name, recorded)] = show(qtbot, panel, (world, runs[world]))
    write_figures(recorded, tmp_path)
    family = get_family(world)
    assert panel.figure_names() == [spec.name for spec in family.figures]
    assert [panel.combo.itemText(k) for k in range(panel.combo.count())] == [s.title for s in family.figures]
    for spec in family.figures:
        panel.select(spec.name)
        expected = csv_rows(tmp_path / f"{spec.name}.csv")
        assert expected, f"{spec.name}: the test run should give points"
        assert plotted(panel) == expected, spec.name
        data = panel.current().data
        item = panel.plot
        assert (item.getAxis("left").labelText, item.getAxis("bottom").labelText) == (data.y_label, data.x_label)
        if data.y_range is not None:
            low, high = item.viewRange()[1]
            span = data.y_range[1] - data.y_range[0]
            assert data.y_range[0] - 0.1 * span < low <= data.y_range[0]
            assert data.y_range[1] <= high < data.y_range[1] + 0.1 * span
        assert panel.legend.text().count("<br>") == len(data.series) - 1
        for label in (s.label for s in data.series):
            assert f"&nbsp;{label}" in panel.legend.text()


def test_two_runs_side_by_side_as_the_report_draws_them(qtbot, panel, runs, tmp_path):
    named = show(qtbot, panel, ("A", runs["blocks"]), ("B", runs["blocks-2"]))
    write_run_figures(named, tmp_path)
    for name in panel.figure_names():
        panel.select(name)
        expected = csv_rows(tmp_path / f"{name}.csv")
        assert {series for series, _x in expected} == {s.label for s in panel.current().data.series}
        assert all(series.startswith(("A · ", "B · ")) for series, _x in expected)
        assert plotted(panel) == expected, name
    panel.select("blocks_removes_per_turn")
    lines = panel.plot.listDataItems()
    assert [item.name() for item in lines] == [s.label for s in panel.current().data.series]
    assert [item.opts["pen"].color().name() for item in lines] == list(SERIES_COLOURS[: len(lines)])


def cursor_lines(panel: FiguresPanel) -> list[float]:
    """The turn lines the figure's view draws (at most one)."""
    return [turn] if (turn := panel.turn_line()) is not None else []


def test_the_turn_line_follows_the_open_episode(qtbot, panel, runs):
    [(_name, recorded)] = show(qtbot, panel, ("rooms", runs["rooms"]))
    episode = recorded.summaries[0]["episode_id"]
    panel.select("rooms_objects_per_turn")
    assert cursor_lines(panel) == []
    panel.set_cursor("rooms", episode, 2)
    assert cursor_lines(panel) == [2]
    items = list(panel.plot.items)
    panel.set_cursor("rooms", episode, 3)
    assert cursor_lines(panel) == [3]
    assert list(panel.plot.items) == items  # a step moves the line: no item made or removed
    assert not plot_items(panel, pg.InfiniteLine)  # the view draws the line: no item of the figure
    panel.select("rooms_words_vs_accuracy")  # per lineup, not per turn: no line
    assert cursor_lines(panel) == []
    panel.select("rooms_objects_per_turn")
    assert cursor_lines(panel) == [3]
    panel.set_cursor(None, None, 0)
    assert cursor_lines(panel) == []


def test_the_turn_line_is_painted_over_the_kept_figure_as_a_fresh_paint_shows(qtbot, panel, runs):
    """A step changes nothing in the figure's scene (the line is its view's own drawing): the view paints the
    strips it uncovers from its picture of the figure, and each turn shows exactly what painting the whole
    figure afresh shows."""
    [(_name, recorded)] = show(qtbot, panel, ("rooms", runs["rooms"]))
    episode = recorded.summaries[0]["episode_id"]
    panel.select("rooms_objects_per_turn")
    panel.set_cursor("rooms", episode, 1)
    changes: list[object] = []
    _painted(panel)
    _painted(panel)  # the view's ranges settle at the first paint
    panel.view.scene().changed.connect(changes.append)
    for turn in (2, 0, 3, 1):
        panel.set_cursor("rooms", episode, turn)
        kept = _painted(panel)
        assert changes == [], f"turn {turn}: the figure changed"
        panel.view._kept = None  # the next paint paints the whole figure afresh
        panel.view.viewport().update()
        assert _painted(panel) == kept, f"turn {turn}"


def test_dragging_the_turn_line_asks_for_the_turn_under_the_mouse(qtbot, panel, runs):
    [(_name, recorded)] = show(qtbot, panel, ("rooms", runs["rooms"]))
    episode = recorded.summaries[0]["episode_id"]
    panel.select("rooms_objects_per_turn")
    panel.set_cursor("rooms", episode, 1)
    _painted(panel)
    asked: list[int] = []
    panel.turnDragged.connect(asked.append)
    view, box = panel.view, panel.plot.getViewBox()
    x = view.cursor_x(0)
    assert x is not None
    y = view.mapFromScene(box.sceneBoundingRect()).boundingRect().center().y()
    to = QPointF(view.mapFromScene(box.mapViewToScene(QPointF(2.2, 0))).x(), y)
    for kind, at in (
        (QEvent.Type.MouseButtonPress, QPointF(x + 1, y)),
        (QEvent.Type.MouseMove, to),
        (QEvent.Type.MouseButtonRelease, to),
    ):
        button = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseMove else Qt.MouseButton.LeftButton
        held = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseButtonRelease else Qt.MouseButton.LeftButton
        global_at = view.viewport().mapToGlobal(at)
        event = QMouseEvent(kind, at, global_at, button, held, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(view.viewport(), event)
    assert asked == [2, 2]


def _painted(panel: FiguresPanel) -> QImage:
    """What the figure's view shows on the screen now, after the paints a change asked for."""
    QApplication.processEvents()
    return panel.view.viewport().grab().toImage()


def test_a_budget_of_turns_is_no_turn_of_the_open_episode(qtbot, panel, runs):
    [(_name, recorded)] = show(qtbot, panel, ("puzzles", runs["puzzles"]))
    panel.select("puzzles_success_by_budget")
    panel.set_cursor("puzzles", recorded.summaries[0]["episode_id"], 2)
    assert cursor_lines(panel) == []  # "turn 2" on an axis of allowed turns would read as this episode's


def test_the_open_episodes_scatter_point_is_ringed_in_its_own_run(qtbot, panel, runs):
    named = show(qtbot, panel, ("first", runs["rooms"]), ("second", runs["rooms-2"]))
    panel.select("rooms_words_vs_accuracy")
    series = {s.label: s.points[0] for s in panel.current().data.series}
    episode = named[1][1].summaries[1]["episode_id"]
    assert episode in {s["episode_id"] for s in named[0][1].summaries}  # the same id in both runs
    for run_name in ("second", "first"):
        panel.set_cursor(run_name, episode, 1)
        label = next(label for label in series if label.startswith(f"{run_name} · "))
        point = series[label]
        assert panel.highlighted == [(label, point.x, point.y)]
        [ring] = plot_items(panel, pg.ScatterPlotItem)  # the series' own dots are inside their PlotDataItems
        assert [(float(x), float(y)) for x, y in zip(*ring.getData(), strict=True)] == [(point.x, point.y)]
    panel.set_cursor("third", episode, 1)
    assert panel.highlighted == []


def test_the_open_episodes_bars_are_those_of_its_component_count(qtbot, panel, runs):
    [(_name, recorded)] = show(qtbot, panel, ("boards", runs["boards"]))
    panel.select("boards_repair_rates")
    series = [s.label for s in panel.current().data.series]
    for summary in recorded.summaries:
        panel.set_cursor("boards", summary["episode_id"], 0)
        count = str(int(summary["metrics"]["components"]))
        assert sorted((label, x) for label, x, _y in panel.highlighted) == [(label, count) for label in series]
        [outline] = [bars for bars in plot_items(panel, pg.BarGraphItem) if bars.opts.get("brush") is None]
        assert sorted(outline.opts["height"]) == sorted(y for _label, _x, y in panel.highlighted)


def test_export_writes_the_files_the_report_writes(qtbot, panel, runs, tmp_path, monkeypatch):
    [(_name, recorded)] = show(qtbot, panel, ("puzzles", runs["puzzles"]))
    write_figures(recorded, tmp_path / "report")
    panel.select("puzzles_psr_by_category")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_args: str(tmp_path / "app"))
    panel.export_button.click()
    names = ["puzzles_psr_by_category.csv", "puzzles_psr_by_category.png", "puzzles_psr_by_category.svg"]
    assert sorted(path.name for path in (tmp_path / "app").iterdir()) == names
    for name in names:
        if not name.endswith(".png"):  # PNG metadata differs between matplotlib runs; CSV and SVG do not
            assert (tmp_path / "app" / name).read_bytes() == (tmp_path / "report" / name).read_bytes()
    assert "Wrote puzzles_psr_by_category.csv" in panel.note.text()


def test_the_numbers_button_shows_the_csv_rows(qtbot, panel, runs, tmp_path):
    [(_name, recorded)] = show(qtbot, panel, ("boards", runs["boards"]))
    write_figures(recorded, tmp_path)
    panel.select("boards_repair_success")
    assert not panel.table.isVisible()
    panel.numbers_button.click()
    assert panel.table.isVisible()
    with (tmp_path / "boards_repair_success.csv").open(encoding="utf-8") as f:
        expected = list(csv.reader(f))
    table = panel.table
    header = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    cells = [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]
    assert [header, *cells] == expected
    panel.numbers_button.click()
    assert not panel.table.isVisible()


def test_a_run_with_nothing_to_draw_shows_empty_plots_that_say_so(qtbot, panel, runs, tmp_path):
    empty = tmp_path / "empty"
    shutil.copytree(runs["boards"], empty)
    (empty / INDEX_FILE).write_text("", encoding="utf-8")
    show(qtbot, panel, ("empty", empty))
    assert panel.figure_names() == [spec.name for spec in get_family("boards").figures]
    for name in panel.figure_names():
        panel.select(name)
        assert panel.no_data_note is not None and panel.no_data_note.textItem.toPlainText() == NO_DATA
        assert panel.plot.listDataItems() == []
        assert not plot_items(panel, pg.BarGraphItem)
    show(qtbot, panel, ("boards", runs["boards"]))
    assert panel.no_data_note is None


def test_an_unreadable_episode_is_left_out_with_a_note_and_runs_of_another_world_too(qtbot, panel, runs, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(runs["puzzles"], broken)
    summaries = load_run(broken).summaries
    episode = broken / summaries[0]["file"]
    episode.write_text("{not json", encoding="utf-8")
    show(qtbot, panel, ("broken", broken), ("rooms", runs["rooms"]))
    note = panel.note.text()
    assert note.startswith("Left out (not puzzles runs): rooms")
    assert "1 episode left out of the figures (unreadable files): broken: " + summaries[0]["episode_id"] in note
    assert panel.figure_names()  # one damaged file does not take the run's figures with it
    assert summaries[0]["episode_id"] not in named_episodes(panel)  # and it is in none of them
    show(qtbot, panel, ("whole", runs["puzzles"]))
    assert summaries[0]["episode_id"] in named_episodes(panel)
    show(qtbot, panel, ("puzzles", runs["puzzles"]), ("rooms", runs["rooms"]))
    assert panel.note.text() == "Left out (not puzzles runs): rooms"
    assert all(not s.label.startswith("rooms") for s in panel.current().data.series)


def named_episodes(panel: FiguresPanel) -> set[str]:
    """The episodes every figure of the panel says its points were computed from."""
    names = set()
    for name in panel.figure_names():
        panel.select(name)
        names |= {e for s in panel.current().data.series for p in s.points for e in p.episodes}
    return names


def test_a_superseded_computation_is_dropped_and_a_known_run_is_drawn_at_once(qtbot, panel, runs, monkeypatch):
    """Two computations held in their threads: the first one's result, arriving while the second still runs,
    is dropped (the panel stays busy, nothing is drawn); the second one's is drawn."""
    held: dict[str, tuple[threading.Event, list[threading.Thread]]] = {
        "A": (threading.Event(), []),
        "B": (threading.Event(), []),
    }
    real = figures_view.compute_run

    def compute(name, recorded, family, _cancelled, read):
        release, threads = held[name]
        threads.append(threading.current_thread())
        release.wait(30)
        return real(name, recorded, family, threading.Event(), read)  # deaf to cancelling: its result does arrive

    monkeypatch.setattr(figures_view, "compute_run", compute)
    panel.set_runs([("A", load_run(runs["blocks"]))])
    qtbot.waitUntil(lambda: bool(held["A"][1]))
    panel.set_runs([("B", load_run(runs["blocks-2"]))])
    qtbot.waitUntil(lambda: bool(held["B"][1]))
    held["A"][0].set()
    held["A"][1][0].join(30)
    QApplication.processEvents()  # A's result, posted before its thread ended, arrives now and is dropped
    assert panel.busy() and panel.progress.isVisible() and panel.figure_names() == []
    with qtbot.waitSignal(panel.ready, timeout=30000):
        held["B"][0].set()
    assert not panel.busy() and not panel.progress.isVisible()
    drawn = plotted(panel)
    assert drawn and all("scripted:0.7" in label for label, _x in drawn)  # blocks-2's builder, not blocks'
    panel.select("blocks_turn_outcomes")
    panel.set_runs([("B", load_run(runs["blocks-2"]))])  # cached: drawn before set_runs returns, same figure
    assert not panel.busy() and panel.current().spec.name == "blocks_turn_outcomes"
    panel.select("blocks_removes_per_turn")
    assert plotted(panel) == drawn


def test_the_same_runs_again_while_they_are_read_do_not_start_over(qtbot, panel, runs, monkeypatch):
    release, started = threading.Event(), []
    real = figures_view.compute_run

    def compute(*args):
        started.append(args[0])
        release.wait(30)
        return real(*args)

    monkeypatch.setattr(figures_view, "compute_run", compute)
    panel.set_runs([("boards", load_run(runs["boards"]))])
    qtbot.waitUntil(lambda: bool(started))
    panel.set_runs([("boards", load_run(runs["boards"]))])
    with qtbot.waitSignal(panel.ready, timeout=30000):
        release.set()
    assert started == ["boards"] and panel.figure_names() == [s.name for s in get_family("boards").figures]


def test_judge_figures_and_the_feature_correlations_appear_with_the_reports_numbers(qtbot, panel, runs, tmp_path):
    """A run judged by craft-ps gets its judge figure (the numbers of report's judge_craft-ps.csv); four lineups
    open together add the correlations figure (those of report --correlate)."""
    from simlab.analysis.judgments import run_judgments
    from simlab.cli import main
    from simlab.core.judging import JudgmentRecord, JudgmentWriter

    extra = {}
    for skill in ("0.1", "0.95"):
        config = RunConfig("blocks", seed=1, episodes=3, agents=[f"builder=scripted:{skill}"], settings={"turns": 6})
        extra[skill] = tmp_path / f"run{skill}"
        run(config, extra[skill])
    judged = tmp_path / "judged"
    shutil.copytree(runs["blocks"], judged)
    writer = JudgmentWriter(judged)
    for k, summary in enumerate(load_run(judged).summaries):
        labels = {"PS1": "Yes", "PS2": "No" if k else "Yes", "PS3": "N/A"}
        values = {"PS1": 1.0, "PS2": 0.0 if k else 1.0, "PS3": None}
        writer.append(
            JudgmentRecord("craft-ps", "m", summary["episode_id"], 1, "", 0, "sha", labels, {}, None, "", values)
        )

    show(qtbot, panel, ("J", judged))
    assert "judge_craft-ps" in panel.figure_names()
    assert "feature_correlations" not in panel.figure_names()  # one lineup: nothing to correlate over
    assert main(["report", str(judged), "--figures", str(tmp_path / "f")]) == 0
    panel.select("judge_craft-ps")
    assert plotted(panel) == csv_rows(tmp_path / "f" / "judge_craft-ps.csv")
    assert run_judgments(judged, "blocks").judges[0].name == "craft-ps"

    named = [("J", judged), ("B", runs["blocks-2"]), ("low", extra["0.1"]), ("high", extra["0.95"])]
    show(qtbot, panel, *named)
    assert panel.figure_names()[-1] == "feature_correlations"
    out = tmp_path / "g"
    args = ["report", *(str(p) for _n, p in named), "--correlate", "overall_progress", "--figures", str(out)]
    assert main(args) == 0
    panel.select("feature_correlations")
    assert plotted(panel) == csv_rows(out / "feature_correlations.csv")
