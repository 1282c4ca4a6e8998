"""Modules a node's imports name but a node never uses, kept out of its memory.

A node runs many to a machine (64 took 2 GB), and each imports what its libraries
import, used or not. Trio imports `ssl` (for its TLS streams) and `hmac` (for its DTLS
cookies) whatever the program does: with `hashlib`, they map libcrypto and libssl, 5 MB
of a node's 30 MB resident. argparse's help formatter imports `shutil`, which imports
`bz2`, `lzma` and `zlib` (for its archives) and maps their libraries. A node speaks
plain TCP and writes plain files: it uses none of them.

`defer()` puts a stand-in for each in sys.modules before anything imports it: `import
ssl` binds the stand-in and loads nothing (a statement reads only the module's
`__spec__`, which the stand-in has). The first attribute read from it imports the module
itself, which takes the stand-in's place in sys.modules, and answers: code that does use
one of them works as it would have, a little later. (importlib.util.LazyLoader cannot do
this: its module loads on any attribute read, `__spec__` too, so the second `import
ssl` in trio loads it.)
"""

from __future__ import annotations

import importlib
import sys
import threading
import types

NEVER_USED = ("ssl", "hmac", "bz2", "lzma", "zlib")

_swapping = threading.Lock()  # (two threads reading a stand-in at once: one import)


class Deferred(types.ModuleType):
    """Stands in sys.modules for a module not imported yet. `__getattr__` is called only
    for what the stand-in's own dict lacks: its `__name__` and `__spec__` (None, as a
    module made by hand has) answer from there, anything else is the module's."""

    def __getattr__(self, attr: str):
        name = self.__name__
        with _swapping:
            if sys.modules.get(name) is self:
                del sys.modules[name]
        return getattr(importlib.import_module(name), attr)


def defer(names: tuple[str, ...] = NEVER_USED) -> None:
    """A stand-in for each of `names` not imported already (in a process where one is,
    nothing changes for it)."""
    for name in names:
        if name not in sys.modules:
            sys.modules[name] = Deferred(name)
