"""Errors SimLab raises for bad input: each names the file, the place in it and what was expected."""

from __future__ import annotations

from pathlib import Path


class SimlabError(Exception):
    """Base class of every error SimLab reports to a user."""


class FormatError(SimlabError, ValueError):
    """A file that cannot be read as what it claims to be (also a ValueError, for callers parsing values).

    ``where`` is a line (``"line 12"``), a JSON path (``"events[3].data.move"``) or a field name.
    """

    def __init__(self, path: str | Path | None, where: str, expected: str) -> None:
        self.path = str(path) if path is not None else "<input>"
        self.where = where
        self.expected = expected
        place = f"{self.path}, {where}" if where else self.path
        super().__init__(f"{place}: {expected}")


class ConfigError(SimlabError):
    """A command-line option, agent spec or config file value that cannot be used."""


class InfrastructureError(SimlabError):
    """What an agent depends on failed, not the agent: a model endpoint refusing connections, timing out on
    every attempt, answering 401/403/404, or 5xx, 429 or malformed bodies past the retries.

    Not the model's behaviour, so never recorded as its failure: the episode driver ends the episode as an
    abort marked ``infrastructure`` and a batch run stops starting episodes (``--resume`` plays them again).
    ``reason`` is short and free of credentials; ``endpoint`` is the URL without any; ``role`` is the role
    whose agent failed; ``records`` are the raw records of the failed act (attempts, scrubbed)."""

    def __init__(
        self, reason: str, endpoint: str | None = None, status: int | None = None, role: str | None = None
    ) -> None:
        self.reason, self.endpoint, self.status, self.role = reason, endpoint, status, role
        self.records: tuple[dict[str, object], ...] = ()
        where = f" at {endpoint}" if endpoint else ""
        super().__init__(f"the model endpoint{where} failed: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.endpoint, self.status, self.role))

    def to_json(self) -> dict[str, object]:
        """What an episode summary keeps under ``infrastructure``."""
        return {"role": self.role, "endpoint": self.endpoint, "status": self.status, "error": self.reason}

    @classmethod
    def from_json(cls, obj: dict[str, object]) -> InfrastructureError:
        """The error back from a summary's ``infrastructure`` field (as written by :meth:`to_json`)."""
        status, role, endpoint = obj.get("status"), obj.get("role"), obj.get("endpoint")
        return cls(
            str(obj.get("error") or "unknown failure"),
            endpoint if isinstance(endpoint, str) else None,
            status if isinstance(status, int) and not isinstance(status, bool) else None,
            role if isinstance(role, str) else None,
        )
