"""A real node's safe storage as a file, `state.json` in its state directory: what the
simulation keeps in a SafeStorage object across a crash (incarnation, epoch, members,
and the algorithm's own cells). Written whole and durably (write, flush, fsync, rename:
record/files.write_whole) after every step that changed it, so a node killed at any
moment finds the last one whole when it starts again. A damaged or foreign file (not
JSON, nested past reason, larger than any state, not a regular file: a FIFO would block
the node for ever) is refused with one line (InputError), never half-read."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import fields

from protocol import SafeStorage

from ..core.config import InputError, shown_json
from ..record.files import write_whole

STATE_FILE = "state.json"
MOST_BYTES = 1 << 20  # a state is a few cells: a thousand times any real one


def load(folder: str, storage_class: type[SafeStorage], algorithm: str) -> SafeStorage | None:
    """The storage kept in `folder`, or None if the node has never run there."""
    path = os.path.join(folder, STATE_FILE)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # (a FIFO opens at once, and is refused below)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # (a folder opens too)
        os.close(fd)
        raise InputError(f"{path} is not a file (move it away to start this node afresh)")
    with os.fdopen(fd, "rb") as f:
        if info.st_size > MOST_BYTES:
            raise InputError(f"{path} is not a node's state: {info.st_size:,} bytes (move it away to start this node "
                             f"afresh)")
        try:
            data = f.read(MOST_BYTES + 1)
        except OSError as e:
            raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        saved = json.loads(data)
    except (ValueError, RecursionError):  # (RecursionError: [[[[... nested past what Python reads)
        raise InputError(f"{path} is damaged: not JSON (move it away to start this node afresh)") from None
    if not isinstance(saved, dict) or saved.get("algorithm") != algorithm or not isinstance(saved.get("storage"), dict):
        raise InputError(f"{path} is not a {algorithm} node's state")
    cells = saved["storage"]
    expected = {f.name: f.type for f in fields(storage_class)}
    if set(cells) != set(expected):
        raise InputError(f"{path} is not a {algorithm} node's state: cells {sorted(cells)}, expected {sorted(expected)}")
    for name, value in cells.items():
        optional = "None" in str(expected[name])  # (a cell like Raft's voted_for may be empty; a count may not)
        ok = (isinstance(value, list) and all(type(i) is int for i in value) if name == "members"
              else (value is None and optional) or type(value) is int)
        if not ok:
            raise InputError(f"{path} is damaged: {name} is {shown_json(value, 40)}")
    return storage_class(**{k: tuple(v) if k == "members" else v for k, v in cells.items()})


def save(folder: str, storage: SafeStorage, algorithm: str) -> None:
    data = json.dumps({"algorithm": algorithm, "storage": storage.as_dict()}, separators=(",", ":")).encode()
    write_whole(os.path.join(folder, STATE_FILE), "a node's state", data, overwrite=True, durable=True)
