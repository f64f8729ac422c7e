"""``python -m simlab`` is the same CLI as ``python main.py``."""

import sys

from simlab.cli import main

sys.exit(main())
