"""SimLab: a simulator and visualiser for experiments where agents with partial views must talk to get a job done."""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``simlab.load_run`` for notebooks (``simlab.load_run(RUN).to_pandas()``), imported when first asked for."""
    if name == "load_run":
        from simlab.core.recording import load_run

        return load_run
    raise AttributeError(f"module 'simlab' has no attribute {name!r}")
