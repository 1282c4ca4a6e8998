"""Writing a run's transcript as it goes: whole lines only, whatever stops it."""

from __future__ import annotations

import io
from array import array
from itertools import accumulate
from typing import BinaryIO

from ..core.config import WriteError
from ..core.events import Event
from . import guard
from .codec import LineEncoder
from .files import check_new, open_to_write
from .transcript import INDEX_BLOCK, Header, Transcript, header_line, wide


class Recorder:
    """A trace observer that streams events to a transcript file, whole lines only.

    Each batch of events is written as it comes (a run killed midway leaves what it did
    on disk). The file is unbuffered and the recorder counts what reached it, so a write
    that fails (a full disk) or is cut short (Ctrl-C) is taken back to the last whole
    line, when it happens or at `close`."""

    CHUNK = 4096  # lines joined into one write: fewer calls, and a bounded join

    def __init__(self, out: BinaryIO, header: Header, name: str = "transcript", *, resume: bool = False):
        """`resume`: `out` already holds a header and whole lines (a branch, its parent's
        beginning copied in), and the recording goes on after them."""
        self._out = out
        self._name = name
        self._guarded = False  # the guardian keeps the file whole if we are killed
        self._line = LineEncoder(header.algorithm, wide(header.nodes), header.version)  # (a branch: its parent's)
        self.index: array | None = None  # where every INDEX_BLOCKth event's line starts, if wanted
        if resume:
            self._whole = out.seek(0, io.SEEK_END)  # bytes of whole lines on disk
        else:
            self._whole = 0
            self._write(header_line(header))

    @classmethod
    def create(cls, path: str, header: Header, overwrite: bool = False) -> Recorder:
        """A recorder writing a new file (an InputError if the path will not do)."""
        check_new(path, "transcript", overwrite)
        guard.start()
        return cls(open_to_write(path, "transcript", overwrite), header, path).guarded()

    @classmethod
    def resume(cls, path: str, header: Header) -> Recorder:
        """A recorder going on with the file at `path`, which already holds a header and
        whole lines (a branch, its parent's beginning copied in)."""
        return cls(open(path, "r+b", buffering=0), header, path, resume=True).guarded()

    def guarded(self) -> Recorder:
        """Have the guardian cut the file back to its last whole line if the process is
        killed while it writes (guard.py); `close` tells it all is well."""
        guard.keep_whole(self._name)
        self._guarded = True
        return self

    def __call__(self, events: list[Event]) -> None:
        by_kind = self._line.by_kind
        for start in range(0, len(events), self.CHUNK):
            chunk = events[start:start + self.CHUNK]
            lines = [by_kind[type(e)](e) for e in chunk]
            text = "".join(lines)
            if self.index is not None:
                self._note(chunk, lines, text.isascii())
            self._write(text.encode())

    def _note(self, chunk: list[Event], lines: list[str], ascii_only: bool) -> None:
        """Note where the lines of every INDEX_BLOCKth event will start."""
        first = -chunk[0].seq % INDEX_BLOCK
        if first >= len(chunk):
            return
        sizes = accumulate((len(line) if ascii_only else len(line.encode()) for line in lines), initial=self._whole)
        for i, offset in enumerate(sizes):
            if i >= first and (i - first) % INDEX_BLOCK == 0 and i < len(chunk):
                self.index.append(offset)

    def _write(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[self._out.write(view):]  # an unbuffered file may take less than all
        except OSError as e:
            self._trim()
            raise WriteError(f"cannot write transcript {self._name}: {e.strerror or e}") from None
        self._whole += len(data)

    def _trim(self) -> None:
        try:
            self._out.truncate(self._whole)
        except OSError:
            pass  # nothing more can be done: the error being reported says why

    def close(self) -> None:
        """Take back a write cut short, and close the file."""
        if self._out.tell() != self._whole:
            self._trim()
        self._out.close()
        if self._guarded:
            guard.done(guard.WHOLE, self._name)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def dump(transcript: Transcript) -> bytes:
    """A whole transcript, exactly as a Recorder writes it."""
    line = LineEncoder(transcript.header.algorithm, wide(transcript.header.nodes))
    return header_line(transcript.header) + "".join(map(line, transcript.events)).encode()
