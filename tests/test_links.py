"""The links (playground/links.py): lossless FIFO, and what a big run keeps in memory."""

from playground.core.links import Links
from protocol.classic import Answer, Election


def test_rule2_a_shorter_delay_waits_for_the_message_before_it_on_its_link():
    links = Links()
    assert links.send(1, 2, 0, Election(), earliest=500) == 500
    assert links.send(1, 2, 1, Answer(), earliest=300) == 500  # held behind the first
    assert links.send(3, 2, 2, Answer(), earliest=300) == 300  # another link: not held
    taken = [(t, dst, d.src, d.msg_id) for t, dst, d in links.take(1000)]
    assert taken == [(300, 2, 3, 2), (500, 2, 1, 0), (500, 2, 1, 1)]  # by time, each link in send order


def test_rule1_every_message_is_taken_exactly_once():
    links = Links()
    for i in range(10):
        links.send(i % 3, 9, i, Election(), earliest=100 + i % 4)
    assert len(links) == 10
    assert sorted(d.msg_id for _, _, d in links.take(10_000)) == list(range(10)) and len(links) == 0
    assert list(links.take(10_000)) == []


def test_a_harness_brings_the_head_of_the_link_it_names_to_the_present():
    links = Links()
    links.send(1, 2, 0, Election(), earliest=900)
    links.send(3, 2, 1, Answer(), earliest=900)
    links.send(1, 2, 2, Answer(), earliest=900)
    links.bring_forward(1, 2, now=10)
    links.bring_forward(1, 2, now=10)
    assert [(t, d.src, d.msg_id) for t, _, d in links.take(11)] == [(10, 1, 0), (10, 1, 2)]  # in send order
    assert list(links.in_flight()) == [(3, 2)]
    assert links.send(1, 2, 3, Answer(), earliest=20) == 20  # 1->2 is idle: nothing to wait for
    assert links.send(3, 2, 4, Answer(), earliest=20) == 900  # 3->2 is not


def test_an_idle_link_keeps_nothing():
    links = Links()
    for src in range(100):
        links.send(src, 1000, src, Election(), earliest=5)
    list(links.take(6))
    assert not links._tail and links._instants == {}


def test_one_delay_for_all_keeps_no_tails_and_a_shorter_one_finds_them():
    """Rule 2 without a table of tails while nothing can overtake (memory: a classic
    storm's million busy links); the first send that could finds them in flight."""
    links = Links()
    for src in range(1, 4):
        links.send(src, 9, src, Election(), earliest=1000)
    links.send(1, 9, 4, Answer(), earliest=1500)
    assert links._tail is None
    assert links.send(1, 9, 5, Answer(), earliest=600) == 1500  # behind 4, on its link
    assert links.send(2, 9, 6, Answer(), earliest=600) == 1000  # behind 2
    assert links.send(5, 9, 7, Answer(), earliest=600) == 600  # an idle link
    taken = [(t, d.src, d.msg_id) for t, _, d in links.take(2000)]
    assert taken == [(600, 5, 7), (1000, 1, 1), (1000, 2, 2), (1000, 3, 3), (1000, 2, 6), (1500, 1, 4), (1500, 1, 5)]
    assert links._tail is None  # every link idle again


def test_a_message_taken_by_hand_still_holds_back_what_its_link_sends_next():
    """Rule 2 by hand (rule 4): a message the user takes out of its link leaves its
    arrival as the link's latest, kept or not before, so the same steps give the same
    arrivals whatever the links kept (a transcript's rerun)."""
    links = Links()
    links.send(1, 2, 1, Election(), earliest=2000)
    assert links._tail is None  # (nothing could overtake yet)
    links.take_message(1)
    assert links.send(1, 2, 2, Answer(), earliest=1500) == 2000
    assert links.send(3, 2, 3, Answer(), earliest=1500) == 1500  # another link: nothing to wait for
