# SPDX-License-Identifier: BSD-3-Clause
"""The key-value SDK (include/unvme/kv/kv_apis.h): start it on one or more devices, then
store, retrieve, delete and test keys, and walk keys with iterators as Python iterators.

    with unvme.KvSdk(["emu://kv?ns=kv:256M"]) as sdk:
        dev = sdk.devices[0]
        dev.store(b"key1", b"value")
        assert dev.retrieve(b"key1") == b"value"
        for key in dev.iterate(prefix=b"key"):
            ...

The SDK is one per process (kv_sdk_init is global), as in C."""
import ctypes
import json
import os
import struct
import tempfile
import weakref

from . import _lib
from . import kv_results as R
from .errors import KvError, check_kv

lib = _lib.lib

KV_SDK_INIT_FROM_JSON = 0
KEYSPACE_IODATA = 0
KV_KEY_ITERATE = 1
ITERATE_READ_BUFFER_SIZE = 32 * 1024
MAX_ITERATE_HANDLE = 16
NR_MAX_SSD = 64


class _Key(ctypes.Structure):
    _fields_ = [("key", ctypes.c_void_p), ("length", ctypes.c_uint16)]


class _Value(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("length", ctypes.c_uint32),
                ("actual_value_size", ctypes.c_uint32), ("offset", ctypes.c_uint32)]


class _Param(ctypes.Structure):
    _fields_ = [("async_cb", ctypes.c_void_p), ("private_data", ctypes.c_void_p),
                ("io_option", ctypes.c_int)]


class _Pair(ctypes.Structure):
    _fields_ = [("keyspace_id", ctypes.c_uint8), ("key", _Key), ("value", _Value),
                ("param", _Param)]


class _Iterate(ctypes.Structure):
    _fields_ = [("iterator", ctypes.c_uint32), ("kv", _Pair)]


def _bytes(x, what):
    if isinstance(x, str):
        return x.encode()
    try:
        return bytes(memoryview(x).cast("B"))
    except TypeError:
        raise TypeError(f"{what} must be bytes, str or a buffer, not {type(x).__name__}") from None


class KvSdk:
    """The SDK started on devices (emu:// URIs, aliases, PCI addresses), or from a
    configuration: a dict in the SDK's JSON form, or the path of such a file."""

    _active = False

    def __init__(self, devices=None, config=None, ssd_type="kv", cache=False, log_level=0):
        if KvSdk._active:
            raise KvError("kv_sdk_init (the SDK is already started in this process)",
                          R.KV_RESULTS["KV_ERR_SDK_OPEN"])
        if config is None:
            if not devices:
                raise ValueError("KvSdk needs devices or a config")
            config = {"cache": "on" if cache else "off", "ssd_type": ssd_type,
                      "slab_alloc_policy": "posix", "log_level": log_level,
                      "device_description": [{"dev_id": d} for d in devices]}
        # the reason of a failed start goes into the KvError: the library need not print it
        if not os.environ.get("UNVME_LOG"):
            lib.unvme_set_log(0)
        if isinstance(config, dict):
            fd, path = tempfile.mkstemp(prefix="unvme-kv-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(config, f)
            try:
                rc = lib.kv_sdk_init(KV_SDK_INIT_FROM_JSON, path.encode())
            finally:
                os.unlink(path)
            if rc:
                # the file was ours, not the caller's: the reason without its name
                reason = (lib.kv_errmsg() or b"").decode(errors="replace")
                raise KvError("kv_sdk_init", rc, reason.removeprefix(f"config file '{path}': "))
        else:
            rc = lib.kv_sdk_init(KV_SDK_INIT_FROM_JSON, os.fsencode(config))
        check_kv("kv_sdk_init", rc)
        KvSdk._active = True
        n = ctypes.c_int()
        handles = (ctypes.c_uint64 * NR_MAX_SSD)()
        rc = lib.kv_get_device_handles(ctypes.byref(n), handles)
        if rc:
            self.close()
            check_kv("kv_get_device_handles", rc)
        self.devices = [KvDevice(self, handles[i]) for i in range(n.value)]

    def close(self):
        if KvSdk._active:
            for d in self.devices if hasattr(self, "devices") else []:
                d._close_iterators()
            lib.kv_sdk_finalize()
            KvSdk._active = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class KvDevice:
    def __init__(self, sdk, handle):
        self.sdk = sdk
        self.handle = handle
        # weak: an iterator a loop dropped (break) is collected, and so closed, at once
        self._open_iterators = weakref.WeakSet()

    @property
    def total_size(self):
        return lib.kv_get_total_size(self.handle)

    @property
    def used_size(self):
        return lib.kv_get_used_size(self.handle)

    def _pair(self, key, value_ptr=None, length=0, option=0):
        k = _bytes(key, "key")
        kbuf = ctypes.create_string_buffer(k, len(k))
        p = _Pair()
        p.keyspace_id = KEYSPACE_IODATA
        p.key.key = ctypes.addressof(kbuf)
        p.key.length = len(k)
        p.value.value = value_ptr
        p.value.length = length
        p.param.io_option = option
        return p, kbuf

    def store(self, key, value):
        """Stores value (bytes, str or any buffer) under key."""
        v = _bytes(value, "value")
        vbuf = ctypes.create_string_buffer(v, max(len(v), 1))
        p, _k = self._pair(key, ctypes.addressof(vbuf), len(v))
        check_kv("kv_store", lib.kv_store(self.handle, ctypes.byref(p)))

    def retrieve(self, key, size_hint=4096):
        """The value stored under key, as bytes (KvError KV_ERR_NOT_EXIST_KEY if none)."""
        size = max((size_hint + 3) & ~3, 4)
        while True:
            vbuf = ctypes.create_string_buffer(size)
            p, _k = self._pair(key, ctypes.addressof(vbuf), size)
            check_kv("kv_retrieve", lib.kv_retrieve(self.handle, ctypes.byref(p)))
            actual = p.value.actual_value_size
            if actual <= size:
                return vbuf.raw[:actual]
            size = (actual + 3) & ~3  # the value is longer than the buffer: again, whole

    def retrieve_into(self, key, out):
        """Retrieves into out (a writable buffer, its length a multiple of 4); returns the
        stored value's size (only the first len(out) bytes are written when it is longer)."""
        m = memoryview(out).cast("B")
        if m.readonly:
            raise TypeError("retrieve_into: the buffer is read-only")
        tmp = (ctypes.c_char * len(m)).from_buffer(m)
        p, _k = self._pair(key, ctypes.addressof(tmp), len(m))
        check_kv("kv_retrieve", lib.kv_retrieve(self.handle, ctypes.byref(p)))
        return p.value.actual_value_size

    def delete(self, key):
        p, _k = self._pair(key)
        check_kv("kv_delete", lib.kv_delete(self.handle, ctypes.byref(p)))

    def exist(self, key):
        p, _k = self._pair(key)
        rc = lib.kv_exist(self.handle, ctypes.byref(p))
        if rc == R.ERR_NOT_EXIST_KEY:
            return False
        check_kv("kv_exist", rc)
        return True

    def __contains__(self, key):
        return self.exist(key)

    def iterate(self, prefix=b"", bitmask=None):
        """The keys whose first four bytes match prefix (under bitmask, contiguous high bits;
        default: as many bytes as prefix has) as a Python iterator of bytes. The device's
        iterator is closed when the loop ends, breaks, or the iterator is collected."""
        p = _bytes(prefix, "prefix")
        if len(p) > 4:
            raise ValueError("iterate: the prefix is at most 4 bytes (the device matches the "
                             "key's first 32 bits)")
        value = int.from_bytes(p.ljust(4, b"\0"), "big")
        if bitmask is None:
            bitmask = (0xFFFFFFFF << (32 - 8 * len(p))) & 0xFFFFFFFF if p else 0
        return KvIterator(self, value, bitmask)

    def __iter__(self):
        return self.iterate()

    def _close_iterators(self):
        for it in list(self._open_iterators):
            it.close()


class KvIterator:
    def __init__(self, dev, prefix, bitmask):
        self.dev = dev
        h = lib.kv_iterate_open(dev.handle, KEYSPACE_IODATA, bitmask, prefix, KV_KEY_ITERATE)
        if not 1 <= h <= MAX_ITERATE_HANDLE:
            raise KvError(f"kv_iterate_open (prefix 0x{prefix:08x}, bitmask 0x{bitmask:08x})", h)
        self.handle = h
        self._buf = ctypes.create_string_buffer(ITERATE_READ_BUFFER_SIZE)
        self._keys = []
        self._eof = False
        dev._open_iterators.add(self)

    def __iter__(self):
        return self

    def __next__(self):
        while not self._keys:
            if self._eof or not self.handle:
                self.close()
                raise StopIteration
            self._read()
        return self._keys.pop(0)

    def _read(self):
        it = _Iterate()
        it.iterator = self.handle
        it.kv.keyspace_id = KEYSPACE_IODATA
        it.kv.value.value = ctypes.addressof(self._buf)
        it.kv.value.length = ITERATE_READ_BUFFER_SIZE
        rc = lib.kv_iterate_read(self.dev.handle, ctypes.byref(it))
        if rc not in (R.SUCCESS, R.ERR_ITERATE_READ_EOF):
            self.close()
            raise KvError("kv_iterate_read", rc)
        self._eof = rc == R.ERR_ITERATE_READ_EOF
        self._keys = _parse_keys(self._buf.raw[:min(it.kv.value.length, ITERATE_READ_BUFFER_SIZE)])

    def close(self):
        if self.handle:
            h, self.handle = self.handle, 0
            self.dev._open_iterators.discard(self)
            if KvSdk._active:
                check_kv("kv_iterate_close", lib.kv_iterate_close(self.dev.handle, h))

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _parse_keys(buf):
    """An iterate-read buffer: a u32 key count, then (u32 length, key bytes) per key."""
    if len(buf) < 4:
        return []
    (count,) = struct.unpack_from("<I", buf, 0)
    keys, off = [], 4
    for _ in range(count):
        if off + 4 > len(buf):
            raise KvError("kv_iterate_read (malformed key list)", R.KV_RESULTS["KV_ERR_ITERATE_ERROR"])
        (n,) = struct.unpack_from("<I", buf, off)
        off += 4
        if off + n > len(buf):
            raise KvError("kv_iterate_read (malformed key list)", R.KV_RESULTS["KV_ERR_ITERATE_ERROR"])
        keys.append(buf[off:off + n])
        off += n
    return keys
