"""Links to a turn (simlab/core/links.py): the simlab:// URL made and read strictly, and the command line."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from simlab.core.errors import ConfigError
from simlab.core.links import TurnLink, parse_turn_url, turn_command, turn_url


@pytest.mark.parametrize("folder", ["/runs/plain", "/runs/with space & ünïcode?=#%", "/r"])
def test_a_url_reads_back_as_what_it_was_made_from(folder):
    assert parse_turn_url(turn_url(Path(folder), "s_001-r0", 12)) == TurnLink(Path(folder), "s_001-r0", 12)
    assert parse_turn_url(turn_url(Path(folder))) == TurnLink(Path(folder))


def test_the_command_line_is_quoted_for_a_shell():
    words = shlex.split(turn_command(Path("/a b/run; rm -rf x"), "e-r0", 3))
    assert words == ["python", "main.py", "gui", "/a b/run; rm -rf x", "--episode", "e-r0", "--turn", "3"]


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://open?run=/r", "expected simlab://open"),
        ("file:///etc/passwd", "expected simlab://open"),
        ("simlab://delete?run=/r", "expected simlab://open"),
        ("simlab://open/x?run=/r", "expected simlab://open"),
        ("simlab://open?run=/r#frag", "expected simlab://open"),
        ("simlab://me@open?run=/r", "expected simlab://open"),
        ("simlab://open?run=/r&exec=sh", "unknown key 'exec'"),
        ("simlab://open?run=/r&run=/s", "given twice"),
        ("simlab://open?run=relative/run", "absolute path"),
        ("simlab://open?episode=e", "absolute path"),
        ("simlab://open?run=/r%00x", "absolute path"),
        ("simlab://open?run=/r&episode=../../x", "not an episode id"),
        ("simlab://open?run=/r&turn=-1", "whole number"),
        ("simlab://open?run=/r&turn=1e3", "whole number"),
        ("simlab://open?run=/r&turn=100001", "whole number"),
        ("simlab://open?run=/r&turn=" + "9" * 5000, "whole number"),
        ("simlab://open?" + "a=1&" * 10, "run=PATH"),
        ("simlab://open?run=/" + "x" * 10_000, "at most 8,192"),
    ],
)
def test_a_url_that_is_not_exactly_a_link_to_a_turn_is_refused(url, said):
    with pytest.raises(ConfigError, match=said):
        parse_turn_url(url)
