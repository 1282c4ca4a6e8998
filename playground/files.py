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
from typing import BinaryIO

from .config import InputError, WriteError


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


def write_whole(path: str, what: str, data: bytes, overwrite: bool) -> None:
    """`data` as the file `path`, whole or not at all: written beside it, then renamed
    over it (a full disk leaves the user's old file as it was, and no half a new one)."""
    check_new(path, what, overwrite)
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".bully-", suffix=".part")
    try:
        os.fchmod(fd, _mode_for(path))  # (mkstemp's is private: the file is the user's, as any other)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except OSError as e:
        os.unlink(temporary)
        raise WriteError(f"cannot write {what} {path}: {e.strerror or e}") from None


def _mode_for(path: str) -> int:
    """An existing file's permissions, or a new file's (what the umask leaves of rw-rw-rw-)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
