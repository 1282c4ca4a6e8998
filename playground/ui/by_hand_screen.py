"""You are the network (the app's `b`, or `--by-hand`): a pane beside the cluster lists
the messages in flight and the timers set, and the user says what happens next, in any
order, as DSLabs' debugger lets a student: deliver a message (enter or d), drop it (x),
duplicate it (u), fire a timer (enter or f). Nothing arrives and no timer fires by
itself meanwhile, and the clock stands still (core/by_hand.py, engine rule 8).

Each choice is a command the run records (deliver ID, drop ID, duplicate ID, fire K
NAME, between by-hand and by-clock), so a session played by hand is saved, verified,
replayed and branched like any other; one the moment refuses (a message no longer in
flight, a timer no longer set) is said in one line and not recorded. Leaving (b or
escape) gives the network back to the clock, which runs again from where it stands if
it ran before.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ..core.commands import DeliverMessage, DropMessage, DuplicateMessage, EnterByHand, FireTimer, LeaveByHand
from ..record.look import instant_text, timer_label
from .network_pane import NetworkPane, Row

REFRESH = 0.1  # seconds between looks at whether the run has moved on (then the rows are made again)


class ByHandScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ByHandScreen { align: right top; background: $background 20%; }
    ByHandScreen > Vertical { width: 58; height: 100%; border: round $accent; background: $surface; }
    ByHandScreen .heading { color: $accent; text-style: bold; }
    ByHandScreen .keys { color: $text-muted; }
    """
    BINDINGS = [
        Binding("up", "move(-1)", show=False), Binding("down", "move(1)", show=False),
        Binding("pageup", "page(-1)", show=False), Binding("pagedown", "page(1)", show=False),
        Binding("home", "move(-1_000_000)", show=False), Binding("end", "move(1_000_000)", show=False),
        Binding("enter", "act", "deliver or fire", tooltip="deliver the selected message now, or fire the selected timer"),
        Binding("d", "deliver", "deliver", show=False, tooltip="the selected message arrives now"),
        Binding("x", "drop", "drop", tooltip="the selected message never arrives"),
        Binding("u", "duplicate", "duplicate", tooltip="a copy of the selected message goes on its link"),
        Binding("f", "fire", "fire", show=False, tooltip="the selected timer fires now"),
        Binding("space", "standing_still", show=False),
        Binding("b,escape", "leave", "by the clock", tooltip="give the network back to the clock"),
    ]

    def __init__(self, resume: bool = False):
        """`resume`: the clock runs when the mode ends, whether or not it ran when it began
        (--by-hand: the app starts paused, so that nothing runs before the pane is up)."""
        super().__init__()
        self.pane = NetworkPane()
        self.heading = Static("", classes="heading")
        self._seen: tuple[int, int] | None = None  # (lines logged, the log's reloads) when the rows were made
        self._resume = resume  # the clock ran when the mode began: it runs again after

    def compose(self) -> ComposeResult:
        with Vertical():
            yield self.heading
            yield self.pane
            yield Static("↑↓ select · enter/d deliver · x drop · u duplicate · f fire · b back to the clock",
                         classes="keys")

    def on_mount(self) -> None:
        app = self.app
        timeline = app.timeline
        if timeline is None or timeline.live is None or not timeline.at_present:
            app.notify("By hand, you are the network of the present: go to the latest instant of a live run first.",
                       severity="warning")
            self.dismiss()
            return
        live = timeline.live
        self._resume = self._resume or not live.paused
        if not live.paused:
            live.pause()
            app.redraws.pause()
        if not timeline.by_hand:
            app.request(EnterByHand(), "by-hand")
        self.set_interval(REFRESH, self.look)
        self.look()

    def look(self) -> None:
        """Make the rows again if the run has moved on since they were made."""
        model = self.app.model
        if self._seen == (model.logged, model.loads):
            return
        self._seen = (model.logged, model.loads)
        network = self.app.timeline.network()
        if network is None:
            return
        flights, timers = network
        label = model.label
        rows = [Row(f"#{f.id:<6} {label[f.src]}→{label[f.dst]} {f.msg.label}{' (copy)' if f.copy else ''}"
                    f"{'  · lost' if f.lost else ''}  due {instant_text(f.due / 1e6)}", msg=f.id, muted=f.lost)
                for f in flights]
        rows += [Row(f"timer  node {label[node]} {timer_label(name, label)}  fires {instant_text(fires / 1e6)}",
                     node=node, timer=name) for fires, node, name in timers]
        self.pane.show(rows)
        self.heading.update(f" You are the network · t={self.app.timeline.now():.3f}s · {len(flights):,} in flight, "
                            f"{len(timers):,} timer{'s' if len(timers) != 1 else ''}")

    # --- the keys -----------------------------------------------------------------------------

    def action_move(self, by: int) -> None:
        self.pane.move(by)

    def action_page(self, direction: int) -> None:
        self.pane.move(direction * max(1, self.pane.size.height - 1))

    def action_act(self) -> None:
        row = self.pane.picked
        if row is not None:
            self.action_fire() if row.timer is not None else self.action_deliver()

    def action_deliver(self) -> None:
        self._message(DeliverMessage, "deliver")

    def action_drop(self) -> None:
        self._message(DropMessage, "drop")

    def action_duplicate(self) -> None:
        self._message(DuplicateMessage, "duplicate")

    def action_fire(self) -> None:
        row = self.pane.picked
        if row is None or row.timer is None:
            self.app.notify("Select a timer to fire (they come after the messages).")
            return
        self.app.request(FireTimer(row.node, row.timer), f"fire {self.app.model.label[row.node]} {row.timer}")

    def _message(self, command: type, name: str) -> None:
        row = self.pane.picked
        if row is None or row.msg is None:
            self.app.notify(f"Select a message to {name} (a timer can only fire).")
            return
        self.app.request(command(row.msg), f"{name} {row.msg}")

    def action_standing_still(self) -> None:
        self.app.notify("By hand the clock stands still: b gives the network back to the clock.")

    def action_leave(self) -> None:
        app = self.app
        if app.timeline is not None and app.timeline.by_hand:
            app.request(LeaveByHand(), "by-clock")
        if self._resume and app.live is not None:
            app.live.resume()
            app.redraws.resume()
        self.dismiss()
