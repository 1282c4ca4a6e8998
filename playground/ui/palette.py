"""The command palette's commands (ctrl+p), as a Textual command provider per app: every
command a key gives, for any node and not only the selected one, and what no key gives
(hold one link, split the cluster in two, switch the algorithm), beside Textual's own
(theme, keys, screenshot, quit).

Each app's provider is made of lists of (title, what it does, what runs):

  - `node_commands`: crash, recover, elect at, want the critical section (with a mutex),
    join and leave (where the algorithm takes members), cut a node off, split the
    cluster, heal: both apps (their control surfaces take these commands);
  - `link_commands`: hold or release one link from the selected node, make it lossy or
    lossless again, and be the network by hand (the simulation's);
  - `view_commands`: select a node, filter the log (both);
  - `algorithm_commands`: the same run again with another algorithm or mutex (the
    simulation's);
  - `export_commands`: the log's window as SVG, Mermaid or ShiViz (the simulation's).

One provider an app, so that the palette opens on one list sorted by title (several
providers' lists would come in whatever order their tasks ran), matched by Textual's
fuzzy matcher as the user types. The commands act through the app, as the keys do (a
command the moment refuses says why)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from protocol import ALGORITHMS, MUTEXES, split_name

from ..core.commands import HoldLink, LossyLink, Partition, ReleaseLink, membership_refused
from .diagram_export import FORMATS

Listing = Iterator[tuple[str, str, Callable[[], object]]]
LOSSY = ((1.0, "lose every message"), (0.5, "lose half the messages"), (0.0, "lossless again"))


class Listed(Provider):
    """A provider of the commands its lists give, on the screen the palette opened on."""

    LISTS: tuple[Callable[[App, Screen], Listing], ...] = ()

    def commands(self) -> Listing:
        for listing in self.LISTS:
            yield from listing(self.app, self.screen)

    async def discover(self) -> Hits:
        for title, help_text, run in sorted(self.commands(), key=lambda command: command[0]):
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self.commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)


def system_commands(app: App, screen: Screen) -> Listing:
    """Textual's own: theme, keys, screenshot, quit."""
    for command in app.get_system_commands(screen):
        yield command.title, command.help, command.callback


def node_commands(app: App, screen: Screen) -> Listing:
    label, algorithm = app.model.label, app.session.algorithm
    mutex = split_name(algorithm)[1]
    members = not membership_refused(algorithm)
    if members:
        yield "Join a new node", "it gets the next id and starts as a recovering node", app.action_join
    for i in app.model.ids:
        k = label[i]
        yield f"Crash node {k}", f"node {k} halts at once", lambda i=i: app.action_command("crash", i)
        yield (f"Recover node {k}", f"node {k} restarts from safe storage",
               lambda i=i: app.action_command("recover", i))
        yield f"Elect at node {k}", f"node {k}'s failure detector fires", lambda i=i: app.action_command("elect", i)
        if mutex:
            yield (f"Want the critical section: node {k}", f"node {k} asks for it now ({mutex})",
                   lambda i=i: app.action_command("want", i))
        if members:
            yield (f"Leave: node {k}", f"node {k} leaves for good, telling the others",
                   lambda i=i: app.action_command("leave", i))
        yield (f"Cut node {k} off", "partition: its links to and from every other node held",
               lambda i=i: app.action_command("partition", i))
    state = app.state
    ids = tuple(i for i in state.joined if i not in state.left)  # (a node that left is cut off already)
    for rank in range(1, len(ids)):
        low, high = label[ids[rank - 1]], label[ids[rank]]
        yield (f"Split the cluster: ..{low} | {high}..", "partition: the lower ids cut off from the higher",
               lambda rank=rank, low=low: app.request(Partition(ids[:rank]), f"partition ..{low}"))
    yield "Heal every link", "release every held link", app.action_heal


def link_commands(app: App, screen: Screen) -> Listing:
    label, here = app.model.label, app.selected
    a = label[here]
    for i in app.model.ids:
        if i != here:
            b = label[i]
            yield (f"Hold link {a}→{b}", f"messages from {a} to {b} wait at the link's end",
                   lambda i=i, b=b: app.request(HoldLink(here, i), f"hold {a} {b}"))
            yield (f"Release link {a}→{b}", "what waited there arrives now, in order",
                   lambda i=i, b=b: app.request(ReleaseLink(here, i), f"release {a} {b}"))
            for p, what in LOSSY:
                yield (f"Lossy link {a}→{b}: {what}",
                       f"lossy {a} {b} {p:g}: each message from {a} to {b} is lost with probability {p:g}, whatever --loss says",
                       lambda i=i, b=b, p=p: app.request(LossyLink(here, i, p), f"lossy {a} {b} {p:g}"))
    yield ("By hand: you are the network",
           "nothing arrives and no timer fires until you say: deliver, drop, duplicate any message, fire any timer (b)",
           app.action_by_hand)


def view_commands(app: App, screen: Screen) -> Listing:
    log = app.log_view
    for i in app.model.ids:
        k = app.model.label[i]
        yield f"Select node {k}", "show it in the node panel", lambda i=i: screen.action_select(i)
        yield (f"Filter the log: only node {k}", "its messages, states and commands",
               lambda i=i: log.set_filters(i, log.topic_filter))
    for topic in app.state.topics:
        yield (f"Filter the log: only {topic}", f"{topic} messages only",
               lambda topic=topic: log.set_filters(log.node_filter, topic))
    yield "Filter the log: show everything", "clear the log's filters", lambda: log.set_filters(None, None)


def algorithm_commands(app: App, screen: Screen) -> Listing:
    election, mutex = split_name(app.session.algorithm)
    for name in ALGORITHMS:
        if name != election:
            full = f"{name}+{mutex}" if mutex else name  # (the mutex stays)
            yield (f"Algorithm: {name}", "restart the cluster with it: same nodes, seed, settings, scenario",
                   lambda full=full: app.action_switch_algorithm(full))
    for name in (*MUTEXES, None):
        if name != mutex:
            full = f"{election}+{name}" if name else election
            what = ("restart the cluster with it beside the election (its own workload, or the default)" if name
                    else "restart the cluster with the election alone")
            yield f"Mutual exclusion: {name or 'none'}", what, lambda full=full: app.action_switch_algorithm(full)


def export_commands(app: App, screen: Screen) -> Listing:
    for fmt, (name, _, what) in FORMATS.items():
        yield (f"Export the log's window: {name}", f"{what}, of its time span and filters (a file, or a download)",
               lambda fmt=fmt: app.action_export(fmt))


class SimulationCommands(Listed):
    LISTS = (system_commands, node_commands, link_commands, view_commands, algorithm_commands, export_commands)


class RealCommands(Listed):
    LISTS = (system_commands, node_commands, view_commands)  # (no single link held, no other algorithm)
