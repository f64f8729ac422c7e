"""SimLab: ``python main.py`` opens the app on the bundled demo; ``python main.py --help`` lists the CLI."""

from simlab.cli import entry

if __name__ == "__main__":
    entry()
