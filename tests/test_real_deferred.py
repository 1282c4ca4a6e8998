"""real/deferred.py: what trio and argparse import and a node never uses (TLS, hashes,
compression) stays out of a node's memory, and works as ever if it is used. Each check
runs in a fresh Python: the test process has imported them all already."""

from __future__ import annotations

import subprocess
import sys

from playground.real.deferred import Deferred, defer


def python(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


AS_A_NODE = """
import sys
from playground.real.deferred import NEVER_USED, Deferred, defer
defer()
import argparse, trio
argparse.ArgumentParser().add_argument("--x")  # (its help formatter imports shutil, which imports bz2, lzma, zlib)
"""


def test_trio_and_the_parser_load_none_of_them_and_map_no_library_of_theirs():
    loaded, libraries = python(AS_A_NODE + """
print(*(n for n in (*NEVER_USED, "_ssl", "hashlib", "_hashlib") if not isinstance(sys.modules.get(n, Deferred(n)), Deferred)))
print(*{line.rsplit("/", 1)[1].split(".so")[0] for line in open("/proc/self/maps") if ".so" in line})
""")
    assert loaded == ""
    assert "libc" in libraries.split() and not {"libcrypto", "libssl", "libz", "liblzma", "libbz2"} & set(libraries.split())


def test_each_works_as_ever_once_used():
    said = python(AS_A_NODE + """
import hmac, ssl, zlib
import trio.testing
stream = trio.SSLStream(trio.testing.memory_stream_pair()[0], ssl.create_default_context(), server_hostname="node")
print(type(sys.modules["ssl"]).__name__, trio._ssl._stdlib_ssl.SSLContext is sys.modules["ssl"].SSLContext)
print(hmac.digest(b"key", b"The quick brown fox jumps over the lazy dog", "sha256").hex())
print(zlib.decompress(zlib.compress(b"node" * 100)) == b"node" * 100)
""")
    assert said == ["module True", "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8", "True"]


def test_a_module_imported_already_is_left_as_it_is():
    import json

    defer(("json",))
    assert sys.modules["json"] is json and not isinstance(json, Deferred)
