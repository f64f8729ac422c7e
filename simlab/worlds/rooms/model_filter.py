"""Cosmic's model-based cross-view necessity filter (paper section 3, "Data Filtering"): a model is shown only
the Answerer's view, the question and its options, three times per question, and a question it answers right
every time is dropped.

The model plays through SimLab's own OpenAI-compatible agent, as the Answerer of the ``answerer-alone``
condition (no dialogue, no Helper), so it sees exactly what the single-view condition shows a model and every
call is recorded as an ordinary episode: ``BENCH/necessity/round-K/`` is a run folder (``report`` and the app
open it), each question played ``tries`` times as repeats. A build that stops half way picks up where it
stopped: the same ``generate`` command resumes each round's run and asks only what is not answered yet.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NECESSITY_DIR = "necessity"
"""The folder beside a benchmark's questions that holds the filter's runs, one per round."""


@dataclass(frozen=True)
class FilterModel:
    """The model that filters, where it is served and how many tries it gets."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    tries: int = 3
    concurrency: int = 4
    text_only: bool = False

    def agent_settings(self) -> dict[str, Any]:
        """The Answerer's agent settings (the key is named by its variable, never written down)."""
        out: dict[str, Any] = {"api_key_env": self.api_key_env, "text_only": self.text_only}
        return out | ({"base_url": self.base_url} if self.base_url else {})


def answered_alone(instances: Sequence[Mapping[str, Any]], seed: int, model: FilterModel, out_dir: Path) -> set[str]:
    """The ids of the questions ``model`` answered right in every one of its tries from the Answerer's view
    alone, played (or resumed) as a run in ``out_dir``. A try the endpoint failed is not counted as right:
    the run raises (InfrastructureError) and the same call resumes it."""
    from simlab.core.recording import load_run
    from simlab.runner.batch import RunConfig, run

    config = RunConfig(
        world="rooms",
        seed=seed,
        repeats=model.tries,
        agents=[f"answerer=openai:{model.model}", "helper=silent"],
        settings={"condition": "answerer-alone"},
        tasks=[dict(i) for i in instances],
        agent_settings={"answerer": model.agent_settings()},
    )
    resume = (out_dir / "run.json").exists()
    if resume:
        _same_questions(out_dir, instances)
    run(None if resume else config, out_dir, resume=resume, concurrency=model.concurrency)
    right: dict[str, list[bool]] = defaultdict(list)
    for summary in load_run(out_dir).summaries:
        right[str(summary.get("task_id"))].append(summary.get("outcome") == "success")
    return {task for task, tries in right.items() if len(tries) >= model.tries and all(tries)}


def _same_questions(out_dir: Path, instances: Sequence[Mapping[str, Any]]) -> None:
    """ConfigError unless the run in ``out_dir`` asked these very questions (another build's filter run, from
    other options, must not be taken for this one's)."""
    from simlab.core.errors import ConfigError
    from simlab.core.recording import load_run

    recorded = [(t.get("id"), t.get("question")) for t in load_run(out_dir).config.get("tasks") or []]
    if recorded != [(i.get("id"), i.get("question")) for i in instances]:
        raise ConfigError(
            f"{out_dir}: a filter run of other questions is there (another build's, with other options); "
            "write the benchmark to a new folder, or remove that one"
        )
