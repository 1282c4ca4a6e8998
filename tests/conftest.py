import compileall
import gc
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from playground.record.signals import STOPS, not_ignored
from tests import app_settles

# CI pins hypothesis: the same examples every run, so a red run can be reproduced.
settings.register_profile(
    "ci", derandomize=True, max_examples=60, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A longer hunt, run by hand (HYPOTHESIS_PROFILE=thorough) before claiming a property.
settings.register_profile("thorough", max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def collector_as_it_was():
    """The app sets the garbage collector's policy for its process and leaves it so (the
    process ends with it); between tests it is put back."""
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def _nothing(_signum, _frame):
    pass


def _children_start_as_in_a_terminal(config) -> None:
    """A suite started under nohup ignores SIGHUP, and one a script starts in the background
    ignores SIGINT; every process it starts would inherit that, and bully-tui leaves an
    ignored signal ignored (playground/__main__.py, rule 4), so a test that sends one would
    wait for nothing. Here a handler that does nothing takes its place: the suite still
    ignores it, and a process it starts has it at its default action (exec resets a
    handled signal, not an ignored one). The workers (pytest-xdist) are told which."""
    if hasattr(config, "workerinput"):
        ignored = [int(n) for n in os.environ.get("BULLY_TESTS_IGNORED", "").split(",") if n]
    else:
        ignored = [signum for signum in STOPS if signum not in not_ignored(STOPS)]
        os.environ["BULLY_TESTS_IGNORED"] = ",".join(str(int(signum)) for signum in ignored)
    for signum in ignored:
        signal.signal(signum, _nothing)


def pytest_configure(config):
    _children_start_as_in_a_terminal(config)
    app_settles.install()
    _compile_once(config)


def _compile_once(config):
    """The product's modules compiled before any test starts a process of it: where
    PYTHONDONTWRITEBYTECODE is set (as in some CI images), no process writes its bytecode,
    and each of the suite's thousand processes would compile the package again (0.1 s of
    CPU each). Once, in the process that shares the tests out; only what changed."""
    if hasattr(config, "workerinput"):
        return
    root = Path(__file__).resolve().parent.parent
    for package in ("playground", "protocol", "themes"):
        if (root / package).is_dir():
            compileall.compile_dir(root / package, quiet=2)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """--dist loadgroup sends the tests of one xdist_group to one test process by a suffix
    pytest-xdist adds to their ids in each worker ("...::test@dask"). pytest 9.2 keeps a
    test's id as a structured NodeId that xdist 3.8's assignment to `_nodeid` no longer
    reaches (pytest-xdist issue 1386): the group's tests were shared out one by one, and
    each test process started a Dask cluster of its own. Where the suffix is missing, it
    is added here; where xdist added it (another pytest), nothing is done."""
    if not getattr(config.option, "loadgroup", False):  # (set in a worker under --dist loadgroup)
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)
