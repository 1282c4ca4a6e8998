"""A session's past, to show any moment of it again: an index of its transcript file and
checkpoints of what the screen showed.

A moment is an instant: every event with one time. The history knows, without holding a
million events in memory:
  - where each instant starts (its first event's seq and its time, in arrays);
  - the markers people jump between: crashes, recoveries, commands, the start of an
    election round, the beginning of a violation;
  - where every BLOCKth event's line starts in the file (offsets, in an array);
  - every CHECKPOINT events, a snapshot of the cluster's state (state.py), and, where the
    caller has them, copies of the engine (to show a node's variables then, or to branch).
To show instant i it loads the checkpoint before it and folds in the events from there,
read back from the file: a few thousand lines, whatever the session's length.

It is fed the session's events as they happen (a live session: `add`, with the
recorder noting offsets) or reads a file (`read` all at once; a replay, `Loading`, a
batch of blocks at a time, so that it shows the first screen at once). It also keeps the
session's recipe (its header and every command): the engine at any instant can always
be re-created, from the nearest kept copy or from the start.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.commands import Join, Scheduled, from_words
from ..core.engine import Engine, run_sync
from ..core.events import (
    AgreementEvent,
    CommandEvent,
    CrashEvent,
    ElectionStartEvent,
    Event,
    RecoverEvent,
    ViolationEvent,
)
from ..core.rounds import Rounds
from ..record.files import write_whole
from ..record.reader import Reader
from ..record.transcript import INDEX_BLOCK as BLOCK
from ..record.transcript import RE_CREATED_VERSIONS, VERSION, Header, Parent, Recipe, header_line
from .state import ClusterState, Snapshot

CHECKPOINT = 8192  # events between two checkpoints of the model


@dataclass(frozen=True, slots=True)
class Marker:
    """A moment worth jumping to."""

    seq: int
    t: float
    kind: str  # crash, recover, command, election (a round's first), violation
    nodes: tuple[int, ...]


def _seq(marker: Marker) -> int:
    return marker.seq


class History:
    def __init__(self, path: str, header: Header, version: int = VERSION):
        self.path = path
        self.header = header
        self.version = version  # of the transcript: only this program's own runs re-create
        self.commands: list[tuple[int, Scheduled]] = []  # (seq, command): the recipe, with the header
        self.offsets = array("q")  # offsets[k]: where the line of seq k * BLOCK starts
        self.starts = array("q")  # the first seq of each instant
        self.times = array("d")  # the time of each instant
        self.markers: list[Marker] = []
        self.count = 0  # events seen
        self._state = ClusterState(tuple(sorted(header.nodes)), header.config, header.algorithm)  # folded on, for the checkpoints
        self._checkpoints: list[tuple[int, Snapshot]] = [(0, self._state.snapshot())]  # (events folded, state)
        self._engines: list[tuple[int, Engine]] = []  # (events run, a copy of the engine then)
        self.reach = -1.0  # the virtual time of the latest engine seen (a replay's re-run: how far it has got)
        self._rounds = Rounds()  # where a round begins is the monitor module's to say: a marker there

    # --- in -------------------------------------------------------------------------------

    def add(self, events: list[Event]) -> None:
        """The session's next events, in order."""
        start = 0
        while start < len(events):
            room = CHECKPOINT - self.count % CHECKPOINT
            chunk = events[start:start + room]
            self._index(chunk)
            self._state.apply(chunk)
            self.count += len(chunk)
            start += len(chunk)
            if self.count % CHECKPOINT == 0:
                self._checkpoints.append((self.count, self._state.snapshot()))

    def _index(self, events: list[Event]) -> None:
        starts, times, markers = self.starts, self.times, self.markers
        last_t = times[-1] if times else None
        seq = self.count
        for e in events:
            if e.t != last_t:
                starts.append(seq)
                times.append(e.t)
                last_t = e.t
            kind = type(e)
            if kind is CrashEvent or kind is RecoverEvent:
                markers.append(Marker(seq, e.t, e.kind, (e.node,)))
            elif kind is CommandEvent:
                markers.append(Marker(seq, e.t, "command", ()))
                self.commands.append((seq, Scheduled(e.t, from_words(e.command, e.args), e.source)))
            elif kind is ElectionStartEvent or kind is AgreementEvent:
                if began := self._rounds.observe(e):  # (at its first election, perhaps one seen before the verdict)
                    bisect.insort(markers, Marker(began.seq, began.began, "election", (began.by,)), key=_seq)
            elif kind is ViolationEvent and e.phase == "begin":
                markers.append(Marker(seq, e.t, "violation", e.nodes))
            seq += 1

    def keep_engine(self, engine: Engine) -> None:
        """A copy of the engine as it stands (call between instants): showing a node's
        variables at a moment near it, or branching there, then re-runs from it."""
        count = engine.trace.count
        self.reach = engine.now
        if not self._engines or count - self._engines[-1][0] >= CHECKPOINT:
            self._engines.append((count, engine.copy()))

    def add_block(self, offset: int, events: list[Event]) -> None:
        """A block of a transcript being read (Reader.blocks): INDEX_BLOCK events, the
        first of them at `offset` in the file."""
        self.offsets.append(offset)
        self.add(events)

    @classmethod
    def read(cls, path: str) -> History:
        """The history of a whole transcript file, read at once (as a replay's Loading
        reads it a batch at a time)."""
        loading = Loading(path)
        try:
            while batch := loading.read(64):
                loading.take(batch)
            loading.take(batch)
        finally:
            loading.close()
        return loading.history

    # --- out --------------------------------------------------------------------------------

    @property
    def instants(self) -> int:
        return len(self.starts)

    def end_of(self, instant: int) -> int:
        """The seq of the last event of an instant."""
        return (self.starts[instant + 1] if instant + 1 < len(self.starts) else self.count) - 1

    def instant_of(self, seq: int) -> int:
        return bisect.bisect_right(self.starts, seq) - 1

    def marker_near(self, instant: int, direction: int) -> int | None:
        """The instant of the nearest marker before (-1) or after (+1) this instant."""
        if direction < 0:
            seqs = [m.seq for m in self.markers if m.seq < self.starts[instant]]
            return self.instant_of(seqs[-1]) if seqs else None
        end = self.end_of(instant)
        later = next((m.seq for m in self.markers if m.seq > end), None)
        return None if later is None else self.instant_of(later)

    def first_marker(self, kind: str) -> int | None:
        """The instant of the first marker of a kind ("violation": where a hunt's finding opens)."""
        return next((self.instant_of(m.seq) for m in self.markers if m.kind == kind), None)

    def state_at(self, instant: int, state: ClusterState, recent: int = 0) -> list[Event]:
        """Make `state` the cluster's at the end of `instant`; the events that led there,
        at least the last `recent` of them (as many as there are), for a log to show."""
        end = self.end_of(instant)
        # From the last checkpoint at least `recent` events back, or from the start.
        folded, snapshot = self._checkpoints[0]
        for seq, checkpoint in self._checkpoints:
            if seq <= max(0, end + 1 - recent):
                folded, snapshot = seq, checkpoint
        state.load(snapshot)
        events = list(self.events(folded, end + 1))
        state.apply(events)
        return events

    def events(self, first: int, stop: int) -> Iterator[Event]:
        """Events first..stop-1, read back from the file."""
        if first >= stop:
            return
        block = first // BLOCK
        joined = [s.command.node for seq, s in self.commands if type(s.command) is Join and seq < block * BLOCK]
        with Reader.open(self.path) as reader:
            for event in reader.events_from(self.offsets[block], block * BLOCK, joined):
                if event.seq >= stop:
                    return
                if event.seq >= first:
                    yield event

    @property
    def re_creates(self) -> bool:
        """Whether an engine re-created from the recipe runs as this transcript did: this
        program's own format (an older one was made by other rules), and not stepped by
        hand (its network and clock were a test's)."""
        return self.why_not_re_created is None

    @property
    def why_not_re_created(self) -> str | None:
        """Why the recipe does not re-create this run (a sentence), or None if it does."""
        if self.header.by_hand:
            return "this run was stepped by hand (an exhaustive hunt's steps), so no settings and commands re-create it"
        if self.header.real:
            return "this was a run of real node processes, which nothing re-creates (it is not deterministic)"
        if self.version not in RE_CREATED_VERSIONS:
            return "this transcript was written by an older version of bully-tui, so its run cannot be re-created here"
        return None

    def recipe(self) -> Engine:
        """A fresh engine that runs this session again: its header and every command."""
        return Recipe(self.header, tuple(command for _, command in self.commands)).engine()

    def reached(self, instant: int) -> bool:
        """Whether an engine at the end of `instant` can be had now: there is a copy kept
        before it, and the engines have run that far (a replay's re-run may not have yet)."""
        kept_before = bool(self._engines) and self._engines[0][0] <= self.end_of(instant) + 1
        return kept_before and self.reach >= self.times[instant]

    def engine_at(self, instant: int, to_read: bool = False) -> Engine | None:
        """A fresh engine at the end of `instant`, re-run from the nearest copy kept before
        it; None if there is none yet (a replay whose re-run has not got there).
        `to_read`: only to look at (a node's variables), so a kept copy of exactly that
        moment is handed out as it is, not copied again (a copy at N = 400 is 20 ms and
        more, a storm's messages in flight included)."""
        if not self.reached(instant):
            return None
        end = self.end_of(instant)
        since, kept = [(seq, engine) for seq, engine in self._engines if seq <= end + 1][-1]
        if to_read and since == end + 1:
            return kept
        engine = kept.copy()
        engine.replace_commands_until(self.times[instant], (c for seq, c in self.commands if since <= seq <= end))
        run_sync(engine, self.times[instant])
        return engine

    # --- a branch ----------------------------------------------------------------------------

    def branch(self, instant: int, path: str) -> tuple[History, Header]:
        """A new transcript at `path` that begins as this one does, to the end of
        `instant` (its lines copied in, under a header naming this one as its parent),
        and its history so far. The caller goes on writing it, in this one's version of
        the format (a version 3 run's branch is one too: its lines carry no rule)."""
        end = self.end_of(instant)
        header = replace(self.header, parent=Parent(self.path.rsplit("/", 1)[-1], end), version=self.version)
        first = header_line(header)
        with open(self.path, "rb") as old, open(path, "xb") as new:
            own_first = len(old.readline())
            new.write(first)
            new.write(old.read(self._offset_of(end + 1) - own_first))
        twin = History(path, header, self.version)
        shift = len(first) - own_first
        twin.offsets = array("q", (o + shift for o in self.offsets[:end // BLOCK + 1]))
        twin.starts, twin.times = self.starts[:instant + 1], self.times[:instant + 1]
        twin.markers = [m for m in self.markers if m.seq <= end]
        twin.commands = [c for c in self.commands if c[0] <= end]
        twin.count = end + 1
        self.state_at(instant, twin._state)  # the state its checkpoints go on from, with its own table of messages
        messages = twin._state.messages = twin._state.messages.until(twin._state.sent)
        twin._checkpoints = [(n, replace(snapshot, messages=messages)) for n, snapshot in self._checkpoints if n <= end + 1]
        twin._engines = [e for e in self._engines if e[0] <= end + 1]
        twin._rounds = twin._state.rounds.copy()
        return twin, header

    def _offset_of(self, seq: int) -> int:
        """Where the line of event `seq` starts (the file's end, past the last event)."""
        block = min(seq // BLOCK, len(self.offsets) - 1)
        with open(self.path, "rb") as f:
            f.seek(self.offsets[block])
            for _ in range(seq - block * BLOCK):
                if not f.readline():
                    break
            return f.tell()


def save_with_parents(path: str, target: Path) -> list[Path]:
    """The transcript at `path` saved as `target`, and if it is a branch, its parent as
    `<target stem>.parent-1.jsonl`, that one's parent as `.parent-2`, and so on, each
    copy's header naming the copy of its parent: what is saved verifies, replays and
    tells its story without the session's own files (which may be temporary). Each
    file is written whole, never over an existing one; returns the files written."""
    chain: list[tuple[str, Header, int]] = []
    folder = Path(path).parent
    while path is not None and len(chain) < 100:
        with Reader.open(path) as reader:
            chain.append((path, reader.header, reader.version))
        parent = reader.header.parent
        path = None if parent is None else str(folder / parent.file)
        if path is not None and not Path(path).exists():
            path = None  # (its parent was not kept: the branch holds every event it shares with it anyway)
    names = [target] + [target.with_name(f"{target.stem}.parent-{k}{target.suffix}") for k in range(1, len(chain))]
    written = []
    try:
        for k, (source, header, version) in enumerate(chain):
            parent = None if k + 1 == len(chain) else Parent(names[k + 1].name, header.parent.seq)
            own = replace(header, parent=parent, version=version)  # (its lines are copied as they are)
            write_whole(str(names[k]), "transcript", _copy_after_header(source, header_line(own)), overwrite=False)
            written.append(names[k])
    except BaseException:
        for done in written:  # all of it or none of it
            done.unlink(missing_ok=True)
        raise
    return written


def _copy_after_header(path: str, first: bytes) -> Iterator[bytes]:
    """`first`, then the file's lines after its own first line."""
    yield first
    with open(path, "rb") as f:
        f.readline()
        while block := f.read(1 << 20):
            yield block


class Loading:
    """A transcript file read into its history a batch of blocks at a time: a replay of
    a million events shows its first screen at once and the rest as it comes. `read`
    may run in another thread (it only decodes); `take` belongs to the history's."""

    def __init__(self, path: str):
        self._reader = Reader.open(path)
        try:
            self.history = History(path, self._reader.header, self._reader.version)
            self._blocks = self._reader.blocks()
            self._size = max(1, self._reader.size)
        except BaseException:
            self._reader.close()
            raise
        self.fraction = 0.0  # of the file taken into the history
        self.done = False

    def read(self, blocks: int) -> list[tuple[int, list[Event]]]:
        """The next `blocks` blocks of events (fewer at the end; none: all read)."""
        batch = []
        for block in self._blocks:
            batch.append(block)
            if len(batch) == blocks:
                break
        return batch

    def take(self, batch: list[tuple[int, list[Event]]]) -> None:
        """Fold a batch `read` gave into the history (an empty one: the end)."""
        for offset, events in batch:
            self.history.add_block(offset, events)
        if batch:
            self.fraction = min(1.0, batch[-1][0] / self._size)
        else:
            self.fraction, self.done = 1.0, True
            self.close()

    def close(self) -> None:
        self._reader.close()
