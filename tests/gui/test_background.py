"""Background jobs pause Python's garbage collector (a collection in a worker thread could free Qt objects
there and deadlock the GUI thread): off while any job runs, back as it was once the last one ends."""

from __future__ import annotations

import gc
import threading

from simlab.gui.background import collector_paused


def test_the_collector_is_off_while_jobs_run_and_back_after_the_last():
    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def job() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=job)
    worker.start()
    inside.wait(10)
    with collector_paused():  # a second job while the first runs
        assert not gc.isenabled()
    assert not gc.isenabled()  # the first still runs
    release.set()
    worker.join(10)
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
