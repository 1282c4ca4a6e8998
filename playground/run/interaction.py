"""Interactions: a run on the engine stepped by hand (harness.py) as a text file, one
step per command, each followed by what it did. In the spirit of etcd raft's
InteractionEnv data files. tests/interactions/ holds such files, run as tests
(test_interactions.py); an exhaustive hunt (explore.py) writes its shortest
counterexample as one.

A file is blocks of

    # comments (any number of lines, kept as they are)
    command args
    ----
    what it did, a line per event (`ok` if nothing)

separated by blank lines.

Commands:
  cluster ALGORITHM N [timeout=T] [probe-interval=P] [coordinator-timeout=T'] [settle=C]
          [delay=MIN[:MAX]] [cs-think=none|A[:B]] [cs-hold=A[:B]]
                       the cluster (first); nothing runs yet. The probe interval is 0
                       unless given: no failure-detector timers the file does not ask
                       for. The test is the network, but the delay bounds still give
                       the monitor its c (SLE2), as the algorithm works it out.
                       ALGORITHM may be an election and a lock (`classic+lamport`):
                       the workload's timers, cs_think and cs_hold, then run as in a
                       run, and wait for `fire` like the others (harness rule 5); its
                       think and hold times are the default workload's unless given
  boot                 every node starts, at t=0
  at T                 time moves on to T: the instant left behind is over, and the
                       monitor's reports on it (and any SLE2 check due on the way) show
  deliver A B          the head of the link A->B arrives now
  deliver-all          every message in flight, a round of link heads at a time, until none is
  deliver-all except A B
                       the same, leaving the link A->B's messages in flight (a token,
                       which would otherwise go round for ever)
  deliver-round        every message in flight now, a round of link heads at a time, and
                       none of those they make: one message delay, as a round of a
                       synchronous network
  fire N NAME          node N's timer NAME (its words, as `states` shows it) fires now
  crash N, recover N, elect N, join, leave N, hold A B, release A B, partition A,B,..,
  heal, timeout T, delay MIN[:MAX], want N
                       the engine's commands, as a scenario line says them
  states               each node's status, leader, place in the critical section (if
                       it wants or holds it) and running timers (name@when it would
                       fire in a run with a clock); the messages in flight and those
                       waiting at held links
  rounds               the election rounds so far (monitor.Rounds), as the summary has them
  entries              with a lock: its entries into the critical section so far, and
                       their messages per entry (core/cs_entries.py) beside the lecture's

What a step did, one line per trace event (timer settings apart: `states` shows the
timers that run): `send 1→2 Election e1`, `recv ...` (delivered), `drop ... (why)`,
`held ...` (it waits at a held link's end), `2 fires answer_wait`, `3 starts an
election`, `3: normal, leads` / `1: normal, follows 3` (a node's new state; with groups,
`1: normal, follows 4, group g2.4`: the Invitation algorithm's), `3 crashes`,
`2 wants the critical section (stamp 3)` (the stamp where requests are ordered by one),
`2 enters the critical section`, `2 leaves the critical section` (or, at a recovery,
`2 is released again (...)`), the monitor's verdicts (`agreement under 3`, `agreement
lost`, `SLE1: ...`), and `error: ...` if the step was refused. A line about an instant
other than the present (what `at` closes) starts with its time: `@14 SLE1: ...`.
"""

from __future__ import annotations

import dataclasses

from protocol import CsState, Message

from ..core.command_lines import parse_delay
from ..core.commands import COMMANDS
from ..core.config import ClusterConfig, InputError, Workload
from ..core.cs_entries import CsEntries
from ..core.events import CsEvent, Event
from ..core.monitor import PROPERTY_NAMES, describe
from ..core.rounds import Rounds
from .harness import Harness

SEPARATOR = "----"
SETTINGS = {"timeout": "timeout", "probe-interval": "probe_interval", "coordinator-timeout": "coordinator_timeout",
            "settle": "settle"}
HAPPENS = {"start": "starts", "crash": "crashes", "recover": "recovers", "join": "joins", "leave": "leaves"}
ARRIVES = {"deliver": "recv", "drop": "drop", "held": "held"}
CS_TEXT = {CsState.WANTED: "wants the critical section", CsState.HELD: "in the critical section"}


@dataclasses.dataclass
class Block:
    prose: list[str]  # comments and blank lines before the command, as written
    command: str
    expected: list[str]


def read_blocks(text: str) -> tuple[list[Block], list[str]]:
    """The blocks of a file, and the prose after the last one."""
    blocks, prose = [], []
    lines = iter(text.splitlines())
    for line in lines:
        if not line.strip() or line.startswith("#"):
            prose.append(line)
            continue
        if next(lines, None) != SEPARATOR:
            raise ValueError(f"{line!r} is not followed by {SEPARATOR}")
        expected = []
        for out in lines:
            if not out.strip():
                break
            expected.append(out)
        blocks.append(Block(prose, line, expected))
        prose = []
    return blocks, prose


def write_blocks(blocks: list[Block], outputs: list[list[str]], tail: list[str]) -> str:
    lines = []
    for block, output in zip(blocks, outputs, strict=True):
        lines += [*block.prose, block.command, SEPARATOR, *output, ""]
    return "\n".join(lines + tail).rstrip("\n") + "\n"


# --- running one command ------------------------------------------------------------------


class Interaction:
    """A harness, and the text of what each step does to it."""

    def __init__(self):
        self.h: Harness | None = None
        self.sent: dict[int, Message] = {}  # message id -> the message
        self.cs: dict[int, CsState] = {}  # node -> its place in the critical section, as last reported
        self.crashed: set[int] = set()  # nodes that crashed since their last report of it

    def run(self, line: str) -> list[str]:
        name, *args = line.split()
        try:
            if name == "cluster":
                return self.cluster(*args)
            h = self.h
            if h is None:
                raise ValueError("the first command makes the cluster")
            if name == "states":
                return self.states()
            if name == "rounds":
                return self.rounds()
            if name == "entries":
                return self.entries()
            events = self.step(h, name, args)
        except (ValueError, InputError) as e:
            return [f"error: {e}"]
        return [text for e in events if (text := self.line(e))] or ["ok"]

    def cluster(self, algorithm: str, nodes: str, *settings: str) -> list[str]:
        config: dict[str, float] = {"probe_interval": 0.0}
        workload: dict[str, tuple[float, float] | None] = {}
        for setting in settings:
            key, _, value = setting.partition("=")
            if key == "delay":  # the network is the test's, but the bounds give the monitor its c
                config["delay_min"], config["delay_max"] = parse_delay(value)
            elif key in SETTINGS:
                config[SETTINGS[key]] = float(value)
            elif key in ("cs-think", "cs-hold"):
                low, _, high = value.partition(":")
                workload[key[3:]] = None if key == "cs-think" and value == "none" else (float(low), float(high or low))
            else:
                raise ValueError(f"unknown setting {key!r} (expected one of: delay, {', '.join(SETTINGS)}, cs-think, "
                                 "cs-hold)")
        self.h = Harness(algorithm, int(nodes), ClusterConfig(**config),
                         workload=dataclasses.replace(Workload(), **workload) if workload else None)
        return ["ok"]

    @staticmethod
    def step(h: Harness, name: str, args: list[str]) -> list[Event]:
        if name == "boot":
            return h.boot()
        if name == "at":
            return h.at(float(args[0]))
        if name == "deliver":
            return h.deliver(int(args[0]), int(args[1]))
        if name == "deliver-all":
            if not args:
                return h.deliver_all()
            if len(args) != 3 or args[0] != "except":
                raise ValueError("deliver-all takes nothing, or `except A B` (a link whose messages stay in flight)")
            return h.deliver_all(leave=(int(args[1]), int(args[2])))
        if name == "deliver-round":
            return deliver_round(h)
        if name == "fire":
            return h.fire(int(args[0]), " ".join(args[1:]))  # (the ring's timers have words: hop_wait 2 1)
        if name in COMMANDS:
            return h.command(" ".join([name, *args]))
        raise ValueError(f"unknown command {name!r}")

    # --- the text of events, states and rounds ---------------------------------------------

    def line(self, e: Event) -> str | None:
        text = self.event_text(e)
        if text is None or e.t == self.h.now:
            return text
        return f"@{e.t:g} {text}"

    def event_text(self, e: Event) -> str | None:
        kind = e.kind
        if kind == "send":
            self.sent[e.id] = e.msg
            return f"send {e.src}→{e.dst} {message_text(e.msg)}"
        if kind in ARRIVES:
            why = f" ({e.reason})" if kind == "drop" else ""
            return f"{ARRIVES[kind]} {e.src}→{e.dst} {message_text(self.sent[e.id])}{why}"
        if kind == "state":
            return f"{e.node}: {state_text(e.node, e.status, e.leader)}{self.group_text(e.leader, e.epoch)}"
        if kind == "cs":
            return self.cs_text(e)
        if kind in HAPPENS:
            if kind == "crash":
                self.crashed.add(e.node)
            return f"{e.node} {HAPPENS[kind]}"
        if kind == "election_start":
            return f"{e.node} starts an election"
        if kind == "timer":
            return f"{e.node} fires {e.name}"
        if kind == "agreement":
            return "agreement lost" if e.leader is None else f"agreement under {e.leader}"
        if kind == "violation":
            if e.phase == "end":
                return describe(e)
            return f"{PROPERTY_NAMES[e.property]}: {describe(e)}"
        return None  # timer settings (see `states`) and the command itself (the block's line)

    def cs_text(self, e: CsEvent) -> str:
        node, before = e.node, self.cs.get(e.node, CsState.RELEASED)
        self.cs[node] = e.state
        crashed = node in self.crashed
        self.crashed.discard(node)
        if e.state is CsState.WANTED:
            return f"{node} wants the critical section" + (f" (stamp {e.stamp})" if e.stamp is not None else "")
        if e.state is CsState.HELD:
            return f"{node} enters the critical section"
        if crashed:  # a node that recovers is released again: the crash took what it had
            lost = "it left the critical section" if before is CsState.HELD else "its request was lost"
            return f"{node} is released again ({lost} when it crashed)"
        return f"{node} leaves the critical section"

    def group_text(self, leader: int | None, epoch: int) -> str:
        """`, group g2.4` for an algorithm whose promise is per group (its epoch names the
        group: the Invitation algorithm's), while the node has a leader; else nothing."""
        algorithm = self.h.engine.algorithm
        return f", group {algorithm.epoch_text(epoch)}" if algorithm.groups and leader is not None else ""

    def states(self) -> list[str]:
        h = self.h
        out = []
        for node, host in sorted(h.hosts.items()):
            timers = ", ".join(f"{name}@{due:g}" for name, due in h.due(node).items())
            cs = ""
            if host.up and host.cs in CS_TEXT:
                stamp = host.machine.cs.stamp()
                cs = f", {CS_TEXT[host.cs]}" + (f" (stamp {stamp})" if stamp is not None else "")
            group = self.group_text(host.state[1], host.epoch)
            out.append(f"{node}: {state_text(node, *host.state)}{group}{cs}" + (f" (timers: {timers})" if timers else ""))
        for (src, dst), messages in h.in_flight().items():
            out.append(f"in flight {src}→{dst}: {', '.join(message_text(m) for m in messages)}")
        for (src, dst), count in sorted(h.engine.links.waiting_at().items()):
            out.append(f"waiting at held {src}→{dst}: {count}")
        held = sorted(h.engine.links.held)
        if held:
            out.append("held: " + ", ".join(f"{src}→{dst}" for src, dst in held))
        return out

    def rounds(self) -> list[str]:
        rounds = Rounds(kept=[])
        for e in self.h.events:
            rounds.observe(e)
        out = []
        for r in rounds.kept:
            end = "under way" if r.agreed is None else f"agreed at {r.agreed:g} under {r.leader}"
            counts = ", ".join(f"{n} {t}" for t, n in sorted(r.messages.items()))
            out.append(f"round at {r.began:g} by {r.by}, {end}: {counts or 'no messages'}")
        return out or ["no rounds"]

    def entries(self) -> list[str]:
        mutex = self.h.engine.algorithm.mutex
        if mutex is None:
            raise ValueError("no lock runs beside the election (a cluster such as classic+lamport has one)")
        measures = CsEntries.of(mutex)
        for e in self.h.events:
            measures.observe(e)
        per = measures.messages_per_entry
        figure = mutex.figures(len(self.h.engine.roster.members)).entry_messages
        per_entry = "no figure yet" if per is None else f"{per:g} messages per entry"
        out = [f"{measures.entries} entries, {measures.completed} left again: {per_entry} (the lecture's: {figure})"]
        if measures.out_of_order or measures.unfair:
            out.append(f"{measures.out_of_order} out of (timestamp, id) order, {measures.unfair} unfair")
        return out


def deliver_round(h: Harness) -> list[Event]:
    """Every message in flight now, not those they make (links are FIFO: what is sent
    meanwhile queues behind), taking the head of every busy link in turn, as deliver-all does."""
    start = len(h.events)
    left = {link: len(messages) for link, messages in h.in_flight().items()}
    while left:
        for link in list(left):
            h.deliver(*link)
            left[link] -= 1
            if not left[link]:
                del left[link]
    return h.events[start:]


def state_text(node: int, status: object, leader: int | None) -> str:
    if leader is None:
        return str(status)
    return f"{status}, leads" if leader == node else f"{status}, follows {leader}"


def message_text(msg: Message) -> str:
    """`Election e1`, `Elected(leader=3, initiator=1) e2`: its label, its own fields, its epoch."""
    fields = [f"{f.name}={getattr(msg, f.name)}" for f in dataclasses.fields(msg) if f.name != "epoch"]
    return f"{msg.label}{'(' + ', '.join(fields) + ')' if fields else ''} e{msg.epoch}"
