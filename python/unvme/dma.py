# SPDX-License-Identifier: BSD-3-Clause
"""DMA memory as Python buffers. A DmaBuffer is a ctypes byte array over memory from
unvme_dma_zalloc, so it supports the buffer protocol: memoryview(buf), bytes(buf),
numpy.frombuffer(buf) see the device's memory without a copy. The memory is freed when the
last reference (including views) is gone."""
import ctypes
import weakref

from . import _lib

lib = _lib.lib
_types = {}


def _array_type(size):
    t = _types.get(size)
    if t is None:
        # a subclass, so instances take attributes and weak references (for the finalizer)
        t = type("DmaBuffer", (ctypes.c_ubyte * size,), {})
        _types[size] = t
    return t


def DmaBuffer(size, align=4096):
    """size bytes of zeroed DMA memory, aligned to align; a ctypes array (buffer protocol)."""
    if size <= 0:
        raise ValueError(f"DmaBuffer size must be positive, not {size}")
    ptr = lib.unvme_dma_zalloc(size, align)
    if not ptr:
        raise MemoryError(f"unvme_dma_zalloc({size}): {(lib.unvme_errmsg() or b'').decode()}")
    buf = _array_type(size).from_address(ptr)
    buf.address = ptr
    weakref.finalize(buf, lib.unvme_dma_free, ptr)
    return buf


def is_dma(obj):
    return isinstance(obj, ctypes.Array) and type(obj).__name__ == "DmaBuffer" and \
        hasattr(obj, "address")
