"""Cosmic's failure-mode judge (section 5.2, figure 7) on recorded rooms runs: one item per failed conversation
with the task, the right answer and both views but no private reasoning, the seven subcategories read from
realistic replies, three runs combined by majority, and figure 7's shares of all errors per task and overall,
end to end through ``python main.py judge`` and ``report`` against the local OpenAI-compatible server."""

from __future__ import annotations

import csv
import re
import shutil
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from simlab.analysis.figures import write_figure
from simlab.analysis.judgments import item_scores, run_judgments
from simlab.cli import main
from simlab.core.episode import Episode
from simlab.core.events import Event
from simlab.core.family import FigureSpec
from simlab.core.judging import Judge, JudgeItem, JudgmentRecord, make_record, read_verdict
from simlab.core.recording import load_run
from simlab.testing import judge_test
from simlab.testing.openai_server import FakeOpenAIServer, last_user_text
from simlab.worlds import get_family
from simlab.worlds.rooms.judges import (
    ALL_TASKS,
    CATEGORIES,
    FAILURE_QUESTIONS,
    error_counts,
    error_shares,
    failed,
    failure_items,
    failure_modes_figure,
    present,
)
from simlab.worlds.rooms.observations import view_in_words

KEY = "sk-failure-judge-secret"
CODES = [q.code for q in FAILURE_QUESTIONS]
MAIN = {c.code: [q.code for q in c.questions] for c in CATEGORIES}
BAR = {c.code: f"{c.code} {c.label}" for c in CATEGORIES} | {q.code: f"{q.code} {q.label}" for q in FAILURE_QUESTIONS}


def judge() -> Judge:
    return next(j for j in get_family("rooms").load_judges() if j.name == "cosmic-failures")


@pytest.fixture(scope="module")
def guessed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten episodes, two per task, of a random Answerer with a silent Helper (most fail), recorded by the CLI."""
    out = tmp_path_factory.mktemp("guessed") / "run"
    args = ["run", "--world", "rooms", "--episodes", "10", "--agent", "answerer=random", "--agent", "helper=silent"]
    assert main([*args, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def episodes(guessed: Path) -> list[Episode]:
    return load_run(guessed).episodes()


def first_seen(episode: Episode, role: str) -> dict:
    return next(e.data["data"] for e in episode.events if e.kind == "observation" and e.role == role)


# ---- the judge and its items ---------------------------------------------------------------------------
def test_the_judge_asks_the_seven_subcategories_three_times_and_passes_the_contract_check(episodes, record_rooms):
    j = judge()
    assert (j.runs, j.combine, j.world) == (3, "mean", "rooms")
    assert CODES == ["PF1", "PF2", "CG1", "CG2", "CG3", "GR1", "GR2"]
    assert MAIN == {"PF": ["PF1", "PF2"], "CG": ["CG1", "CG2", "CG3"], "GR": ["GR1", "GR2"]}
    assert all(dict(q.scale.labels) == {"Yes": 1.0, "No": 0.0} for q in j.questions)
    for name in ("Object Recognition Failure", "Instance Duplication", "left-right mirroring or front-back"):
        assert name in j.instructions  # the paper's definitions, quoted
    oracle = load_run(record_rooms).episodes()
    failing = sum(e.summary["outcome"] != "success" for e in episodes)
    counts = judge_test("rooms", [*episodes, *oracle])
    assert counts["cosmic-failures"] == failing > 0 and counts["cosmic-repair"] == len(episodes) + len(oracle)


def test_only_failed_conversations_are_items(episodes, record_rooms):
    for episode in [*episodes, *load_run(record_rooms).episodes()]:
        items = failure_items(episode)
        assert len(items) == (episode.summary["outcome"] != "success") == failed(episode)
        assert all((i.turn, i.subject) == (episode.last_turn, "") for i in items)
    assert any(e.summary["outcome"] == "success" for e in episodes)  # successes were there, and left out


def test_an_item_holds_the_task_the_right_answer_both_views_and_the_transcript_but_no_reasoning(record_rooms):
    oracle = load_run(record_rooms).episodes()[0]  # both agents spoke, the Answerer wrote private reasoning
    question = oracle.task["question"]
    letters = ["A", "B", "C", "D"]
    right = question["answer"]
    given = next(letter for letter in letters[: len(question["options"])] if letter != right)
    episode = replace(oracle, events=[_answered(e, given) for e in oracle.events])
    assert failure_items(oracle) == [] and failed(episode)
    (item,) = failure_items(episode)
    named = {letter: f"({letter}) {option}" for letter, option in zip(letters, question["options"], strict=False)}
    assert f"Task: {question['task']}." in item.context and question["text"] in item.context
    assert f"Correct answer: {named[right]}" in item.context
    for role in ("answerer", "helper"):  # as a text-only agent reads them
        assert view_in_words(first_seen(episode, role)["view"]) in item.context
    for e in episode.events:
        if e.kind == "message":
            assert f"[turn {e.turn}] {e.role}: {e.data['text'][:300]}" in item.context
    reasoning = [e.data["text"] for e in episode.events if e.kind == "reasoning"]
    assert reasoning and not any(text in item.context for text in reasoning)  # what was said, not thought
    assert f"answerer: (final answer) {given}" in item.context
    assert item.context.endswith(f"answered {named[given]}, which is wrong; the correct answer is {named[right]}.")


def test_an_unreadable_answer_is_a_failure_and_an_unanswered_or_silent_episode_is_not(episodes):
    episode = next(e for e in episodes if failed(e))
    unreadable = replace(episode, events=[_answered(e, None) for e in episode.events])
    (item,) = failure_items(unreadable)
    assert "(a final answer nobody can read)" in item.context
    assert "Outcome: the Answerer's final answer could not be read; the correct answer is (" in item.context
    cut_short = replace(episode, events=[e for e in episode.events if e.kind != "result"])  # a timeout before it
    assert failure_items(cut_short) == []
    silent = replace(episode, events=[e for e in episode.events if e.kind != "message"])  # no conversation
    assert failure_items(silent) == []


def _answered(event: Event, answer: str | None) -> Event:
    """``event`` as recorded had the Answerer given ``answer`` (None: a reply nobody could read), a wrong one."""
    if event.kind == "result":
        return replace(event, data={**event.data, "ok": answer is not None, "answer": answer, "correct": False})
    if event.kind == "action" and "answer" in event.data["action"]:
        return replace(event, data={**event.data, "action": {"answer": answer}})
    return event


# ---- reading replies -----------------------------------------------------------------------------------
ALL_SEVEN = """Looking at both views and the transcript:

**PF1**: No | every object was reported
**PF2** - Yes, the Helper called the gray chair red
CG1: yes | "the chair" fits three chairs in the Helper's view
- CG2: No
CG3 = NO | nothing counted twice
`GR1`: Yes | the Helper's left was taken for the Answerer's left
GR2: No | the layout was never discussed
"""


def test_every_subcategory_is_read_from_a_realistic_reply():
    verdict = read_verdict(judge(), ALL_SEVEN)
    assert verdict.unreadable is None
    assert verdict.labels == {
        "PF1": "No", "PF2": "Yes", "CG1": "Yes", "CG2": "No", "CG3": "No", "GR1": "Yes", "GR2": "No",
    }  # fmt: skip
    assert verdict.reasons["GR1"] == "the Helper's left was taken for the Answerer's left"


def test_a_reply_read_in_part_keeps_what_it_answered_and_names_the_rest():
    reply = "PF1: Yes | the lamp was missed\nCG2: No\nGR1: Not sure\nGR2: Unclear | hard to tell"
    record = make_record(judge(), "m", "e", JudgeItem(3, "", "c"), 0, "sha", reply)
    assert record.labels == {"PF1": "Yes", "CG2": "No"} and record.values == {"PF1": 1.0, "CG2": 0.0}
    assert record.unreadable.startswith("no answer to PF2, CG1, CG3, GR1, GR2 in the form CODE: ANSWER (Yes / No)")


@pytest.mark.parametrize(
    "text", ["", "The agents merged two chairs, so instance merging.", "Categories: PF1, CG2", "CG2 present"]
)
def test_a_reply_without_any_readable_answer_is_unreadable(text):
    verdict = read_verdict(judge(), text)
    assert verdict.labels == {} and verdict.unreadable


# ---- combining runs and counting errors ----------------------------------------------------------------
def records(episode: str, *replies: str, model: str = "m") -> list[JudgmentRecord]:
    return [
        make_record(judge(), model, episode, JudgeItem(2, "", "c"), run, "sha", reply)
        for run, reply in enumerate(replies)
    ]


def reply(*yes: str) -> str:
    return "\n".join(f"{code}: {'Yes' if code in yes else 'No'} | because" for code in CODES)


def test_a_subcategory_is_present_when_most_runs_that_answered_it_said_yes():
    answered = records(
        "e1",
        reply("PF1", "CG2", "GR1"),
        reply("PF1", "CG2"),
        reply("PF1", "GR2") + "\nno more",
    )
    answered += records("e2", reply("CG1"), "CG1: No\nPF1: Yes", "I cannot tell.")
    (e1, e2), dropped = item_scores(judge(), answered)
    assert dropped == 0 and (e1.runs, e2.runs) == (3, 2)  # the unreadable run is no run
    assert [c for c in CODES if present(e1, c)] == ["PF1", "CG2"]  # 3/3 and 2/3; GR1, GR2 1/3 each
    assert e1.values["PF1"] == 1.0 and e1.values["CG2"] == pytest.approx(2 / 3)
    assert [c for c in CODES if present(e2, c)] == []  # CG1 and PF1 split 1-1 between the runs that answered
    assert e2.values["CG1"] == 0.5 and e2.values["CG3"] == 0.0 and "GR1" in e2.values


def test_items_are_counted_once_per_subcategory_present():
    stored = records("x", reply("PF1", "CG1"), reply("PF1", "CG1"), reply("PF1"))
    items, _ = item_scores(judge(), stored)
    assert error_counts(items) == Counter({"PF1": 1, "CG1": 1})


def test_shares_are_of_all_errors_and_a_category_is_the_sum_of_its_subcategories():
    counts = Counter({"PF1": 1, "CG1": 2, "CG2": 3, "GR1": 2})  # 8 errors
    shares = error_shares(counts)
    assert list(shares) == ["PF", "PF1", "PF2", "CG", "CG1", "CG2", "CG3", "GR", "GR1", "GR2"]
    assert shares["PF"] == shares["PF1"] == 1 / 8 and shares["PF2"] == 0.0
    assert shares["CG"] == 5 / 8 and shares["GR"] == shares["GR1"] == 2 / 8
    assert sum(shares[c] for c in MAIN) == pytest.approx(1.0) == sum(shares[c] for c in CODES)
    assert error_shares(Counter()) == {}  # failed conversations with no error found: no distribution


def test_figure_7_has_a_series_per_task_and_one_over_all_tasks():
    stored = [
        *records("a1", reply("PF1", "CG1"), reply("PF1", "CG1"), reply("CG1")),  # anchor: PF1, CG1
        *records("a2", reply("CG2"), reply("CG2"), reply("CG2")),  # anchor: CG2
        *records("d1", reply("GR1", "GR2"), reply("GR1"), reply("GR1", "GR2")),  # direction: GR1, GR2
        *records("d2", reply(), reply(), reply("PF2")),  # direction: nothing found
    ]
    lineup = {"answerer": "random", "helper": "silent"}
    tasks = {"a1": "anchor", "a2": "anchor", "d1": "direction", "d2": "direction"}
    summaries = [{"episode_id": i, "group": g, "agents": lineup} for i, g in tasks.items()]
    data = failure_modes_figure(judge(), stored, summaries)
    rows = {s.label: {p.x: p.y for p in s.points} for s in data.series}
    assert list(rows) == ["anchor", "direction", ALL_TASKS]  # the paper's task order, pooled last
    assert rows["anchor"][BAR["CG"]] == pytest.approx(2 / 3) and rows["anchor"][BAR["PF1"]] == pytest.approx(1 / 3)
    assert rows["direction"][BAR["GR"]] == 1.0 and rows["direction"][BAR["GR2"]] == 0.5
    assert rows[ALL_TASKS] == pytest.approx(
        {BAR[c]: v for c, v in error_shares(Counter({"PF1": 1, "CG1": 1, "CG2": 1, "GR1": 1, "GR2": 1})).items()}
    )
    assert data.series[0].points[0].episodes == ("a1", "a2")  # the app marks the open episode's bars
    assert data.y_range == (0.0, 1.0) and data.kind == "bar"

    other = {"answerer": "oracle", "helper": "silent"}
    two = failure_modes_figure(
        judge(), stored, [{**s, "agents": other} if s["episode_id"] == "a2" else s for s in summaries]
    )
    oracle = "answerer=oracle helper=silent"
    assert [s.label for s in two.series][:2] == [f"{oracle} · anchor", f"{oracle} · {ALL_TASKS}"]
    judged_twice = failure_modes_figure(judge(), [*stored, *records("a1", reply("PF1"), model="n")], summaries)
    assert "anchor · judged by n" in [s.label for s in judged_twice.series]


# ---- end to end: the CLI against the local server -------------------------------------------------------
TASK_ERRORS = {
    # per task, the three runs' replies: (codes said Yes) per run, or None for a reply nobody can read
    "anchor": (("PF1", "CG1", "CG2"), ("PF1", "CG1", "CG2"), ("CG1", "CG2")),  # PF1, CG1, CG2 present
    "counting": (("CG3", "CG2"), ("CG2",), ("CG2",)),  # CG2 (CG3 said once)
    "distance": (("PF2", "GR2"), ("PF2", "GR2"), ("PF2", "GR2")),  # PF2, GR2
    "direction": (("GR1", "GR2"), ("GR1",), None),  # GR1 (GR2 split 1-1 between the runs read)
    "mapping": (("GR2",), ("GR2", "CG1"), ("GR2", "CG1")),  # GR2, CG1
}
PRESENT = {"anchor": {"PF1", "CG1", "CG2"}, "counting": {"CG2"}, "distance": {"PF2", "GR2"},
           "direction": {"GR1"}, "mapping": {"GR2", "CG1"}}  # fmt: skip


class FailureJudge:
    """The local server's judge: the k-th request for a prompt gets the k-th reply its task's row gives (so the
    three runs of an item differ as :data:`TASK_ERRORS` says, whichever run each request is)."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> str:
        text = last_user_text(body)
        task = re.search(r"^Task: (\w+)\.", text, re.MULTILINE).group(1)
        with self.lock:
            k = self.asked[text] % 3
            self.asked[text] += 1
        yes = TASK_ERRORS[task][k]
        if yes is None:
            return "These agents clearly struggled with the room."
        return "Here is my assessment.\n\n" + "\n".join(
            f"**{code}**: {'Yes' if code in yes else 'No'} | because" for code in CODES
        )


def test_judge_then_report_give_the_subcategories_and_figure_7_shares(guessed, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    run_dir = tmp_path / "run"
    shutil.copytree(guessed, run_dir)
    tasks = [e.summary["group"] for e in load_run(run_dir).episodes() if failed(e)]
    assert len(set(tasks)) >= 2
    with FakeOpenAIServer(FailureJudge()) as server:
        judge_args = ["judge", str(run_dir), "--judge", "cosmic-failures", "--model", "judge-m"]
        args = [*judge_args, "--base-url", server.base_url]
        assert main(args) == 0
        assert main(args) == 0  # a rerun asks nothing
        assert server.stats.served == 3 * len(tasks)
    out = capsys.readouterr().out
    unreadable = tasks.count("direction")  # one reply in three, per direction item
    head = f"judge cosmic-failures (Failure modes), model judge-m: {len(tasks)} items from {3 * len(tasks)} answers"
    assert head in out and f"asked {3 * len(tasks)}, already answered 0, unreadable replies {unreadable}" in out

    assert main(["report", str(run_dir)]) == 0
    report = capsys.readouterr().out
    assert head in report
    for code in CODES:  # each subcategory's mean: the share of failed conversations showing it, runs averaged
        expected = sum(_runs_said_yes(task, code) for task in tasks) / len(tasks)
        label = judge().question(code).label
        assert re.search(rf"^{code}\s+{re.escape(label)}\s+{len(tasks)}\s+{expected:.3f}\b", report, re.MULTILINE), (
            code, expected, report,
        )  # fmt: skip

    judged = run_judgments(run_dir, "rooms")
    data = failure_modes_figure(judge(), judged.records, load_run(run_dir).summaries)
    rows = {s.label: {p.x: p.y for p in s.points} for s in data.series}
    assert list(rows) == [t for t in TASK_ERRORS if t in tasks] + [ALL_TASKS]
    for task in set(tasks):
        assert rows[task] == pytest.approx(shares_of(Counter(PRESENT[task])))
    assert rows[ALL_TASKS] == pytest.approx(shares_of(Counter(code for task in tasks for code in PRESENT[task])))

    spec = FigureSpec("judge_cosmic-failures", "Failure modes (Cosmic fig. 7)", lambda _: data)
    written = write_figure(spec, data, tmp_path / "figures")
    with written[0].open(encoding="utf-8") as f:
        csv_rows = {(r["series"], r["x"]): float(r["y"]) for r in csv.DictReader(f)}
    assert csv_rows[(ALL_TASKS, "CG Cross-view grounding")] == pytest.approx(rows[ALL_TASKS][BAR["CG"]])
    assert all(path.stat().st_size > 0 for path in written)


def _runs_said_yes(task: str, code: str) -> float:
    """The item's mean for ``code``: the share of its task's readable replies that said Yes."""
    read = [yes for yes in TASK_ERRORS[task] if yes is not None]
    return sum(code in yes for yes in read) / len(read)


def shares_of(errors: Counter[str]) -> dict[str, float]:
    """Figure 7's bars for ``errors`` by hand: each subcategory's count over all, each category its own sum."""
    total = sum(errors.values())
    subcategories = {BAR[code]: errors[code] / total for code in CODES}
    return subcategories | {BAR[c]: sum(errors[code] for code in codes) / total for c, codes in MAIN.items()}
