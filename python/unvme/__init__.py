# SPDX-License-Identifier: BSD-3-Clause
"""uNVMe from Python: ctypes bindings for libunvme (docs/python.md).

    import unvme
    with unvme.Controller("emu://demo?ns=mem:64M:512") as c:
        print(c.identify().mn)
        ns = c.namespace(1)
        with c.queue_pair() as qp:
            qp.write(ns, 0, b"x" * ns.lba_size)
            data = qp.read(ns, 0, 1)
"""
from . import _lib
from .dma import DmaBuffer
from .driver import NSID_ALL, Controller, Namespace, QueuePair
from .errors import HostError, KvError, NvmeError, UnvmeError
from .kv import KvDevice, KvIterator, KvSdk
from .record import Record

__all__ = ["Controller", "Namespace", "QueuePair", "DmaBuffer", "Record", "KvSdk", "KvDevice",
           "KvIterator", "UnvmeError", "NvmeError", "HostError", "KvError", "NSID_ALL",
           "version", "build_options"]


def version():
    """The library's version (unvme_version)."""
    return _lib.lib.unvme_version().decode()


def build_options():
    """How the library was built (unvme_build_options), as a dict."""
    return dict(w.split("=", 1) for w in _lib.lib.unvme_build_options().decode().split())
