"""The names of a run folder's own files (see docs/FORMATS.md).

Apart from :mod:`simlab.core.recording`, which reads and writes them, so :mod:`simlab.core.writing` (through
which recording writes) can recognise a run folder without importing the module that uses it.
"""

RUN_FILE = "run.json"
INDEX_FILE = "index.jsonl"
EPISODES_DIR = "episodes"
