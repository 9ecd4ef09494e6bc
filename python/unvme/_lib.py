# SPDX-License-Identifier: BSD-3-Clause
"""Loading libunvme and declaring the C functions the bindings call.

The library is $UNVME_LIB when set (a path, e.g. build/libunvme.so), else the one the dynamic
linker finds (make install puts it in $prefix/lib). Only what the bindings use is declared;
every declaration states argument and result types, so ctypes never guesses an int for a
pointer."""
import ctypes
import ctypes.util
import os

c_void_p, c_char_p, c_int, c_uint8, c_uint16, c_uint32, c_uint64, c_size_t, c_bool = (
    ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint8, ctypes.c_uint16,
    ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_bool)
P = ctypes.POINTER


class LibraryNotFound(ImportError):
    pass


def _load():
    path = os.environ.get("UNVME_LIB")
    if path:
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            raise LibraryNotFound(f"UNVME_LIB={path}: {e}") from None
    for name in (ctypes.util.find_library("unvme"), "libunvme.so.0", "libunvme.so"):
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                pass
    raise LibraryNotFound("libunvme not found: run 'make install', or set UNVME_LIB to the "
                          "built library (e.g. UNVME_LIB=build/libunvme.so)")


lib = _load()
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")


class CtrlrOpts(ctypes.Structure):
    # option structs start with their size (unvme.h, UNVME_OPTS_INIT)
    _fields_ = [("size", c_size_t), ("num_io_queues", c_uint32), ("admin_queue_depth", c_uint32),
                ("admin_timeout_ms", c_uint32), ("io_queue_depth", c_uint32),
                ("io_timeout_ms", c_uint32)]


class QpairOpts(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("depth", c_uint32), ("timeout_ms", c_uint32),
                ("split", c_bool)]


class Cqe(ctypes.Structure):
    """A completion queue entry (NVMe base spec, 16 bytes)."""
    _fields_ = [("dw0", c_uint32), ("dw1", c_uint32), ("sqhd", c_uint16), ("sqid", c_uint16),
                ("cid", c_uint16), ("status", c_uint16)]


CMD_CB = ctypes.CFUNCTYPE(None, c_void_p, P(Cqe))


def _decl(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)


for _n, _r, _a in [
    ("unvme_version", c_char_p, []),
    ("unvme_build_options", c_char_p, []),
    ("unvme_status_str", c_char_p, [c_int, c_uint8]),
    ("unvme_errmsg", c_char_p, []),
    ("unvme_set_log", None, [c_int]),
    ("kv_errmsg", c_char_p, []),
    ("unvme_dma_zalloc", c_void_p, [c_size_t, c_size_t]),
    ("unvme_dma_free", None, [c_void_p]),
    ("unvme_ctrlr_opts_init", None, [P(CtrlrOpts), c_size_t]),
    ("unvme_ctrlr_open", c_int, [c_char_p, P(CtrlrOpts), P(c_void_p)]),
    ("unvme_ctrlr_close", None, [c_void_p]),
    ("unvme_ctrlr_reset", c_int, [c_void_p]),
    ("unvme_ctrlr_devid", c_char_p, [c_void_p]),
    ("unvme_ctrlr_address", c_char_p, [c_void_p]),
    ("unvme_ctrlr_transport", c_char_p, [c_void_p]),
    ("unvme_ctrlr_identify_data", c_void_p, [c_void_p]),
    ("unvme_ctrlr_max_xfer", c_uint32, [c_void_p]),
    ("unvme_ctrlr_first_nsid", c_uint32, [c_void_p]),
    ("unvme_ctrlr_next_nsid", c_uint32, [c_void_p, c_uint32]),
    ("unvme_ctrlr_ns", c_void_p, [c_void_p, c_uint32]),
    ("unvme_ns_id", c_uint32, [c_void_p]),
    ("unvme_ns_csi", c_uint8, [c_void_p]),
    ("unvme_ns_nlbas", c_uint64, [c_void_p]),
    ("unvme_ns_lba_size", c_uint32, [c_void_p]),
    ("unvme_ns_identify_data", c_void_p, [c_void_p]),
    ("unvme_get_log_page", c_int, [c_void_p, c_uint8, c_uint32, c_void_p, c_uint32, c_uint64]),
    ("unvme_get_features", c_int, [c_void_p, c_uint8, c_uint32, c_uint32, P(c_uint32)]),
    ("unvme_set_features", c_int, [c_void_p, c_uint8, c_uint32, c_uint32, c_bool, P(c_uint32)]),
    ("unvme_qpair_create", c_int, [c_void_p, P(QpairOpts), P(c_void_p)]),
    ("unvme_qpair_destroy", None, [c_void_p]),
    ("unvme_qpair_id", c_uint16, [c_void_p]),
    ("unvme_qpair_outstanding", c_uint32, [c_void_p]),
    ("unvme_qpair_poll", c_int, [c_void_p, c_uint32]),
    ("unvme_read", c_int, [c_void_p, c_void_p, c_void_p, c_uint64, c_uint32, CMD_CB, c_void_p]),
    ("unvme_write", c_int, [c_void_p, c_void_p, c_void_p, c_uint64, c_uint32, CMD_CB, c_void_p]),
    ("unvme_read_sync", c_int, [c_void_p, c_void_p, c_void_p, c_uint64, c_uint32]),
    ("unvme_write_sync", c_int, [c_void_p, c_void_p, c_void_p, c_uint64, c_uint32]),
    ("unvme_compare_sync", c_int, [c_void_p, c_void_p, c_void_p, c_uint64, c_uint32]),
    ("unvme_flush_sync", c_int, [c_void_p, c_void_p]),
    ("unvme_write_zeroes_sync", c_int, [c_void_p, c_void_p, c_uint64, c_uint32]),
    ("unvme_deallocate_sync", c_int, [c_void_p, c_void_p, c_uint64, c_uint32]),
    ("unvme_print_id_ctrl", None, [c_void_p, c_void_p, c_int]),
    ("unvme_print_id_ns", None, [c_void_p, c_void_p, c_int]),
    ("unvme_print_smart_log", None, [c_void_p, c_void_p, c_int]),
    ("unvme_print_fw_slot_log", None, [c_void_p, c_void_p, c_int]),
    ("kv_sdk_init", c_int, [c_int, c_void_p]),
    ("kv_sdk_finalize", c_int, []),
    ("kv_get_device_handles", c_int, [P(c_int), P(c_uint64)]),
    ("kv_get_total_size", c_uint64, [c_uint64]),
    ("kv_get_used_size", c_uint64, [c_uint64]),
    ("kv_store", c_int, [c_uint64, c_void_p]),
    ("kv_retrieve", c_int, [c_uint64, c_void_p]),
    ("kv_delete", c_int, [c_uint64, c_void_p]),
    ("kv_exist", c_int, [c_uint64, c_void_p]),
    ("kv_iterate_open", c_uint32, [c_uint64, c_uint8, c_uint32, c_uint32, c_uint8]),
    ("kv_iterate_close", c_int, [c_uint64, c_uint8]),
    ("kv_iterate_read", c_int, [c_uint64, c_void_p]),
]:
    _decl(_n, _r, *_a)

libc.open_memstream.restype = c_void_p
libc.open_memstream.argtypes = [P(c_void_p), P(c_size_t)]
libc.fclose.restype = c_int
libc.fclose.argtypes = [c_void_p]
libc.free.restype = None
libc.free.argtypes = [c_void_p]

UNVME_FMT_JSON = 1


def print_json(fn, data):
    """What one of the library's printers (unvme_print_*) writes as JSON, as a string."""
    buf, size = c_void_p(), c_size_t()
    f = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not f:
        raise MemoryError("open_memstream")
    try:
        fn(f, data, UNVME_FMT_JSON)
    finally:
        libc.fclose(f)
    try:
        return ctypes.string_at(buf, size.value).decode()
    finally:
        libc.free(buf)
