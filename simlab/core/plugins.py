"""The plugin registry: what can be plugged in, found without importing any plugin code.

Plugins come from three places:

* the plugins shipped inside SimLab (:data:`BUILTIN`: the OpenAI-compatible model agent);
* installed packages exposing an entry point in the group ``simlab.plugins`` whose value names a
  module-level :class:`Plugin` manifest (``myplugin = "my_pkg.simlab_plugin:PLUGIN"``);
* folders under the repository's ``plugins/`` directory holding a ``plugin.toml`` manifest::

      name = "echo"
      description = "Repeats the last message it saw"
      [agents]
      echo = "echo_agent:make_agent"     # module inside the plugin folder : factory
      [judges]
      politeness = "judges:POLITENESS"  # module : a simlab.core.judging.Judge

Discovery reads only names and manifests. A contribution's code is imported the first time it is used,
and a plugin that fails to load is reported with its reason instead of stopping the program.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from simlab.core.errors import ConfigError
from simlab.core.judging import Judge
from simlab.core.reading import read_toml

ENTRY_POINT_GROUP = "simlab.plugins"
REPO_PLUGINS_DIR = Path(__file__).resolve().parents[2] / "plugins"


@dataclass(frozen=True)
class Plugin:
    """A plugin's manifest: its name and, per kind of contribution, contribution name -> "module:attr"."""

    name: str
    description: str = ""
    agents: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    judges: Mapping[str, str] = field(default_factory=dict)
    path: str | None = None  # folder added to sys.path when a repo plugin is loaded


@dataclass
class Registry:
    """Every discovered plugin, plus the problems met while discovering or loading them."""

    plugins: dict[str, Plugin] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    _loaded: dict[tuple[str, str], Any] = field(default_factory=dict)

    def agent_names(self) -> dict[str, str]:
        """Agent type name -> plugin name."""
        return {agent: p.name for p in self.plugins.values() for agent in p.agents}

    def load_agent_factory(self, name: str) -> Callable[..., Any]:
        """Import the factory of agent type ``name`` (once). Raises ConfigError with the reason."""
        owner = self.agent_names().get(name)
        if owner is None:
            known = ", ".join(sorted(self.agent_names())) or "none"
            raise ConfigError(f"no plugin provides an agent called {name!r} (plugin agents: {known})")
        key = ("agent", name)
        if key not in self._loaded:
            plugin = self.plugins[owner]
            try:
                self._loaded[key] = load_target(plugin.agents[name], plugin.path, plugin.name)
            except Exception as exc:  # a broken plugin must not take the program down
                self.problems[owner] = f"{type(exc).__name__}: {exc}"
                raise ConfigError(f"plugin {owner!r} failed to load agent {name!r}: {exc}") from exc
        factory: Callable[..., Any] = self._loaded[key]
        return factory

    def judge_names(self) -> dict[str, str]:
        """Judge name -> plugin name."""
        return {judge: p.name for p in self.plugins.values() for judge in p.judges}

    def load_judge(self, name: str) -> Judge:
        """Import plugin judge ``name`` (once). Raises ConfigError with the reason."""
        owner = self.judge_names().get(name)
        if owner is None:
            raise ConfigError(f"no plugin provides a judge called {name!r}")
        key = ("judge", name)
        if key not in self._loaded:
            plugin = self.plugins[owner]
            try:
                judge = load_target(plugin.judges[name], plugin.path, plugin.name)
                if not isinstance(judge, Judge):
                    raise TypeError(f"{plugin.judges[name]} is a {type(judge).__name__}, expected a Judge")
            except Exception as exc:  # a broken plugin must not take the program down
                self.problems[owner] = f"{type(exc).__name__}: {exc}"
                raise ConfigError(f"plugin {owner!r} failed to load judge {name!r}: {exc}") from exc
            self._loaded[key] = judge
        loaded: Judge = self._loaded[key]
        return loaded

    def load_all(self) -> None:
        """Import every plugin's every contribution now (a plugin is healthy only if its code loads); those that
        fail are recorded in ``problems``, as at first use."""
        for name in sorted(self.agent_names()):
            with contextlib.suppress(ConfigError):
                self.load_agent_factory(name)
        for name in sorted(self.judge_names()):
            with contextlib.suppress(ConfigError):
                self.load_judge(name)


def load_target(target: str, path: str | None = None, owner: str = "") -> Any:
    """Import ``"package.module:attribute"``. With ``path`` (a plugin folder) the module is that folder's own
    file, imported under a name of the plugin ``owner``'s (``simlab_plugins.OWNER.module``), so two plugins
    that both call their module ``agent`` each run their own; the folder also goes on sys.path, for plugins
    that import their other modules by plain name."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"expected 'module:attribute', got {target!r}")
    if path:
        if path not in sys.path:
            sys.path.insert(0, path)
        obj: Any = _plugin_module(Path(path), module_name, owner or Path(path).name)
    else:
        obj = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


_IMPORT_LOCK = threading.RLock()
"""Episodes run on threads: a plugin module half-imported by one must not be handed to another."""


def _plugin_module(folder: Path, module_name: str, owner: str) -> ModuleType:
    """``folder``'s module ``module_name`` (a file or a package), imported once under the plugin's name."""
    with _IMPORT_LOCK:
        return _import_plugin_module(folder, module_name, owner)


def _import_plugin_module(folder: Path, module_name: str, owner: str) -> ModuleType:
    package = f"simlab_plugins.{re.sub(r'[^A-Za-z0-9_]', '_', owner)}"
    unique = f"{package}.{module_name}"
    if unique in sys.modules:
        return sys.modules[unique]
    for name, search in (("simlab_plugins", []), (package, [str(folder)])):
        if name not in sys.modules:  # namespace parents, so the plugin's relative imports work
            parent = ModuleType(name)
            parent.__path__ = search
            sys.modules[name] = parent
    relative = Path(*module_name.split("."))
    file, inner = folder / relative.with_suffix(".py"), folder / relative / "__init__.py"
    where = inner if inner.is_file() else file
    if not where.is_file():
        raise ModuleNotFoundError(f"no module {module_name!r} in {folder}", name=module_name)
    places = [str(where.parent)] if where is inner else None
    spec = importlib.util.spec_from_file_location(unique, where, submodule_search_locations=places)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[unique] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[unique]
        raise
    return module


BUILTIN: tuple[Plugin, ...] = (
    Plugin(
        "openai",
        "Live models through an OpenAI-compatible chat API (OpenAI, vLLM, Ollama, llama.cpp...), for every world",
        {"openai": "simlab.agents.openai_agent:make_agent"},
        source="built in",
    ),
)
"""Plugins installed with SimLab itself; their manifests are written here so discovery imports nothing."""


def discover(plugins_dir: Path | None = REPO_PLUGINS_DIR, entry_points: bool = True) -> Registry:
    """Find plugins without importing their code (entry points load only their small manifest object)."""
    registry = Registry()
    for plugin in BUILTIN:
        registry.plugins[plugin.name] = plugin
    if plugins_dir is not None and plugins_dir.is_dir():
        for folder in sorted(plugins_dir.iterdir()):
            manifest = folder / "plugin.toml"
            if os.path.lexists(manifest):  # a FIFO or a device is reported by the reader, never opened
                _add(registry, functools.partial(_read_manifest, manifest), str(manifest))
    if entry_points:
        for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            _add(registry, functools.partial(_from_entry_point, ep), f"entry point {ep.name} ({ep.value})")
    return registry


def _add(registry: Registry, read: Callable[[], Plugin], where: str) -> None:
    try:
        plugin = read()
    except Exception as exc:  # report and go on: one broken plugin must not hide the others
        registry.problems[where] = f"{type(exc).__name__}: {exc}"
        return
    if plugin.name in registry.plugins:
        registry.problems[where] = (
            f"plugin name {plugin.name!r} already taken by {registry.plugins[plugin.name].source}"
        )
        return
    registry.plugins[plugin.name] = plugin


def _read_manifest(manifest: Path) -> Plugin:
    data = read_toml(manifest)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{manifest}: field 'name': expected a non-empty string")
    agents = data.get("agents", {})
    if not isinstance(agents, dict) or not all(isinstance(v, str) for v in agents.values()):
        raise ValueError(f"{manifest}: table 'agents': expected name = \"module:factory\" entries")
    judges = data.get("judges", {})
    if not isinstance(judges, dict) or not all(isinstance(v, str) for v in judges.values()):
        raise ValueError(f"{manifest}: table 'judges': expected name = \"module:JUDGE\" entries")
    description = str(data.get("description", ""))
    return Plugin(name, description, agents, str(manifest), path=str(manifest.parent), judges=judges)


def _from_entry_point(ep: importlib.metadata.EntryPoint) -> Plugin:
    plugin = ep.load()
    if not isinstance(plugin, Plugin):
        raise TypeError(f"{ep.value} is a {type(plugin).__name__}, expected a simlab.core.plugins.Plugin")
    source = f"entry point {ep.name}"
    return Plugin(
        plugin.name, plugin.description, dict(plugin.agents), source, path=plugin.path, judges=dict(plugin.judges)
    )


@dataclass(frozen=True)
class AgentSpec:
    """``ROLE=NAME[:ARG]`` from the command line, e.g. ``builder=scripted`` or ``D1=openai:gpt-4o-mini``."""

    role: str
    name: str
    arg: str | None = None

    @classmethod
    def parse(cls, text: str) -> AgentSpec:
        role, sep, rest = text.partition("=")
        name, _, arg = rest.partition(":")
        if not sep or not role.strip() or not name.strip():
            raise ConfigError(f"agent spec {text!r}: expected ROLE=NAME[:ARG], e.g. builder=scripted")
        return cls(role.strip(), name.strip(), arg.strip() or None)

    def spec(self) -> str:
        """The NAME[:ARG] part, as recorded in episodes."""
        return self.name + (f":{self.arg}" if self.arg else "")
