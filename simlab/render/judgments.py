"""A turn's judge verdicts as HTML: what each judge said about each item of the turn, run by run, with its reasons.

Per judge (in the run's order) and item (a director, the turn as a whole, the conversation), one table: a row
per question with the combined value (runs averaged, or the agreed label) and each run's answer with the
judge's reason; a run whose reply could not be read shows why, in red, with the reply itself. Inline styles
only and every text escaped: a judge's reply is model output, data, never markup. No Qt here.
"""

from __future__ import annotations

from collections.abc import Sequence

from simlab.analysis.judgments import ItemScore, item_scores, latest
from simlab.core.family import hex_colour
from simlab.core.judging import Judge, JudgmentRecord
from simlab.render.formatting import FAILED_RGB, MUTED_RGB, esc

ERROR = hex_colour(FAILED_RGB)
MUTED = hex_colour(MUTED_RGB)
TABLE_STYLE = "cellspacing='0' cellpadding='3' border='1' style='border-collapse:collapse'"
NONE_YET = "No judge has rated this turn. Run one with: python main.py judge RUN --judge NAME --model MODEL"


def turn_records(records: Sequence[JudgmentRecord], turn: int | None) -> list[JudgmentRecord]:
    """The newest records about ``turn`` (every turn when None), in stored order."""
    return [r for r in latest(records) if turn is None or r.turn == turn]


def judgments_html(judges: Sequence[Judge], records: Sequence[JudgmentRecord], turn: int | None) -> str:
    """The verdicts about ``turn`` (all turns when None) of ``records`` (one episode's), judges in order."""
    mine = turn_records(records, turn)
    if not mine:
        return f'<p style="color:{MUTED}">{esc(NONE_YET)}</p>'
    parts = []
    for judge in judges:
        of_judge = [r for r in mine if r.judge == judge.name]
        if not of_judge:
            continue
        scores, _ = item_scores(judge, of_judge)
        parts.append(f"<h3 style='margin:6px 0 2px 0'>{esc(judge.title)} <span style='color:{MUTED}'>"
                     f"({esc(judge.name)})</span></h3>")  # fmt: skip
        groups: dict[tuple[str, int, str], list[JudgmentRecord]] = {}
        for r in of_judge:
            groups.setdefault((r.model, r.turn, r.subject), []).append(r)
        for (model, item_turn, subject), runs in groups.items():
            score = next((s for s in scores if (s.model, s.turn, s.subject) == (model, item_turn, subject)), None)
            parts.append(_item_html(judge, model, item_turn, subject, sorted(runs, key=lambda r: r.run), score))
    return "".join(parts)


def _item_html(
    judge: Judge, model: str, turn: int, subject: str, runs: Sequence[JudgmentRecord], score: ItemScore | None
) -> str:
    what = subject or ("the conversation" if judge.combine == "agree" else "the turn")
    overall = "" if score is None or score.overall is None else f" · overall {score.overall:.2f}"
    if score is None and all(r.unreadable is None for r in runs):
        overall = " · runs disagree: left out of the figures"
    head = (f"<p style='margin:4px 0'><b>{esc(what)}</b> at turn {turn} · model {esc(model)} · "
            f"{len(runs)} run{'s' if len(runs) != 1 else ''}{esc(overall)}</p>")  # fmt: skip
    rows = []
    for q in judge.questions:
        cells = [f"<td><b>{esc(q.code)}</b> {esc(q.label)}</td>", f"<td align='right'>{_combined(q.code, score)}</td>"]
        for r in runs:
            if q.code in r.labels:
                cells.append(f"<td><b>{esc(r.labels[q.code])}</b> {esc(r.reasons.get(q.code, ''))}</td>")
            else:
                cells.append(f"<td style='color:{ERROR}'>not answered</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    header = "<tr><th align='left'>question</th><th>value</th>" + "".join(
        f"<th align='left'>run {r.run + 1}</th>" for r in runs
    ) + "</tr>"  # fmt: skip
    table = f"<table {TABLE_STYLE}>{header}{''.join(rows)}</table>"
    problems = "".join(
        f"<p style='color:{ERROR};margin:2px 0'>run {r.run + 1} could not be read: {esc(r.unreadable)}. "
        f"The reply: <i>{esc(r.reply[:400])}</i></p>"
        for r in runs
        if r.unreadable is not None
    )
    return head + table + problems


def _combined(code: str, score: ItemScore | None) -> str:
    if score is None or code not in score.labels:
        return "-"
    value = score.values.get(code)
    return esc(score.labels[code]) if value is None else f"{value:.2f}"
