"""A turn's judge verdicts as HTML: each run's answer and reason, the combined value, unreadable replies in red
with the reply, and model text escaped."""

from __future__ import annotations

from simlab.core.judging import JudgmentRecord
from simlab.render.judgments import NONE_YET, judgments_html
from tests.analysis.test_judging import TEST_JUDGE


def rec(turn: int, run: int, labels: dict[str, str], reasons: dict[str, str], unreadable: str | None = None, reply=""):
    values = {c: TEST_JUDGE.question(c).scale.labels[v] for c, v in labels.items()}
    return JudgmentRecord("test-judge", "judge-m", "ep1", turn, "D2", run, "sha", labels, reasons, unreadable, reply,
                          values)  # fmt: skip


def test_a_turns_verdicts_show_every_run_with_its_reason_and_the_combined_value():
    records = [
        rec(3, 0, {"Q1": "Yes", "Q2": "No"}, {"Q1": "names the <b>red</b> block", "Q2": "too vague"}),
        rec(3, 1, {"Q1": "No"}, {"Q1": "wrong layer"}, "no answer to Q2", reply="Q1: No <script>x</script>"),
        rec(4, 0, {"Q1": "Yes", "Q2": "Yes"}, {}),
    ]
    page = judgments_html([TEST_JUDGE], records, 3)
    assert "Test judge" in page and "D2" in page and "judge-m" in page and "2 runs" in page
    assert "names the &lt;b&gt;red&lt;/b&gt; block" in page and "<b>red</b>" not in page
    assert "&lt;script&gt;" in page and "<script>" not in page
    assert "run 2 could not be read: no answer to Q2" in page
    assert "turn 4" not in page
    assert ">0.50<" in page and ">0.00<" in page  # Q1: Yes and No (a reply read in part counts); Q2: No
    assert "turn 4" in judgments_html([TEST_JUDGE], records, None)


def test_a_turn_nobody_judged_says_how_to_judge_it():
    assert NONE_YET.split(":")[0] in judgments_html([TEST_JUDGE], [], 1)
