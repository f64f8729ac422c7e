"""Live episodes: a person in a role through its role window, the worker thread, pause / step / resume."""

from __future__ import annotations

import gc
import threading

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMessageBox, QToolBar

from simlab.core.errors import ConfigError
from simlab.core.recording import load_episode, load_run
from simlab.gui import background, live
from simlab.gui.live import LiveSession, NewEpisodeDialog, generate_task, make_session
from simlab.runner.demo import DEMO_RUN
from simlab.worlds.blocks.world import ARCHETYPES
from simlab.worlds.boards.language import read_steps

KEEPS_ITS_OWN_COLLECTION = True  # tests when collection is on and off (see conftest)

WAIT_MS = 20_000


def asks_of(session: LiveSession) -> list[tuple[str, object]]:
    """Every needsHuman the session emits, in order."""
    asks: list[tuple[str, object]] = []
    session.needsHuman.connect(lambda role, observation: asks.append((role, observation)))
    return asks


def assert_off_gui_thread(session: LiveSession) -> None:
    main = threading.get_ident()
    assert session.worker_thread_id is not None and session.worker_thread_id != main
    assert session.act_threads and main not in session.act_threads


def test_a_person_builds_with_the_candidates_and_sees_no_target_or_private_reasoning(window, qtbot, tmp_path):
    session = make_session("blocks", 0, {"builder": "human"}, settings={"turns": 6})
    asks = asks_of(session)
    controller = window.start_live(session)
    # The controller knows the window only as a LiveHost: what it makes still hangs on the window itself.
    assert controller.parent() is window and controller.toolbar.parent() is window
    played = []
    for k in range(3):
        qtbot.waitUntil(lambda k=k: len(asks) > k, timeout=WAIT_MS)
        role, observation = asks[k]
        assert role == "builder"
        role_window = controller.role_windows["builder"]
        assert role_window.parentWidget() is window
        assert role_window.isVisible() and role_window.pixmaps_shown() == 1  # the board picture
        text = role_window.visible_text()
        reasoning = [e.data["text"] for e in session.episode.events if e.kind == "reasoning"]
        assert reasoning and not any(r in text for r in reasoning)
        # its instructions say a target exists; nothing shows what it is (no director's view, no persona)
        assert "view of the target" not in text and "Layer 0" not in text and "personality" not in text
        assert not any(description in text for description in ARCHETYPES.values())
        candidates = observation.data["candidates"]
        assert [b.text() for b in role_window.candidate_buttons] == [c for c in _described(candidates)]
        qtbot.mouseClick(role_window.candidate_buttons[-1], Qt.MouseButton.LeftButton)
        qtbot.mouseClick(role_window.send_button, Qt.MouseButton.LeftButton)
        played.append((observation.turn, candidates[-1]))
        qtbot.waitUntil(lambda t=observation.turn: _builder_action(session, t) is not None, timeout=WAIT_MS)
        assert _builder_action(session, observation.turn) == candidates[-1]
    session.stop()
    qtbot.waitUntil(lambda: session.state == "stopped", timeout=WAIT_MS)
    episode = session.episode
    assert episode.summary["outcome"] == "abort" and episode.summary["stopped"] is True
    assert episode.agents["builder"] == "human" and episode.agents["D1"] == "oracle"
    assert [(t, _builder_action(session, t)) for t, _ in played] == played
    results = [e for e in episode.events if e.kind == "result" and e.turn <= 3]
    assert len(results) == 3 and all(r.data["ok"] for r in results)  # verified candidates always apply
    assert window.playback.episode is episode and window.playback.turn == episode.last_turn
    assert_off_gui_thread(session)
    assert controller.save(tmp_path / "live.json")
    assert load_episode(tmp_path / "live.json").events == episode.events
    before = (tmp_path / "live.json").read_bytes()
    assert not controller.save(tmp_path / "live.json")  # a recording now: another save never replaces it
    assert (tmp_path / "live.json").read_bytes() == before and "would overwrite" in window.last_error


def test_a_person_answers_a_rooms_question(window, qtbot):
    session = make_session("rooms", 0, {"answerer": "human"}, groups=["anchor"])
    asks = asks_of(session)
    controller = window.start_live(session)
    qtbot.waitUntil(lambda: len(asks) == 1, timeout=WAIT_MS)
    answerer = controller.role_windows["answerer"]
    text = answerer.visible_text()
    assert asks[0][1].data["question"] in text and "(A)" in text and "option_objects" not in text
    # the role's instructions, which the turn's text no longer repeats, as a model gets them
    assert answerer.instructions.toPlainText().startswith("You are the Answerer") and "END" in text
    answerer.message.setPlainText("What do you see?")
    qtbot.mouseClick(answerer.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asks) == 2, timeout=WAIT_MS)  # the oracle Helper answered in between
    assert any(e.kind == "message" and e.role == "helper" for e in session.episode.events)
    answerer.message.setPlainText("Thanks, I know now.")
    answerer.move_form.set_values({"action": "end"})  # the family's form: "End the conversation..."
    qtbot.mouseClick(answerer.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asks) == 3, timeout=WAIT_MS)
    assert set(answerer.answer_buttons) == {"A", "B", "C", "D"} and answerer.send_button is None
    qtbot.mouseClick(answerer.answer_buttons["A"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state == "finished", timeout=WAIT_MS)
    events = session.episode.events
    result = next(e for e in events if e.kind == "result")
    assert result.data["answer"] == "A" and session.episode.summary["outcome"] in ("success", "failure")
    said = [e.data["text"] for e in events if e.kind == "message" and e.role == "answerer"]
    assert said == ["What do you see?", "Thanks, I know now."]
    assert any(e.kind == "state" and e.data["state"].get("ended_early") for e in events)
    assert_off_gui_thread(session)


def test_pause_step_and_resume_with_scripted_agents(window, qtbot):
    qtbot.waitUntil(lambda: background.holds() == 1, timeout=WAIT_MS)  # the window's; a job another test left ended
    session = make_session("blocks", 0, settings={"turns": 3})
    session.pause()
    window.start_live(session)
    qtbot.waitUntil(lambda: len(session.episode.events) > 0, timeout=WAIT_MS)  # reset's events, then hold
    qtbot.wait(150)
    assert session.steps == 0 and session.state == "paused"
    # the episode's thread must not collect the GUI's objects (gui/background.py): it holds collection off too
    assert not gc.isenabled() and background.holds() == 2
    for expected in (1, 2):
        session.step_once()
        qtbot.waitUntil(lambda e=expected: session.steps == e, timeout=WAIT_MS)
        qtbot.wait(150)
        assert session.steps == expected
    qtbot.waitUntil(lambda: window.playback.turn == session.episode.last_turn == 1, timeout=WAIT_MS)
    window.playback.seek(0)  # the user looks back: the playback must stay there while the episode grows
    session.resume()
    qtbot.waitUntil(lambda: session.state == "finished", timeout=WAIT_MS)
    qtbot.wait(2 * 30 + 50)
    assert window.playback.turn == 0 and window.playback.last_turn == 3
    assert session.episode.summary["turns"] == 3 and session.steps > 2
    assert_off_gui_thread(session)
    qtbot.waitUntil(lambda: background.holds() == 1, timeout=WAIT_MS)  # the thread's hold ended with it
    window.close()
    assert gc.isenabled()  # and the window's with it


def test_following_the_live_end_reaches_the_last_turn(window, qtbot):
    session = make_session("blocks", 1, settings={"turns": 20})
    window.start_live(session)
    qtbot.waitUntil(lambda: session.state == "finished", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.playback.turn == session.episode.last_turn, timeout=WAIT_MS)
    assert window.agents.panel("builder") is not None


def test_the_new_episode_dialog_prefills_defaults_and_refuses_bad_specs(qtbot):
    dialog = NewEpisodeDialog()
    qtbot.addWidget(dialog)
    assert {r: e.currentText() for r, e in dialog.role_edits.items()} == {
        "D1": "oracle",
        "D2": "oracle",
        "D3": "oracle",
        "builder": "scripted",
    }
    builder = [dialog.role_edits["builder"].itemText(k) for k in range(dialog.role_edits["builder"].count())]
    director = [dialog.role_edits["D1"].itemText(k) for k in range(dialog.role_edits["D1"].count())]
    assert builder[:4] == ["oracle", "scripted", "random", "human"] and "openai:MODEL" in builder
    assert "silent" in director and "scripted" not in director  # only the agents that can play the role
    dialog.role_edits["builder"].setCurrentText("human")
    assert dialog.settings_form is not None and "turns" in dialog.settings_form.editors
    dialog.settings_form.set_value("turns", 7)
    dialog.settings_form.set_value("interior", "reference")
    session = dialog.make_session()
    assert set(session.humans) == {"builder"} and session.episode.agents["builder"] == "human"
    assert session.episode.settings["turns"] == 7 and session.episode.settings["interior"] == "reference"
    dialog.world.setCurrentText("rooms")
    assert set(dialog.role_edits) == {"answerer", "helper"} and dialog.group.isEnabled()
    assert set(dialog.settings_form.editors) == {"max_rounds", "image_width", "image_height", "condition"}
    dialog.group.setCurrentText("counting")
    assert dialog.make_session().episode.task["task"] == "counting"
    with pytest.raises(ConfigError):
        make_session("blocks", 0, {"builder": "nosuchagent"})


def test_generating_a_task_in_the_new_episode_dialog_keeps_the_window_painting(qtbot, monkeypatch):
    dialog = NewEpisodeDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.world.setCurrentText("rooms")  # a rooms task renders both agents' views: a second or two
    dialog.group.setCurrentText("counting")
    ticked, waited = threading.Event(), []

    def observed(*args):
        """The real generation, once the GUI thread's timer has ticked: it can only tick meanwhile if the task
        is made off the GUI thread (made on it, the wait would time out)."""
        waited.append(ticked.wait(timeout=10))
        return generate_task(*args)

    monkeypatch.setattr(live, "generate_task", observed)
    timer = QTimer(interval=10, timeout=ticked.set)
    timer.start()
    dialog.accept()
    assert dialog.progress.isVisible() and "Generating the rooms task" in dialog.status.text()
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    assert not dialog.role_edits["helper"].isEnabled() and not dialog.settings_form.isEnabled()
    dialog.accept()  # a second OK while it works is ignored
    qtbot.waitUntil(lambda: dialog.session is not None, timeout=WAIT_MS)
    timer.stop()
    assert waited == [True]  # one generation, and the event loop kept running while it worked
    assert dialog.result() == QDialog.DialogCode.Accepted and not dialog.progress.isVisible()
    assert dialog.session.episode.task["task"] == "counting"
    assert dialog.session.episode.task == make_session("rooms", 0, {}, ["counting"]).episode.task


def test_a_task_that_cannot_be_made_says_why_and_the_dialog_stays(qtbot, monkeypatch):
    dialog = NewEpisodeDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    warnings: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, _title, text: warnings.append(text))

    def broken(world, seed, groups):
        raise RuntimeError(f"the {world} generator broke on seed {seed}")  # a family's bug, in the thread

    monkeypatch.setattr(live, "generate_task", broken)
    dialog.accept()
    qtbot.waitUntil(lambda: bool(warnings), timeout=WAIT_MS)
    assert "RuntimeError: the blocks generator broke on seed 0" in warnings[0]
    assert dialog.isVisible() and dialog.session is None
    assert dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    dialog.role_edits["builder"].setCurrentText("nosuchagent")
    dialog.accept()  # a bad spec is said at once, before any generation
    assert "nosuchagent" in warnings[-1] and not dialog.progress.isVisible()


def _described(candidates: list[dict]) -> list[str]:
    from simlab.worlds.blocks.model import Move

    return [Move.from_json(c).describe() for c in candidates]


def _builder_action(session: LiveSession, turn: int) -> dict | None:
    for event in session.episode.events:
        if event.kind == "action" and event.role == "builder" and event.turn == turn:
            return dict(event.data["action"])
    return None


# ---- one episode driver: what the CLI records, the app records too -------------------------------------


@pytest.fixture
def model_server(monkeypatch):
    """The local OpenAI-compatible server playing the blocks protocol, reached through the openai SDK's own
    variables (no agent setting names it)."""
    from simlab.testing.openai_server import FakeOpenAIServer, scripted_replies
    from simlab.testing.scripts import BLOCKS_SCRIPT

    with FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-live")
        yield server


def _play_out(window, qtbot, session: LiveSession):
    window.start_live(session)
    qtbot.waitUntil(lambda: session.state in ("finished", "failed"), timeout=WAIT_MS)
    assert session.state == "finished"
    return session.episode


def test_live_and_forked_episodes_keep_their_model_usage(window, qtbot, model_server):
    """The app's live loop was a copy of the runner's that dropped summary["usage"] (tokens and cost)."""
    from simlab.gui.live import fork_session

    live = _play_out(window, qtbot, make_session("blocks", 0, {"builder": "openai:fake-model"}, settings={"turns": 2}))
    calls = len(live.raw)
    assert calls == len(model_server.requests) > 0
    assert live.summary["usage"]["requests"] == calls and live.summary["usage"]["total_tokens"] > 0
    forked = _play_out(window, qtbot, fork_session(live, 1, {"builder": "openai:fake-model"}))
    assert forked.source == {"forked_from": live.episode_id, "turn": 1}
    assert forked.summary["usage"]["requests"] == len(forked.raw) > 0


def test_the_fork_dialog_expands_role_groups_as_the_command_line_does(record):
    """``D2=silent, director=oracle`` gave D2 the oracle in the app and the silent agent on the command line."""
    from simlab.agents.resolve import role_specs
    from simlab.core.plugins import AgentSpec
    from simlab.gui.live import fork_session
    from simlab.worlds import get_family

    episode = load_run(record("director=oracle", turns=3)).episodes()[0]
    wanted = {"D2": "silent", "director": "oracle"}
    session = fork_session(episode, 1, wanted)
    cli = role_specs(get_family("blocks"), [AgentSpec.parse(f"{k}={v}") for k, v in wanted.items()])
    assert session.episode.agents["D2"] == cli["D2"].spec() == "silent"
    assert session.episode.agents["D1"] == session.episode.agents["D3"] == "oracle"


def test_a_person_plays_the_boards_robot_and_reads_the_interpreters_verdict(window, qtbot):
    session = make_session("boards", 0, {"robot": "human"})
    asks = asks_of(session)
    controller = window.start_live(session)
    qtbot.waitUntil(lambda: len(asks) == 1, timeout=WAIT_MS)
    robot = controller.role_windows["robot"]
    text = robot.visible_text()
    assert "Place a" in text and "The target board" not in text  # the instruction, never the target
    assert "put(board, shape, color, x, y)" in robot.instructions.toPlainText()
    instruction = asks[0][1].data["instruction"]
    robot.move_form.set_values({"status": "code", "details": "import os\nput(board, 'washer', 'red', 1, 1)"})
    qtbot.mouseClick(robot.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asks) == 2, timeout=WAIT_MS)
    assert "line 1: import is not allowed" in robot.text.toPlainText()  # the interpreter's verdict, as a model
    assert "FAILED" not in robot.visible_text()  # reads it: in the observation, never a line of the app's own
    assert asks[1][1].turn == 1 and asks[1][1].data["instruction"] == instruction
    robot.move_form.set_values({"status": "code", "details": read_steps(instruction)[0].code()})  # the one step
    qtbot.mouseClick(robot.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asks) == 3, timeout=WAIT_MS)
    assert asks[2][1].turn == 2  # the next round: the programmer saw the board and gave the next step
    results = [e for e in session.episode.events if e.kind == "result"]
    assert [r.data["ok"] for r in results] == [False, True]
    session.stop()
    qtbot.waitUntil(lambda: session.state == "stopped", timeout=WAIT_MS)
    assert robot.send_button is None and "The episode is over" in robot.header.text()  # nothing to send now
    assert_off_gui_thread(session)


def test_a_person_solves_a_wire_puzzle_with_the_manual_reading_expert(window, qtbot):
    session = make_session("puzzles", 0, {"solver": "human", "expert": "manual"}, groups=["wire"])
    asks = asks_of(session)
    controller = window.start_live(session)
    qtbot.waitUntil(lambda: len(asks) == 1, timeout=WAIT_MS)
    solver = controller.role_windows["solver"]
    assert solver.pixmaps_shown() == 1 and "Possible actions" in solver.visible_text()  # the module, the actions
    assert "3 Wires:" not in solver.visible_text()  # never the manual
    solver.message.setPlainText(asks[0][1].image_texts["module"])  # say what the picture shows
    qtbot.mouseClick(solver.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asks) == 2, timeout=WAIT_MS)  # the expert answered from the manual
    advice = [e.data["text"] for e in session.episode.events if e.kind == "message" and e.role == "expert"][-1]
    action = advice.splitlines()[-1].removeprefix("Do: ")
    solver.move_form.set_values({"actions": action})
    qtbot.mouseClick(solver.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state == "finished", timeout=WAIT_MS)
    assert session.episode.summary["outcome"] == "success" and session.episode.agents["solver"] == "human"
    assert_off_gui_thread(session)


@pytest.mark.parametrize(
    ("world", "human", "others"),
    [("blocks", "builder", ["D1", "D2", "D3"]), ("rooms", "answerer", ["helper"])],
)
def test_a_person_sees_only_their_roles_view_in_the_whole_window_until_the_end(window, qtbot, world, human, others):
    settings = {"turns": 4} if world == "blocks" else {}
    session = make_session(world, 0, {human: "human"}, settings=settings)
    asks = asks_of(session)
    controller = window.start_live(session)
    qtbot.waitUntil(lambda: len(asks) == 1, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: all(r in window.agents.roles() for r in [human, *others]), timeout=WAIT_MS)
    assert window.agents.panel(human).isVisible()
    assert not any(window.agents.panel(r).isVisible() for r in others)  # no director's wall, no helper's camera
    assert window.world.stack.currentWidget() is window.world.blind and not window.world.items
    assert not any(plot.isVisible() for plot in window.plots.plots) and "hidden" in window.plots.note.text()
    assert not window.dialogue.tabs.isTabEnabled(1)
    assert not window.dialogue.reasoning_box.isEnabled() and not window.dialogue.show_reasoning
    session.stop()
    qtbot.waitUntil(lambda: session.state == "stopped", timeout=WAIT_MS)
    assert all(window.agents.panel(r).isVisible() for r in [human, *others])  # over: everything may be seen
    assert window.world.stack.currentWidget() is not window.world.blind
    qtbot.waitUntil(lambda: window.plots.plots and all(plot.isVisible() for plot in window.plots.plots))
    assert window.dialogue.tabs.isTabEnabled(1)
    controller.close()


def test_opening_another_run_ends_the_live_session_and_its_state(window, qtbot):
    session = make_session("blocks", 0, {"builder": "human"}, settings={"turns": 4})
    asks = asks_of(session)
    window.start_live(session)
    qtbot.waitUntil(lambda: len(asks) == 1, timeout=WAIT_MS)
    assert window.findChild(QToolBar, "toolbar-live") is not None and window.players == {"builder"}
    assert window.open_path(DEMO_RUN)
    qtbot.waitUntil(lambda: session.state == "stopped", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.findChild(QToolBar, "toolbar-live") is None, timeout=WAIT_MS)
    assert window.players is None and window.world.stack.currentWidget() is not window.world.blind
