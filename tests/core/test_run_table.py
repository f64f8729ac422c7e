"""RunTable's columns line up with the summaries they come from, whichever fields each summary lacks or adds."""

from __future__ import annotations

from simlab.core.run_table import RunTable


def test_fields_missing_or_first_seen_later_stay_in_their_rows():
    summaries = [
        {"episode_id": "a", "score": 1.0, "metrics": {"iou": 0.5}},
        {"episode_id": "b", "metrics": {"iou": 0.25, "extra": 3}},  # no score; a metric first seen here
        {"episode_id": "c", "score": 0.5, "metrics": {}, "note": "late"},  # no metric at all; a new field
        {"episode_id": "d", "score": 0.0, "metrics": {"iou": 1.0, "extra": 4}, "note": "x"},
    ]
    table = RunTable.from_summaries(summaries)
    assert table.n == 4 and all(len(c.data) == 4 for c in table.columns.values())
    assert table.columns["score"].values() == [1.0, None, 0.5, 0.0]
    assert table.columns["metrics.iou"].values() == [0.5, 0.25, None, 1.0]
    assert table.columns["metrics.extra"].values() == [None, 3, None, 4]
    assert table.columns["note"].values() == [None, None, "late", "x"]
