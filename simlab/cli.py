"""The command line: ``python main.py COMMAND ...`` (also installed as ``simlab``).

Every command works without a display. Errors in what the user gave (files, options, specs) are printed as
one clear line and exit with status 2; nothing is lost.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from simlab.core.errors import SimlabError

if TYPE_CHECKING:
    from types import FrameType

    from simlab.core.episode import Episode
    from simlab.runner.batch import RunConfig
    from simlab.worlds.blocks.generator import Structure

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_STRUCTURES = REPO_ROOT / "scenes" / "blocks" / "demo_structures"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SimlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the user gave that cannot be read or written
        print(f"error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished episodes are saved (resume with --resume)", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="simlab", description="SimLab: generate worlds, run and record multi-agent episodes, report metrics."
    )
    sub = parser.add_subparsers(dest="command")
    parser.set_defaults(func=_cmd_default)

    gui = sub.add_parser("gui", help="open the desktop app (default: on the bundled demo run)")
    gui.add_argument("path", nargs="?", type=Path, help="a run folder or an episode file")
    gui.set_defaults(func=_cmd_gui)

    demo = sub.add_parser("demo", help="run the bundled scripted blocks episode headless and print a summary")
    demo.add_argument("--out", type=Path, help="keep the demo run in this folder (default: a temporary folder)")
    demo.set_defaults(func=_cmd_demo)

    gen = sub.add_parser("generate", help="generate tasks (blocks: target structures)")
    gen.add_argument("family", help="world family, e.g. blocks")
    gen.add_argument("--n", type=int, default=20, help="how many (blocks: structures; rooms: rooms to try)")
    gen.add_argument("--questions-per-task", type=int, default=50, help="rooms: questions per task (default 50)")
    gen.add_argument("--no-images", action="store_true", help="rooms: skip rendering the views and maps")
    gen.add_argument("--paraphrase-model", help="rooms: reword the questions with this model (Cosmic 7.2)")
    gen.add_argument("--paraphrase-base-url", default="https://api.openai.com/v1", help="its OpenAI-compatible URL")
    gen.add_argument("--paraphrase-key-env", default="OPENAI_API_KEY", help="the variable holding its API key")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--out", type=Path, required=True, help="output folder")
    gen.set_defaults(func=_cmd_generate)

    run = sub.add_parser("run", help="run episodes and record them into a run folder")
    run.add_argument("--config", type=Path, help="a TOML run config (world, agents and their settings...)")
    run.add_argument("--world", help="world family (default blocks)")
    run.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help="agent for a role or role group, e.g. director=oracle builder=scripted (repeatable)",
    )
    run.add_argument("--episodes", type=int, help="number of tasks (generated from the seed, or the first N given)")
    run.add_argument("--turns", type=int, help="turn budget per episode (blocks default 20)")
    run.add_argument("--repeats", type=int, help="play every task this many times (the paper's runs; default 1)")
    run.add_argument("--seed", type=int, help="run seed (default 0)")
    run.add_argument("--structures", type=Path, help="folder or file of generated tasks to play")
    run.add_argument("--task", action="append", help="rooms: only these tasks (anchor, counting, distance, ...)")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a world setting, JSON value, e.g. --set interior='\"reference\"' --set oracle_n=3",
    )
    run.add_argument("--out", type=Path, required=True, help="run folder to create (or resume)")
    run.add_argument("--resume", action="store_true", help="finish an interrupted run in --out")
    run.add_argument(
        "--concurrency",
        type=int,
        metavar="K",
        help="episodes in flight at once (default 1; on --resume: as the run was last played)",
    )
    run.add_argument(
        "--episode-timeout",
        type=float,
        metavar="SECONDS",
        help="record an episode still running after this long as an abort (checked between steps; 0: none)",
    )
    run.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where episodes are played: local threads, or Ray tasks (a local Ray instance, or the cluster at "
        "$RAY_ADDRESS; --concurrency tasks in flight; needs pip install 'simlab[cluster]')",
    )
    run.set_defaults(func=_cmd_run)

    rep = sub.add_parser("report", help="per-episode and aggregate metrics of a run")
    rep.add_argument("run_dir", type=Path)
    rep.add_argument("--format", choices=("table", "csv", "json"), default="table")
    rep.add_argument("--group-by", help="aggregate per value of a summary field too, e.g. group (the tier)")
    rep.set_defaults(func=_cmd_report)

    imp = sub.add_parser("import", help="import recordings made by other tools into a run folder")
    imp.add_argument("source", choices=("craft",), help="craft: logs of the CRAFT reference code")
    imp.add_argument("file", type=Path)
    imp.add_argument("--out", type=Path, required=True)
    imp.set_defaults(func=_cmd_import)

    rep_ = sub.add_parser("replay", help="export an episode headless: a turn sheet, an HTML transcript or an animation")
    rep_.add_argument("source", type=Path, metavar="EPISODE_OR_RUN", help="an episode .json or a run folder")
    rep_.add_argument("--episode", help="episode id inside a run folder (default: the first in its index)")
    rep_.add_argument("--turn", type=int, help="turn for --export png (default: the last turn)")
    rep_.add_argument("--export", choices=("png", "html", "gif", "mp4"), required=True)
    rep_.add_argument("--out", type=Path, required=True, help="file to write")
    rep_.add_argument("--first", type=int, help="first turn of an animation (default 0)")
    rep_.add_argument("--last", type=int, help="last turn of an animation (default: the last turn)")
    rep_.set_defaults(func=_cmd_replay)

    plug = sub.add_parser("plugins", help="list installed plugins and any that failed to load")
    plug.set_defaults(func=_cmd_plugins)
    return parser


def _cmd_default(args: argparse.Namespace) -> int:
    """With a display: the app on the bundled demo run. Without one: the headless demo and how to get the app."""
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return _cmd_gui(argparse.Namespace(path=None))
    status = _cmd_demo(argparse.Namespace(out=None))
    print(
        "\nNo display here, so this was the headless demo. The desktop app opens with `make run` (or\n"
        "`python main.py gui RUN_DIR`) on a machine with a display, or under Xvfb: `xvfb-run -a make run`."
    )
    return status


def _cmd_gui(args: argparse.Namespace) -> int:
    try:
        from simlab.gui.app import run_app
    except ImportError as exc:
        raise SimlabError(f"the desktop app needs the GUI packages ({exc.name}): pip install -e '.[gui]'") from None
    from simlab.runner.demo import DEMO_RUN

    return run_app([args.path or DEMO_RUN])


def _cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from simlab.runner.demo import run_demo

    if args.out is not None:
        print(run_demo(args.out))
        return 0
    with tempfile.TemporaryDirectory(prefix="simlab-demo-") as tmp:
        print(run_demo(Path(tmp) / "demo_run"))
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from simlab.worlds import get_family

    family = get_family(args.family)
    if args.family == "rooms":
        return _generate_rooms(args)
    from simlab.worlds.blocks.generator import Structure, save_structures

    structures = [Structure.from_json(t) for t in family.generate(args.n, args.seed)]
    save_structures(structures, args.out, seed=args.seed)
    tiers = {t: sum(s.tier == t for s in structures) for t in ("simple", "medium", "complex")}
    print(f"wrote {len(structures)} structures to {args.out} ({', '.join(f'{v} {k}' for k, v in tiers.items())})")
    print(_hidden_report(structures))
    return 0


def _generate_rooms(args: argparse.Namespace) -> int:
    import time

    from simlab.worlds.rooms.benchmark import build_benchmark

    started = time.perf_counter()

    def progress(line: str) -> None:
        print(f"\r[{time.perf_counter() - started:7.1f} s] {line}", end="", file=sys.stderr, flush=True)

    paraphrase = None
    if args.paraphrase_model:
        paraphrase = {
            "model": args.paraphrase_model,
            "base_url": args.paraphrase_base_url,
            "api_key_env": args.paraphrase_key_env,
        }
    images = not args.no_images
    index = build_benchmark(args.out, args.n, args.questions_per_task, args.seed, images, progress, paraphrase)
    counts = ", ".join(f"{k} {v}" for k, v in index["counts"].items())
    print(f"\nwrote {len(index['questions'])} questions ({counts}) to {args.out}")
    return 0


def _hidden_report(structures: Sequence[Structure]) -> str:
    """Which target blocks no director can see, under both interior settings (docs/BLOCKS.md)."""
    from simlab.worlds.blocks.views import hidden_cells

    lines = ["blocks no director can see (cell@layer):"]
    for interior in ("paper", "reference"):
        hidden = {s.id: hidden_cells(s.board, interior) for s in structures}
        total = sum(len(h) for h in hidden.values())
        affected = sum(bool(h) for h in hidden.values())
        lines.append(f"  interior={interior}: {total} blocks in {affected} of {len(structures)} structures")
        listed = [(sid, cells) for sid, cells in hidden.items() if cells] if interior == "paper" else []
        lines.extend(f"    {sid}: " + ", ".join(f"({c[0]},{c[1]})@{k}" for c, k in cells) for sid, cells in listed[:10])
        if len(listed) > 10:
            lines.append(f"    ... and {len(listed) - 10} more structures")
    return "\n".join(lines)


def _cmd_run(args: argparse.Namespace) -> int:
    """Play a run (or resume one). The first Ctrl-C lets the episodes in flight finish; the second drops them."""
    from simlab.runner.batch import episode_ids, run
    from simlab.runner.progress import ProgressBar

    config = None if args.resume else _run_config(args)
    concurrency, timeout = _runtime_options(args)
    stop, bar = threading.Event(), ProgressBar(0)
    try:
        with _stop_on_first_sigint(stop):
            writer = run(
                config,
                args.out,
                args.resume,
                bar,
                concurrency=concurrency,
                episode_timeout=timeout,
                stop=stop,
                executor=args.executor,
            )
    finally:
        bar.close()
    done, total = len(writer.done), len(episode_ids(writer.config))
    if done < total:
        print(f"stopped: {done} of {total} episodes done; resume with --resume")
        return 130
    print(f"run complete: {done} episodes in {args.out}\nreport: python main.py report {args.out}")
    return 0


def _run_config(args: argparse.Namespace) -> RunConfig:
    """The reproducible part of ``run``'s options: a ``--config`` file, with any option given overriding it."""
    from dataclasses import replace

    from simlab.runner.batch import RunConfig
    from simlab.runner.config_file import load_run_config
    from simlab.worlds import get_family

    base = load_run_config(args.config) if args.config else RunConfig(args.world or "blocks")
    family = get_family(args.world or base.world)
    settings = {**base.settings, **_parse_settings(args.set)}
    if args.turns is not None:
        settings["turns"] = args.turns
    tasks = family.load_tasks(args.structures) if args.structures else base.tasks
    if args.task and tasks is not None:
        tasks = [t for t in tasks if t.get("task") in args.task]
    return replace(
        base,
        world=family.name,
        seed=base.seed if args.seed is None else args.seed,
        episodes=base.episodes if args.episodes is None else args.episodes,
        repeats=base.repeats if args.repeats is None else args.repeats,
        agents=[*base.agents, *args.agent],  # later specs win, so the command line overrides the file
        settings=settings,
        tasks=tasks,
        generate_options={"task": args.task} if args.task else base.generate_options,
    )


def _runtime_options(args: argparse.Namespace) -> tuple[int, float | None]:
    """(concurrency, episode timeout): as given, else on --resume as recorded in run.json, else 1 and none."""
    from simlab.runner.batch import stored_runtime

    stored = stored_runtime(args.out) if args.resume else {}
    concurrency = args.concurrency if args.concurrency is not None else stored.get("concurrency", 1)
    timeout = args.episode_timeout if args.episode_timeout is not None else stored.get("episode_timeout")
    return concurrency, (timeout or None)


@contextmanager
def _stop_on_first_sigint(stop: threading.Event) -> Iterator[None]:
    """While inside: the first Ctrl-C sets ``stop``, the second raises KeyboardInterrupt as usual."""
    import signal

    def first(signum: int, frame: FrameType | None) -> None:
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        print("\nstopping: finishing the episodes in flight (Ctrl-C again to drop them)", file=sys.stderr)

    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    previous = signal.signal(signal.SIGINT, first)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _parse_settings(items: Sequence[str]) -> dict[str, object]:
    from simlab.core.errors import ConfigError

    out: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value  # a bare word such as reference is taken as a string
    return out


def _cmd_report(args: argparse.Namespace) -> int:
    from simlab.analysis.report import build_report
    from simlab.core.recording import load_run
    from simlab.worlds import get_family

    run = load_run(args.run_dir)
    for problem in run.problems:
        print(f"warning: {problem}", file=sys.stderr)
    report = build_report(run.summaries, group_by=args.group_by, seed=int(run.config.get("seed", 0)))
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2, allow_nan=False))
    elif args.format == "csv":
        print(report.to_csv(), end="")
    else:
        world = run.config.get("world")
        headline = list(get_family(world).headline_metrics) if world else None
        print(report.to_table(headline=headline))
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from simlab.worlds.blocks.craft_run import import_craft_run

    result = import_craft_run(args.file, args.out)
    print(result)
    return 0


def _load_replay_episode(source: Path, episode_id: str | None) -> Episode:
    """The episode a ``replay`` names: an episode file, or one episode of a run folder."""
    from simlab.core.errors import ConfigError
    from simlab.core.recording import load_episode, load_run

    if not source.exists():
        raise ConfigError(f"{source}: no such episode file or run folder")
    if source.is_file():
        return load_episode(source)
    run = load_run(source)
    if not run.summaries:
        raise ConfigError(f"{source}: the run holds no finished episode")
    wanted = episode_id or str(run.summaries[0]["episode_id"])
    try:
        return run.load_episode(wanted)
    except KeyError:
        known = ", ".join(str(s["episode_id"]) for s in run.summaries[:10])
        raise ConfigError(f"{source}: no episode {wanted!r} (episodes: {known})") from None


def _cmd_replay(args: argparse.Namespace) -> int:
    from simlab.core.errors import ConfigError

    episode = _load_replay_episode(args.source, args.episode)
    last_turn = episode.last_turn
    if args.export == "png":
        from simlab.render.turn_sheet import turn_sheet

        turn = last_turn if args.turn is None else args.turn
        if not 0 <= turn <= last_turn:
            raise ConfigError(f"--turn {turn}: episode {episode.episode_id} has turns 0..{last_turn}")
        turn_sheet(episode, turn).save(args.out, format="PNG")
    elif args.export == "html":
        from simlab.render.transcript import episode_html

        args.out.write_text(episode_html(episode), encoding="utf-8")
    else:
        from simlab.render.animation import write_animation

        first, last = (0 if args.first is None else args.first), (last_turn if args.last is None else args.last)
        if args.out.suffix.lower() != f".{args.export}":
            raise ConfigError(f"--out {args.out}: expected a .{args.export} file for --export {args.export}")
        write_animation(episode, first, last, args.out)
    print(f"wrote {args.out} ({episode.episode_id})")
    return 0


def _cmd_plugins(args: argparse.Namespace) -> int:
    from simlab.core.plugins import discover

    registry = discover()
    if not registry.plugins:
        print("no plugins installed")
    for plugin in registry.plugins.values():
        agents = ", ".join(sorted(plugin.agents)) or "-"
        print(f"{plugin.name}: agents {agents}  ({plugin.source}) {plugin.description}")
    for where, problem in registry.problems.items():
        print(f"broken: {where}: {problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
