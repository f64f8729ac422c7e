"""``python main.py judge RUN --judge NAME --model M``: ask an LLM judge about a recorded run, concurrently and
resumably.

The requests go through the same OpenAI-compatible caller as the live agents
(:class:`~simlab.agents.openai_agent.ChatCaller`: its retries, its untrusted-body reading, the key read from
the environment variable named by ``api_key_env`` and never recorded). Each answer is appended to the
episode's judgments file as soon as it arrives (:class:`~simlab.core.judging.JudgmentWriter`), so a run killed
at any moment, even by ``kill -9``, keeps everything answered so far; a rerun builds the same requests, finds
their keys (episode, turn, subject, judge, model, prompt digest, run) in the files and asks only what is
missing. A reply that cannot be read is recorded as such and not asked again unless ``retry_unreadable``.

Episodes are read one at a time and at most ``2 * concurrency`` requests wait at once, so memory stays
bounded however large the run. When the endpoint fails (refused, unreachable past the retries), no record is
written for that request, nothing new is started and the outcome says why: a rerun picks up from there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace

from simlab.agents.openai_agent import AgentSettings, ChatCaller, public_url
from simlab.analysis.judgments import known_judges
from simlab.core.errors import ConfigError, InfrastructureError
from simlab.core.judging import (
    Judge,
    JudgeItem,
    JudgmentRecord,
    JudgmentWriter,
    judge_messages,
    judgments_path,
    make_record,
    prompt_sha256,
    read_judgments,
)
from simlab.core.plugins import Registry
from simlab.core.recording import Run, load_episode
from simlab.core.seeding import stable_seed
from simlab.worlds import family_names

JUDGE_MAX_TOKENS = 600
"""A reply's limit: a line per question with a short reason (seven questions take about 250 tokens)."""


@dataclass(frozen=True)
class Request:
    """One request to make: ``judge`` about ``item`` of ``episode_id``, independent run number ``run``."""

    judge: Judge
    episode_id: str
    item: JudgeItem
    run: int
    messages: list[dict[str, str]]
    sha: str


@dataclass
class JudgeOutcome:
    """What a judge run did: requests answered now, found answered before, replies that could not be read,
    and why it stopped early (``failure``, None when it finished)."""

    asked: int = 0
    cached: int = 0
    unreadable: int = 0
    failure: str | None = None
    problems: list[str] = field(default_factory=list)


def find_judges(world: str, names: Sequence[str], registry: Registry | None = None) -> list[Judge]:
    """The judges called ``names`` for ``world`` (:func:`~simlab.analysis.judgments.known_judges`, plugins
    from ``registry``, default every plugin discovered); ``all`` means every judge of the world. ConfigError
    lists the known ones when a name is unknown or judges another world."""
    known = known_judges(world, registry)
    found: list[Judge] = []
    for name in dict.fromkeys(names):
        if name == "all":
            found += [j for j in known.values() if j not in found]
            continue
        judge = known.get(name) or _other_worlds_judge(name, registry)
        if judge is None:
            raise ConfigError(f"no judge called {name!r} for world {world!r}; known: {', '.join(known) or 'none'}")
        if judge.world != world:
            raise ConfigError(f"judge {name!r} judges {judge.world!r} episodes, but this run is a {world!r} run")
        if judge not in found:
            found.append(judge)
    return found


def _other_worlds_judge(name: str, registry: Registry | None) -> Judge | None:
    for world in family_names():
        judge = known_judges(world, registry).get(name)
        if judge is not None:
            return judge
    return None


def judge_run(
    run: Run,
    judges: Sequence[Judge],
    settings: AgentSettings,
    runs: int | None = None,
    concurrency: int = 4,
    episodes: Sequence[str] | None = None,
    retry_unreadable: bool = False,
    progress: Callable[[JudgeOutcome], None] | None = None,
    stop: threading.Event | None = None,
) -> JudgeOutcome:
    """Ask ``judges`` about every item of ``run``'s episodes (or only ``episodes``), each ``runs`` times
    (default: each judge's own), ``concurrency`` requests at a time; see the module docstring."""
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    outcome = JudgeOutcome()
    writer = JudgmentWriter(run.path)
    caller = ChatCaller(replace(settings, max_tokens=settings.max_tokens or JUDGE_MAX_TOKENS))
    caller.connect()  # a missing key is said before anything is read
    stop = stop or threading.Event()
    lock = threading.Lock()

    def ask(request: Request) -> None:
        if stop.is_set():  # queued before an endpoint failure or a stop: the run ends with the calls in flight
            return
        try:
            record = _ask(caller, settings, request)
        except InfrastructureError:
            stop.set()  # here, before this worker takes the next queued request
            raise
        writer.append(record)
        with lock:  # one thread at a time reports, so the callback need not be thread-safe
            outcome.asked += 1
            outcome.unreadable += record.unreadable is not None
            if progress is not None:
                progress(outcome)

    pending: set[Future[None]] = set()
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judge") as pool:
        for request in _requests(run, judges, settings.model, runs, episodes, retry_unreadable, outcome):
            if stop.is_set() or outcome.failure is not None:
                break
            pending.add(pool.submit(ask, request))
            if len(pending) >= 2 * concurrency:
                pending = _settle(pending, outcome, stop, FIRST_COMPLETED)
        _settle(pending, outcome, stop, ALL_COMPLETED)
    return outcome


def _settle(pending: set[Future[None]], outcome: JudgeOutcome, stop: threading.Event, when: str) -> set[Future[None]]:
    """Wait for ``when`` of ``pending``; an endpoint failure becomes the outcome's and stops new requests."""
    done, left = wait(pending, return_when=when)
    for future in done:
        exc = future.exception()
        if isinstance(exc, InfrastructureError):
            outcome.failure = outcome.failure or str(exc)
            stop.set()
        elif exc is not None:
            raise exc
    return left


def _ask(caller: ChatCaller, settings: AgentSettings, request: Request) -> JudgmentRecord:
    item = request.item
    seed = stable_seed("judge", request.judge.name, request.episode_id, item.turn, item.subject, request.run)
    completion = caller.complete(request.messages, seed if settings.send_seed else None)
    if completion.failure is not None:
        raise completion.failure
    record = make_record(
        request.judge, settings.model, request.episode_id, item, request.run, request.sha, completion.content or ""
    )
    call = {
        "endpoint": public_url(settings.base_url),
        "seed": seed if settings.send_seed else None,
        "usage": dict(completion.usage),
        "latency_s": completion.latency_s,
        "attempts": len(completion.attempts) + 1,
        **({"notes": list(completion.notes)} if completion.notes else {}),  # what of the body was left out
    }
    return replace(record, call=call)


def _requests(
    run: Run,
    judges: Sequence[Judge],
    model: str,
    runs: int | None,
    episodes: Sequence[str] | None,
    retry_unreadable: bool,
    outcome: JudgeOutcome,
) -> Iterator[Request]:
    """The requests not answered yet, episode by episode (one episode's recording in memory at a time)."""
    wanted = set(episodes) if episodes is not None else None
    listed = {str(s.get("episode_id")) for s in run.summaries}
    for missing in sorted((wanted or set()) - listed):
        raise ConfigError(f"{run.path}: no finished episode {missing!r} in its index")
    for summary in run.summaries:
        episode_id = str(summary.get("episode_id"))
        if wanted is not None and episode_id not in wanted:
            continue
        done, problems = read_judgments(judgments_path(run.path, episode_id))
        outcome.problems += problems
        known = {r.key() for r in done if not (retry_unreadable and r.unreadable is not None)}
        episode = load_episode(run.episode_path(summary))
        for judge in judges:
            for item in judge.items(episode):
                messages = judge_messages(judge, item)
                sha = prompt_sha256(messages)
                for number in range(runs or judge.runs):
                    key = (episode_id, item.turn, item.subject, judge.name, model, sha, number)
                    if key in known:
                        outcome.cached += 1
                        continue
                    yield Request(judge, episode_id, item, number, messages, sha)
