"""The simulation's screen (app.py): the screen both apps show (cluster_screen.py), and
the keys that move along the session's timeline. `,` `.` show the instant before or
after the one shown, `{` `}` the last or next marker (a crash, a recovery, a command, an
election, a violation), home and end the first and the latest instant. Going back
pauses a live run; end follows its present again (still paused: space resumes). The
app shows the instant (BullyApp.show), and a command given there branches the session."""

from __future__ import annotations

from textual.binding import Binding

from .cluster_screen import ClusterScreen
from .model import LOG_CAP

TIME_BINDINGS = [
    Binding("comma", "back", "back", show=False, tooltip="back one instant (a live session pauses)"),
    Binding("full_stop", "forward", "step", show=False,
            tooltip="forward one instant (at the present: pause, and run the next instant)"),
    Binding("left_curly_bracket", "marker(-1)", show=False,
            tooltip="back to the last crash, recovery, command, election or violation"),
    Binding("right_curly_bracket", "marker(1)", show=False, tooltip="on to the next one"),
    Binding("home", "first", show=False, tooltip="the first instant"),
    Binding("end", "latest", show=False, tooltip="the latest instant (a live session: the present)"),
]


class TimelineScreen(ClusterScreen):
    BINDINGS = TIME_BINDINGS

    def action_back(self) -> None:
        timeline = self.app.timeline
        if timeline is None or not timeline.history.instants:
            return
        if timeline.shown == 0:
            self.notify("This is the first instant.")
            return
        self.app.show(timeline.shown - 1)

    def action_forward(self) -> None:
        app, timeline = self.app, self.app.timeline
        if timeline is None:
            return
        if timeline.at_present:
            app.action_step()
        elif timeline.position + 1 < timeline.history.instants:
            app.show(timeline.position + 1)
        elif app.live is None:
            self.notify("This is the transcript's last instant.")

    def action_marker(self, direction: int) -> None:
        timeline = self.app.timeline
        if timeline is None or not timeline.history.instants:
            return
        found = timeline.marker_near(direction)
        if found is None:
            self.notify("No marker " + ("before" if direction < 0 else "after") + " this instant.")
            return
        self.app.show(found)

    def action_first(self) -> None:
        timeline = self.app.timeline
        if timeline is not None and timeline.history.instants:
            self.app.show(0)

    def action_latest(self) -> None:
        """The latest instant; in a live session, the present: following the run again
        (still paused: space resumes)."""
        timeline = self.app.timeline
        if timeline is not None and timeline.history.instants:
            self.app.moved(timeline.present(LOG_CAP))
