"""`bully-tui hunt --scheduler ADDRESS`: the random hunt's batches on a Dask cluster.

The search is hunt.py's `search`, unchanged: it decides which batches run and which
finding wins (rule 4: the lowest batch that finds), so a budget in schedules gives the
same finding on a cluster as on one process. Here is only where the batches run: each
is a task, `run_batch(hunt, index)`, on one of the cluster's workers.

Rules:
  1. `distributed` is optional (`pip install 'bully-tui[cluster]'`), imported only when
     --scheduler is given: the command's start-up does not pay for it.
  2. A worker must compute what this process would: each task carries the versions that
     decide a batch's schedules (bully-tui's, hypothesis's, Python's) and refuses to run
     under others. A worker runs one batch at a time, whatever its threads: hypothesis's
     search, and the hunt's switch of its local constants (`_no_local_constants`), are
     one per process. (Give workers one thread each: `--nthreads 1`.)
  3. Nothing waits without a bound: the scheduler answers within CONNECT_WITHIN seconds
     and has a worker within as long, or the hunt says so in one line. The search waits
     for a batch `checked` (interrupt.py), a little at a time, so a signal stops it at
     once; on the way out, whatever the reason, the batches under way are cancelled (one
     a worker is running ends with its batch: Dask cannot cut a task short).
"""

from __future__ import annotations

import logging
import platform
import queue
import socket
import threading
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from ..core.config import InputError
from . import interrupt
from .hunt import BatchResult, Hunt, run_batch

CONNECT_WITHIN = 10.0  # seconds: for the scheduler to answer, then for its first worker
CLOSE_WITHIN = 5.0  # seconds to cancel the batches and say goodbye
POLL = 0.1  # seconds between two looks for a signal while a batch is awaited
EXTRA = "pip install 'bully-tui[cluster]'"


def need_distributed() -> None:
    """Rule 1: the extra, or one line saying how to install it."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError(f"--scheduler needs Dask's distributed package: {EXTRA}") from None


class WrongVersions(Exception):
    """A worker whose versions are not the hunt's (rule 2)."""


@cache
def versions() -> tuple[str, str, str]:
    """What decides a batch's schedules besides the hunt: bully-tui, hypothesis, Python."""
    from importlib.metadata import PackageNotFoundError, version

    import hypothesis

    try:
        ours = version("bully-tui")
    except PackageNotFoundError:  # (a checkout on the path, not installed)
        ours = "unknown"
    return ours, hypothesis.__version__, platform.python_version()


_one_at_a_time = threading.Lock()


def cluster_batch(hunt: Hunt, index: int, wanted: tuple[str, str, str]) -> BatchResult:
    """The task a worker runs (rule 2)."""
    if versions() != wanted:
        raise WrongVersions(f"a worker has bully-tui {versions()[0]}, hypothesis {versions()[1]} and Python "
                            f"{versions()[2]}; this hunt has {wanted[0]}, {wanted[1]} and {wanted[2]}: the same "
                            "seed would draw other schedules")
    with _one_at_a_time:
        # The worker's own threads (its event loop, heartbeats) use the random module while
        # hypothesis draws, which it takes for the strategy's doing and warns of, once a
        # batch, in the worker's log. The hunt's draws do not use it (Schedule.seed does).
        warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies")
        return run_batch(hunt, index)


class ClusterBatches:
    """hunt.Batches on a Dask cluster: a task per batch, its result back through a queue."""

    def __init__(self, client, address: str):
        self.client = client
        self.address = address
        self.futures: dict[int, object] = {}
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        self.name = uuid.uuid4().hex[:12]  # (a task's key: this hunt's batch, no other client's)

    def room(self) -> int:
        # Twice its workers: a worker that ends a batch has the next one at hand.
        return 2 * max(1, len(self.client.nthreads()))

    def submit(self, hunt: Hunt, index: int) -> None:
        future = self.client.submit(cluster_batch, hunt, index, versions(), key=f"bully-tui-hunt-{self.name}-{index}",
                                    priority=-index, pure=False)  # (lower batches first: rule 4 waits for them)
        self.futures[index] = future
        future.add_done_callback(lambda done, index=index: self.done.put((index, done)))

    def next(self) -> BatchResult:
        while True:
            try:
                index, future = self.done.get(timeout=POLL)
            except queue.Empty:
                interrupt.raise_if_stopped()
                continue
            if index in self.futures:  # (not one dropped: rule 4)
                return self._result(index, future)

    def _result(self, index: int, future) -> BatchResult:
        from distributed.client import FutureCancelledError

        try:
            result = future.result()
        except WrongVersions as e:
            raise InputError(f"--scheduler {self.address}: {e}") from None
        except ImportError as e:
            raise InputError(f"--scheduler {self.address}: a worker cannot run the hunt ({e}): install bully-tui "
                             "where the workers run, the same version as here") from None
        except (FutureCancelledError, OSError) as e:
            raise InputError(f"--scheduler {self.address}: the cluster lost the hunt's batches "
                             f"({type(e).__name__}: {e})") from None
        except Exception as e:
            if type(e).__module__.startswith("distributed"):  # (a worker died: KilledWorker)
                raise InputError(f"--scheduler {self.address}: the cluster could not run a batch "
                                 f"({type(e).__name__}: {e})") from None
            raise  # a batch's own error: a bug, with its traceback
        del self.futures[index]
        return result

    def drop(self, indices: set[int]) -> None:
        dropped = [self.futures.pop(i) for i in indices if i in self.futures]
        if dropped:
            self.client.cancel(dropped)

    def cancel_all(self) -> None:
        if self.futures:
            self.client.cancel(list(self.futures.values()))
            self.futures.clear()


@contextmanager
def on_cluster(address: str) -> Iterator[ClusterBatches]:
    """The cluster at `address`, connected (rule 3), for one search; its batches still
    under way are cancelled on the way out, and the connection closed."""
    from distributed import Client

    _quiet()
    _reachable(address)
    try:
        client = Client(address, timeout=CONNECT_WITHIN, set_as_default=False)
    except (OSError, TimeoutError):
        raise InputError(f"--scheduler {address}: no Dask scheduler answered within {CONNECT_WITHIN:g} s (start one "
                         "there: dask scheduler)") from None
    batches = ClusterBatches(client, address)
    try:
        if not client.nthreads():
            try:
                client.wait_for_workers(1, timeout=CONNECT_WITHIN)
            except (OSError, TimeoutError):
                raise InputError(f"--scheduler {address}: the scheduler has no worker (start some: dask worker "
                                 f"{address} --nthreads 1)") from None
        with interrupt.checked():
            yield batches
    finally:
        try:
            batches.cancel_all()
        finally:
            client.close(timeout=CLOSE_WITHIN)


def _reachable(address: str) -> None:
    """Whether a Dask scheduler is there, said within CONNECT_WITHIN: where nothing listens
    at once, and where something listens but does not speak first as a scheduler does (its
    handshake, on tcp), when the bound is over. Dask's client would try a refused port
    again and again, and wait for ever on one that never answers."""
    scheme, _, rest = address.partition("://")
    host, _, port = rest.rpartition(":")
    silent = InputError(f"--scheduler {address}: no Dask scheduler answered within {CONNECT_WITHIN:g} s (start one "
                        "there: dask scheduler)")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_WITHIN) as probe:
            if scheme == "tcp" and not probe.recv(1):  # (tls: the client speaks first)
                raise silent
    except ConnectionRefusedError:
        raise InputError(f"--scheduler {address}: nothing listens there (start a Dask scheduler there: "
                         "dask scheduler)") from None
    except TimeoutError:
        raise silent from None
    except OSError:
        pass  # (no route, or a name that does not resolve: the client says it)


def _quiet() -> None:
    """Dask's own logging and warnings (a lost connection, mismatched versions) would
    print lines of their own: what matters is said in the hunt's one line."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore", module="distributed")

