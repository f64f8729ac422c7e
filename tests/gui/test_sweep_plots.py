"""The Sweep dock on real runs: a series per group with the right counts, a click on a scatter point or a
histogram bin (a real mouse click at its place) opens the episode in the main window, missing values are
counted in the note, the same run draws the same jitter, and a hidden dock reads nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication

from simlab.analysis.where import parse_where
from simlab.core.recording import INDEX_FILE, load_run
from simlab.gui.browser import EpisodeKey
from simlab.gui.sweep_plots import HISTOGRAM, SCATTER, SweepPanel
from simlab.runner.demo import DEMO_RUN

NO_IOU = ("structure_002-r0", "structure_003-r1")


@pytest.fixture(scope="module")
def holey_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo run with two episodes' iou recorded as null (a rate with nothing to count, as FORMATS allows)."""
    run = shutil.copytree(DEMO_RUN, tmp_path_factory.mktemp("holey") / "run")
    lines = [json.loads(line) for line in (run / INDEX_FILE).read_text(encoding="utf-8").splitlines()]
    for line in lines:
        if line["episode_id"] in NO_IOU:
            line["metrics"]["iou"] = None
    (run / INDEX_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return run


def shown_panel(qtbot) -> SweepPanel:
    """A Sweep panel on the screen, as its dock shows it."""
    widget = SweepPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 520)
    widget.show()
    widget.set_shown(True)
    return widget


@pytest.fixture
def panel(qtbot) -> SweepPanel:
    return shown_panel(qtbot)


def choose(panel: SweepPanel, kind: str, x: str, group: str, y: str = "") -> None:
    panel.kind_combo.setCurrentText(kind)
    panel.x_combo.setCurrentText(x)
    panel.group_combo.setCurrentText(group)
    if y:
        panel.y_combo.setCurrentText(y)
    assert (panel.kind, panel.x_combo.currentText(), panel.group_combo.currentText()) == (kind, x, group)


def legend_labels(panel: SweepPanel) -> list[str]:
    return [label.text for _, label in panel.legend.items]


def click_at(qtbot, panel: SweepPanel, x: float, y: float) -> None:
    """A real left click at data point (x, y) of the plot."""
    scene = panel.plot.getViewBox().mapViewToScene(QPointF(x, y))
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=panel.view.mapFromScene(scene))


def test_a_histogram_draws_one_outline_per_group_with_its_counts(panel):
    run = load_run(DEMO_RUN)
    panel.set_runs([("demo", run)])
    choose(panel, HISTOGRAM, "metrics.iou", "outcome")
    outcomes = [s["outcome"] for s in run.summaries]
    assert legend_labels(panel) == [f"failure ({outcomes.count('failure')})", f"success ({outcomes.count('success')})"]
    iou = np.array([s["metrics"]["iou"] for s in run.summaries])
    assert np.array_equal(panel.edges, np.histogram_bin_edges(iou, "auto"))
    for item, outcome in zip(panel.items, ("failure", "success"), strict=True):
        assert isinstance(item, pg.PlotDataItem)
        mine = iou[[o == outcome for o in outcomes]]
        assert item.yData.tolist() == np.histogram(mine, panel.edges)[0].tolist()
        assert item.xData.tolist() == panel.edges.tolist()
    assert panel.plot.titleLabel.text.startswith("demo · 6 episodes · metrics.iou by outcome")
    assert panel.plot.getAxis("bottom").labelText == "metrics.iou"
    choose(panel, HISTOGRAM, "metrics.iou", "group")
    assert legend_labels(panel) == ["complex (2)", "simple (4)"]


def test_a_scatter_draws_a_point_per_episode_in_its_groups_colour(panel):
    run = load_run(DEMO_RUN)
    panel.set_runs([("demo", run)])
    choose(panel, SCATTER, "score", "group", y="turns")
    groups = [s["group"] for s in run.summaries]
    for item, group in zip(panel.items, ("complex", "simple"), strict=True):
        assert isinstance(item, pg.ScatterPlotItem)
        rows = [k for k, g in enumerate(groups) if g == group]
        assert [int(d) for d in item.data["data"]] == rows
        assert item.data["x"].tolist() == [run.summaries[k]["score"] for k in rows]  # a fraction: not jittered
        assert np.all(np.abs(item.data["y"] - [run.summaries[k]["turns"] for k in rows]) <= 0.2)
    assert panel.plot.getAxis("left").labelText == "turns (jittered ±0.2)"
    assert panel.items[0].opts["brush"].color() != panel.items[1].opts["brush"].color()


def test_missing_values_are_left_out_and_counted_in_the_note(panel, holey_run):
    panel.set_runs([("holey", load_run(holey_run))])
    choose(panel, HISTOGRAM, "metrics.iou", "(no grouping)")
    assert panel.note.text() == f"{len(NO_IOU)} episodes have no metrics.iou: left out"
    assert sum(item.yData.sum() for item in panel.items) == 6 - len(NO_IOU)
    assert legend_labels(panel) == [f"all episodes ({6 - len(NO_IOU)})"]
    choose(panel, SCATTER, "score", "(no grouping)", y="metrics.iou")
    assert panel.note.text() == f"{len(NO_IOU)} episodes have no metrics.iou: left out"
    choose(panel, SCATTER, "score", "(no grouping)", y="turns")
    assert panel.note.text() == ""


def test_the_same_run_draws_the_same_jitter(qtbot, panel):
    other = shown_panel(qtbot)
    for widget in (panel, other):
        widget.set_runs([("demo", load_run(DEMO_RUN))])
        choose(widget, SCATTER, "turns", "outcome", y="errors")
    for mine, theirs in zip(panel.items, other.items, strict=True):
        assert mine.data["x"].tolist() == theirs.data["x"].tolist()
        assert mine.data["y"].tolist() == theirs.data["y"].tolist()
    xs = np.concatenate([item.data["x"] for item in panel.items])
    assert len(set(xs.tolist())) == len(xs)  # every demo episode plays 19 or 20 turns: the jitter sets them apart


@pytest.fixture
def sweep_window(window, qtbot):
    """The main window on the demo run with the Sweep dock in front."""
    assert window.open_path(DEMO_RUN)
    window.docks["Sweep"].raise_()
    qtbot.waitUntil(lambda: window.sweep.isVisible() and window.sweep.table.n == 6)
    return window


def test_clicking_a_scatter_point_opens_its_episode(sweep_window, qtbot):
    panel = sweep_window.sweep
    choose(panel, SCATTER, "metrics.iou", "outcome", y="turns")
    qtbot.wait(50)  # the plot is laid out at its size before its points are placed on the screen
    run_name, summaries = next(iter(sweep_window.runs)), load_run(DEMO_RUN).summaries
    for item in panel.items:
        point = item.points()[-1]
        row = int(point.data())
        click_at(qtbot, panel, point.pos().x(), point.pos().y())
        expected = EpisodeKey(run_name, summaries[row]["episode_id"])
        qtbot.waitUntil(lambda expected=expected: sweep_window.current == expected)
        assert sweep_window.playback.episode.episode_id == expected.episode_id
        assert panel.marker.data["x"].tolist() == [point.pos().x()]  # the clicked point is ringed


def test_clicking_a_histogram_bin_lists_its_episodes_and_opens_the_first(sweep_window, qtbot):
    panel = sweep_window.sweep
    choose(panel, HISTOGRAM, "score", "(no grouping)")
    qtbot.wait(50)
    edges = panel.edges
    heights = panel.items[0].yData
    k = int(np.argmax(heights))
    click_at(qtbot, panel, (edges[k] + edges[k + 1]) / 2, 0.5)
    assert panel.bin_list.count() == heights[k] and panel.bin_box.isVisible()
    listed = [panel.table.key(panel.bin_list.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(int(heights[k]))]
    qtbot.waitUntil(lambda: sweep_window.current == EpisodeKey(*listed[0]))
    panel.copy_button.click()
    table = load_run(DEMO_RUN).table()
    kept = parse_where(QApplication.clipboard().text()).bind(table.columns).mask(table)
    assert sorted(panel.table.key(int(k))[1] for k in np.flatnonzero(kept)) == sorted(e for _, e in listed)
    second = panel.bin_list.item(1) if heights[k] > 1 else None
    if second is not None:
        panel.bin_list.itemClicked.emit(second)
        assert sweep_window.current == EpisodeKey(*listed[1])
    opened = sweep_window.current
    click_at(qtbot, panel, (edges[k] + edges[k + 1]) / 2, heights[k] + 0.5)  # above every outline: nothing
    assert sweep_window.current == opened


def test_a_hidden_sweep_dock_reads_nothing_until_shown(window, qtbot):
    window.docks["Plots"].raise_()
    assert window.open_path(DEMO_RUN)
    assert window.sweep.table.n == 0
    window.docks["Sweep"].raise_()
    qtbot.waitUntil(lambda: window.sweep.table.n == 6)
    assert window.sweep.x_combo.currentText() == "score"


def click_legend(qtbot, panel: SweepPanel, k: int) -> None:
    """A real click on the swatch of legend entry ``k``."""
    sample = panel.legend.items[k][0]
    scene = sample.mapToScene(sample.boundingRect().center())
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=panel.view.mapFromScene(scene))


def test_a_legend_click_hides_a_group_and_a_bin_then_lists_and_filters_the_others(panel, qtbot):
    run = load_run(DEMO_RUN)
    panel.set_runs([("demo", run)])
    choose(panel, SCATTER, "score", "group", y="turns")
    qtbot.wait(50)
    click_legend(qtbot, panel, 0)
    assert [item.isVisible() for item in panel.items] == [False, True]
    choose(panel, HISTOGRAM, "score", "group")
    qtbot.wait(50)
    click_legend(qtbot, panel, 0)  # complex hidden: a bin lists the simple episodes only
    assert [item.isVisible() for item in panel.items] == [False, True]
    simple = [k for k, s in enumerate(run.summaries) if s["group"] == "simple"]
    last = len(panel.edges) - 2
    assert panel.open_bin(last) == panel.items[1].yData[last] > 0
    listed = {panel.bin_list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(panel.bin_list.count())}
    assert listed <= set(simple)
    assert panel.listed_where.endswith(' and group == "simple"')
    table = run.table()
    kept = np.flatnonzero(parse_where(panel.listed_where).bind(table.columns).mask(table))
    assert set(kept.tolist()) == listed
