"""Every registered world family (the bundled ones and any installed through the ``simlab.worlds`` entry
point) passes the conformance suite with its default agents: the AEC promises, seeding, the recording round
trip, the same episode in two interpreters, and everything it draws."""

from __future__ import annotations

import pytest

from simlab.testing import check_world
from simlab.worlds import family_names


@pytest.mark.parametrize("name", family_names())
def test_every_family_conforms_with_its_default_agents(name):
    check_world(name, n_tasks=1)
