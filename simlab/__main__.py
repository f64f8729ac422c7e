"""``python -m simlab`` is the same CLI as ``python main.py``."""

from simlab.cli import entry

if __name__ == "__main__":  # a spawned worker process imports this module again: it must not run the CLI
    entry()
