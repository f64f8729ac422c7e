"""The episode browser on real run folders: columns, sorting, filters, activation, problems, scale."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from simlab.core.recording import INDEX_FILE, Run, load_run
from simlab.gui.browser import (
    COLUMN_INDEX,
    EpisodeBrowser,
    EpisodeKey,
    RunIndexModel,
    compact_agents,
    natural_key,
)
from simlab.runner.batch import RunConfig, run
from tests.gui.conftest import wait_shown

USER = Qt.ItemDataRole.UserRole


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """12 episodes, two per task, with successes and failures."""
    out = tmp_path_factory.mktemp("runs") / "scripted"
    config = RunConfig("blocks", seed=0, episodes=6, repeats=2, agents=["builder=scripted"], settings={"turns": 20})
    run(config, out)
    return load_run(out)


@pytest.fixture(scope="module")
def random_run_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "random"
    run(RunConfig("blocks", seed=0, episodes=6, agents=["builder=random"], settings={"turns": 6}), out)
    return out


@pytest.fixture
def browser(qtbot, scripted_run: Run) -> EpisodeBrowser:
    widget = EpisodeBrowser()
    qtbot.addWidget(widget)
    widget.resize(1000, 500)
    widget.set_run(scripted_run.summaries, scripted_run.problems)
    widget.show()
    wait_shown(qtbot, widget)
    return widget


def _summaries_with_abort(run_: Run) -> list[dict]:
    summaries = copy.deepcopy(run_.summaries)
    summaries[0]["outcome"] = "abort"
    return summaries


# ---- the model -----------------------------------------------------------------------------------------------
def test_model_has_one_row_per_summary_with_the_columns(scripted_run: Run) -> None:
    model = RunIndexModel()
    model.set_summaries(scripted_run.summaries)
    assert model.rowCount() == len(scripted_run.summaries) == 12
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    blocks = ["overall progress", "completion", "iou", "position accuracy"]  # the family's headline metrics
    assert headers == [
        "Episode",
        "Outcome",
        "Score",
        "Turns",
        "Errors",
        *blocks,
        "Tags",
        "Task",
        "Group",
        "Agents",
        "World",
    ]
    tip = model.headerData(headers.index("Errors"), Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "red ticks" in tip and "mistake" in tip  # the timeline counts more: a reader is told so
    first = scripted_run.summaries[0]
    row = dict(zip(headers, (model.index(0, c).data() for c in range(model.columnCount())), strict=True))
    assert row["completion"] == f"{first['metrics']['completion']:.3f}"
    assert row["Episode"] == first["episode_id"]
    assert row["Task"] == first["task_id"]
    assert row["Agents"] == "D1-3=oracle, builder=scripted"
    assert row["Outcome"] == first["outcome"]
    assert row["Score"] == f"{first['score']:.3f}"
    col = {title: k for k, title in enumerate(headers)}
    assert model.index(0, col["Score"]).data(USER) == pytest.approx(first["score"])
    assert "builder = scripted" in model.index(0, col["Agents"]).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(0, col["Outcome"]).data(Qt.ItemDataRole.ForegroundRole) is not None


def test_compact_agents_groups_equal_specs() -> None:
    assert compact_agents({"D1": "oracle", "D2": "oracle", "D3": "oracle", "builder": "random"}) == (
        "D1-3=oracle, builder=random"
    )
    assert compact_agents({"D1": "oracle", "D2": "silent", "D3": "oracle"}) == "D1/D3=oracle, D2=silent"
    assert natural_key("ep-2") < natural_key("ep-10")


def test_sorting_is_numeric_and_natural(qtbot) -> None:
    browser = EpisodeBrowser()
    qtbot.addWidget(browser)
    rows = [("ep-10", 0.5, 100), ("ep-2", 0.25, 5), ("ep-1", 1.0, 10)]
    summaries = [{"episode_id": e, "file": f"{e}.json", "score": s, "turns": t} for e, s, t in rows]
    browser.set_run(summaries)
    browser.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert browser.visible_episode_ids() == ["ep-1", "ep-2", "ep-10"]
    browser.table.sortByColumn(
        COLUMN_INDEX["turns"], Qt.SortOrder.AscendingOrder
    )  # turns 5 < 10 < 100, not "10" < "100" < "5"
    assert browser.visible_episode_ids() == ["ep-2", "ep-1", "ep-10"]


def test_sorting_by_score_orders_numerically(browser: EpisodeBrowser, scripted_run: Run) -> None:
    browser.table.sortByColumn(COLUMN_INDEX["score"], Qt.SortOrder.DescendingOrder)
    expected = [s["episode_id"] for s in sorted(scripted_run.summaries, key=lambda s: -s["score"])]
    scores = [s["score"] for s in scripted_run.summaries]
    by_id = {s["episode_id"]: s["score"] for s in scripted_run.summaries}
    assert [by_id[e] for e in browser.visible_episode_ids()] == sorted(scores, reverse=True)
    assert {*browser.visible_episode_ids()} == {*expected}


# ---- filters -------------------------------------------------------------------------------------------------
def test_outcome_toggles_narrow_the_list(browser: EpisodeBrowser, scripted_run: Run) -> None:
    summaries = _summaries_with_abort(scripted_run)
    browser.set_run(summaries)
    outcomes = {s["episode_id"]: s["outcome"] for s in summaries}
    assert browser.count_text() == "12 of 12 episodes"
    browser.outcome_buttons["failure"].click()
    visible = browser.visible_episode_ids()
    assert visible and all(outcomes[e] != "failure" for e in visible)
    assert browser.count_text() == f"{len(visible)} of 12 episodes"
    browser.outcome_buttons["success"].click()
    assert [outcomes[e] for e in browser.visible_episode_ids()] == ["abort"]
    browser.outcome_buttons["abort"].click()
    assert browser.visible_episode_ids() == []
    assert browser.count_text() == "0 of 12 episodes"
    for button in browser.outcome_buttons.values():
        button.click()
    assert len(browser.visible_episode_ids()) == 12


def test_task_combo_narrows_to_one_task_or_one_group(browser: EpisodeBrowser, scripted_run: Run) -> None:
    combo = browser.task_combo
    assert combo.itemText(0) == "All tasks"
    tiers = sorted({s["group"] for s in scripted_run.summaries})
    assert combo.count() == 1 + len(tiers) + 6
    assert [combo.itemText(k) for k in range(1, 1 + len(tiers))] == [f"all {t} tasks" for t in tiers]
    combo.setCurrentIndex(1)  # a whole tier (a rooms question type, a puzzle...)
    shown = {browser.model.summary(browser.model.row_of(e))["group"] for e in browser.visible_episode_ids()}
    assert shown == {tiers[0]} and len(browser.visible_episode_ids()) < 12
    combo.setCurrentIndex(combo.findText("structure_002"))
    assert browser.visible_episode_ids() == ["structure_002-r0", "structure_002-r1"]
    assert browser.count_text() == "2 of 12 episodes"
    combo.setCurrentIndex(0)
    assert len(browser.visible_episode_ids()) == 12


def test_search_is_a_case_insensitive_substring(qtbot, browser: EpisodeBrowser) -> None:
    assert browser.search_edit.placeholderText() == "Search episodes..."
    qtbot.keyClicks(browser.search_edit, "STRUCTURE_004")
    assert browser.visible_episode_ids() == ["structure_004-r0", "structure_004-r1"]
    browser.search_edit.setText("r1")
    assert len(browser.visible_episode_ids()) == 6
    browser.search_edit.setText("success")
    assert browser.visible_episode_ids() and all(
        browser.model.summary(browser.model.row_of(e))["outcome"] == "success" for e in browser.visible_episode_ids()
    )
    browser.search_edit.setText("scripted")  # agents are searched too
    assert len(browser.visible_episode_ids()) == 12
    browser.search_edit.clear()
    assert browser.count_text() == "12 of 12 episodes"


# ---- activation ----------------------------------------------------------------------------------------------
def test_enter_on_the_selected_row_activates_it(qtbot, browser: EpisodeBrowser) -> None:
    assert browser.select_episode("structure_003-r1")
    browser.table.setFocus()
    with qtbot.waitSignal(browser.episodeActivated, timeout=1000) as blocker:
        qtbot.keyClick(browser.table, Qt.Key.Key_Return)
    assert blocker.args == ["", "structure_003-r1"]  # (run, episode id); a lone run is named ""


def test_arrow_keys_move_and_enter_activates_the_new_row(qtbot, browser: EpisodeBrowser) -> None:
    assert browser.select_episode(browser.visible_episode_ids()[0])
    browser.table.setFocus()
    qtbot.keyClick(browser.table, Qt.Key.Key_Down)
    with qtbot.waitSignal(browser.episodeActivated, timeout=1000) as blocker:
        qtbot.keyClick(browser.table, Qt.Key.Key_Enter)
    assert blocker.args == ["", browser.visible_episode_ids()[1]]


def test_double_click_activates_the_row(qtbot, browser: EpisodeBrowser) -> None:
    browser.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    index = browser.proxy.index(2, 0)
    episode_id = index.data()
    pos = browser.table.visualRect(index).center()
    emitted: list[str] = []
    browser.episodeActivated.connect(lambda _run, episode: emitted.append(episode))
    qtbot.mouseClick(browser.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)  # a real double-click starts
    assert emitted == []  # with a press and release; a single click only selects
    with qtbot.waitSignal(browser.episodeActivated, timeout=1000) as blocker:
        qtbot.mouseDClick(browser.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == ["", episode_id]
    assert emitted == [episode_id]  # once, not once per signal path


def test_select_episode_selects_and_reports_filtered_rows(browser: EpisodeBrowser) -> None:
    assert browser.select_episode("structure_005-r0")
    selected = browser.table.selectionModel().selectedRows()
    assert [i.data() for i in selected] == ["structure_005-r0"]
    browser.search_edit.setText("structure_001")
    assert not browser.select_episode("structure_005-r0")
    assert not browser.select_episode("no-such-episode")


# ---- problems and scale --------------------------------------------------------------------------------------
def test_problems_banner_shows_a_truncated_index_line(qtbot, random_run_path: Path) -> None:
    index = random_run_path / INDEX_FILE
    with index.open("a", encoding="utf-8") as f:
        f.write('{"format":"simlab.index","version":1,"episode_id":"structure_9')  # a crash mid-line
    run_ = load_run(random_run_path)
    assert len(run_.problems) == 1
    browser = EpisodeBrowser()
    qtbot.addWidget(browser)
    browser.set_run(run_.summaries, [])
    assert not browser.problems_label.isVisibleTo(browser)
    browser.set_run(run_.summaries, run_.problems)
    assert browser.problems_label.isVisibleTo(browser)
    assert "1 index line could not be read" in browser.problems_label.text()
    assert "line 7" in browser.problems_label.toolTip()
    assert browser.count_text() == "6 of 6 episodes"
    browser.set_problems(["a", "b"])
    assert "2 index lines could not be read: a" in browser.problems_label.text()
    assert browser.problems_label.toolTip() == "a\nb"


def test_a_thousand_summaries_fill(qtbot, scripted_run: Run) -> None:
    template = scripted_run.summaries[0]
    outcomes = ("success", "failure", "abort")
    summaries = [
        {
            **template,
            "episode_id": f"ep-{i}",
            "task_id": f"task-{i % 50}",
            "score": i / 1000,
            "outcome": outcomes[i % 3],
        }
        for i in range(1000)
    ]
    browser = EpisodeBrowser()
    qtbot.addWidget(browser)
    browser.show()
    browser.set_run(summaries)
    assert browser.model.rowCount() == 1000
    assert browser.count_text() == "1,000 of 1,000 episodes"
    assert browser.task_combo.count() == 1 + 1 + 50  # all tasks, the template's one group, the 50 tasks
    browser.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert browser.visible_episode_ids()[:3] == ["ep-0", "ep-1", "ep-2"]
    assert browser.visible_episode_ids()[-1] == "ep-999"
    assert browser.select_episode("ep-900")


def test_search_finds_episodes_by_the_text_fields_a_family_adds(qtbot) -> None:
    widget = EpisodeBrowser()
    qtbot.addWidget(widget)

    def row(i: int, puzzle: str, categories: list[str]) -> dict:
        return {
            "episode_id": f"{puzzle}_{i:03d}-r0",
            "task_id": f"{puzzle}_{i:03d}",
            "outcome": "failure",
            "group": puzzle,
            "categories": categories,
            "score": 0.0,
            "turns": 3,
            "errors": 1,
            "metrics": {},
        }

    widget.set_run(
        [
            row(0, "color", ["memory", "multi-step reasoning"]),
            row(1, "wire", ["grounding"]),
            row(2, "memory", ["memory", "multi-step reasoning"]),
            row(3, "keypad", ["grounding"]),
        ],
        [],
    )
    widget.search_edit.setText("Multi-Step")  # a category, in any case
    assert sorted(widget.visible_episode_ids()) == ["color_000-r0", "memory_002-r0"]
    widget.search_edit.setText("grounding")
    assert sorted(widget.visible_episode_ids()) == ["keypad_003-r0", "wire_001-r0"]


def test_the_search_box_is_usable_at_the_docks_default_width(qtbot, scripted_run: Run) -> None:
    widget = EpisodeBrowser()
    qtbot.addWidget(widget)
    widget.resize(400, 500)
    widget.set_run(scripted_run.summaries, scripted_run.problems)
    widget.show()
    wait_shown(qtbot, widget)
    assert widget.search_edit.width() >= 160  # room to type, not a squeezed "S..."
    assert widget.count_label.isVisible() and widget.count_label.geometry().right() <= widget.width()


def test_rows_of_several_runs_are_known_by_run_and_id(qtbot, scripted_run: Run) -> None:
    widget = EpisodeBrowser()
    qtbot.addWidget(widget)
    widget.set_runs([("a", scripted_run.summaries[:3]), ("b", scripted_run.summaries[:2])])
    ids = [s["episode_id"] for s in scripted_run.summaries[:3]]
    assert widget.visible_keys() == [*(EpisodeKey("a", e) for e in ids), *(EpisodeKey("b", e) for e in ids[:2])]
    assert widget.model.headerData(0, Qt.Orientation.Horizontal) == "Run"
    assert widget.select_episode(ids[1], "b") and not widget.select_episode(ids[2], "b")
    assert not widget.select_episode(ids[1])  # the id alone names no row when runs are named
    selected = widget.table.selectionModel().selectedRows()
    assert [widget.model.key(widget.proxy.mapToSource(i).row()) for i in selected] == [EpisodeKey("b", ids[1])]
    widget.table.setFocus()
    with qtbot.waitSignal(widget.episodeActivated, timeout=1000) as blocker:
        qtbot.keyClick(widget.table, Qt.Key.Key_Return)
    assert blocker.args == ["b", ids[1]]
    widget.run_combo.setCurrentIndex(widget.run_combo.findData("a"))
    widget.set_runs([("b", scripted_run.summaries[:2])])  # run "a" closed: its filter goes with it
    assert widget.run_combo.currentText() == "All runs" and not widget.run_combo.isVisibleTo(widget)
    assert widget.visible_keys() == [EpisodeKey("b", e) for e in ids[:2]] and widget.count_text() == "2 of 2 episodes"
