"""The mutual-exclusion machines (protocol/mutex.py and its four algorithms), pure: nodes
wired in memory, the test choosing which link's head is delivered next (links are FIFO),
no clock. Each rule of each module's header (and the rule each message and change of
state names), the lecture's message counts, and safety under every delivery order tried."""

from __future__ import annotations

import functools
import random
from collections import deque

import pytest

from protocol import (
    MUTEXES,
    Config,
    Exit,
    Joining,
    Leaving,
    Receive,
    SafeStorage,
    Send,
    Start,
    Suspect,
    TimerFired,
    Want,
    machine,
)
from protocol.central import Grant, Release, Request
from protocol.lamport import LamportRelease, LamportReply, LamportRequest
from protocol.mutex import HELD, RELEASED, WANTED
from protocol.ricart_agrawala import RaReply, RaRequest
from protocol.token_ring import Token

QUIET = Config(timeout=4.0, probe_interval=0.0)  # no probes: only what the test asks for


class Wired:
    """N composed machines on in-memory FIFO links; timers are never run (the election
    beside the mutex settles on Start: the highest node announces itself at once)."""

    def __init__(self, n: int, mutex: str, election: str = "classic"):
        self.cls = machine(f"{election}+{mutex}")
        self.ids = tuple(range(1, n + 1))
        self.storage = {k: SafeStorage() for k in self.ids}
        self.links: dict[tuple[int, int], deque] = {}
        self.sent: list[tuple[int, int, object]] = []
        self.why: dict[type, set[str | None]] = {}  # message class -> the rules its sends named
        self.nodes = {k: self.cls(k, self.ids, QUIET, self.storage[k]) for k in self.ids}
        for k in self.ids:
            self.step(k, Start())
        self.settle()

    def start(self, k: int) -> None:
        self.nodes[k] = self.cls(k, self.ids, QUIET, self.storage[k])
        self.step(k, Start())

    def crash(self, k: int) -> None:
        del self.nodes[k]
        for link in [link for link in self.links if k in link]:
            del self.links[link]

    def apply(self, k: int, outputs: list) -> None:
        for out in outputs:
            if type(out) is Send and out.dst in self.nodes:
                self.links.setdefault((k, out.dst), deque()).append(out.msg)
                self.sent.append((k, out.dst, out.msg))
                self.why.setdefault(type(out.msg), set()).add(out.rule)

    def step(self, k: int, event: object) -> None:
        self.apply(k, self.nodes[k].step(event))

    def deliver(self, link: tuple[int, int]) -> None:
        src, dst = link
        msg = self.links[link].popleft()
        if not self.links[link]:
            del self.links[link]
        if dst in self.nodes:
            self.step(dst, Receive(src, msg))

    def settle(self, limit: int = 100_000) -> None:
        """Deliver, lowest link first, until nothing is in flight but the token (which
        goes round for ever)."""
        for _ in range(limit):
            if all(type(m) is Token for queue in self.links.values() for m in queue):
                return
            self.deliver(min(link for link, queue in self.links.items() if type(queue[0]) is not Token))
            self.check()
        raise AssertionError("still messages in flight")

    def steps(self, count: int, rng: random.Random) -> None:
        for _ in range(count):
            if self.links:
                self.deliver(rng.choice(sorted(self.links)))
                self.check()

    def state(self, k: int):
        return self.nodes[k].cs.state

    def holders(self) -> list[int]:
        return [k for k, node in self.nodes.items() if node.cs.state is HELD]

    def check(self) -> None:
        pass

    def count(self, types: tuple[type, ...]) -> int:
        return sum(1 for _, _, msg in self.sent if type(msg) in types)


def mutex_messages(cluster: Wired) -> int:
    return cluster.count(cluster.cls.mutex.messages)


# --- the composition --------------------------------------------------------------------


def test_the_election_beside_a_mutex_elects_as_alone_and_every_node_starts_released():
    c = Wired(5, "central")
    assert {node.leader for node in c.nodes.values()} == {5}
    assert all(c.state(k) is RELEASED for k in c.ids)
    assert c.cls.name == "classic+central" and c.cls.mutex is MUTEXES["central"]


def test_want_when_not_released_and_exit_when_not_held_do_nothing():
    c = Wired(3, "ricart-agrawala")
    c.step(1, Exit())
    assert c.state(1) is RELEASED and not c.links
    c.step(1, Want())
    sent = len(c.sent)
    c.step(1, Want())
    assert len(c.sent) == sent


# --- central (lecture 3-4) --------------------------------------------------------------


def test_central_rule1_2_3_a_client_asks_its_leader_enters_on_grant_and_releases():
    c = Wired(5, "central")
    c.sent.clear()
    c.step(2, Want())
    assert c.state(2) is WANTED and [(s, d, type(m)) for s, d, m in c.sent] == [(2, 5, Request)]
    assert c.why[Request] == {"central 1"} and c.nodes[2].cs.state_rule == "central 1"
    c.settle()
    assert c.state(2) is HELD and c.nodes[2].cs.state_rule == "central 2" and c.why[Grant] == {"central 4"}
    c.step(2, Exit())
    c.settle()
    assert c.state(2) is RELEASED and [type(m) for _, _, m in c.sent] == [Request, Grant, Release]  # 3 per entry
    assert c.why[Release] == {"central 3"} and c.nodes[2].cs.state_rule == "central 3"


def test_central_rule4_5_the_server_queues_in_arrival_order_and_grants_on_release():
    c = Wired(5, "central")
    for k in (2, 3, 1):
        c.step(k, Want())
        c.settle()
    assert c.holders() == [2] and c.nodes[5].cs.queue == [3, 1]
    c.step(2, Exit())
    c.settle()
    assert c.holders() == [3] and c.why[Grant] == {"central 4", "central 5"}  # (2's at once, 3's on 2's release)
    c.step(3, Exit())
    c.settle()
    assert c.holders() == [1]


def test_central_the_leader_serves_itself_without_messages():
    c = Wired(4, "central")
    c.sent.clear()
    c.step(4, Want())
    assert c.state(4) is HELD and not c.sent


def test_central_rule6_a_leader_crash_while_a_follower_holds_puts_two_in_the_cs():
    # The lecture's question (3-4), answered: the new leader knows no holder.
    c = Wired(5, "central")
    c.step(2, Want())
    c.settle()
    assert c.holders() == [2]
    c.crash(5)
    for k in (1, 2, 3, 4):
        c.step(k, Suspect())
    c.settle()
    c.step(4, TimerFired("answer_wait"))  # nobody above 4 answered within T
    c.settle()
    assert {c.nodes[k].leader for k in (1, 2, 3, 4)} == {4}
    c.step(3, Want())
    c.settle()
    assert c.holders() == [2, 3]


# --- token ring (3-5) ---------------------------------------------------------------------


def test_token_ring_rule1_4_the_token_is_born_once_and_goes_round_in_id_order():
    c = Wired(4, "token-ring")
    hops = []
    for _ in range(8):
        (link,) = c.links
        hops.append(link)
        c.deliver(link)
    assert hops == [(1, 2), (2, 3), (3, 4), (4, 1)] * 2
    assert c.why[Token] == {"token-ring 1", "token-ring 3"}  # born at 1, then passed on as it arrives


def test_token_ring_rule1_a_recovering_lowest_node_makes_no_second_token():
    c = Wired(3, "token-ring")
    c.deliver((1, 2))  # the token at 2, away from node 1
    c.crash(1)
    c.start(1)  # incarnation 2
    tokens = sum(type(m) is Token for queue in c.links.values() for m in queue) + sum(n.cs.token for n in c.nodes.values())
    assert c.nodes[1].storage.incarnation == 2 and tokens == 1


def test_token_ring_rule2_3_5_only_the_holder_of_the_token_enters_and_passes_it_on_exit():
    c = Wired(4, "token-ring")
    c.step(3, Want())
    assert c.nodes[3].cs.state_rule == "token-ring 2"
    while c.state(3) is not HELD:
        c.deliver(next(iter(c.links)))
    assert not c.links and c.nodes[3].cs.token  # held: the token stays
    assert c.nodes[3].cs.state_rule == "token-ring 3"
    c.why.clear()
    c.step(3, Exit())
    assert list(c.links) == [(3, 4)] and [type(m) for m in c.links[(3, 4)]] == [Token]
    assert c.why[Token] == {"token-ring 5"} and c.nodes[3].cs.state_rule == "token-ring 5"


# --- Lamport (3-6) ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 5])
def test_lamport_3_n_minus_1_messages_per_entry(n):
    c = Wired(n, "lamport")
    c.sent.clear()
    c.step(1, Want())
    c.settle()
    assert c.state(1) is HELD
    c.step(1, Exit())
    c.settle()
    assert mutex_messages(c) == 3 * (n - 1)


def test_lamport_rule5_the_older_request_enters_first_and_the_other_after_its_release():
    c = Wired(3, "lamport")
    c.step(2, Want())  # stamped (1, 2)
    c.step(3, Want())  # stamped (1, 3): the same clock, the higher id: after
    c.settle()
    assert c.holders() == [2] and c.state(3) is WANTED and c.nodes[2].cs.state_rule == "lamport 5"
    assert c.why[LamportRequest] == {"lamport 2"} and c.why[LamportReply] == {"lamport 3"}
    c.step(2, Exit())
    c.settle()
    assert c.holders() == [3] and c.why[LamportRelease] == {"lamport 6"}


# --- Ricart & Agrawala (3-7) ------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 5])
def test_ricart_agrawala_2_n_minus_1_messages_per_entry(n):
    c = Wired(n, "ricart-agrawala")
    c.sent.clear()
    c.step(1, Want())
    c.settle()
    c.step(1, Exit())
    c.settle()
    assert c.state(1) is RELEASED and mutex_messages(c) == 2 * (n - 1)


def test_ricart_agrawala_rule3_defers_while_held_or_wanting_with_an_older_stamp():
    c = Wired(3, "ricart-agrawala")
    c.step(1, Want())
    c.settle()
    assert c.holders() == [1]
    c.sent.clear()
    c.step(2, Want())
    c.settle()
    assert c.nodes[1].cs.deferred == [2] and c.state(2) is WANTED  # 3 replied, 1 holds
    assert [(s, d) for s, d, m in c.sent if type(m) is RaReply] == [(3, 2)]
    assert c.why[RaRequest] == {"ricart-agrawala 2"} and c.why[RaReply] == {"ricart-agrawala 3"}
    c.step(1, Exit())  # rule 5: the deferred reply is the release
    c.settle()
    assert c.holders() == [2] and c.why[RaReply] == {"ricart-agrawala 3", "ricart-agrawala 5"}
    assert c.nodes[2].cs.state_rule == "ricart-agrawala 4"  # (the last reply let it in)


def test_ricart_agrawala_rule3_concurrent_requests_the_older_stamp_wins():
    c = Wired(3, "ricart-agrawala")
    c.sent.clear()
    c.step(3, Want())  # (1, 3)
    c.step(2, Want())  # (1, 2): older by id
    c.settle()
    assert c.holders() == [2] and c.state(3) is WANTED
    assert [(s, d) for s, d, m in c.sent if type(m) is RaRequest and d in (2, 3)] == [(3, 2), (2, 3)]
    assert (3, 2) in [(s, d) for s, d, m in c.sent if type(m) is RaReply]  # 3 answered 2 at once
    assert (2, 3) not in [(s, d) for s, d, m in c.sent if type(m) is RaReply]  # 2 defers 3


# --- safety, under every delivery order tried ------------------------------------------------


def at_most_one_holds(cluster: Wired, seed: int) -> None:
    assert len(cluster.holders()) <= 1, f"seed {seed}: {cluster.holders()} hold the CS"


@pytest.mark.parametrize("mutex", sorted(MUTEXES))
def test_at_most_one_node_holds_the_cs_whatever_the_order_of_deliveries(mutex):
    for seed in range(30):
        rng = random.Random(seed)
        c = Wired(rng.randint(2, 6), mutex)
        entries = 0
        c.check = functools.partial(at_most_one_holds, c, seed)
        for _ in range(200):
            k = rng.choice(c.ids)
            if c.state(k) is RELEASED and rng.random() < 0.3:
                c.step(k, Want())
            elif c.state(k) is HELD and rng.random() < 0.5:
                c.step(k, Exit())
                entries += 1
            c.check()
            c.steps(rng.randint(0, 4), rng)
        assert entries > 0, f"seed {seed}: nobody ever entered"


def test_central_rule3_the_release_goes_to_whoever_granted_even_with_no_leader_for_now():
    # (sent to "the leader", it was lost while an election ran, and a granter that led
    # again held the lock for the leaver for ever)
    c = Wired(4, "central")
    c.step(2, Want())
    c.settle()
    c.nodes[2].leader = None  # an election under way at node 2
    c.sent.clear()
    c.step(2, Exit())
    assert [(s, d, type(m)) for s, d, m in c.sent] == [(2, 4, Release)]
    c.settle()
    assert c.nodes[4].cs.holder is None


# --- what failures and members do (the review's cases) ----------------------------------------


def test_central_rule4_a_holder_that_crashed_and_asks_again_is_granted_again():
    c = Wired(4, "central")
    c.step(2, Want())
    c.settle()
    assert c.nodes[4].cs.holder == 2
    c.crash(2)
    c.start(2)  # it comes back released, and asks again
    c.settle()
    c.step(2, Want())
    c.settle()
    assert c.holders() == [2]


def test_central_rule2_a_grant_nobody_wants_goes_back_as_a_release():
    c = Wired(4, "central")
    c.step(2, Want())  # its Request is on its way to 4
    c.crash(2)
    c.start(2)  # back, released, before the Grant arrives
    c.settle()
    assert c.nodes[4].cs.holder is None  # the Grant came back as a Release
    c.step(3, Want())
    c.settle()
    assert c.holders() == [3]


def test_central_rule6_a_new_leader_inside_the_cs_knows_it_holds_the_lock():
    c = Wired(5, "central")
    c.step(4, Want())
    c.settle()
    c.crash(5)
    for k in (1, 2, 3, 4):
        c.step(k, Suspect())
    c.settle()
    c.step(4, TimerFired("answer_wait"))
    assert c.nodes[4].applying == "central 6"  # (after the election's rule 2 made it lead)
    c.settle()
    assert c.nodes[4].leader == 4 and c.nodes[4].cs.holder == 4
    c.step(3, Want())
    c.settle()
    assert c.holders() == [4] and c.nodes[4].cs.queue == [3]


def test_token_ring_rule1_a_newcomer_with_the_lowest_id_makes_no_token_and_rule6_a_leaver_hands_it_on():
    c = Wired(3, "token-ring")
    def tokens() -> int:
        return sum(type(m) is Token for queue in c.links.values() for m in queue) + sum(n.cs.token for n in c.nodes.values())

    assert tokens() == 1
    c.nodes[1].cs.on_join()  # (as a newcomer's start would call it)
    assert tokens() == 1
    c.step(2, Want())
    while c.state(2) is not HELD:
        c.deliver(next(iter(c.links)))
    c.why.clear()
    c.apply(2, c.nodes[2].step(Leaving()))  # leaves with the token
    assert tokens() == 1 and Token in [type(m) for m in c.links[(2, 3)]]
    assert c.why[Token] == {"token-ring 6"}


def test_lamport_rule8_a_newcomer_gets_the_holders_request_and_waits_for_its_release():
    c = Wired(3, "lamport")
    c.step(1, Want())
    c.settle()
    assert c.holders() == [1]
    c.ids = (1, 2, 3, 4)
    c.storage[4] = SafeStorage()
    c.nodes[4] = c.cls(4, c.ids, QUIET, c.storage[4])
    c.step(4, Joining())
    c.settle()
    assert "lamport 8" in c.why[LamportRequest]  # (1 sent the newcomer its request)
    c.step(4, Want())
    c.settle()
    assert c.holders() == [1] and c.state(4) is WANTED
    c.step(1, Exit())
    c.settle()
    assert c.holders() == [4]


def test_lamport_a_node_that_recovers_forgets_the_queue_and_enters_beside_the_holder():
    # (the lecture's model meeting a crash: said in lamport.py's header, shown here)
    c = Wired(3, "lamport")
    c.step(2, Want())
    c.settle()
    c.crash(1)
    c.start(1)
    c.settle()
    c.step(1, Want())
    c.settle()
    assert sorted(c.holders()) == [1, 2]
