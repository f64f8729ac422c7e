import gc
import json
import subprocess
import sys

import pytest

from simlab.core.errors import ConfigError
from simlab.core.plugins import Registry
from simlab.core.recording import INDEX_FILE, RUN_FILE, RunWriter, load_episode, load_run
from simlab.runner.batch import RunConfig, run

AGENTS = ("director=oracle", "builder=scripted")
FAST = {"turns": 3}
N = 4


def _config(**kw) -> RunConfig:
    return RunConfig("blocks", **{"seed": 5, "episodes": N, "agents": AGENTS, "settings": FAST, **kw})


def _index_ids(run_dir) -> list[str]:
    lines = (run_dir / INDEX_FILE).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["episode_id"] for line in lines]


def _episode_files(run_dir) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted((run_dir / "episodes").iterdir())}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runner") / "run"
    run(_config(), out, registry=Registry())
    return out


def test_run_writes_one_episode_per_task_with_distinct_ids(finished_run):
    ids = _index_ids(finished_run)
    assert len(ids) == N
    assert len(set(ids)) == N
    assert all(i.endswith("-r0") for i in ids)
    run_ = load_run(finished_run)
    episodes = run_.episodes()
    assert [e.episode_id for e in episodes] == ids
    assert len({e.seed for e in episodes}) == N
    assert all(e.agents == {"D1": "oracle", "D2": "oracle", "D3": "oracle", "builder": "scripted"} for e in episodes)
    assert all(e.settings["turns"] == 3 for e in episodes)


def test_run_json_holds_everything_needed_to_reproduce(finished_run):
    config = load_run(finished_run).config
    assert config["world"] == "blocks"
    assert config["seed"] == 5
    assert config["repeats"] == 1
    assert config["agents"] == {"D1": "oracle", "D2": "oracle", "D3": "oracle", "builder": "scripted"}
    assert config["settings"]["turns"] == 3
    assert config["settings"]["oracle_n"] == 5  # family defaults are written out too
    assert len(config["tasks"]) == N
    assert all("board" in t for t in config["tasks"])


def test_repeats_double_the_episodes_with_r0_and_r1_ids(tmp_path):
    out = tmp_path / "run"
    progress = []
    writer = run(_config(episodes=2, repeats=2), out, progress=lambda k, n, e: progress.append((k, n)))
    ids = _index_ids(out)
    tasks = [t["id"] for t in load_run(out).config["tasks"]]
    assert ids == [f"{tasks[0]}-r0", f"{tasks[1]}-r0", f"{tasks[0]}-r1", f"{tasks[1]}-r1"]
    assert writer.done == set(ids)
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)]
    repeats = [load_run(out).load_episode(i).summary["repeat"] for i in ids]
    assert repeats == [0, 0, 1, 1]


def test_resume_after_a_crash_finishes_without_doubling(finished_run, tmp_path):
    out = tmp_path / "run"
    run(_config(), out)
    lines = (out / INDEX_FILE).read_text(encoding="utf-8").splitlines()
    last, half = json.loads(lines[-1]), json.loads(lines[-2])
    # crash 1: the last episode's file is gone and so is its index line
    (out / last["file"]).unlink()
    # crash 2: an episode file was half written and its index line never appended
    (out / half["file"]).write_text('{"format": "simlab.episode", "vers', encoding="utf-8")
    (out / INDEX_FILE).write_text("\n".join(lines[:-2]) + "\n", encoding="utf-8")
    played = []
    run(None, out, resume=True, progress=lambda k, n, e: played.append(e.episode_id))
    assert played == [half["episode_id"], last["episode_id"]]
    ids = _index_ids(out)
    assert len(ids) == N
    assert len(set(ids)) == N
    run_ = load_run(out)
    assert run_.problems == []
    assert [e.to_json() for e in run_.episodes()] == [load_episode(p).to_json() for p in _paths(finished_run)]


def _paths(run_dir):
    return [run_dir / s["file"] for s in load_run(run_dir).summaries]


def test_resuming_a_complete_run_plays_nothing(tmp_path):
    out = tmp_path / "run"
    run(_config(episodes=2), out)
    before = (out / INDEX_FILE).read_bytes()
    files_before = _episode_files(out)
    played = []
    writer = run(None, out, resume=True, progress=lambda k, n, e: played.append(e))
    assert played == []
    assert len(writer.done) == 2
    assert (out / INDEX_FILE).read_bytes() == before
    assert _episode_files(out) == files_before


def test_rerunning_the_recorded_config_reproduces_every_episode(finished_run, tmp_path):
    config = load_run(finished_run).config
    again = RunConfig(
        config["world"],
        seed=config["seed"],
        repeats=config["repeats"],
        agents=[f"{role}={spec}" for role, spec in config["agents"].items()],
        settings=config["settings"],
        tasks=config["tasks"],
    )
    out = tmp_path / "again"
    run(again, out)
    assert load_run(out).config == config
    assert _episode_files(out) == _episode_files(finished_run)
    assert _index_ids(out) == _index_ids(finished_run)


def test_a_different_seed_changes_the_episodes(finished_run, tmp_path):
    out = tmp_path / "other"
    run(_config(seed=6), out)
    assert _episode_files(out) != _episode_files(finished_run)


def test_unknown_agent_is_a_config_error_listing_the_available_agents(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown agent 'nosuch'.*available: oracle, random, scripted, silent"):
        run(_config(agents=["builder=nosuch"]), tmp_path / "run", registry=Registry())


def test_a_rejected_agent_spec_leaves_no_run_folder_behind(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ConfigError):
        run(_config(agents=["builder=nosuch"]), out, registry=Registry())
    assert not (out / RUN_FILE).exists()
    run(_config(episodes=1), out)


def test_random_agent_as_director_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"D1=random.*builder only"):
        run(_config(agents=["director=random"]), tmp_path / "run", registry=Registry())


def test_unknown_role_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="no role 'pilot'"):
        run(_config(agents=["pilot=oracle"]), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_unknown_world_is_a_config_error_listing_known_worlds(tmp_path):
    with pytest.raises(ConfigError, match="unknown world 'chess'; known worlds: blocks"):
        run(RunConfig("chess", episodes=1), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_run_without_config_must_resume(tmp_path):
    with pytest.raises(ConfigError, match="no run to resume"):
        run(None, tmp_path / "run")


def test_resuming_a_folder_that_holds_no_run_is_a_user_error(tmp_path):
    from simlab.core.errors import SimlabError

    with pytest.raises(SimlabError):
        run(None, tmp_path / "empty", resume=True)
    assert not (tmp_path / "empty" / RUN_FILE).exists()


def test_zero_episodes_without_tasks_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="--episodes"):
        run(_config(episodes=0), tmp_path / "run")


# ---- a model endpoint failing mid-episode -------------------------------------------------------------------
class EndpointDownAfter:
    """The scripted builder, whose "endpoint" fails from its ``after + 1``-th act on (as the openai agent does)."""

    def __init__(self, after: int) -> None:
        from simlab.worlds.blocks.agents import make_scripted

        self.inner, self.after, self.calls = make_scripted("builder"), after, 0

    def reset(self, seed, role, task) -> None:
        self.inner.reset(seed, role, task)

    def act(self, observation):
        from simlab.core.errors import InfrastructureError

        self.calls += 1
        if self.calls <= self.after:
            return self.inner.act(observation)
        failure = InfrastructureError("APIConnectionError on 6 attempts", "http://127.0.0.1:9/v1")
        failure.records = ({"call": 1, "attempts": [{"error": "APIConnectionError"}] * 6, "usage": {}, "error": "x"},)
        raise failure


def test_an_endpoint_failure_ends_the_episode_as_an_infrastructure_abort_keeping_its_events(tmp_path):
    from simlab.core.errors import InfrastructureError
    from simlab.core.recording import save_episode
    from simlab.runner.episode import EpisodeRun, play
    from simlab.worlds import get_family
    from simlab.worlds.blocks.agents import make_oracle

    family = get_family("blocks")
    task = family.tasks.generate(1, 0)[0]
    world = family.world(task, {**family.default_settings, "turns": 10})
    agents = {role: make_oracle(role) for role in ("D1", "D2", "D3")} | {"builder": EndpointDownAfter(2)}
    playing = EpisodeRun(world, agents, "e-r0", 0)
    episode = play(playing)

    summary = episode.summary
    assert summary["outcome"] == "abort" and "timeout" not in summary and "stopped" not in summary
    assert summary["infrastructure"] == {
        "role": "builder",
        "endpoint": "http://127.0.0.1:9/v1",
        "status": None,
        "error": "APIConnectionError on 6 attempts",
    }
    builder_seen = [e for e in episode.events if e.kind == "observation" and e.role == "builder"]
    assert len(builder_seen) == 3 and episode.events[-1] == builder_seen[-1]  # kept up to the failed act
    assert [(r["role"], r["turn"]) for r in episode.raw] == [("builder", builder_seen[-1].turn)]
    usage = summary["usage"]  # one call, six HTTP requests: every failed attempt counted
    assert usage["calls"] == 1 and usage["requests"] == usage["failed_requests"] == 6
    save_episode(tmp_path / "e.json", episode)
    assert load_episode(tmp_path / "e.json").summary == summary  # the field is part of the episode format

    recorded = len(episode.events)
    with pytest.raises(RuntimeError, match="model endpoint failed"):
        playing.step()  # the episode is over: nothing more is observed or recorded
    assert len(episode.events) == recorded
    live = EpisodeRun(family.world(task, world.settings), {**agents, "builder": EndpointDownAfter(0)}, "e-r1", 0)
    live.start()
    while live.world.agent_selection != "builder":
        live.step()
    with pytest.raises(InfrastructureError) as caught:  # what the app's live worker catches and shows
        live.step()
    assert f"{type(caught.value).__name__}: {caught.value}" == (
        "InfrastructureError: the model endpoint at http://127.0.0.1:9/v1 failed: APIConnectionError on 6 attempts"
    )
    assert live.finished and live.finish().summary["infrastructure"]["role"] == "builder"


def test_a_long_budget_plays_out_but_a_world_stuck_in_one_turn_is_stopped():
    """The step guard follows turns: a legal budget of many turns is played to its end, while a world whose
    turn never advances is stopped after STEPS_PER_TURN steps as the bug it is."""
    from simlab.agents.resolve import AgentSpec, make_agents, role_specs
    from simlab.runner.episode import STEPS_PER_TURN, run_episode
    from simlab.worlds import get_family

    family = get_family("blocks")
    task = family.tasks.generate(1, 0)[0]
    specs = role_specs(family, [AgentSpec.parse("director=silent"), AgentSpec.parse("builder=scripted")])

    def play(world):
        return run_episode(world, make_agents(family, specs, {}), "e", 0)

    long = play(family.world(task, {"turns": 3_000}))  # 12,000 steps: past a guard of 10 * STEPS_PER_TURN
    assert long.summary["turns"] == 3_000 and len(long.events) > 10 * STEPS_PER_TURN

    class Stuck(family.world):
        def step(self, reply):
            events = super().step(reply)
            self.turn = 1
            return events

    with pytest.raises(RuntimeError, match=f"within {STEPS_PER_TURN} steps of turn 1"):
        play(Stuck(task, {"turns": 3_000}))


def test_a_second_writer_of_a_run_is_refused_while_the_first_holds_it(tmp_path):
    """Two resumes of one folder at once appended the same episodes twice; the first writer now holds the
    run's lock, and a writer in another process is refused until it lets go."""
    out = tmp_path / "run"
    run(_config(episodes=1), out, registry=Registry())
    held = RunWriter(out, {}, resume=True)
    child = "import sys; from simlab.core.recording import RunWriter; RunWriter(sys.argv[1], {}, resume=True)"
    refused = subprocess.run([sys.executable, "-c", child, str(out)], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "another SimLab process is writing this run" in refused.stderr
    del held
    gc.collect()  # the lock file closes with the writer, and the lock with it
    again = subprocess.run([sys.executable, "-c", child, str(out)], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr[-500:]
