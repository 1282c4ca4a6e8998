"""Files the user names: read with care, and never written over by surprise.

Reading: a scenario or a transcript must be a regular file (a directory, a device such
as /dev/zero or a pipe with no writer is refused by name, and opening never blocks),
no bigger than its limit, and UTF-8 (a byte-order mark, as Windows editors write, is
not part of the text). Writing: a transcript's path must not be a directory or a
device, and an existing file is someone's work, replaced only when asked.
Every problem is an InputError: one line that says what is wrong.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from ..core.config import InputError, WriteError
from . import guard


def open_to_read(path: str, what: str) -> BinaryIO:
    """A regular file, open for reading in binary; `what` names it in errors."""
    if not path:
        raise InputError(f"the {what} file name is empty")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe with no writer must not hang us
    except OSError as e:
        raise InputError(f"cannot read {what} {path}: {e.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a device or a pipe?)"
        raise InputError(f"cannot read {what} {path}: it is {kind}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_text(path: str, what: str, limit: int) -> str:
    """The whole of a small text file (at most `limit` bytes)."""
    with open_to_read(path, what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"cannot read {what} {path}: it is over {limit:,} bytes, too big for a {what}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"cannot read {what} {path}: not a UTF-8 text file") from None


def open_to_write(path: str, what: str, overwrite: bool) -> BinaryIO:
    """A new file for writing, unbuffered (whoever writes knows what reached the disk).
    An existing file is refused unless `overwrite`, and a directory or a device always."""
    check_new(path, what, overwrite)
    try:
        return open(path, "wb" if overwrite else "xb", buffering=0)
    except FileExistsError:  # created since we looked
        raise InputError(f"{path} already exists; choose another name, or pass --overwrite") from None
    except OSError as e:
        raise InputError(f"cannot write {what} {path}: {e.strerror}") from None


def check_new(path: str, what: str, overwrite: bool) -> None:
    """What open_to_write refuses, said before any work is done for the file."""
    if not path:
        raise InputError(f"the {what} file name is empty")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise InputError(f"cannot write {what} {path}: {e.strerror}") from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise InputError(f"cannot write {what} {path}: it is a directory")
        if not stat.S_ISREG(mode):
            raise InputError(f"cannot write {what} {path}: it is not a regular file (a device?)")
        if not overwrite:
            raise InputError(f"{path} already exists; choose another name, or pass --overwrite")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.access(folder, os.W_OK):
        raise InputError(f"cannot write {what} {path}: its folder is not writable (or does not exist)")


def write_whole(path: str, what: str, data: bytes | Iterable[bytes], overwrite: bool, durable: bool = False) -> None:
    """`data` (bytes, or pieces of it) as the file `path`, whole or not at all: written
    beside it, then renamed over it, or without `overwrite` linked to its name, which
    fails if the name was taken meanwhile. A full disk, a signal or a kill leaves the
    user's old file as it was, and no half a new one (the guardian removes a piece left
    behind by a kill). `durable`: on disk (fsync) before it takes the name, as a real
    node's safe storage must be."""
    check_new(path, what, overwrite)
    fd, temporary = temporary_beside(path, what)
    try:
        with os.fdopen(fd, "wb") as f:
            for piece in [data] if isinstance(data, bytes) else data:
                f.write(piece)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        if overwrite:
            os.replace(temporary, path)
        else:
            _link(temporary, path)
    except FileExistsError:
        raise InputError(f"{path} already exists; choose another name, or pass --overwrite") from None
    except OSError as e:
        raise WriteError(f"cannot write {what} {path}: {e.strerror or e}") from None
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        guard.done(guard.REMOVE, temporary)


def temporary_beside(path: str, what: str) -> tuple[int, str]:
    """An empty temporary file beside `path` (one file system: taking the name is one
    call), open, with the permissions `path` will have, and the guardian told to remove
    it if bully-tui is killed first. The guardian is started before the file is made, so
    that it is told the moment the file exists, not once a process has started (a
    SIGKILL in between left an empty piece). `what` names `path` in errors."""
    guard.start()
    try:
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".bully-", suffix=".part")
    except OSError as e:
        raise WriteError(f"cannot write {what} {path}: {e.strerror or e}") from None
    try:
        guard.remove_if_left(temporary)
        os.fchmod(fd, _mode_for(path))  # (mkstemp's is private: the file is the user's, as any other)
    except BaseException:  # (a signal's Stopped, or the mode refused: neither the file nor its descriptor stays)
        os.close(fd)
        os.unlink(temporary)
        raise
    return fd, temporary


def saved_as_new(folder: Path, base: str, save: Callable[[Path], object]) -> Path:
    """`save(path)` to the first of FOLDER/BASE.jsonl, BASE-1.jsonl, ... BASE-99.jsonl
    whose name is free (with any suffix: a saved transcript's parents go beside it), and
    that path; one taken meanwhile ("already exists") is passed over. InputError if all are."""
    for n in range(100):
        target = folder / (f"{base}.jsonl" if n == 0 else f"{base}-{n}.jsonl")
        if any(folder.glob(f"{target.stem}.*")):
            continue
        try:
            save(target)
        except InputError as e:
            if "already exists" in str(e):
                continue
            raise
        return target
    raise InputError(f"{base}.jsonl and 99 variants exist in {folder}")


def _link(temporary: str, path: str) -> None:
    """The finished file under its name, unless the name is taken."""
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: look, then rename
        if os.path.lexists(path):
            raise FileExistsError(path) from None
        os.replace(temporary, path)


def _mode_for(path: str) -> int:
    """An existing file's permissions, or a new file's (what the umask leaves of rw-rw-rw-)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
