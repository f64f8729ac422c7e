"""The headless demo behind ``make run`` on a machine without a display: scripted blocks episodes."""

from __future__ import annotations

from pathlib import Path

from simlab.analysis.report import build_report
from simlab.core.recording import load_run
from simlab.runner.batch import RunConfig, run
from simlab.worlds import get_family

SCENES = Path(__file__).resolve().parents[2] / "scenes" / "blocks"
DEMO_STRUCTURES = SCENES / "demo_structures"
DEMO_RUN = SCENES / "demo_run"  # the bundled recording the app opens; `python main.py demo --out` remakes it
DEMO_AGENTS = ("director=oracle", "builder=scripted:0.15")  # a builder that sometimes mishears: real errors


def run_demo(out_dir: Path) -> str:
    """Play the bundled demo structures twice with oracle directors and a scripted builder that sometimes
    mishears; return the report."""
    family = get_family("blocks")
    tasks = family.load_tasks(DEMO_STRUCTURES)
    run(RunConfig("blocks", seed=0, repeats=2, agents=DEMO_AGENTS, tasks=tasks), out_dir)
    summaries = load_run(out_dir).summaries
    table = build_report(summaries).to_table(headline=list(family.headline_metrics))
    return (
        f"SimLab demo: CRAFT blocks, {len(summaries)} episodes, oracle directors + a scripted builder that "
        "sometimes mishears\n"
        f"recorded in {out_dir}\n\n{table}\n\n"
        "Inspect any run with: python main.py report RUN_DIR --format json"
    )
