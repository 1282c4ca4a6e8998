"""The agenda (core/agenda.py): timer firings by instant, and what a storm keeps of them."""

from playground.core.agenda import SUPERSEDED, Agenda
from playground.core.config import ClusterConfig
from playground.core.engine import run_sync
from playground.core.work import Fire
from tests.support import make_engine


def firings(agenda, end, **kw):
    return [(t, node, (f.name, f.generation) if f is not SUPERSEDED else None) for t, node, f in agenda.take(end, **kw)]


def test_a_timer_set_again_to_fire_at_the_same_instant_keeps_only_its_latest_firing():
    agenda = Agenda()
    agenda.fire(500, 1, Fire("probe", 1))
    agenda.fire(500, 2, Fire("probe", 1))
    agenda.fire(500, 1, Fire("wait", 2))
    agenda.fire(500, 1, Fire("probe", 3))  # node 1's probe of generation 1 can never fire now
    agenda.fire(600, 1, Fire("probe", 4))  # another instant: generation 3 is still due at 500
    assert agenda._instants[500][0] == 1  # its place keeps only the node's id
    assert firings(agenda, 1000) == [(500, 2, ("probe", 1)), (500, 1, ("wait", 2)), (500, 1, ("probe", 3)),
                                     (600, 1, ("probe", 4))]


def test_a_crowded_instant_is_handed_the_superseded_firing_so_where_its_slices_are_cut_is_kept():
    agenda = Agenda()
    agenda.fire(500, 1, Fire("probe", 1))
    agenda.fire(500, 1, Fire("probe", 2))
    assert firings(agenda, 501, superseded=True) == [(500, 1, None), (500, 1, ("probe", 2))]


def test_only_a_firing_of_the_same_timer_at_the_same_instant_is_superseded():
    agenda = Agenda()
    agenda.fire(500, 1, Fire("probe", 1))
    assert firings(agenda, 501) == [(500, 1, ("probe", 1))]
    agenda.fire(500, 2, Fire("probe", 1))  # (a test harness fires at the present instant, again)
    agenda.fire(500, 1, Fire("probe", 2))  # where node 1's first firing was, node 2's is now
    agenda.fire(700, 3, Fire("probe", 5))
    agenda.retime(800)  # the places move
    agenda.fire(800, 3, Fire("probe", 6))
    assert firings(agenda, 1000) == [(800, 2, ("probe", 1)), (800, 1, ("probe", 2)), (800, 3, ("probe", 5)),
                                     (800, 3, ("probe", 6))]


def test_a_storm_queues_a_firing_per_node_not_one_per_coordinator():
    """Each of N nodes hears N - 1 Coordinators at t = 2 and sets its probe timer again for
    each: N² firings at t = 7, of which N can fire."""
    nodes = 40
    engine, _ = make_engine(nodes, ClusterConfig(timeout=4, probe_interval=5, delay_min=1, delay_max=1))
    run_sync(engine, 3)
    at_7 = engine.agenda._instants[7_000_000]
    assert len(at_7) > (nodes - 1) ** 2 - nodes  # every firing has its place (a crowded instant counts them)
    assert [f[0] for f in at_7 if type(f) is tuple] == list(range(1, nodes))  # but only those that can fire are kept
    assert engine.links._tail is None  # (and one delay for all: the links keep no tails either)
