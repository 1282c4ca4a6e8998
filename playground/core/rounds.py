"""Election rounds, the one definition: the status bar's count, the summary's rounds and
the timeline's markers all read `Rounds`, fed the trace's events in order."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

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
    _at_latest_instant: Round | None = None  # the election started at the latest instant while all agree: a round, if agreement is lost then
    _first_by_a_follower: Round | None = None  # the first election a follower started while all agree: a round, if agreement is lost

    def observe(self, e: Event) -> Round | None:
        """Take one event; the round it began, if it began one."""
        kind = type(e)
        if kind is SendEvent:
            if e.msg.role is not MessageRole.DETECTOR:
                if self.running:
                    self.current.messages[e.msg.type] += 1
                    return None
                if self._at_latest_instant is not None and self._at_latest_instant.began == e.t:
                    self._at_latest_instant.messages[e.msg.type] += 1
                if self._first_by_a_follower is not None:
                    self._first_by_a_follower.messages[e.msg.type] += 1
        elif kind is ElectionStartEvent:
            if self.count == 0 or self.lost:
                return self._begin(Round(e.t, e.node, e.seq))
            if self.agreed is not None:
                if self._at_latest_instant is None or self._at_latest_instant.began != e.t:
                    self._at_latest_instant = Round(e.t, e.node, e.seq)
                if self._first_by_a_follower is None and e.node != self.agreed:
                    self._first_by_a_follower = Round(e.t, e.node, e.seq)
        elif kind is AgreementEvent:
            latest, by_follower = self._at_latest_instant, self._first_by_a_follower
            self._at_latest_instant = self._first_by_a_follower = None
            if e.leader is None and self.agreed is not None:
                began = latest if latest is not None and latest.began == e.t else by_follower
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
        """An independent copy, without the rounds kept (every field copied by replace: one
        added later is not forgotten; the rounds under way copied, they change)."""
        return replace(self, current=self.current and self.current.copy(), kept=None,
                       _at_latest_instant=self._at_latest_instant and self._at_latest_instant.copy(),
                       _first_by_a_follower=self._first_by_a_follower and self._first_by_a_follower.copy())
