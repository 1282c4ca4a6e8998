"""A real node's control socket, DIR/control.sock: how the cluster that started the node
tells it things (cluster.py sends, node.py obeys). A Unix socket, so only this machine's
users who can reach the state folder can open it. One frame (wire.py) a command:

  {"command": "timeout", "value": T}              a new T, for timers set from now on
  {"command": "hold" | "release", "peers": [K, ...]}  messages to those peers wait, in
                                                  order, until released (a partition)
  {"command": "peer", "id": K, "address": "HOST:PORT"}  a node about to join: where it
                                                  listens (its Join tells the machine)
  {"command": "start", "at": UNIX_TIME}           a node started with --wait-to-start
                                                  takes its first step then
  {"command": "want"}                             with a mutex: it asks for the critical
                                                  section now

Every field of every frame is checked by its type before the node acts on it (`parse`):
anything else (not JSON, not an object, another command, a field missing, extra or of
another type, a peer that is not a whole number) closes that connection with one line
in the node's log, and the node goes on as it was.
"""

from __future__ import annotations

import math
import os
import socket
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import trio

from ..core.config import TIMEOUT, InputError, shown_json
from . import wire
from .wire import MAX_ID, Address, FrameError

CONTROL_FILE = "control.sock"

# What each command holds besides "command": its fields, and a check of each value.
def _node(v: object) -> bool:
    return type(v) is int and 0 <= v <= MAX_ID


def _time(v: object) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


FIELDS: dict[str, dict[str, Callable[[object], bool]]] = {
    "timeout": {"value": lambda v: type(v) in (int, float) and TIMEOUT.low <= v <= TIMEOUT.high},
    "hold": {"peers": lambda v: type(v) is list and all(map(_node, v))},
    "release": {"peers": lambda v: type(v) is list and all(map(_node, v))},
    "peer": {"id": _node, "address": lambda v: type(v) is str},
    "start": {"at": _time},
    "want": {},
}


def parse(obj: dict, *, me: int, waits_to_start: bool, mutex: bool) -> tuple:
    """A command frame as (name, its values...): ("timeout", T), ("hold" | "release",
    (K, ...)), ("peer", K, Address), ("start", UNIX_TIME), ("want",). A frame that is not
    one this node takes: FrameError, saying why."""
    name = obj.get("command")
    fields = FIELDS.get(name) if type(name) is str else None
    if fields is None:
        raise FrameError(f"not a command: {shown_json(obj, 80)}")
    if set(obj) != {"command", *fields}:
        raise FrameError(f"a {name} command holds {', '.join(sorted(fields)) or 'nothing else'}, not "
                         f"{shown_json(obj, 80)}")
    for field, ok in fields.items():
        if not ok(obj[field]):
            raise FrameError(f"the {field} of a {name} command is {shown_json(obj[field], 40)}")
    if name == "timeout":
        return name, float(obj["value"])
    if name in ("hold", "release"):
        return name, tuple(obj["peers"])
    if name == "peer":
        if obj["id"] == me:
            raise FrameError(f"a peer command names this node itself ({me})")
        try:
            return name, obj["id"], Address.parse(obj["address"], f"node {obj['id']}'s address")
        except InputError as e:
            raise FrameError(str(e)) from None
    if name == "start" and not waits_to_start:
        raise FrameError("a start command to a node that was not told to wait for one (--wait-to-start)")
    if name == "want" and not mutex:
        raise FrameError("a want command to a node without a mutex (--mutex)")
    return (name, obj["at"]) if name == "start" else (name,)


async def serve(stream: trio.SocketStream, take: Callable[[dict], None], refused: Callable[[str], None]) -> None:
    """One connection: each frame in turn to `take` (which parses and obeys it), until the
    connection ends, or a frame is refused: then `refused(why)` (a line in the node's log)."""
    frames = wire.Frames()
    try:
        async with stream:
            async for data in stream:
                for obj in frames.feed(data):
                    take(obj)
    except (FrameError, trio.BrokenResourceError, OSError) as e:
        refused(str(e))


def in_the_way(folder: str) -> bool:
    """Whether a socket is there already (a previous incarnation's, which `listener`
    removes); anything else there (a file, a folder) is not ours to remove: one line."""
    path = os.path.join(folder, CONTROL_FILE)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as e:
        raise InputError(f"cannot make {path}: {e.strerror or e}") from None
    if not stat.S_ISSOCK(mode):
        raise InputError(f"{path} is in the way: a node's control socket goes there (move it away)")
    return True


async def listener(folder: str) -> trio.SocketListener:
    """The socket, bound in `folder` (`in_the_way` first)."""
    path = os.path.join(folder, CONTROL_FILE)
    old = in_the_way(folder)
    sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
    try:
        if old:
            os.unlink(path)
        with unix_socket_path(path) as where:
            await sock.bind(where)
    except OSError as e:
        sock.close()
        raise InputError(f"cannot make {path}: {e.strerror or e}") from None
    sock.listen()
    return trio.SocketListener(sock)


def send(folder: str, command: dict | None) -> bool:
    """`command` to the node whose state folder is `folder`; or, with None, only whether
    it listens there yet. False if it does not (not yet, or it has just gone down)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            with unix_socket_path(os.path.join(folder, CONTROL_FILE)) as where:
                s.connect(where)
            if command is not None:
                s.sendall(wire.frame(command))
        except OSError:
            return False
    return True


@contextmanager
def unix_socket_path(path: str) -> Iterator[str]:
    """`path` as a Unix socket can be bound or reached at (at most 107 bytes): itself; or,
    for a longer one (a deep --state-dir), the same file named through its folder's
    descriptor, /proc/self/fd/N/NAME (Linux)."""
    if len(os.fsencode(path)) <= 107 or not os.path.isdir("/proc/self/fd"):
        yield path
        return
    folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{os.path.basename(path)}"
    finally:
        os.close(folder)
