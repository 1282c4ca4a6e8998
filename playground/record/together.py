"""Files that appear whole and together, or not at all.

A hunt's finding is two files: a scenario (or an interaction file) and the transcript it
makes. Written one after the other under their names, a signal between the two left the
first without the second, or the second cut short. Here each is written under a
temporary name beside its own (the same folder: one file system, so taking the name is
one call), and only when the last is whole do they take their names, one call each
(`place`), which the caller does with the signals held off (run/interrupt.checked).
Whatever stops the writing before, nothing is left: `Together` removes the temporary
files on the way out, and the guardian (guard.py) after a kill.

Without `overwrite` a name is linked, which fails if it was taken meanwhile; then the
names already placed are taken back, so that neither file is there. With `overwrite`
the file a name had is kept aside (a second link) until every name is placed, and put
back if one cannot be: a new scenario never stands beside an old transcript. (SIGKILL
in the middle of `place`, a few system calls, can leave the files placed so far: each
whole; and between making a temporary file and telling the guardian of it, one write
to a pipe, that empty file.)
"""

from __future__ import annotations

import os

from ..core.config import InputError, WriteError
from . import guard
from .files import _link, check_new, temporary_beside


class Together:
    def __init__(self, overwrite: bool):
        self.overwrite = overwrite
        self._files: list[tuple[str, str, str]] = []  # (temporary, path, what)

    def beside(self, path: str, what: str) -> str:
        """An empty temporary file beside `path`, with the permissions `path` will have,
        for the caller to write; `what` names `path` in errors."""
        check_new(path, what, self.overwrite)
        fd, temporary = temporary_beside(path, what)
        os.close(fd)
        self._files.append((temporary, path, what))
        return temporary

    def place(self) -> None:
        """Every file under its name, or none: a name taken meanwhile (without
        `overwrite`), or one that cannot be written, takes back what was placed, and with
        `overwrite` puts the files that were there back."""
        placed: list[tuple[str, str | None]] = []  # (path, the old file kept aside under another name, if any)
        try:
            for temporary, path, what in self._files:
                old = None
                try:
                    if self.overwrite:
                        old = self._aside(path)
                        os.replace(temporary, path)
                    else:
                        _link(temporary, path)
                except OSError as e:
                    if old is not None:  # (not replaced: the file there is the old one still)
                        _remove(old)
                    if isinstance(e, FileExistsError):  # (taken meanwhile: someone else's, left as it is)
                        raise InputError(f"{path} already exists; choose another name, or pass --overwrite") from None
                    raise WriteError(f"cannot write {what} {path}: {e.strerror or e}") from None
                placed.append((path, old))
        except BaseException:
            self._take_back(placed)
            raise
        for _, old in placed:  # all placed: what they replaced goes
            if old is not None:
                _remove(old)

    @staticmethod
    def _aside(path: str) -> str | None:
        """The file at `path`, if any, linked under a second name beside it (the guardian
        removes it if bully-tui is killed), so that it can be put back."""
        if not os.path.isfile(path):
            return None
        old = f"{path}.bully-{os.getpid()}.old"
        _remove(old)
        os.link(path, old)
        guard.remove_if_left(old)
        return old

    @staticmethod
    def _take_back(placed: list[tuple[str, str | None]]) -> None:
        for path, old in reversed(placed):
            try:
                if old is not None:
                    os.replace(old, path)
                elif os.path.lexists(path):
                    os.unlink(path)
            except OSError:
                pass

    def __enter__(self) -> Together:
        return self

    def __exit__(self, *_: object) -> None:
        for temporary, _path, _what in self._files:
            try:
                if os.path.lexists(temporary):  # (linked, or never placed: the temporary name goes)
                    os.unlink(temporary)
            except OSError:
                pass
            guard.done(guard.REMOVE, temporary)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    guard.done(guard.REMOVE, path)
