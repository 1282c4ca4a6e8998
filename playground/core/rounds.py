"""Election rounds, the one definition: the status bar's count, the summary's rounds and
the timeline's markers all read `Rounds`, fed the trace's events in order."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from protocol import MessageRole

from .events import AgreementEvent, ElectionStartEvent, Event, SendEvent


@dataclass(slots=True)
class Round:
    """One election round: who began it, when and at which event, the messages sent while
    it ran (by type, failure detection apart), and when it ended in agreement, under whom."""

    began: float
    by: int
    seq: int
    messages: Counter[str] = field(default_factory=Counter)
    agreed: float | None = None
    leader: int | None = None

    def copy(self) -> Round:
        return Round(self.began, self.by, self.seq, Counter(self.messages), self.agreed, self.leader)


@dataclass
class Rounds:
    """Election rounds, the one definition (the status bar's count, the summary's rounds,
    the timeline's markers). A round begins with an election and ends at the next
    agreement (rule 5). Which election:
      - the very first (the start-up's);
      - once agreement is lost, the first election started since;
      - when agreement is lost, an election that came before the verdict: one started
        at that instant (agreement is judged at the end of an instant, so an election
        that a crash at the same instant caused comes before the verdict), or else the
        first that a follower started while all agreed, since agreement was reached
        (Garcia-Molina's Election first asks the higher nodes for T, and changes no
        status until nobody answers: the election began there, not at the loss). The
        leader's own election is over when it starts (it announces itself), so only
        one at the instant of the loss can begin a round.
    A loss of agreement that no election comes with or follows (a node recovering under
    the leader) begins none. The events do not say when an election that changed
    nothing ended (a higher node's answer stopped it), so one that a follower started
    while all agreed is taken for the start of the round if agreement is lost before
    any verdict. Its messages are those sent while it runs, failure-detection traffic
    apart. Feed it election starts, agreements and sends, in trace order."""

    count: int = 0
    current: Round | None = None  # the round under way, or the last one
    agreed: int | None = None  # the leader of the agreement, while there is one
    lost: bool = False  # agreement was lost, and no election has started since
    kept: list[Round] | None = None  # every round, for whoever asked (the summary)
    _maybe: Round | None = None  # an election started while all agree: a round, if agreement is lost at its instant
    _first: Round | None = None  # the first election a follower started while all agree: a round, if agreement is lost

    def observe(self, e: Event) -> Round | None:
        """Take one event; the round it began, if it began one."""
        kind = type(e)
        if kind is SendEvent:
            if e.msg.role is not MessageRole.DETECTOR:
                if self.running:
                    self.current.messages[e.msg.type] += 1
                    return None
                if self._maybe is not None and self._maybe.began == e.t:
                    self._maybe.messages[e.msg.type] += 1
                if self._first is not None:
                    self._first.messages[e.msg.type] += 1
        elif kind is ElectionStartEvent:
            if self.count == 0 or self.lost:
                return self._begin(Round(e.t, e.node, e.seq))
            if self.agreed is not None:
                if self._maybe is None or self._maybe.began != e.t:
                    self._maybe = Round(e.t, e.node, e.seq)
                if self._first is None and e.node != self.agreed:
                    self._first = Round(e.t, e.node, e.seq)
        elif kind is AgreementEvent:
            maybe, first, self._maybe, self._first = self._maybe, self._first, None, None
            if e.leader is None and self.agreed is not None:
                began = maybe if maybe is not None and maybe.began == e.t else first
                if began is not None:
                    self.agreed = None
                    return self._begin(began)
            if e.leader is None:
                self.lost = self.lost or self.agreed is not None
            elif self.running:
                self.current.agreed, self.current.leader = e.t, e.leader
            self.agreed = e.leader
        return None

    def _begin(self, round_: Round) -> Round:
        self.count += 1
        self.lost = False
        self.current = round_
        if self.kept is not None:
            self.kept.append(round_)
        return round_

    @property
    def running(self) -> bool:
        """A round is under way: it began, and agreement has not come since."""
        return self.current is not None and self.current.agreed is None and not self.lost

    def copy(self) -> Rounds:
        return Rounds(self.count, self.current and self.current.copy(), self.agreed, self.lost, None,
                      self._maybe and self._maybe.copy(), self._first and self._first.copy())
