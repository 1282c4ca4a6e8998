"""Frames between real nodes: a 4-byte big-endian length, then that many bytes of one
JSON object on one line. A connection's first frame says who is speaking,
{"hello": ID, "algorithm": NAME}; every later one is a message, {"id": N, "lamport": L,
"msg": {...}}, where `id` is the message's number at its sender (the receiver's trace
names it, so that the traces can be merged), `lamport` is the sender's Lamport clock and
`msg` is the message as transcripts write it (record/codec.py), so one encoding serves both.

A connection whose first frame is {"watch": true} is someone watching the node
(`bully-tui attach`): the node sends it its trace so far, then each line as it writes it.

Anything else on a socket (a truncated frame, one too long, bytes that are not JSON, a
message of another algorithm) is a FrameError: the receiver closes that connection and
says so in one line; its own state is untouched."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

from protocol import Message

from ..core.config import InputError, parse_whole, shown
from ..record.codec import converter

MAX_ID = 2**63 - 1  # a node's id at most (a whole number every JSON reader takes)
MAX_FRAME = 1 << 20  # bytes: a thousand times any message
_LENGTH = struct.Struct(">I")


class FrameError(ValueError):
    """Bytes on a socket that are not a frame of ours."""


@dataclass(frozen=True)
class Address:
    """Where a node listens."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    @classmethod
    def parse(cls, text: str, what: str) -> Address:
        """"HOST:PORT" (a port from 1 to 65535), or one line naming `what` (InputError):
        the command line's addresses and the control socket's alike."""
        host, sep, port = text.rpartition(":")
        if not sep or not host:
            raise InputError(f"{what} must be HOST:PORT, not {shown(text)}")
        return cls(host.strip("[]"), parse_whole(port, f"{what}'s port", 1, 65535))


def frame(obj: dict[str, Any]) -> bytes:
    return line_frame(json.dumps(obj, separators=(",", ":")).encode() + b"\n")


def line_frame(line: bytes) -> bytes:
    """A line of JSON already made (a trace's), as a frame."""
    return _LENGTH.pack(len(line)) + line


class Frames:
    """Bytes from a stream in, whole frames (as dicts) out."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._buffer += data
        out = []
        while len(self._buffer) >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(self._buffer)
            if size > MAX_FRAME:
                raise FrameError(f"a frame of {size:,} bytes (at most {MAX_FRAME:,})")
            if len(self._buffer) < _LENGTH.size + size:
                break
            body = bytes(self._buffer[_LENGTH.size:_LENGTH.size + size])
            del self._buffer[:_LENGTH.size + size]
            try:
                obj = json.loads(body)
            except (ValueError, RecursionError):  # (a stranger's [[[[... is deep, not big)
                raise FrameError("a frame that is not JSON") from None
            if not isinstance(obj, dict):
                raise FrameError("a frame that is not a JSON object")
            out.append(obj)
        return out

    @property
    def partial(self) -> bool:
        """Bytes of an unfinished frame are waiting (the stream ended in a frame: truncated)."""
        return bool(self._buffer)


def hello(node: int, algorithm: str) -> bytes:
    return frame({"hello": node, "algorithm": algorithm})


def read_hello(obj: dict[str, Any], algorithm: str, peers: set[int]) -> int:
    node, theirs = obj.get("hello"), obj.get("algorithm")
    if type(node) is not int or node not in peers:
        raise FrameError(f"a first frame that names no peer of this node ({json.dumps(obj)[:80]})")
    if theirs != algorithm:
        raise FrameError(f"node {node} runs {theirs!r}, this node {algorithm!r}")
    return node


def message_frame(algorithm: str, msg_id: int, lamport: int, msg: Message) -> bytes:
    return frame({"id": msg_id, "lamport": lamport, "msg": converter(algorithm).unstructure(msg, Message)})


def read_message(algorithm: str, obj: dict[str, Any]) -> tuple[int, int, Message]:
    """(id, lamport, message) of a message frame."""
    msg_id, lamport = obj.get("id"), obj.get("lamport")
    if type(msg_id) is not int or not 0 <= msg_id <= MAX_ID or type(lamport) is not int or lamport < 0 \
            or set(obj) != {"id", "lamport", "msg"}:
        raise FrameError(f"not a message frame ({json.dumps(obj)[:80]})")
    try:
        return msg_id, lamport, converter(algorithm).structure(obj["msg"], Message)
    except Exception as e:  # cattrs reports through several exception types
        raise FrameError(f"not a {algorithm} message ({e})") from None
