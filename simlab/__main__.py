"""``python -m simlab`` is the same CLI as ``python main.py``."""

import sys

from simlab.cli import main

if __name__ == "__main__":  # a spawned worker process imports this module again: it must not run the CLI
    sys.exit(main())
