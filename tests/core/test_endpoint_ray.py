"""A model endpoint failing under the Ray executor: the same as with local threads (exit 3, the failed episodes
kept out of the index, no new ones started, ``--resume`` finishes the run once the endpoint is back).

One local Ray instance (2 CPUs) for the module; skipped when ray is not installed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from simlab.cli import main  # noqa: E402
from simlab.core.recording import EPISODES_DIR, INDEX_FILE  # noqa: E402
from simlab.testing.openai_server import FakeOpenAIServer, scripted_replies  # noqa: E402
from simlab.testing.scripts import BLOCKS_SCRIPT  # noqa: E402

KEY_ENV, KEY = "SIMLAB_ENDPOINT_RAY_KEY", "endpoint-ray-key-90d1f3"


@pytest.fixture(scope="module", autouse=True)
def ray_instance() -> Iterator[None]:
    """The key in the environment before Ray starts (its workers inherit it), one local instance."""
    os.environ[KEY_ENV] = KEY
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()
    os.environ.pop(KEY_ENV, None)


def test_a_dead_endpoint_stops_a_ray_run_and_resume_finishes_it(tmp_path: Path, capsys) -> None:
    server = FakeOpenAIServer(scripted_replies(BLOCKS_SCRIPT, default=None)).start()
    base_url = server.base_url
    server.stop()  # nothing listens there now: every connection is refused
    out = tmp_path / "run"
    args = ["run", "--agent", "builder=openai:fake-model", "--episodes", "6", "--turns", "2", "--out", str(out)]
    for name, value in {
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "text_only": "true",
        "backoff_s": "0.001",
    }.items():
        args += ["--agent-setting", f"builder.{name}={value}"]
    try:
        assert main([*args, "--concurrency", "2", "--executor", "ray"]) == 3
        _, err = capsys.readouterr()
        line = next(x for x in err.splitlines() if x.startswith("error:"))
        assert line.startswith(f"error: the model endpoint at {base_url} failed: APIConnectionError on 6 attempts")
        assert line.endswith("; 0 of 6 episodes done; resume with --resume") and KEY not in err
        assert not (out / INDEX_FILE).exists() or (out / INDEX_FILE).read_text(encoding="utf-8") == ""
        kept = list((out / EPISODES_DIR).glob("*.json"))
        assert 1 <= len(kept) <= 2  # the episodes in flight; none started after the failure
        for path in kept:
            assert json.loads(path.read_text(encoding="utf-8"))["summary"]["infrastructure"]["role"] == "builder"

        server.start()  # back on the same port
        assert main(["run", "--resume", "--out", str(out), "--executor", "ray"]) == 0
        assert "run complete: 6 episodes" in capsys.readouterr().out
        ids = [json.loads(x)["episode_id"] for x in (out / INDEX_FILE).read_text(encoding="utf-8").splitlines()]
        assert len(ids) == len(set(ids)) == 6
        assert [p.name for p in out.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()] == []
    finally:
        server.stop()
