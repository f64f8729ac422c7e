"""The bundled demo recording is exactly what the current code records: regenerate it when this fails
(`rm -r scenes/blocks/demo_run && python main.py demo --out scenes/blocks/demo_run`)."""

from simlab.core.recording import load_run
from simlab.runner.demo import DEMO_RUN, run_demo


def test_bundled_demo_run_matches_a_fresh_recording(tmp_path):
    report = run_demo(tmp_path / "run")
    fresh, bundled = load_run(tmp_path / "run"), load_run(DEMO_RUN)
    assert [s["episode_id"] for s in fresh.summaries] == [s["episode_id"] for s in bundled.summaries]
    for episode_id in (s["episode_id"] for s in bundled.summaries):
        assert fresh.load_episode(episode_id).to_json() == bundled.load_episode(episode_id).to_json(), episode_id
    assert "success" in report and "failure" in report  # the demo shows both outcomes
