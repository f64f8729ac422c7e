import importlib
import sys
import textwrap

import pytest

from simlab.agents.resolve import make_agents, role_specs
from simlab.core.errors import ConfigError
from simlab.core.plugins import AgentSpec, discover
from simlab.runner.episode import run_episode
from simlab.worlds import get_family

TRACKED_MODULES = ("echo_tracker", "echo_agent", "bad_agent", "fake_manifest", "fake_agent_impl", "agent")


@pytest.fixture(autouse=True)
def _isolate_imports(monkeypatch):
    """load_target puts plugin folders on sys.path and imports plugin modules: undo both after each test."""
    monkeypatch.setattr(sys, "path", [*sys.path])
    yield
    for name in TRACKED_MODULES:
        sys.modules.pop(name, None)
    for name in [m for m in sys.modules if m == "simlab_plugins" or m.startswith("simlab_plugins.")]:
        sys.modules.pop(name)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def plugins_dir(tmp_path):
    root = tmp_path / "plugins"
    _write(
        root / "echo" / "plugin.toml",
        """
        name = "echo"
        description = "Repeats the last message it saw"
        [agents]
        echo = "echo_agent:make_agent"
        """,
    )
    _write(root / "echo" / "echo_tracker.py", "IMPORTS = []\n")
    _write(
        root / "echo" / "echo_agent.py",
        """
        import echo_tracker

        echo_tracker.IMPORTS.append(__name__)


        def make_agent(role, arg=None, settings=None):
            return ("echo", role, arg)
        """,
    )
    _write(root / "broken" / "plugin.toml", 'name = "broken\n[agents\n')
    _write(root / "badimport" / "plugin.toml", 'name = "badimport"\n[agents]\nbad = "bad_agent:make"\n')
    _write(root / "badimport" / "bad_agent.py", 'raise ImportError("needs the missing package frobnicate")\n')
    (root / "not_a_plugin").mkdir()
    (root / "stray_file.txt").write_text("x")
    return root


# ---- AgentSpec -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "role", "name", "arg"),
    [
        ("builder=scripted", "builder", "scripted", None),
        ("D1=openai:gpt-4o-mini", "D1", "openai", "gpt-4o-mini"),
        (" director = oracle : random ", "director", "oracle", "random"),
        ("D2=plug:a:b", "D2", "plug", "a:b"),
        ("builder=scripted:", "builder", "scripted", None),
    ],
)
def test_agent_spec_parse_good(text, role, name, arg):
    spec = AgentSpec.parse(text)
    assert (spec.role, spec.name, spec.arg) == (role, name, arg)


def test_agent_spec_spec_is_name_and_arg():
    assert AgentSpec.parse("D1=openai:gpt-4o").spec() == "openai:gpt-4o"
    assert AgentSpec.parse("builder=scripted").spec() == "scripted"


@pytest.mark.parametrize("text", ["builder", "=scripted", "builder=", "builder=:x", "  =  ", ""])
def test_agent_spec_parse_bad_mentions_the_expected_form(text):
    with pytest.raises(ConfigError, match="ROLE=NAME") as info:
        AgentSpec.parse(text)
    assert repr(text) in str(info.value)


# ---- repo plugin folders ---------------------------------------------------------------------------------
def test_discover_reads_manifests_without_importing_plugin_code(plugins_dir):
    registry = discover(plugins_dir, entry_points=False)
    assert sorted(registry.plugins) == ["badimport", "echo", "openai"]  # openai: shipped with SimLab
    echo = registry.plugins["echo"]
    assert echo.description == "Repeats the last message it saw"
    assert dict(echo.agents) == {"echo": "echo_agent:make_agent"}
    assert echo.path == str(plugins_dir / "echo")
    assert registry.agent_names() == {"echo": "echo", "bad": "badimport", "openai": "openai"}
    assert "echo_agent" not in sys.modules
    assert "bad_agent" not in sys.modules


def test_load_agent_factory_imports_the_plugin_exactly_once(plugins_dir):
    registry = discover(plugins_dir, entry_points=False)
    factory = registry.load_agent_factory("echo")
    assert factory("D1", "x") == ("echo", "D1", "x")
    assert registry.load_agent_factory("echo") is factory
    tracker = importlib.import_module("echo_tracker")
    assert tracker.IMPORTS == ["simlab_plugins.echo.echo_agent"]  # the plugin's own module, imported once


def test_two_plugins_with_modules_of_the_same_name_each_run_their_own(tmp_path):
    """Both manifests naming agent:make_agent shared one module: an agent recorded under one plugin ran the
    other's code."""
    for name in ("alpha", "beta"):
        _write(tmp_path / name / "plugin.toml", f'name = "{name}"\n[agents]\n{name} = "agent:make_agent"\n')
        _write(tmp_path / name / "agent.py", f"def make_agent(role, arg=None, settings=None):\n    return '{name}'\n")
    registry = discover(tmp_path, entry_points=False)
    assert registry.load_agent_factory("alpha")("builder") == "alpha"
    assert registry.load_agent_factory("beta")("builder") == "beta"
    assert "agent" not in sys.modules


def test_broken_manifest_is_reported_and_does_not_stop_discovery(plugins_dir):
    registry = discover(plugins_dir, entry_points=False)
    where = str(plugins_dir / "broken" / "plugin.toml")
    assert list(registry.problems) == [where]
    assert "TOML" in registry.problems[where]
    assert "echo" in registry.plugins


def test_plugin_whose_module_fails_to_import_is_a_config_error_and_a_problem(plugins_dir):
    registry = discover(plugins_dir, entry_points=False)
    with pytest.raises(ConfigError, match=r"badimport.*frobnicate"):
        registry.load_agent_factory("bad")
    assert "ImportError" in registry.problems["badimport"]
    assert "frobnicate" in registry.problems["badimport"]
    assert registry.load_agent_factory("echo")("builder") == ("echo", "builder", None)


def test_unknown_plugin_agent_lists_the_plugin_agents(plugins_dir):
    registry = discover(plugins_dir, entry_points=False)
    with pytest.raises(ConfigError, match=r"'ghost' \(plugin agents: bad, echo, openai\)"):
        registry.load_agent_factory("ghost")


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        ('description = "no name"\n', "field 'name'"),
        ('name = ""\n', "field 'name'"),
        ('name = "n"\n[agents]\nx = 3\n', "table 'agents'"),
        ('name = "n"\nagents = "x:y"\n', "table 'agents'"),
    ],
)
def test_invalid_manifest_fields_are_reported(tmp_path, manifest, expected):
    _write(tmp_path / "p" / "plugin.toml", manifest)
    registry = discover(tmp_path, entry_points=False)
    assert list(registry.plugins) == ["openai"]
    assert expected in registry.problems[str(tmp_path / "p" / "plugin.toml")]


def test_duplicate_plugin_name_keeps_the_first_and_reports_the_second(tmp_path):
    _write(tmp_path / "a" / "plugin.toml", 'name = "same"\n[agents]\none = "m:f"\n')
    _write(tmp_path / "b" / "plugin.toml", 'name = "same"\n[agents]\ntwo = "m:f"\n')
    registry = discover(tmp_path, entry_points=False)
    assert dict(registry.plugins["same"].agents) == {"one": "m:f"}
    assert "already taken" in registry.problems[str(tmp_path / "b" / "plugin.toml")]


def test_discover_of_a_missing_folder_is_empty(tmp_path):
    registry = discover(tmp_path / "nothing", entry_points=False)
    assert list(registry.plugins) == ["openai"]  # only what ships with SimLab
    assert registry.problems == {}


def test_bad_plugin_target_is_a_config_error(tmp_path):
    _write(tmp_path / "p" / "plugin.toml", 'name = "p"\n[agents]\nnocolon = "just_a_module"\n')
    registry = discover(tmp_path, entry_points=False)
    with pytest.raises(ConfigError, match="module:attribute"):
        registry.load_agent_factory("nocolon")


# ---- entry point plugins ---------------------------------------------------------------------------------
@pytest.fixture
def fake_distribution(tmp_path, monkeypatch):
    dist = tmp_path / "fake_pkg-0.1.dist-info"
    _write(dist / "METADATA", "Metadata-Version: 2.1\nName: fake-pkg\nVersion: 0.1\n")
    _write(dist / "entry_points.txt", "[simlab.plugins]\nfake = fake_manifest:PLUGIN\n")
    _write(
        tmp_path / "fake_manifest.py",
        """
        from simlab.core.plugins import Plugin

        PLUGIN = Plugin(name="fake", description="a test plugin", agents={"fakeagent": "fake_agent_impl:make"})
        """,
    )
    _write(
        tmp_path / "fake_agent_impl.py",
        """
        from simlab.core.world import Reply

        QUESTION = "What should I do?"


        class AlwaysClarify:
            def reset(self, seed, role, task):
                self.role = role

            def act(self, observation):
                return Reply(message=QUESTION, action={"action": "clarify", "text": QUESTION})


        def make(role, arg, settings):
            if role != "builder":
                raise ValueError("fakeagent plays the builder only")
            return AlwaysClarify()
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_entry_point_plugin_is_discovered(fake_distribution):
    registry = discover(plugins_dir=None)
    plugin = registry.plugins["fake"]
    assert plugin.source == "entry point fake"
    assert dict(plugin.agents) == {"fakeagent": "fake_agent_impl:make"}
    assert registry.agent_names()["fakeagent"] == "fake"
    assert "fake_agent_impl" not in sys.modules


def test_entry_point_plugin_agent_plays_a_blocks_episode(fake_distribution):
    family = get_family("blocks")
    registry = discover(plugins_dir=None)
    specs = role_specs(family, [AgentSpec.parse("builder=fakeagent")])
    assert specs["builder"].name == "fakeagent"
    assert specs["D1"].name == "oracle"
    settings = {**family.default_settings, "turns": 3}
    agents = make_agents(family, specs, settings, registry)
    assert type(agents["builder"]).__name__ == "AlwaysClarify"
    world = family.world(family.tasks.generate(1, 0)[0], settings)
    recorded = {role: spec.spec() for role, spec in specs.items()}
    episode = run_episode(world, agents, "fake-ep", 0, recorded)
    assert episode.agents["builder"] == "fakeagent"
    assert episode.summary["outcome"] == "failure"
    assert episode.summary["turns"] == 3
    builder_actions = [e.data["action"]["action"] for e in episode.events if e.kind == "action"]
    assert builder_actions == ["clarify"] * 3
    assert episode.summary["metrics"]["tax_clarify"] == 1.0


def test_entry_point_plugin_agent_in_the_wrong_role_is_a_config_error(fake_distribution):
    family = get_family("blocks")
    specs = role_specs(family, [AgentSpec.parse("D1=fakeagent")])
    with pytest.raises(ConfigError, match="agent D1=fakeagent: fakeagent plays the builder only"):
        make_agents(family, specs, family.default_settings, discover(plugins_dir=None))


def test_entry_point_that_is_not_a_plugin_is_reported(tmp_path, monkeypatch):
    dist = tmp_path / "bad_pkg-0.1.dist-info"
    _write(dist / "METADATA", "Metadata-Version: 2.1\nName: bad-pkg\nVersion: 0.1\n")
    _write(dist / "entry_points.txt", "[simlab.plugins]\nnotplugin = fake_manifest:PLUGIN\n")
    _write(tmp_path / "fake_manifest.py", "PLUGIN = {'name': 'x'}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = discover(plugins_dir=None)
    assert "notplugin" not in registry.plugins
    (problem,) = [p for w, p in registry.problems.items() if "notplugin" in w]
    assert "expected a simlab.core.plugins.Plugin" in problem


def test_threads_loading_a_plugin_at_once_all_get_the_whole_module(tmp_path):
    """Batch workers load agents on their own threads: one was handed a module another was still importing
    ("has no attribute 'make'")."""
    import threading

    _write(tmp_path / "slow" / "plugin.toml", 'name = "slowimport"\n[agents]\nslowimport = "slow_mod:make"\n')
    _write(
        tmp_path / "slow" / "slow_mod.py",
        "import time\ntime.sleep(0.3)\ndef make(role, arg=None, settings=None):\n    return role\n",
    )
    got: list[object] = []

    def load() -> None:
        registry = discover(tmp_path, entry_points=False)  # its own registry: no cache shared between threads
        try:
            got.append(registry.load_agent_factory("slowimport")("builder"))
        except Exception as exc:
            got.append(exc)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == ["builder"] * 4


JUDGE_MODULE = """
from simlab.core.judging import Judge, JudgeItem, Question


def items(episode):
    return [JudgeItem(e.turn, e.role or "", e.data.get("text", "")) for e in episode.events if e.kind == "message"]


POLITENESS = Judge("politeness", "blocks", "Politeness", "is each message polite?", "You rate politeness.",
                   (Question("P1", "polite", "Is the message polite?"),), items)
NOT_A_JUDGE = 42
"""


def test_a_plugin_judge_is_found_by_name_for_its_world_and_a_bad_one_is_reported(tmp_path):
    from simlab.runner.judging import find_judges

    _write(tmp_path / "polite" / "plugin.toml", 'name = "polite"\n[judges]\npoliteness = "judges:POLITENESS"\n'
           'broken = "judges:NOT_A_JUDGE"\n')  # fmt: skip
    _write(tmp_path / "polite" / "judges.py", JUDGE_MODULE)
    registry = discover(tmp_path, entry_points=False)
    assert registry.judge_names() == {"politeness": "polite", "broken": "polite"}
    (judge,) = find_judges("blocks", ["politeness"], registry)
    assert judge.name == "politeness" and judge.questions[0].code == "P1"
    with pytest.raises(ConfigError, match="judges 'blocks' episodes, but this run is a 'rooms' run"):
        find_judges("rooms", ["politeness"], registry)
    with pytest.raises(ConfigError, match=r"failed to load judge 'broken'.*expected a Judge"):
        registry.load_judge("broken")
    assert "polite" in registry.problems
    with pytest.raises(ConfigError, match=r"no judge called 'nobody' for world 'blocks'; known: .*politeness"):
        find_judges("blocks", ["nobody"], registry)


def test_a_manifest_whose_judges_table_is_not_names_to_targets_is_reported(tmp_path):
    _write(tmp_path / "p" / "plugin.toml", 'name = "n"\n[judges]\nx = 3\n')
    registry = discover(tmp_path, entry_points=False)
    assert "table 'judges'" in registry.problems[str(tmp_path / "p" / "plugin.toml")]


def test_load_all_imports_every_agent_and_judge_and_reports_the_broken_ones(tmp_path, plugins_dir):
    """What ``plugins`` checks: a judge that is not a Judge marks its plugin broken, as an agent that fails to
    import does, and the healthy ones load."""
    _write(plugins_dir / "polite" / "plugin.toml", 'name = "polite"\n[judges]\nbroken = "judges:NOT_A_JUDGE"\n')
    _write(plugins_dir / "polite" / "judges.py", JUDGE_MODULE)
    registry = discover(plugins_dir, entry_points=False)
    assert not registry.problems.keys() & {"polite", "badimport"}  # discovery imports nothing
    registry.load_all()
    assert "expected a Judge" in registry.problems["polite"]
    assert "frobnicate" in registry.problems["badimport"]
    assert "echo" not in registry.problems and registry.load_agent_factory("echo")("D1", None) == ("echo", "D1", None)
