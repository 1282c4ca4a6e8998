"""One line: virtual time and pace (and the speed the run really keeps, when it cannot
keep up with the one asked for), or where in
the past the screen is; T and the delay bounds (red when the synchrony bound is broken:
T < 2 x max delay, or links held), the model's other assumptions broken now, in red ("links
lossy · links reorder · clocks drift": --loss, --duplicate, --reorder, --drift, a lossy
link), and the elections so far with the current one's
message count, beside its worst case where the algorithm declares one
(Node.worst_case_messages: for faults one at a time, so said; not while synchrony is
broken, which it assumes).

With a mutex, the critical section's entries so far, their messages each (beside the
lecture's figure) and the last one's wait.

When the line is wider than the screen, its least important parts are shortened or
left out first, whole words at a time (GIVE_WAY): the critical section's lecture
figure and last wait, the delay bounds, its messages each, the worst case, the words
beside T, its count, the speed the run keeps; the time, the pace, T and the election
count stay to the end (the count in its shortest form)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ..run.control import ClusterConfig

SEPARATOR = " │ "


@dataclass(frozen=True)
class Status:
    now: float
    speed: float
    paused: bool
    running_at: float | None  # the speed the run keeps, when well below `speed` (None: it keeps up)
    config: ClusterConfig
    elections: int
    in_election: bool
    election_messages: int
    worst_case: int | None
    where: str = ""  # looking at the past: which instant ("" at the present)
    held_links: int = 0  # links held (a partition): synchrony is broken
    faults: tuple[str, ...] = ()  # the model's other assumptions broken now, in words ("links lossy")
    cs: CsFigures | None = None  # with a mutex: its entries so far, measured


@dataclass(frozen=True)
class CsFigures:
    entries: int
    per_entry: float | None  # the mutex's messages per completed request so far (None: none has completed)
    lecture: str  # the lecture's figure for it at this N
    waited: float | None  # the last entry's client delay (s)
    handed: float | None = None  # the last synchronization delay (s): an exit to the next entry


class StatusBar(Widget):
    status: reactive[Status | None] = reactive(None)

    def show(self, status: Status) -> None:
        self.status = status

    def render(self) -> Content:
        if self.status is None:
            return Content("")
        return fit(parts(self.status), self.content_size.width or 1_000)  # (0: not laid out yet: the whole line)


# The order in which parts give way, least important first: each time a part is named,
# it takes its next shorter form (the last form of a part may be nothing at all).
GIVE_WAY = ("cs", "cs", "cs", "delay", "cs", "count", "sync", "cs", "pace", "faults", "pace", "sync", "count", "cs")


def parts(s: Status) -> dict[str, list[str]]:
    """Each part of the line as markup, in its forms from the longest to the shortest."""
    c = s.config
    if s.where:  # "⏪ instant 12 of 40 · now t=9.00s": which instant is the essential part
        pace = [f"[b $accent]{s.where}[/]", f"[b $accent]{s.where.split(' · ')[0]}[/]"]
    else:
        pace = ["[b $warning]❚❚ paused[/]" if s.paused else f"▶ ×{s.speed:g}"]
        if s.running_at is not None and not s.paused:
            at = f"×{s.running_at:.2g}" if s.running_at < 10 else f"×{s.running_at:.0f}"
            pace = [f"{pace[0]} [b $warning]running at {at}: too much to show[/]", f"{pace[0]} [b $warning]at {at}[/]",
                    *pace]
    t = f"T={c.timeout:g}"
    if s.held_links:
        held = f"{s.held_links:,} link{'s' if s.held_links > 1 else ''} held"
        sync = [f"{t} [b $error]· {held}: synchrony broken[/]", f"{t} [b $error]· {held}[/]", f"[b $error]{t}[/]"]
    elif c.synchronous:
        sync = [f"{t} ≥ 2×{c.delay_max:g}", t]
    else:
        sync = [f"[b $error]{t} < 2×{c.delay_max:g}: synchrony broken[/]", f"[b $error]{t} < 2×{c.delay_max:g}[/]"]
    delay = f"{c.delay_min:g}" if c.delay_min == c.delay_max else f"{c.delay_min:g}–{c.delay_max:g}"
    running = "…" if s.in_election else ""
    msgs = f"{s.election_messages:,} msg{'' if s.election_messages == 1 else 's'}"
    if not s.elections:
        count = ["no election yet"]
    elif s.elections == 1:  # every node starts at once: no one initiator's worst case to compare with
        count = [f"start-up election{running}: {msgs}", f"start-up{running}: {msgs}"]
    else:  # the current election's count while one runs, else the last one's
        count = [f"election {s.elections:,}{running}: {msgs}", f"#{s.elections:,}{running}: {msgs}"]
        # The worst case gives way first; without one, the count keeps its words as long.
        worst = s.worst_case is not None and c.synchronous and not s.held_links  # (it assumes synchrony)
        count.insert(0, f"{count[0]} (worst {s.worst_case:,} for one fault)" if worst else count[0])
    # the other assumptions broken: "links lossy · clocks drift", then "lossy·drift", never left out
    faults = {"faults": [f"[b $error]{' · '.join(s.faults)}[/]",
                         f"[b $error]{'·'.join(w.split()[-1] for w in s.faults)}[/]"]} if s.faults else {}
    forms = {"time": [f"[b]t={s.now:.2f}s[/]"], "pace": pace, "sync": sync, **faults, "delay": [f"δ {delay}", ""],
             "count": count}
    if s.cs is not None:
        entries = f"CS {s.cs.entries:,} in"
        if s.cs.per_entry is not None:
            each = f" · {s.cs.per_entry:.1f} msgs each"
        else:  # counted per request that entered and left: none has yet
            each = " · msgs each: after a first exit" if s.cs.entries else ""
        waited = "" if s.cs.waited is None else f" · last waited {s.cs.waited:.1f}s"
        handed = "" if s.cs.handed is None else f", handed on in {s.cs.handed:.1f}s"
        forms["cs"] = [f"{entries}{each} (lecture: {s.cs.lecture}){waited}{handed}",
                       f"{entries}{each} (lecture: {s.cs.lecture}){waited}", f"{entries}{each}{waited}",
                       f"{entries}{each}", entries, ""]
    return forms


def fit(forms: dict[str, list[str]], width: int) -> Content:
    """The parts in their longest forms that fit in `width` together, giving way in the
    GIVE_WAY order; if even the shortest forms do not fit, the line ends at the last
    whole part that does, with "…"."""
    chosen = dict.fromkeys(forms, 0)

    def line() -> Content:
        time, *rest = [Content.from_markup(forms[k][i]) for k, i in chosen.items() if forms[k][i]]
        return Content.assemble(time, " ", Content(SEPARATOR).join(rest))

    for name in GIVE_WAY:
        if line().cell_length <= width:
            break
        if name in forms:  # (the critical section's, only with a mutex)
            chosen[name] = min(chosen[name] + 1, len(forms[name]) - 1)
    text = line()
    while text.cell_length > width and len(chosen) > 2:  # still too wide: whole parts off the end
        chosen.popitem()
        text = Content.assemble(line(), " …")
    return text
