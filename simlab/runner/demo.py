"""The headless demo behind ``make run`` on a machine without a display: the bundled demo run config played.

The demo is data, not code: ``scenes/blocks/demo.toml`` is an ordinary run config (``python main.py run
--config`` reads the same file), and ``scenes/blocks/demo_run`` is its recording, which the app opens.
"""

from __future__ import annotations

from pathlib import Path

from simlab.analysis.report import build_report
from simlab.core.assets import scene_path
from simlab.core.recording import load_run
from simlab.runner.batch import run
from simlab.runner.config_file import load_run_config
from simlab.worlds import get_family

SCENES = scene_path("blocks")  # scenes/ of a checkout, or the copy an installed SimLab carries
DEMO_CONFIG = SCENES / "demo.toml"
DEMO_RUN = SCENES / "demo_run"  # the bundled recording the app opens; `python main.py demo --out` remakes it


def run_demo(out_dir: Path) -> str:
    """Play the demo run config into ``out_dir``; return the report."""
    config = load_run_config(DEMO_CONFIG)
    family = get_family(config.world)
    run(config, out_dir)
    loaded = load_run(out_dir)
    table = build_report(loaded.summaries).to_table(headline=list(family.headline_metrics))
    agents = ", ".join(f"{role}={spec}" for role, spec in loaded.config["agents"].items())
    return (
        f"SimLab demo: {family.description}.\n{len(loaded.summaries)} episodes with {agents},\n"
        f"recorded in {out_dir}\n\n{table}\n\n"
        "Inspect any run with: python main.py report RUN_DIR --format json"
    )
