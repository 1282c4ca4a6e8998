"""Plain cases without Python's start-up: a process that has imported what a `bully-tui`
run imports first, and forks one child per case (`ForkServer.spawn`, a Popen-like
`Forked`). A plain case (no signal, a standard output to write to) spends more than half
of its CPU starting Python and importing; forked, it spends only the rest. So do a case
signalled a moment after its start-up (after its first file, or its first statement), and
a live view in a terminal, signalled once it shows its screen.

The child is the case's process as `python -m playground ARGV` makes it: a session of
its own, its standard streams (passed over the socket), working folder, environment,
limits and argv; the entry module run as `__main__` by runpy, as `-m` does; and Python's
own ending (a traceback and 1, SystemExit, death by a signal); sys.stdin, stdout and stderr
made on its streams as Python's start-up makes them (a terminal's stdout buffered by lines,
None for a standard output closed). It is not a process whose start-up is under test: a
signal in it. The campaign spawns those (spawn.py).

The server runs this file (`python forkserver.py SOCKET`, PYTHONPATH the checkout under
test, as for a spawned case); it answers each request with the child's pid, and once the
child has ended, its status and the CPU it took. Single-threaded, so forking is safe."""

from __future__ import annotations

import gc
import importlib
import io
import json
import os
import pkgutil
import resource
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# What every run imports first, then what its command imports as it runs (a headless run's
# wiring, export's drawing, the hunt's hypothesis, the exhaustive search and the hunt's
# report, a node, the reader, verify, --compare, serve's web server, the live real view and
# attach; and every algorithm of protocol/, 3 to 6 ms each): a forked case imports none of it again (Textual and rich among it; 0.1 to 0.5 s a
# case). They start no thread and read the environment no case changes (each only has its
# own TMPDIR, and tempfile's cached folder is forgotten at the fork: _become).
PRELOAD = ("playground.cli", "playground.cli.run", "playground.run.interrupt",
           "playground.run.wiring", "playground.record.export", "playground.record.reader", "playground.run.hunt",
           "playground.run.explore", "playground.cli.node", "playground.cli.hunt", "playground.run.hunt_report",
           "playground.cli.verify", "playground.run.compare", "playground.cli.web_server", "playground.ui.real_app",
           "playground.real.attach")
PRELOAD_ALL_OF = "protocol"  # (pure: no I/O, no thread)
MEMORY_GUARD = 4 << 30  # address space per case: a runaway run fails instead of taking the machine


def at_defaults(*ignored: int) -> None:
    """In a child before exec (preexec_fn), or forked: the stopping signals at their default
    actions, as a shell starts a command in the foreground. A suite run under nohup
    ignores SIGHUP, one started in the background by a script ignores SIGINT, and a
    child inherits what is ignored: a signal before bully-tui's first statement would
    be discarded there, which is not the moment under test. `ignored`: those ignored
    instead, as nohup or a script's background job starts a command."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN if signum in ignored else signal.SIG_DFL)


def child_limits(fsize: int | None, close_stdout: bool = False, ignored: int | None = None) -> None:
    """In a case's process before it runs (spawned: before exec): the signals at their
    defaults, no core files, an address space guard, and the file limit (writes past it
    fail with EFBIG, not a fatal SIGXFSZ); `close_stdout`: no standard output at all, as
    after `>&-`; `ignored`: that signal ignored (at_defaults). (Spawned, it runs in the
    child of a thread of ours, so it calls only signal, os and resource, which take no lock
    another thread may hold at the fork.)"""
    at_defaults(*(() if ignored is None else (ignored,)))
    if close_stdout:
        os.close(1)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    guard = MEMORY_GUARD if hard == resource.RLIM_INFINITY else min(MEMORY_GUARD, hard)
    resource.setrlimit(resource.RLIMIT_AS, (guard, hard))
    if fsize is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


# --- the server's side -------------------------------------------------------------------------


def _serve(listener: socket.socket) -> tuple[dict, list[int]]:
    """Answer requests until one is for this process: returns only in a child."""
    wake_r, wake_w = os.pipe()
    for fd in (wake_r, wake_w):
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiting: dict[int, socket.socket] = {}
    chooser = selectors.DefaultSelector()
    chooser.register(listener, selectors.EVENT_READ, "request")
    chooser.register(wake_r, selectors.EVENT_READ, "ended")
    chooser.register(sys.stdin, selectors.EVENT_READ, "stop")  # (its end: the campaign closed it, or is gone)
    while True:
        for key, _ in chooser.select():
            if key.data == "stop":
                return {}, []
            if key.data == "request":
                conn, _ = listener.accept()
                request, fds = _receive(conn)
                if request is None:  # (the client went away)
                    for fd in fds:
                        os.close(fd)
                    conn.close()
                    continue
                sys.stdout.flush(), sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    chooser.close()
                    for fd in (listener.fileno(), conn.fileno(), wake_r, wake_w, *(c.fileno() for c in waiting.values())):
                        os.close(fd)  # (the server's, and the other cases' connections)
                    return request, fds
                for fd in fds:
                    os.close(fd)
                conn.sendall(f"{pid}\n".encode())
                waiting[pid] = conn
            else:
                try:
                    while os.read(wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
                _reap(waiting)


def _reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            ended = {"code": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime}
            try:
                conn.sendall(json.dumps(ended).encode() + b"\n")
            except OSError:
                pass
            conn.close()


def _receive(conn: socket.socket) -> tuple[dict | None, list[int]]:
    """A request: its length, a newline and JSON, the three streams' fds with the first bytes."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    head, _, body = data.partition(b"\n")
    if not head.isdigit():
        return None, fds
    while len(body) < int(head):
        more = conn.recv(65536)
        if not more:
            return None, fds
        body += more
    return json.loads(body), fds


def _become(request: dict, fds: list[int]) -> None:
    """This child becomes the case's process, as far as Python's start-up had not made it."""
    os.setsid()
    for fd, number in zip(fds, (0, 1, 2)):
        os.dup2(fd, number)
    for fd in fds:
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]  # (-m puts the working folder first)
    sys.argv = ["-m", *request["argv"]]
    tempfile.tempdir = None  # (gettempdir reads the case's TMPDIR again)
    ignored = request.get("ignored")
    child_limits(request["fsize"], request.get("close_stdout", False), ignored=ignored)
    _standard_streams()
    if ignored != signal.SIGINT:  # (Python's start-up puts it in place, unless SIGINT is ignored)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _standard_streams() -> None:
    """sys.stdin, stdout and stderr made again on the case's own streams, as Python's
    start-up makes them (create_stdio): a terminal's stdout buffered by lines, a pipe's or a
    file's by blocks, stderr by lines (or none buffered: PYTHONUNBUFFERED, -u), None for
    one closed (`>&-`); the encoding and errors of the server's own."""
    buffered = not sys.__stdout__.write_through  # (as the server's own were made)
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        was = getattr(sys, name)
        try:
            os.fstat(fd)
        except OSError:
            setattr(sys, name, None)
            setattr(sys, f"__{name}__", None)
            continue
        mode = "r" if fd == 0 else "w"
        buffer = open(fd, f"{mode}b", buffering=-1 if buffered or mode == "r" else 0,  # noqa: SIM115 (the
                      closefd=False)  # process's own, for its life)
        stream = io.TextIOWrapper(buffer, encoding=was.encoding, errors=was.errors, newline="\n",
                                  line_buffering=buffered and (fd == 2 or os.isatty(fd)), write_through=not buffered)
        stream.mode = mode
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def main() -> None:
    path = sys.argv[1]
    sys.path[0] = os.getcwd()  # (not this file's folder: its modules' names are not the product's)
    try:
        package = importlib.import_module(PRELOAD_ALL_OF)
    except ImportError:
        package = None
    every = [m.name for m in pkgutil.iter_modules(getattr(package, "__path__", []), f"{PRELOAD_ALL_OF}.")]
    for name in (*PRELOAD, *every):
        try:
            importlib.import_module(name)
        except ImportError:  # (a checkout under test without it: each case imports it)
            pass
    gc.freeze()  # (what is imported stays out of the children's collections: fewer pages copied, less to walk)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    request, fds = _serve(listener)
    if not request:
        return
    _become(request, fds)
    import runpy
    import types

    sys.modules["__main__"] = types.ModuleType("__main__")  # (-m runs the entry in an empty one)
    runpy._run_module_as_main(request["module"])  # (what `python -m` calls)


# --- the campaign's side -----------------------------------------------------------------------


class ForkServer:
    """One server for one checkout; `spawn` gives a `Forked` that behaves as a Popen."""

    def __init__(self, root: Path, env: dict[str, str]):
        self.folder = Path(tempfile.mkdtemp(prefix="bully-forks-"))
        self.path = str(self.folder / "s")
        self.log = self.folder / "log"  # (its own stderr: what it says if it cannot start)
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([sys.executable, __file__, self.path], cwd=root, env=env,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        if self.process.stdout.readline() != b"ready\n":
            self.process.kill()
            self.process.wait()
            raise RuntimeError(f"the fork server did not start: {self.log.read_text()[-300:]}")
        self.lock = threading.Lock()
        self.cpu = 0.0  # seconds of CPU its children took

    def spawn(self, module: str, argv: list[str], cwd: Path, env: dict[str, str], fsize: int | None,
              stdout: int | object, stderr: int | object = subprocess.PIPE, ignored: int | None = None,
              stdin: int | None = None) -> Forked:
        """`stdout`, `stderr`: subprocess.PIPE, a file or a file descriptor (stdout
        subprocess.DEVNULL: none at all, as after `>&-`); `stdin`: a file descriptor (None:
        /dev/null); `ignored`: that signal ignored from the start, as nohup starts a command."""
        return Forked(self, module, argv, cwd, env, fsize, stdout, stderr, ignored, stdin)

    def took(self, seconds: float) -> None:
        with self.lock:
            self.cpu += seconds

    def close(self) -> None:
        self.process.stdin.close()  # (the server's sign to stop)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        for leftover in self.folder.iterdir():
            leftover.unlink()
        self.folder.rmdir()


def _number(stream: int | object) -> int:
    """A file descriptor, or a file's."""
    return stream if isinstance(stream, int) else stream.fileno()


class Forked:
    """A forked case, as much of subprocess.Popen as spawn.py uses: pid, returncode, poll,
    wait, communicate (stdout and stderr read whole, as pipes, or each given a file of its
    own), send_signal, kill."""

    def __init__(self, server: ForkServer, module: str, argv: list[str], cwd: Path, env: dict[str, str],
                 fsize: int | None, stdout: int | object, stderr: int | object = subprocess.PIPE,
                 ignored: int | None = None, stdin: int | None = None):
        self.args = argv
        self.returncode: int | None = None
        self.cpu: float | None = None  # (as Measured's: the CPU the case took, once it has ended)
        self._ended = threading.Event()
        self._server = server
        err_r, err_w = os.pipe() if stderr == subprocess.PIPE else (None, None)
        out_r, out_w = os.pipe() if stdout == subprocess.PIPE else (None, None)
        stdin = os.open(os.devnull, os.O_RDONLY) if stdin is None else os.dup(stdin)
        closed = stdout == subprocess.DEVNULL  # (the child closes what it is given there)
        to_child = [stdin, stdin if closed else out_w if out_w is not None else _number(stdout),
                    err_w if err_w is not None else _number(stderr)]
        body = json.dumps({"module": module, "argv": argv, "cwd": str(cwd), "env": env, "fsize": fsize,
                           "ignored": ignored, "close_stdout": closed}).encode()
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._conn.connect(server.path)
            socket.send_fds(self._conn, [f"{len(body)}\n".encode() + body], to_child)
            self._answers = self._conn.makefile("rb")
            self.pid = int(self._answers.readline())
        finally:
            for fd in (stdin, out_w, err_w):
                if fd is not None:
                    os.close(fd)
        self._out, self._err = bytearray(), bytearray()
        self._readers = [threading.Thread(target=self._read, args=(fd, into), daemon=True)
                         for fd, into in ((out_r, self._out), (err_r, self._err)) if fd is not None]
        self._piped_out, self._piped_err = out_r is not None, err_r is not None
        for reader in self._readers:
            reader.start()
        threading.Thread(target=self._wait_end, daemon=True).start()

    @staticmethod
    def _read(fd: int, into: bytearray) -> None:
        with open(fd, "rb", buffering=0) as f:
            while chunk := f.read(65536):
                into.extend(chunk)

    def _wait_end(self) -> None:
        line = self._answers.readline()
        ended = json.loads(line) if line else {"code": -signal.SIGKILL, "cpu": 0.0}  # (server gone)
        self._server.took(ended["cpu"])
        self.cpu = ended["cpu"]
        self.returncode = ended["code"]
        self._answers.close(), self._conn.close()
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode if self._ended.is_set() else None

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[bytes | None, bytes]:
        deadline = None if timeout is None else time.monotonic() + timeout
        self.wait(timeout)
        for reader in self._readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)
        return (bytes(self._out) if self._piped_out else None), (bytes(self._err) if self._piped_err else None)

    def send_signal(self, signum: int) -> None:
        if not self._ended.is_set():
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


if __name__ == "__main__":
    main()
