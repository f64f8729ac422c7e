"""The headless demo behind ``make run`` on a machine without a display: scripted blocks episodes."""

from __future__ import annotations

from pathlib import Path

from simlab.analysis.report import build_report
from simlab.core.recording import load_run
from simlab.runner.batch import RunConfig, run
from simlab.worlds import get_family

DEMO_STRUCTURES = Path(__file__).resolve().parents[2] / "scenes" / "blocks" / "demo_structures"
DEMO_AGENTS = ("director=oracle", "builder=scripted")


def run_demo(out_dir: Path) -> str:
    """Play the bundled demo structures with oracle directors and the scripted builder; return the report."""
    family = get_family("blocks")
    tasks = family.load_tasks(DEMO_STRUCTURES) if DEMO_STRUCTURES.exists() else None
    config = RunConfig("blocks", seed=0, episodes=None if tasks else 3, agents=DEMO_AGENTS, tasks=tasks)
    run(config, out_dir)
    summaries = load_run(out_dir).summaries
    table = build_report(summaries).to_table(headline=list(family.headline_metrics))
    return (
        f"SimLab demo: CRAFT blocks, {len(summaries)} episodes, oracle directors + scripted builder\n"
        f"recorded in {out_dir}\n\n{table}\n\n"
        "The desktop app (3D view, agent panels, dialogue replay) comes with the next release; until then\n"
        "inspect runs with: python main.py report RUN_DIR --format json"
    )
