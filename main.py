"""SimLab: ``python main.py`` opens the app on the bundled demo; ``python main.py --help`` lists the CLI."""

import sys

from simlab.cli import main

if __name__ == "__main__":
    sys.exit(main())
