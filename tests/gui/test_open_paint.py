"""Opening an episode renders its 3D scene once, at the 3D view's final size (issue 28): the world view's bar
and side panel take their new sizes before the scene is drawn, since a 3D view renders at every resize, and the
scene is rendered after its camera is placed (a render before it would be one too many)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize

from simlab.runner.demo import DEMO_RUN
from tests.gui.conftest import shown_window


class _Paints(QObject):
    """Each paint of the 3D view: its size and how many actors its scene had."""

    def __init__(self, window) -> None:
        super().__init__()
        self.renderer = window.world.plotter.renderer
        self.paints: list[tuple[QSize, int]] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints.append((watched.size(), len(self.renderer.actors)))
        return False


def test_the_first_episode_opened_is_rendered_once_at_the_views_final_size(qtbot, tmp_path):
    window = shown_window(qtbot, tmp_path, DEMO_RUN)
    view = window.world.plotter.interactor
    qtbot.wait(300)  # the run's list laid out and painted: nothing is pending
    empty = view.size()
    paints = _Paints(window)
    view.installEventFilter(paints)
    renders: list[int] = []
    window.world.plotter.render_window.AddObserver(
        "StartEvent", lambda *_args: renders.append(len(paints.renderer.actors))
    )
    assert window.open_episode_id(window.browser.visible_episode_ids()[0])
    qtbot.waitUntil(lambda: any(actors for _size, actors in paints.paints))
    qtbot.wait(300)  # a later round of layout would resize and render it again meanwhile
    assert view.size() != empty  # the side panel and camera buttons came: the view did change size
    assert [size for size, actors in paints.paints if actors] == [view.size()]
    assert len([actors for actors in renders if actors]) == 1
    window.close()
