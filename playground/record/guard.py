"""The guardian: what a run leaves on disk is whole, whatever stops it, SIGKILL included.

A transcript is written as the run goes, a batch at a time. A signal with a handler
cannot cut a write (the handler runs between two), and the recorder takes a failed
write back to its last whole line. But SIGKILL, or a fatal signal the program has no
handler for, ends the process inside a write, and the kernel stops a big write at a
page boundary: the file ends mid-line. Nothing in the dying process can mend that, so
a small second process does. The first file bully-tui writes starts it (`guard()`):
`python -I -S` on this very file, in a session of its own (the terminal closing does
not reach it), reading a pipe from bully-tui. bully-tui tells it, one JSON line each:

  ["whole", path, dev, inode]   a file being appended to: if it is left behind, cut it
                                back to its last whole line
  ["remove", path, dev, inode]  a temporary file (a recording nobody asked to keep), or
                                folder (a real run's): if it is left behind, remove it
                                (whatever else was asked)
  ["done", action, path]        that is taken care of (the file was closed, or removed)

When the pipe closes (bully-tui has ended, however), the guardian does what is left
to do, to the files that are still the ones it was told of (same device and inode),
and exits. It imports only the standard library, so it starts in a few milliseconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import IO

_pipe: IO[bytes] | None = None  # to the guardian, once started
_process: subprocess.Popen | None = None


def start() -> None:
    """Have the guardian running (it takes a few milliseconds to start): before a file
    is made that it must look after, so that it is told at once."""
    global _pipe, _process
    if _pipe is None:
        _process = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                    close_fds=True)
        _pipe = _process.stdin


def _tell(*words: object) -> None:
    start()
    try:
        _pipe.write(json.dumps(words).encode() + b"\n")  # one line, far below the pipe's atomic size
        _pipe.flush()
    except OSError:
        pass  # the guardian is gone (killed on its own): nothing left to ask it


WHOLE, REMOVE = "whole", "remove"


def keep_whole(path: str) -> None:
    """If bully-tui ends before `done(WHOLE, path)`, cut `path` back to its last whole line."""
    _watch(WHOLE, path)


def remove_if_left(path: str) -> None:
    """If bully-tui ends before `done(REMOVE, path)`, remove `path` (a temporary file, or
    a folder and all in it)."""
    _watch(REMOVE, path)


def _watch(action: str, path: str) -> None:
    try:
        info = os.stat(path)
    except OSError:
        return
    _tell(action, os.path.abspath(path), info.st_dev, info.st_ino)


def done(action: str, path: str) -> None:
    """What `keep_whole` or `remove_if_left` asked for `path` is taken care of."""
    if _pipe is not None:
        _tell("done", action, os.path.abspath(path))


# --- the guardian itself -----------------------------------------------------------------


def _cut_to_last_line(f: IO[bytes]) -> None:
    """Truncate an open file after its last newline (to nothing, if it has none)."""
    end = f.seek(0, os.SEEK_END)
    position = end
    while position > 0:
        start = max(0, position - 65536)
        f.seek(start)
        block = f.read(position - start)
        newline = block.rfind(b"\n")
        if newline >= 0:
            if start + newline + 1 != end:
                f.truncate(start + newline + 1)
            return
        position = start
    f.truncate(0)


def _remove_folder(path: str, within: float = 5.0) -> None:
    """`path` and all in it; tried again while what bully-tui started (a real run's node
    processes, which stop by themselves once it is gone) may still write there."""
    import shutil
    import time

    deadline = time.monotonic() + within
    while os.path.lexists(path) and time.monotonic() < deadline:
        shutil.rmtree(path, ignore_errors=True)
        if os.path.lexists(path):
            time.sleep(0.1)


def _same(path: str, dev: int, inode: int) -> bool:
    try:
        info = os.stat(path)
    except OSError:
        return False
    return (info.st_dev, info.st_ino) == (dev, inode)


def watch(pipe: IO[bytes]) -> None:
    """Read orders until the pipe closes, then carry out the ones still open."""
    open_orders: dict[tuple[str, str], tuple[int, int]] = {}  # (action, path) -> (dev, inode)
    for line in pipe:
        try:
            words = json.loads(line)
            if words[0] == "done":
                open_orders.pop((words[1], words[2]), None)
            else:
                open_orders[words[0], words[1]] = (words[2], words[3])
        except (ValueError, IndexError, TypeError):
            continue
    for (action, path), (dev, inode) in open_orders.items():
        if not _same(path, dev, inode) or (action == WHOLE and (REMOVE, path) in open_orders):
            continue  # moved, replaced or removed since (not ours any more), or to be removed anyway
        try:
            if action == REMOVE and os.path.isdir(path):
                _remove_folder(path)
            elif action == REMOVE:
                os.unlink(path)
            else:
                with open(path, "r+b") as f:
                    _cut_to_last_line(f)
        except OSError:
            pass


if __name__ == "__main__":
    watch(sys.stdin.buffer)
