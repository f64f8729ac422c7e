"""The command line: ``python main.py COMMAND ...`` (also installed as ``simlab``).

Every command works without a display. Errors in what the user gave (files, options, specs) are printed as
one clear line and exit with status 2; nothing is lost.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simlab.core import limits
from simlab.core.errors import SimlabError
from simlab.core.events import MAX_TURN
from simlab.options import Bound, field_bound, path_arg

if TYPE_CHECKING:
    from types import FrameType

    from simlab.analysis.judgments import RunJudgments
    from simlab.core.episode import Episode
    from simlab.core.family import Importer, WorldFamily
    from simlab.core.notes import Mark, RunNotes
    from simlab.core.recording import Run
    from simlab.runner.run_config import RunOptions


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args, "func", None) is not _cmd_import:  # only importers take options of their own
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.importer_options = extra
    try:
        return int(args.func(args) or 0)
    except SimlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the user gave that cannot be read or written
        print(f"error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted; {INTERRUPTED_KEPT.get(args.command, INTERRUPTED_KEPT[''])}", file=sys.stderr)
        return INTERRUPTED
    except MemoryError:  # an input within the size bounds that this machine (or its limit) cannot hold
        print(
            f"error: {args.command}: out of memory: an input is larger than the memory this process may use holds "
            "(files written so far are whole; see docs/FORMATS.md for the size bounds)",
            file=sys.stderr,
        )
        return 2
    except Exception as exc:  # a bug, not the user's input: one line, the trace only when asked for
        if os.environ.get("SIMLAB_DEBUG"):
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (run with SIMLAB_DEBUG=1 for the trace)", file=sys.stderr)
        return INTERNAL_ERROR


MAX_WARNINGS = 10  # a damaged index may have thousands of bad lines: name a few, count the rest
INTERNAL_ERROR = 70  # EX_SOFTWARE: SimLab itself failed (bad input exits 2)
INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C
INTERRUPTED_KEPT = {
    "run": "finished episodes are saved (resume with --resume)",
    "generate": "files are written whole; start again in a new --out (a build that resumes takes the same one)",
    "judge": "judgments written so far are kept: the same command judges the rest",
    "": "files are written whole or not at all, so nothing half-written is left",
}
"""What a Ctrl-C leaves, per command (the last: any other)."""


def entry() -> None:
    """The process's entry point (``main.py``, ``python -m simlab``): :func:`main`, then exit with its status.

    A second Ctrl-C drops the episodes in flight, but their worker threads may be waiting for a model's
    answer (minutes on a slow server), and the interpreter joins them before it exits. So an interrupted
    process with threads still at work ends at once: its output flushed, the open connections closed by the
    system (the server sees its requests cancelled). Nothing is lost: finished episodes are in the index,
    files are written whole or not at all, and ``--resume`` plays the episodes that were in flight."""
    status = main()
    working = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if status == INTERRUPTED and any(t.is_alive() for t in working):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


SEED = Bound(0, limits.MAX_SEED, "seeds are 63-bit, the range SimLab's seeding draws from")
TURN = Bound(0, MAX_TURN, "no recording holds a later turn (the episode's own last turn is checked when it is read)")
EPISODES = Bound(1, limits.MAX_TASKS, "the most tasks a run plays; a world may make fewer (`worlds` says)")
REPEATS = Bound(1, limits.MAX_REPEATS, "the papers play a task one to five times")
TURNS = Bound(1, limits.MAX_TURNS, "the largest turn budget a world takes; the world's own bound applies")
CONCURRENCY = Bound(1, limits.MAX_CONCURRENCY, "each one in flight is a thread with its own world, agents or request")
PROCESSES = Bound(1, limits.MAX_PROCESSES, "each imports SimLab and holds its own model clients")
EPISODE_TIMEOUT = Bound(0, limits.MAX_EPISODE_TIMEOUT_S, "a week; 0 for none", kind=float)
JUDGE_RUNS = Bound(1, limits.MAX_JUDGE_RUNS, "each run asks about every item again (the papers average 2 or 3)")
TEMPERATURE = Bound(0, limits.MAX_TEMPERATURE, "the range OpenAI-compatible endpoints take", kind=float)
REQUEST_TIMEOUT = Bound(0.001, limits.MAX_WAIT_S, "a week; 0 would cut every attempt before it starts", kind=float)
RETRIES = Bound(0, limits.MAX_RETRIES, "each retry may wait up to max_backoff_s before it")
WAIT = Bound(0, limits.MAX_WAIT_S, "a week", kind=float)
"""The number flags' ranges (simlab.core.limits says why each stops where it does); --help shows each."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="simlab", description="SimLab: generate worlds, run and record multi-agent episodes, report metrics."
    )
    sub = parser.add_subparsers(dest="command")
    parser.set_defaults(func=_cmd_default)

    gui = sub.add_parser("gui", help="open the desktop app (default: on the bundled demo run)")
    gui.add_argument(
        "path",
        nargs="*",
        help="a run folder or an episode file; several run folders open side by side; or a link "
        "simlab://open?run=PATH&episode=ID&turn=N (what `search` and the app's 'copy link' give)",
    )
    gui.add_argument("--episode", help="open this episode of the (first) run (default: its first)")
    gui.add_argument("--turn", type=TURN, help=f"at this turn ({TURN.range()}, within the episode; default 0)")
    gui.set_defaults(func=_cmd_gui)

    edit = sub.add_parser(
        "edit", help="author a world: a room and its cameras, a target structure (opens the editor window)"
    )
    edit.add_argument(
        "target", help="a file to open (a room's scene JSON, a structure...) or a family name to start anew"
    )
    edit.set_defaults(func=_cmd_edit)

    demo = sub.add_parser("demo", help="play the bundled demo run headless and print a summary")
    demo.add_argument("--out", type=path_arg, help="keep the demo run in this folder (default: a temporary folder)")
    demo.set_defaults(func=_cmd_demo)

    _add_generate(sub)

    run = sub.add_parser(
        "run",
        help="run episodes and record them into a run folder",
        description="Run episodes and record them into a run folder.",
        epilog="exit status: 0 every episode done; 2 bad input (nothing written); 3 a model endpoint failed "
        "(fix it, then --resume); 70 internal error; 130 stopped (--resume finishes the run)",
    )
    run.add_argument("--config", type=path_arg, help="a TOML run config (world, agents and their settings...)")
    run.add_argument("--world", help="world family (see `worlds`; default blocks)")
    run.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help="agent for a role or role group, e.g. director=oracle builder=scripted (repeatable)",
    )
    run.add_argument(
        "--episodes",
        type=EPISODES,
        help=f"number of tasks (generated from the seed, or the first N given; {EPISODES.range()}, fewer where a "
        "world says so in `worlds`)",
    )
    run.add_argument(
        "--turns",
        type=TURNS,
        help=f"shorthand for --set turns=N (the turn budget, where the world has one; {TURNS.range()}, and the "
        "world's own bound: `worlds`)",
    )
    run.add_argument(
        "--repeats",
        type=REPEATS,
        help=f"play every task this many times (the paper's runs; {REPEATS.range()}, and at most "
        f"{limits.MAX_RUN_EPISODES:,} episodes in all; default 1)",
    )
    run.add_argument("--seed", type=SEED, help=f"run seed ({SEED.range()}; default 0)")
    run.add_argument(
        "--tasks",
        "--structures",
        dest="tasks_path",
        type=path_arg,
        help="a file or folder of tasks to play (from generate)",
    )
    run.add_argument(
        "--group",
        "--task",
        dest="groups",
        action="append",
        default=[],
        help="only tasks of this group (blocks: a tier; rooms: a question type...; repeatable; see `worlds`)",
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a world setting (JSON value or text), e.g. --set interior=reference --set oracle_n=3",
    )
    run.add_argument(
        "--agent-setting",
        action="append",
        default=[],
        metavar="ROLE.KEY=VALUE",
        help="a setting of a role's (or role group's) agent, e.g. --agent-setting director.base_url=http://... "
        "(one its agent takes: the built-in agents take none; unknown ones are refused)",
    )
    run.add_argument("--out", type=path_arg, required=True, help="run folder to create (or resume)")
    run.add_argument("--resume", action="store_true", help="finish an interrupted run in --out")
    run.add_argument(
        "--concurrency",
        type=CONCURRENCY,
        metavar="K",
        help=f"episodes in flight at once ({CONCURRENCY.range()}; default 1; on --resume: as the run was last played)",
    )
    run.add_argument(
        "--processes",
        type=PROCESSES,
        metavar="N",
        help="worker processes sharing the --concurrency episode threads (local executor; "
        f"{PROCESSES.range()}; default: one per core, each with at least 16 threads: 1 below concurrency 32)",
    )
    run.add_argument(
        "--episode-timeout",
        type=EPISODE_TIMEOUT,
        metavar="SECONDS",
        help="record an episode still running after this long as an abort (checked between steps, and a "
        "model call in flight is cut at it; "
        f"{EPISODE_TIMEOUT.range()}, 0: none)",
    )
    run.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where episodes are played: local threads, or Ray tasks (a local Ray instance, or the cluster at "
        "$RAY_ADDRESS; --concurrency tasks in flight; needs pip install 'simlab[cluster]')",
    )
    run.set_defaults(func=_cmd_run)

    rep = sub.add_parser("report", help="per-episode and aggregate metrics of a run, or of several side by side")
    rep.add_argument(
        "run_dir",
        type=path_arg,
        nargs="+",
        metavar="RUN",
        help="a run folder; several are compared: a column per run (per agent lineup when a run holds several) "
        "and paired tests of each against the first where they played the same tasks",
    )
    rep.add_argument(
        "--format",
        choices=("table", "csv", "json", "paper"),
        default="table",
        help="paper (one run): the papers' layout, a row per headline metric and a column per group (--group-by, "
        "default group) and overall, mean ± SE",
    )
    rep.add_argument(
        "--group-by", help="aggregate per value of a summary field too, e.g. group (the tier); one run only"
    )
    rep.add_argument(
        "--figures",
        type=path_arg,
        metavar="DIR",
        help="also write the world's analysis figures (the papers' model-free ones) to DIR: NAME.csv with the "
        "plotted numbers, NAME.png and NAME.svg",
    )
    rep.add_argument(
        "--correlate",
        metavar="METRIC",
        help="also correlate every feature (episode metrics, judge questions, words per message) with METRIC "
        "across the agent lineups, e.g. overall_progress_t20 (CRAFT table 7); with --unit turn, the world's "
        "per-turn values with the per-turn METRIC over every turn, e.g. followed_oracle (CRAFT table 8)",
    )
    rep.add_argument(
        "--unit",
        choices=("lineup", "turn"),
        default="lineup",
        help="what --correlate correlates over: agent lineups (the mean of each), or every turn of every "
        "episode (the world's per-turn values; blocks: followed_oracle, attempted_remove, remove_gap, failed...)",
    )
    rep.add_argument(
        "--where",
        metavar="EXPR",
        help="keep only the episodes EXPR keeps before anything is computed, e.g. 'score < 0.3 and errors > 2 and "
        'outcome == "failure"\' (fields, dotted paths such as agents.builder, or metric names; docs/FORMATS.md)',
    )
    rep.set_defaults(func=_cmd_report)
    _add_export(sub)

    imp = sub.add_parser("import", help="import recordings made by other tools into a run folder")
    imp.add_argument("source", help="what made them: an importer a world offers (craft: CRAFT's logs; see `worlds`)")
    imp.add_argument("file", type=path_arg)
    imp.add_argument("--out", type=path_arg, required=True)
    imp.epilog = "An importer may take options of its own (--NAME VALUE after the file); `worlds` lists them."
    imp.set_defaults(func=_cmd_import)

    rep_ = sub.add_parser("replay", help="export an episode headless: a turn sheet, an HTML transcript or an animation")
    rep_.add_argument("source", type=path_arg, metavar="EPISODE_OR_RUN", help="an episode .json or a run folder")
    rep_.add_argument("--episode", help="episode id inside a run folder (default: the first in its index)")
    rep_.add_argument(
        "--turn", type=TURN, help=f"turn for --export png ({TURN.range()}, within the episode; default: the last)"
    )
    rep_.add_argument("--export", choices=("png", "html", "gif", "mp4"), required=True)
    rep_.add_argument("--out", type=path_arg, required=True, help="file to write")
    rep_.add_argument(
        "--first",
        type=TURN,
        help=f"first turn of an animation ({TURN.range()}; default 0; at most {limits.MAX_FRAMES} frames in all)",
    )
    rep_.add_argument(
        "--last", type=TURN, help=f"last turn of an animation ({TURN.range()}; default: the episode's last turn)"
    )
    rep_.add_argument("--camera", help="camera preset of an animation's 3D frames (default: the world's)")
    rep_.add_argument(
        "--with-dialogue",
        action="store_true",
        help="an animation's frames show each turn's dialogue and outcome beside the picture",
    )
    rep_.set_defaults(func=_cmd_replay)

    schema = sub.add_parser("schema", help="the JSON Schema of SimLab's files, for other tools to read them")
    schema.add_argument("name", nargs="?", choices=("episode", "index-line", "run", "summary"), help="one format")
    schema.add_argument("--out", type=path_arg, help="write every schema into this folder as NAME.schema.json")
    schema.set_defaults(func=_cmd_schema)

    worlds = sub.add_parser("worlds", help="list the world families: roles, agents, settings, groups, importers")
    worlds.set_defaults(func=_cmd_worlds)

    plug = sub.add_parser("plugins", help="list installed plugins and any that failed to load")
    plug.set_defaults(func=_cmd_plugins)
    _add_judge(sub)
    _add_validity(sub)
    _add_search_and_notes(sub)
    return parser


def _add_judge(sub: argparse._SubParsersAction) -> None:
    judge = sub.add_parser(
        "judge",
        help="ask an LLM judge about a recorded run (the papers' judges; results stored beside the episodes)",
        description="Concurrent and resumable: every answer is stored in RUN/judgments/ as it arrives, and a "
        "rerun asks only what is not answered yet for the same judge, model and prompt.",
    )
    judge.add_argument("run_dir", type=path_arg)
    judge.add_argument(
        "--judge", action="append", required=True, metavar="NAME", help="a judge (see `worlds`), repeatable; all"
    )
    judge.add_argument("--model", required=True, help="the judging model's name at the endpoint")
    judge.add_argument("--base-url", help="an OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else OpenAI)")
    judge.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="the NAME of the variable holding the key (never the key)"
    )
    judge.add_argument(
        "--runs", type=JUDGE_RUNS, help=f"independent runs per item ({JUDGE_RUNS.range()}; default: the judge's own)"
    )
    judge.add_argument(
        "--concurrency", type=CONCURRENCY, default=4, help=f"requests at once ({CONCURRENCY.range()}; default 4)"
    )
    judge.add_argument(
        "--temperature", type=TEMPERATURE, help=f"sent when set ({TEMPERATURE.range()}; default: the endpoint's)"
    )
    judge.add_argument(
        "--timeout", type=REQUEST_TIMEOUT, help=f"seconds one attempt may take ({REQUEST_TIMEOUT.range()}; default 300)"
    )
    judge.add_argument("--max-retries", type=RETRIES, help=f"retries of a request ({RETRIES.range()}; default 5)")
    judge.add_argument(
        "--max-wait-s", type=WAIT, help=f"seconds a request waits between retries in all ({WAIT.range()}; default 300)"
    )
    judge.add_argument("--episode", action="append", metavar="ID", help="judge only this episode (repeatable)")
    judge.add_argument("--retry-unreadable", action="store_true", help="ask again where a reply could not be read")
    judge.set_defaults(func=_cmd_judge)


def _add_validity(sub: argparse._SubParsersAction) -> None:
    val = sub.add_parser(
        "validity",
        help="does a benchmark measure what it claims? chance, priors without the world, single views, both "
        "views and the oracle, per group with bootstrap CIs",
        description="Reads a benchmark folder or task file (what `run --tasks` plays) and prints what the world "
        "family's baselines score on it: a table, or JSON with --format json.",
    )
    val.add_argument("tasks", type=path_arg, metavar="BENCH", help="a benchmark folder or task file")
    val.add_argument("--world", help="its world family (default: the only family with a validity report)")
    val.add_argument("--format", choices=("table", "json"), default="table")
    val.add_argument(
        "--seed", type=SEED, default=0, help=f"seed of the bootstrap and of the solvers' tie-breaks ({SEED.range()})"
    )
    val.set_defaults(func=_cmd_validity)


def _cmd_validity(args: argparse.Namespace) -> int:
    from simlab.analysis.validity import compute_validity
    from simlab.core.errors import ConfigError
    from simlab.worlds import family_names, get_family

    names = [args.world] if args.world else [n for n in family_names() if get_family(n).validity]
    if len(names) != 1:
        offered = ", ".join(names) or "none"
        raise ConfigError(f"name the benchmark's world with --world (worlds with a validity report: {offered})")
    report = compute_validity(get_family(names[0]), args.tasks, args.seed)
    print(json.dumps(report.to_json(), indent=2, allow_nan=False) if args.format == "json" else report.to_table())
    return 0


def _cmd_default(args: argparse.Namespace) -> int:
    """With a display: the app on the bundled demo run. Without one: the headless demo and how to get the app."""
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return _cmd_gui(argparse.Namespace(path=None, episode=None, turn=None))
    status = _cmd_demo(argparse.Namespace(out=None))
    print(
        "\nNo display here, so this was the headless demo. The desktop app opens with `make run` (or\n"
        "`python main.py gui RUN_DIR`) on a machine with a display, or under Xvfb: `xvfb-run -a make run`."
    )
    return status


def _cmd_gui(args: argparse.Namespace) -> int:
    paths, episode, turn = _gui_targets(args)  # a bad link is said before any display is needed
    if not _has_display():
        raise SimlabError(
            "the desktop app needs a display, and there is none here (DISPLAY is not set): run it on a machine "
            "with a screen, or under a virtual one: xvfb-run -a python main.py gui ..."
        )
    try:
        from simlab.gui.app import run_app
    except ImportError as exc:
        raise SimlabError(f"the desktop app needs the GUI packages ({exc.name}): pip install -e '.[gui]'") from None
    from simlab.runner.demo import DEMO_RUN

    return run_app(paths or [DEMO_RUN], episode=episode, turn=turn)


def _gui_targets(args: argparse.Namespace) -> tuple[list[Path], str | None, int | None]:
    """``gui``'s runs, episode and turn: as given, or from a ``simlab://`` link given alone."""
    from simlab.core.links import is_turn_url, parse_turn_url

    given = [str(p) for p in args.path or []]
    if not any(is_turn_url(p) for p in given):
        return [Path(p) for p in given], args.episode, args.turn
    if len(given) > 1 or args.episode is not None or args.turn is not None:
        raise SimlabError("a simlab:// link names the run, episode and turn itself: give it alone")
    link = parse_turn_url(given[0])
    return [link.run], link.episode, link.turn


def _cmd_edit(args: argparse.Namespace) -> int:
    from simlab.worlds import open_document

    open_document(args.target)  # a bad file or family is said here, before any window (EditError)
    if not _has_display():
        raise SimlabError(
            "the editor needs a display, and there is none here (DISPLAY is not set): run it on a machine with a "
            f"screen, or under a virtual one: xvfb-run -a python main.py edit {args.target}"
        )
    try:
        from simlab.gui.editor import run_editor
    except ImportError as exc:
        raise SimlabError(f"the editor needs the GUI packages ({exc.name}): pip install -e '.[gui]'") from None
    return run_editor(args.target)


def _has_display() -> bool:
    """A screen Qt can open a window on (X11 or Wayland; other systems always have one)."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM"))


def _cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from simlab.runner.demo import run_demo

    if args.out is not None:
        print(run_demo(args.out))
        return 0
    with tempfile.TemporaryDirectory(prefix="simlab-demo-") as tmp:
        print(run_demo(Path(tmp) / "demo_run"))
    return 0


def _add_generate(sub: argparse._SubParsersAction) -> None:
    """``generate NAME``: one sub-command per registered family, with its own generate options."""
    from simlab.options import add_model_options
    from simlab.worlds import family_names, get_family

    gen = sub.add_parser("generate", help="generate a world family's tasks into a folder that `run --tasks` plays")
    per_family = gen.add_subparsers(dest="family", metavar="FAMILY", required=True)
    for name in family_names():
        try:
            family = get_family(name)
        except SimlabError as exc:  # a broken installed family is reported when used, never fatal here
            broken = per_family.add_parser(name, help=f"(failed to load: {exc})")
            broken.set_defaults(func=lambda _args, exc=exc: _raise(exc))
            continue
        one = per_family.add_parser(name, help=family.description, description=family.description)
        most = Bound(1, family.tasks.max_tasks, f"the most tasks one `generate {name}` makes")
        one.add_argument("--n", type=most, default=20, help=f"{family.tasks.n_help} ({most.range()}; default 20)")
        one.add_argument("--seed", type=SEED, default=0, help=f"generation seed ({SEED.range()}; default 0)")
        one.add_argument("--out", type=path_arg, required=True, help="output folder")
        if family.tasks.groups:
            label = family.tasks.group_label
            one.add_argument(
                "--group",
                dest="groups",
                action="append",
                default=[],
                choices=family.tasks.groups,
                help=f"only tasks of this {label} (repeatable)",
            )
        add_model_options(one, family.tasks.options, skip=("repeat",))  # the runner's, in options made as settings
        one.set_defaults(func=_cmd_generate)


def _raise(exc: SimlabError) -> int:
    raise exc


def _not_resumable(folder: Path, resumable: Sequence[str]) -> bool:
    """Whether ``folder`` holds anything but what an interrupted ``generate`` of the family left to resume."""
    return any(entry.name not in resumable or not entry.is_dir() for entry in folder.iterdir())


def _cmd_generate(args: argparse.Namespace) -> int:
    from simlab.core.writing import check_output_folder, refuse_links
    from simlab.options import model_values
    from simlab.runner.progress import progress_bar
    from simlab.worlds import get_family

    check_output_folder(args.out, "generate --out")
    family = get_family(args.family)
    options = family.generate_options(model_values(args, family.tasks.options))
    groups = family.check_groups(getattr(args, "groups", []))
    if args.out.exists() and (not args.out.is_dir() or _not_resumable(args.out, family.tasks.resumable)):
        raise SimlabError(f"{args.out}: not an empty folder; generate writes only into a new or empty one")
    if args.out.is_dir():
        refuse_links(args.out, family.tasks.resumable)  # an interrupted generate's folders are written into again
    made = not os.path.lexists(args.out)
    try:
        with progress_bar(f"generate {family.name}") as report:
            summary = family.tasks.write(args.out, args.n, args.seed, options, groups, report.step)
    except BaseException:
        if made:  # a refusal (a key not set, a model not reachable) leaves no empty folder behind
            with contextlib.suppress(OSError):
                args.out.rmdir()  # only when empty: what an interrupted build wrote stays, to resume
        raise
    print(summary)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    """Play a run (or resume one). The first Ctrl-C lets the episodes in flight finish; the second drops them.

    Exit status: 0 when every episode is done, 130 when stopped, 3 when a model endpoint failed (refused
    connections, timeouts on every attempt, 401/403/404, 5xx/429/malformed bodies past the retries): no
    episode starts after that, the ones it ended are not counted as done, and --resume plays them again."""
    from simlab.core.errors import InfrastructureError
    from simlab.core.recording import load_run
    from simlab.runner.batch import episode_ids
    from simlab.runner.progress import progress_bar
    from simlab.runner.run_config import resolve

    resolved = resolve(_run_options(args))
    stop = threading.Event()
    try:
        with progress_bar(f"run {args.out.name}") as report, _stop_on_first_sigint(stop):
            writer = resolved.play(report.episode, stop)
    except InfrastructureError as exc:
        folder = load_run(args.out)
        done, total = len(folder.summaries), len(episode_ids(folder.config))
        print(f"error: {exc}; {done} of {total} episodes done; resume with --resume", file=sys.stderr)
        return 3
    done, total = len(writer.done), len(episode_ids(writer.config))
    if done < total:
        print(f"stopped: {done} of {total} episodes done; resume with --resume")
        return 130
    print(f"run complete: {done} episodes in {args.out}\nreport: python main.py report {args.out}")
    return 0


def _run_options(args: argparse.Namespace) -> RunOptions:
    """``run``'s parsed arguments as the command line's source of a run config."""
    from simlab.options import key_values, role_key_values
    from simlab.runner.run_config import RunOptions

    return RunOptions(
        out=args.out,
        resume=args.resume,
        config_file=args.config,
        world=args.world,
        agents=tuple(args.agent),
        agent_settings=role_key_values(args.agent_setting, "--agent-setting"),
        settings=key_values(args.set, "--set"),
        turns=args.turns,
        episodes=args.episodes,
        repeats=args.repeats,
        seed=args.seed,
        tasks_path=args.tasks_path,
        groups=tuple(args.groups),
        concurrency=args.concurrency,
        episode_timeout=args.episode_timeout,
        executor=args.executor,
        processes=args.processes,
    )


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


def _cmd_report(args: argparse.Namespace) -> int:
    from simlab.analysis.judgments import figure_table, judge_figure, judges_table
    from simlab.analysis.report import build_report, paper_table
    from simlab.worlds import get_family

    if args.unit != "lineup" and args.correlate is None:
        raise SimlabError("--unit says what --correlate correlates over: name the metric with --correlate")
    if args.figures is not None:  # refused before anything is read or drawn
        from simlab.core.writing import check_output_folder

        check_output_folder(args.figures, "--figures", inputs=args.run_dir)
    if len(args.run_dir) > 1:
        return _compare_runs(args)
    run, judged = _judged(_load_run_warning(args.run_dir[0]))
    run = _where(run, args.where)
    group_by = args.group_by or ("group" if args.format == "paper" else None)
    if args.group_by and run.summaries and not any(args.group_by in s for s in run.summaries):
        fields = ", ".join(sorted({k for s in run.summaries[:100] for k in s if isinstance(s[k], str | int)}))
        raise SimlabError(f"--group-by {args.group_by}: no episode's summary has this field; fields: {fields}")
    seed = int(run.config.get("seed", 0))
    report = build_report(run.summaries, group_by=group_by, seed=seed)
    world = run.config.get("world")
    family = get_family(world) if world else None
    headline = list(family.headline_metrics) if family else None
    if args.format == "paper":
        rows = list(family.paper_metrics or family.headline_metrics) if family else []
        print(paper_table(report, rows or report.metric_names))
    elif args.format == "json":
        out = report.to_json()
        out["judges"] = [s.to_json() for s in judged.summaries(seed)]
        print(json.dumps(out, indent=2, allow_nan=False))
    elif args.format == "csv":
        print(report.to_csv(), end="")
    else:
        print(report.to_table(headline=headline))
        if judged.records:
            print(judges_table(judged.summaries(seed)))
            for judge in (j for j in judged.judges if j.figure is not None):
                data = judge_figure(judge, judged.records, run.summaries)
                print(figure_table(f"judge {judge.name}: {judge.title}", data))
    _print_correlations(args.correlate, [(run, judged)], args.figures, args.unit)
    if args.figures is not None:
        _write_figures([(run.path.name, run)], args.figures, [judged])
    return 0


def _judged(run: Run) -> tuple[Run, RunJudgments]:
    """``run`` with its judges' per-episode scores among its summaries' metrics, and its judgments."""
    import dataclasses

    from simlab.analysis.judgments import episode_metrics, run_judgments, with_judge_metrics

    judged = run_judgments(run.path, str(run.config.get("world")))
    for problem in judged.problems[:MAX_WARNINGS]:
        print(f"warning: {problem}", file=sys.stderr)
    metrics = episode_metrics(judged.judges, judged.records)
    return dataclasses.replace(run, summaries=with_judge_metrics(run.summaries, metrics)), judged


def _print_correlations(
    target: str | None, runs: Sequence[tuple[Run, RunJudgments]], figures: Path | None, unit: str = "lineup"
) -> None:
    """``--correlate METRIC``: every feature against METRIC across the runs' agent lineups (CRAFT table 7),
    or with ``--unit turn`` the world's per-turn values over every turn of their episodes (CRAFT table 8),
    printed, and with ``--figures`` drawn (feature_correlations.* or turn_correlations.*) with the whole table
    beside it."""
    if target is None:
        return
    from simlab.analysis.correlations import (
        RunFeatures,
        correlations_table,
        feature_correlations,
        lineup_count,
        run_turn_correlations,
        turn_correlations_table,
        write_correlation_figure,
    )

    if unit == "turn":
        try:
            found = run_turn_correlations([run for run, _ in runs], target)
        except ValueError as exc:
            raise SimlabError(f"--correlate --unit turn: {exc}") from None
        table, correlations = turn_correlations_table(found), found.correlations
    else:
        features = [RunFeatures(run.summaries, judged.records, _message_words(run)) for run, judged in runs]
        judges = list({j.name: j for _, judged in runs for j in judged.judges}.values())
        try:
            correlations = feature_correlations(features, target, judges)
        except ValueError as exc:
            raise SimlabError(f"--correlate: {exc}") from None
        table = correlations_table(correlations, target, lineup_count(features))
    print(table)
    if figures is not None:
        for path in write_correlation_figure(target, correlations, figures, "turn" if unit == "turn" else "lineup"):
            print(f"wrote {path}", file=sys.stderr)


def _message_words(run: Run) -> dict[str, float | None]:
    from simlab.analysis.correlations import message_words

    return {episode.episode_id: message_words(episode) for episode in run.episodes()}


def _compare_runs(args: argparse.Namespace) -> int:
    """``report RUN_A RUN_B ...``: the runs side by side and paired (simlab.analysis.compare)."""
    from simlab.analysis.compare import compare_runs, name_runs

    if args.format == "paper":
        raise SimlabError("--format paper lays out one run's groups; compare runs with --format table, csv or json")
    if args.group_by:
        raise SimlabError("--group-by works on one run; runs compared are split by run and agent lineup")
    judged = [(_where(run, args.where), j) for run, j in (_judged(_load_run_warning(p)) for p in args.run_dir)]
    named = name_runs([run for run, _ in judged])
    comparison = compare_runs(named)
    if args.format == "json":
        print(json.dumps(comparison.to_json(), indent=2, allow_nan=False))
    elif args.format == "csv":
        print(comparison.to_csv(), end="")
    else:
        print(comparison.to_table())
    _print_correlations(args.correlate, judged, args.figures, args.unit)
    if args.figures is not None:
        _write_figures(named, args.figures, [j for _, j in judged])
    return 0


# ---- issue 27: --where and export (a run as data) ----------------------------------------------------------


def _where(run: Run, text: str | None) -> Run:
    """``run`` with only the episodes ``--where`` keeps (all without it), saying how many were kept."""
    if text is None:
        return run
    import dataclasses

    from simlab.analysis.where import WhereError, filter_summaries

    try:
        kept = filter_summaries(run.summaries, text)
    except WhereError as exc:
        raise SimlabError(f"--where {text!r:.200}: {exc}") from None
    print(f"--where kept {len(kept):,} of {len(run.summaries):,} episodes of {run.path}", file=sys.stderr)
    return dataclasses.replace(run, summaries=list(kept))


def _add_export(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="a run as tables for other tools: episodes.parquet and events.parquet")
    export.add_argument("run_dir", type=path_arg, metavar="RUN", help="a run folder")
    export.add_argument("--format", choices=("parquet",), default="parquet", help="the tables' format")
    export.add_argument("--out", type=path_arg, required=True, metavar="FOLDER", help="where the files go (not a run)")
    export.add_argument("--where", metavar="EXPR", help="export only the episodes EXPR keeps (as report --where)")
    export.set_defaults(func=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    from simlab.analysis.tables import write_parquet
    from simlab.core.exports import export_into
    from simlab.core.writing import check_output_folder

    check_output_folder(args.out, "export --out", inputs=[args.run_dir])  # refused before anything is read
    run = _where(_load_run_warning(args.run_dir), args.where)
    for path in export_into(args.out, lambda scratch: write_parquet(run, run.summaries, scratch)):
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _load_run_warning(path: Path) -> Run:
    """The run at ``path``, its unreadable index lines (the first few) printed as warnings."""
    from simlab.core.recording import load_run

    run = load_run(path)
    for problem in run.problems[:MAX_WARNINGS]:
        print(f"warning: {problem}", file=sys.stderr)
    if run.problem_count > MAX_WARNINGS:
        print(f"warning: ... and {run.problem_count - MAX_WARNINGS:,} more unreadable index lines", file=sys.stderr)
    return run


def _write_figures(named: Sequence[tuple[str, Run]], out_dir: Path, judged: Sequence[RunJudgments]) -> None:
    """The family's figures, then one per judge that rated the runs (CRAFT figure 4's layout)."""
    from simlab.analysis.figures import write_judge_figures, write_run_figures

    for path in write_run_figures(named, out_dir) + write_judge_figures(named, judged, out_dir):
        print(f"wrote {path}", file=sys.stderr)


def _cmd_import(args: argparse.Namespace) -> int:
    from simlab.core.writing import check_output_folder
    from simlab.worlds import family_names, get_family

    offered = {}
    for name in family_names():
        try:
            offered.update({key: importer for key, importer in get_family(name).importers.items()})
        except SimlabError:
            continue  # a broken family offers nothing; `worlds` says why
    if args.source not in offered:
        known = ", ".join(sorted(offered)) or "none"
        raise SimlabError(f"no importer called {args.source!r}; importers: {known}")
    importer = offered[args.source]
    check_output_folder(args.out, "import --out", inputs=[args.file])
    print(importer.run(args.file, args.out, _importer_options(importer, args.importer_options)))
    return 0


def _importer_options(importer: Importer, given: Sequence[str]) -> dict[str, str]:
    """The importer's own options from the words the import command did not know; unknown ones refused."""
    parser = argparse.ArgumentParser(prog=f"main.py import {importer.name}", add_help=False, exit_on_error=False)
    for option in importer.options:
        parser.add_argument(f"--{option.name}", metavar=option.metavar, help=option.help)
    try:
        values, unknown = parser.parse_known_args(list(given))
    except argparse.ArgumentError as exc:
        raise SimlabError(f"import {importer.name}: {exc}") from None
    if unknown:
        known = ", ".join(f"--{o.name} {o.metavar}" for o in importer.options) or "none"
        raise SimlabError(f"import {importer.name}: unknown option(s) {' '.join(unknown)}; its options: {known}")
    return {k: v for k, v in vars(values).items() if v is not None}


def _load_replay_episode(source: Path, episode_id: str | None) -> Episode:
    """The episode a ``replay`` names: an episode file, or one episode of a run folder."""
    from simlab.core.errors import ConfigError
    from simlab.core.recording import load_episode, load_run

    if not os.path.lexists(source):
        raise ConfigError(f"{source}: no such episode file or run folder")
    if not source.is_dir():  # a file, or what the reader refuses by name
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
    from simlab.core.exports import export_file

    episode = _load_replay_episode(args.source, args.episode)
    write = _replay_export(args, episode)
    export_file(args.out, write, inputs=[args.source])  # the source is a recording too: the run's or an episode
    print(f"wrote {args.out} ({episode.episode_id})")
    return 0


def _replay_export(args: argparse.Namespace, episode: Episode) -> Callable[[Path], object]:
    """What writes ``replay --export``'s file, given the path to write (options checked here, before)."""
    from simlab.core.errors import ConfigError

    last_turn = episode.last_turn
    if args.export == "png":
        from simlab.render.turn_sheet import turn_sheet

        turn = last_turn if args.turn is None else args.turn
        if not 0 <= turn <= last_turn:
            raise ConfigError(f"--turn {turn}: episode {episode.episode_id} has turns 0..{last_turn}")
        return lambda out: turn_sheet(episode, turn).save(out, format="PNG")
    if args.export == "html":
        from simlab.core.notes import episode_marks
        from simlab.render.transcript import episode_html

        marks = episode_marks(args.source, episode.episode_id)
        return lambda out: out.write_text(episode_html(episode, marks=marks), encoding="utf-8")
    from simlab.render.animation import write_animation

    first, last = (0 if args.first is None else args.first), (last_turn if args.last is None else args.last)
    if args.out.suffix.lower() != f".{args.export}":
        raise ConfigError(f"--out {args.out}: expected a .{args.export} file for --export {args.export}")
    if last - first + 1 > limits.MAX_FRAMES:
        raise ConfigError(
            f"--first {first} --last {last}: {last - first + 1:,} frames, and an animation holds at most "
            f"{limits.MAX_FRAMES} (each is kept in memory until the file is written); animate a part"
        )
    return lambda out: write_animation(episode, first, last, out, camera=args.camera, dialogue=args.with_dialogue)


def _cmd_schema(args: argparse.Namespace) -> int:
    from simlab.core.records import SCHEMAS, json_schema

    if args.out is not None:
        from simlab.core.writing import check_output_folder, write_atomic

        check_output_folder(args.out, "schema --out")
        for name in SCHEMAS:
            write_atomic(args.out, f"{name}.schema.json", json.dumps(json_schema(name), indent=2) + "\n")
        print(f"wrote {len(SCHEMAS)} schemas to {args.out}")
        return 0
    if args.name is None:
        raise SimlabError(f"name a format ({', '.join(SCHEMAS)}) or give --out DIR")
    print(json.dumps(json_schema(args.name), indent=2))
    return 0


def _cmd_worlds(args: argparse.Namespace) -> int:
    from simlab.core.plugins import discover
    from simlab.worlds import family_names, get_family, registered

    plugin_agents = sorted(discover().agent_names())
    for name in family_names():
        try:
            family = get_family(name)
        except SimlabError as exc:
            print(f"{name}: BROKEN ({registered()[name]}): {exc}\n")
            continue
        print(describe_family(family, plugin_agents))
    return 0


def describe_family(family: WorldFamily, plugin_agents: Sequence[str]) -> str:
    """What ``worlds`` prints for one family."""
    lines = [f"{family.name}: {family.description}", f"  roles: {', '.join(family.roles)}"]
    if family.role_groups:
        groups = ", ".join(f"{g} = {' + '.join(r)}" for g, r in family.role_groups.items())
        lines.append(f"  role groups: {groups}")
    defaults = ", ".join(f"{role}={spec}" for role, spec in family.default_agents.items())
    lines.append(f"  agents: {', '.join(family.agents)} (built in; defaults {defaults})")
    lines.append(f"  plugin agents: {', '.join(plugin_agents) or 'none'}")
    lines.append(f"  tasks (generate --n, run --episodes): at most {family.tasks.max_tasks:,}")
    if family.tasks.groups:
        lines.append(f"  {family.tasks.group_label}s (--group): {', '.join(family.tasks.groups)}")
    lines.append("  settings (--set KEY=VALUE):")
    for key, field in family.settings.model_fields.items():
        if key != "repeat":
            bound = field_bound(field)
            limits_text = f" ({bound.range()})" if bound else ""
            lines.append(f"    {key} = {json.dumps(field.default)}: {field.description}{limits_text}")
    for key, importer in family.importers.items():
        lines.append(f"  importer: import {key} FILE --out RUN_DIR ({importer.description})")
        lines.extend(f"    --{o.name} {o.metavar}: {o.help}" for o in importer.options)
    for judge in family.load_judges():
        lines.append(f"  judge: judge RUN --judge {judge.name} --model M ({judge.title}: {judge.description})")
    return "\n".join(lines) + "\n"


def _cmd_plugins(args: argparse.Namespace) -> int:
    from simlab.core.plugins import discover

    registry = discover()
    if not registry.plugins:
        print("no plugins installed")
    registry.load_all()  # import the code now: a plugin is healthy only if it loads
    for plugin in registry.plugins.values():
        offers = f"agents {', '.join(sorted(plugin.agents)) or '-'}"
        offers += f", judges {', '.join(sorted(plugin.judges))}" if plugin.judges else ""
        state = "BROKEN" if plugin.name in registry.problems else "ok"
        print(f"{plugin.name}: {state}, {offers}  ({plugin.source}) {plugin.description}")
    for where, problem in registry.problems.items():
        print(f"broken: {where}: {problem}")
    return 0


def _cmd_judge(args: argparse.Namespace) -> int:
    from simlab.agents.openai_agent import AgentSettings
    from simlab.analysis.judgments import judges_table, summarize
    from simlab.core.judging import load_run_judgments
    from simlab.core.recording import load_run
    from simlab.runner.judging import find_judges, judge_run
    from simlab.runner.progress import progress_bar

    run = load_run(args.run_dir)
    judges = find_judges(str(run.config.get("world")), args.judge)
    values: dict[str, Any] = {"api_key_env": args.api_key_env}
    given = (
        ("base_url", args.base_url),
        ("temperature", args.temperature),
        ("timeout", args.timeout),
        ("max_retries", args.max_retries),
        ("max_wait_s", args.max_wait_s),
    )
    values.update({k: v for k, v in given if v is not None})
    try:
        settings = AgentSettings.from_config(args.model, values)
    except ValueError as exc:
        return _raise(SimlabError(str(exc)))
    stop = threading.Event()
    with progress_bar(f"judge {run.path.name}") as bar, _stop_on_first_sigint(stop):
        outcome = judge_run(
            run, judges, settings, args.runs, args.concurrency, args.episode, args.retry_unreadable,
            progress=lambda o: bar.step(o.asked, None, f"already answered {o.cached}, unreadable {o.unreadable}"),
            stop=stop,
        )  # fmt: skip
    for problem in outcome.problems[:MAX_WARNINGS]:
        print(f"warning: {problem}", file=sys.stderr)
    records, _ = load_run_judgments(run.path)
    print(judges_table([s for s in summarize(judges, records) if s.model == settings.model]))
    print(f"asked {outcome.asked}, already answered {outcome.cached}, unreadable replies {outcome.unreadable}")
    if outcome.failure is not None:
        print(f"error: stopped early: {outcome.failure}; run the same command again to go on", file=sys.stderr)
        return 3
    return 130 if stop.is_set() else 0


# ---- search and notes (issue 27) ---------------------------------------------------------------------------
LIMIT = Bound(1, 1_000, "the most hits one search returns")


def _add_search_and_notes(sub: argparse._SubParsersAction) -> None:
    search = sub.add_parser(
        "search",
        help="full-text search of everything said in a run: messages, reasoning, errors and mistakes by kind",
        description="Searches RUN/search.sqlite (made on first use, then updated as episodes land). QUERY is "
        'FTS5 syntax: words, "a phrase", a OR b, prefix*, kind:error, role:builder; other text is searched '
        "as a phrase.",
    )
    search.add_argument("run_dir", type=path_arg, metavar="RUN")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--limit", type=LIMIT, default=20, help=f"hits to show, best first ({LIMIT.range()})")
    search.add_argument("--format", choices=("table", "json"), default="table")
    search.set_defaults(func=_cmd_search)

    note = sub.add_parser("note", help="tag, annotate or bookmark an episode or a turn (kept in RUN/notes.json)")
    note.add_argument("run_dir", type=path_arg, metavar="RUN")
    note.add_argument("episode", metavar="EPISODE")
    note.add_argument("--turn", type=TURN, help=f"a turn of the episode ({TURN.range()}; default: the episode)")
    note.add_argument("--tag", action="append", default=[], help="add this tag (repeatable)")
    note.add_argument("--untag", action="append", default=[], help="remove this tag (repeatable)")
    note.add_argument("--text", help='the note\'s text ("" removes it)')
    note.add_argument("--bookmark", action="store_true", help="bookmark it, or remove its bookmark")
    note.set_defaults(func=_cmd_note)

    notes = sub.add_parser("notes", help="list a run's notes, tags and bookmarks")
    notes.add_argument("run_dir", type=path_arg, metavar="RUN")
    notes.add_argument("--tag", help="only those with this tag")
    notes.add_argument("--format", choices=("table", "json"), default="table")
    notes.set_defaults(func=_cmd_notes)


def _cmd_search(args: argparse.Namespace) -> int:
    from simlab.analysis.search import hits_table, search_run

    hits, update = search_run(args.run_dir, args.query, args.limit)
    for problem in update.problems[:MAX_WARNINGS]:
        print(f"warning: {problem}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps({"query": args.query, "hits": [h.to_json(args.run_dir) for h in hits]}, indent=2))
    else:
        print(hits_table(hits, args.run_dir))
    return 0


def _cmd_note(args: argparse.Namespace) -> int:
    from simlab.core.notes import change_notes

    if not (args.tag or args.untag or args.text is not None or args.bookmark):
        raise SimlabError("say what to note: --tag, --untag, --text or --bookmark")
    _check_turn(args.run_dir, args.episode, args.turn)

    def change(notes: RunNotes) -> None:
        for tag in args.tag:
            notes.add_tag(args.episode, args.turn, tag)
        for tag in args.untag:
            notes.remove_tag(args.episode, args.turn, tag)
        if args.text is not None:
            notes.set_note(args.episode, args.turn, args.text)
        if args.bookmark:
            notes.toggle_bookmark(args.episode, args.turn)

    mark = change_notes(args.run_dir, change).get(args.episode, args.turn)
    print(_mark_line(mark) if mark is not None else f"{args.episode}: nothing noted")
    return 0


def _check_turn(run_dir: Path, episode_id: str, turn: int | None) -> None:
    """ConfigError unless ``episode_id`` is an episode of the run and ``turn`` one of its turns."""
    from simlab.core.errors import ConfigError
    from simlab.core.recording import load_run

    run = load_run(run_dir)
    try:
        episode = run.load_episode(episode_id)
    except KeyError:
        raise ConfigError(f"{run_dir}: no episode {episode_id!r} in its index") from None
    if turn is not None and turn > episode.last_turn:
        raise ConfigError(f"--turn {turn}: episode {episode_id} has turns 0..{episode.last_turn}")


def _mark_line(mark: Mark) -> str:
    """A mark in one line; its note's control characters as spaces (a run from elsewhere is printed safely)."""
    from simlab.core.notes import mark_words

    where = mark.episode_id if mark.turn is None else f"{mark.episode_id} turn {mark.turn}"
    return f"{where}  {mark_words(mark)}".rstrip()


def _cmd_notes(args: argparse.Namespace) -> int:
    from simlab.core.notes import RunNotes

    notes = RunNotes.load(args.run_dir)
    marks = notes.marks(args.tag)
    if args.format == "json":
        print(json.dumps({**notes.to_json(), "marks": [m.model_dump() for m in marks]}, indent=2))
    else:
        print("\n".join(_mark_line(m) for m in marks) if marks else "no notes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
