# SPDX-License-Identifier: BSD-3-Clause
"""The driver API: controllers, namespaces and queue pairs (include/unvme/unvme.h).

I/O goes into and out of any object with the buffer protocol (bytes, bytearray, memoryview,
array, numpy arrays). A DmaBuffer goes to the device as it is (zero copy); other buffers
are copied through the queue pair's DMA bounce buffer. A queue pair belongs to one thread,
as in C."""
import ctypes

from . import _lib
from .dma import DmaBuffer, is_dma
from .errors import HostError, NvmeError, check
from .record import from_printer

lib = _lib.lib

NSID_ALL = 0xFFFFFFFF
LOG_ERROR, LOG_SMART, LOG_FW_SLOT = 0x01, 0x02, 0x03


class Controller:
    """An open controller: unvme.Controller("emu://x?ns=mem:64M:512"), or an alias, a PCI
    address, /dev/ng0n1, nvme-tcp://... . Use as a context manager, or call close()."""

    def __init__(self, devid, num_io_queues=None, io_queue_depth=None, io_timeout_ms=None):
        opts = _lib.CtrlrOpts()
        lib.unvme_ctrlr_opts_init(ctypes.byref(opts), ctypes.sizeof(opts))
        if num_io_queues is not None:
            opts.num_io_queues = num_io_queues
        if io_queue_depth is not None:
            opts.io_queue_depth = io_queue_depth
        if io_timeout_ms is not None:
            opts.io_timeout_ms = io_timeout_ms
        h = ctypes.c_void_p()
        check(f"open {devid}", lib.unvme_ctrlr_open(devid.encode(), ctypes.byref(opts),
                                                    ctypes.byref(h)))
        self._h = h.value
        self._qpairs = []

    def _handle(self):
        if not self._h:
            raise HostError("controller", 9)  # EBADF: used after close()
        return self._h

    def close(self):
        for qp in list(self._qpairs):
            qp.close()
        if self._h:
            lib.unvme_ctrlr_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def devid(self):
        return lib.unvme_ctrlr_devid(self._handle()).decode()

    @property
    def address(self):
        return lib.unvme_ctrlr_address(self._handle()).decode()

    @property
    def transport(self):
        return lib.unvme_ctrlr_transport(self._handle()).decode()

    @property
    def max_transfer(self):
        """The largest data transfer of one command, in bytes."""
        return lib.unvme_ctrlr_max_xfer(self._handle())

    def identify(self):
        """Identify Controller as a Record (fields named as in the spec: vid, sn, mn, fr, ...)."""
        p = lib.unvme_ctrlr_identify_data(self._handle())
        return from_printer("IdentifyController", lib.unvme_print_id_ctrl, p,
                            ctypes.string_at(p, 4096))

    @property
    def namespaces(self):
        out, h = [], self._handle()
        nsid = lib.unvme_ctrlr_first_nsid(h)
        while nsid:
            out.append(Namespace(self, nsid))
            nsid = lib.unvme_ctrlr_next_nsid(h, nsid)
        return out

    def namespace(self, nsid=1):
        return Namespace(self, nsid)

    def get_log_page(self, lid, length, nsid=NSID_ALL, offset=0):
        """A log page, raw, as bytes."""
        buf = DmaBuffer(max(length, 4))
        check(f"get-log {lid:#x}", lib.unvme_get_log_page(self._handle(), lid, nsid, buf.address, length,
                                                           offset))
        return bytes(buf)[:length]

    def smart_log(self, nsid=NSID_ALL):
        raw = self.get_log_page(LOG_SMART, 512, nsid)
        data = ctypes.create_string_buffer(raw, 512)
        return from_printer("SmartLog", lib.unvme_print_smart_log, data, raw)

    def fw_slot_log(self):
        raw = self.get_log_page(LOG_FW_SLOT, 512)
        data = ctypes.create_string_buffer(raw, 512)
        return from_printer("FirmwareSlotLog", lib.unvme_print_fw_slot_log, data, raw)

    def get_features(self, fid, nsid=0, cdw11=0):
        """Get Features: completion dword 0."""
        v = ctypes.c_uint32()
        check(f"get-feature {fid:#x}", lib.unvme_get_features(self._handle(), fid, nsid, cdw11,
                                                               ctypes.byref(v)))
        return v.value

    def set_features(self, fid, value, nsid=0, save=False):
        """Set Features with CDW11 = value: completion dword 0."""
        v = ctypes.c_uint32()
        check(f"set-feature {fid:#x}", lib.unvme_set_features(self._handle(), fid, nsid, value,
                                                               save, ctypes.byref(v)))
        return v.value

    def reset(self):
        check("reset", lib.unvme_ctrlr_reset(self._handle()))

    def queue_pair(self, depth=0, timeout_ms=0):
        qp = QueuePair(self, depth, timeout_ms)
        self._qpairs.append(qp)
        return qp

    def __repr__(self):
        return f"<unvme.Controller {self.devid if self._h else '(closed)'}>"


class Namespace:
    def __init__(self, ctrlr, nsid):
        h = lib.unvme_ctrlr_ns(ctrlr._handle(), nsid)
        if not h:
            raise HostError(f"namespace {nsid}", 19)  # ENODEV
        self.ctrlr = ctrlr
        self._h = h

    @property
    def nsid(self):
        return lib.unvme_ns_id(self._h)

    @property
    def csi(self):
        return lib.unvme_ns_csi(self._h)

    @property
    def nlbas(self):
        return lib.unvme_ns_nlbas(self._h)

    @property
    def lba_size(self):
        return lib.unvme_ns_lba_size(self._h)

    @property
    def size(self):
        return self.nlbas * self.lba_size

    def identify(self):
        """Identify Namespace as a Record (nsze, ncap, nuse, flbas, lbaf, ...)."""
        p = lib.unvme_ns_identify_data(self._h)
        return from_printer("IdentifyNamespace", lib.unvme_print_id_ns, p,
                            ctypes.string_at(p, 4096))

    def __repr__(self):
        return f"<unvme.Namespace {self.nsid}: {self.nlbas} x {self.lba_size} bytes>"


def _writable_view(obj):
    m = memoryview(obj)
    if m.readonly:
        raise TypeError("the buffer to read into is read-only")
    return m.cast("B") if m.format != "B" or m.ndim != 1 else m


class QueuePair:
    """An I/O queue pair. Sync: read(), write(), ... return when the command completed.
    Async: read_async() / write_async() queue a command on a DmaBuffer and return; poll()
    reaps completions and calls callback(status) for each (0, or an NVMe status)."""

    def __init__(self, ctrlr, depth=0, timeout_ms=0):
        opts = _lib.QpairOpts(ctypes.sizeof(_lib.QpairOpts), depth, timeout_ms, False)
        h = ctypes.c_void_p()
        check("qpair create", lib.unvme_qpair_create(ctrlr._handle(), ctypes.byref(opts),
                                                     ctypes.byref(h)))
        self.ctrlr = ctrlr
        self._h = h.value
        self._bounce = None
        self._pending = {}  # token -> (callback, buffer kept alive)
        self._next = 1
        self._cb = _lib.CMD_CB(self._complete)

    def close(self):
        if self._h:
            lib.unvme_qpair_destroy(self._h)  # outstanding commands complete (aborted) here
            self._h = None
            self._pending.clear()
            if self in self.ctrlr._qpairs:
                self.ctrlr._qpairs.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h:
            raise HostError("queue pair", 9)
        return self._h

    @property
    def id(self):
        return lib.unvme_qpair_id(self._handle())

    @property
    def outstanding(self):
        return lib.unvme_qpair_outstanding(self._handle())

    def _dma(self, size):
        if self._bounce is None or len(self._bounce) < size:
            self._bounce = DmaBuffer(size)
        return self._bounce

    @staticmethod
    def _blocks(ns, nbytes, what):
        if nbytes % ns.lba_size:
            raise ValueError(f"{what}: {nbytes} bytes is not a whole number of "
                             f"{ns.lba_size}-byte blocks")
        return nbytes // ns.lba_size

    # ---- synchronous ----

    def read(self, ns, slba, nlb=1, out=None):
        """Reads nlb blocks from slba into out (any writable buffer of nlb blocks; a
        DmaBuffer without a copy), or into a new bytearray; returns out."""
        n = nlb * ns.lba_size
        if out is None:
            out = bytearray(n)
        if is_dma(out):
            if len(out) < n:
                raise ValueError(f"read: the buffer holds {len(out)} bytes, {n} needed")
            check("read", lib.unvme_read_sync(ns._h, self._handle(), out.address, slba, nlb),
                  ns.csi)
            return out
        view = _writable_view(out)
        if view.nbytes < n:
            raise ValueError(f"read: the buffer holds {view.nbytes} bytes, {n} needed")
        buf = self._dma(n)
        check("read", lib.unvme_read_sync(ns._h, self._handle(), buf.address, slba, nlb), ns.csi)
        view[:n] = memoryview(buf).cast("B")[:n]
        return out

    def write(self, ns, slba, data):
        """Writes data (any buffer of whole blocks) from slba."""
        if is_dma(data):
            nlb = self._blocks(ns, len(data), "write")
            check("write", lib.unvme_write_sync(ns._h, self._handle(), data.address, slba, nlb),
                  ns.csi)
            return
        view = memoryview(data).cast("B")
        nlb = self._blocks(ns, view.nbytes, "write")
        buf = self._dma(view.nbytes)
        memoryview(buf).cast("B")[:view.nbytes] = view
        check("write", lib.unvme_write_sync(ns._h, self._handle(), buf.address, slba, nlb), ns.csi)

    def compare(self, ns, slba, data):
        """Compare: True when the blocks hold data, False on Compare Failure."""
        view = memoryview(data).cast("B")
        nlb = self._blocks(ns, view.nbytes, "compare")
        buf = self._dma(view.nbytes)
        memoryview(buf).cast("B")[:view.nbytes] = view
        try:
            check("compare", lib.unvme_compare_sync(ns._h, self._handle(), buf.address, slba, nlb),
                  ns.csi)
        except NvmeError as e:
            if e.sct == 2 and e.sc == 0x85:  # Compare Failure (media and data integrity)
                return False
            raise
        return True

    def flush(self, ns):
        check("flush", lib.unvme_flush_sync(ns._h, self._handle()), ns.csi)

    def write_zeroes(self, ns, slba, nlb):
        check("write-zeroes", lib.unvme_write_zeroes_sync(ns._h, self._handle(), slba, nlb), ns.csi)

    def deallocate(self, ns, slba, nlb):
        check("deallocate", lib.unvme_deallocate_sync(ns._h, self._handle(), slba, nlb), ns.csi)

    # ---- asynchronous ----

    def _complete(self, arg, cpl):
        cb, _ = self._pending.pop(arg or 0, (None, None))
        status = (cpl.contents.status >> 1) & 0x7FFF
        status = (((status >> 8) & 0x7) << 8) | (status & 0xFF)
        if cb is not None:
            cb(status)

    def _submit(self, fn, what, ns, buf, slba, nlb, callback):
        if not is_dma(buf):
            raise TypeError(f"{what}: asynchronous I/O needs a DmaBuffer (its memory must "
                            "stay put until the completion)")
        if len(buf) < nlb * ns.lba_size:
            raise ValueError(f"{what}: the buffer holds {len(buf)} bytes, "
                             f"{nlb * ns.lba_size} needed")
        token = self._next
        self._next += 1
        self._pending[token] = (callback, buf)
        rc = fn(ns._h, self._handle(), buf.address, slba, nlb, self._cb, token)
        if rc:
            self._pending.pop(token, None)
            check(what, rc, ns.csi)

    def read_async(self, ns, slba, nlb, buf, callback=None):
        """Queues a read into buf (a DmaBuffer); callback(status) runs from poll()."""
        self._submit(lib.unvme_read, "read", ns, buf, slba, nlb, callback)

    def write_async(self, ns, slba, nlb, buf, callback=None):
        self._submit(lib.unvme_write, "write", ns, buf, slba, nlb, callback)

    def poll(self, max_completions=0):
        """Rings the doorbell for what was queued and reaps up to max_completions (0: all
        there are); returns how many completed."""
        n = lib.unvme_qpair_poll(self._handle(), max_completions)
        if n < 0:
            check("poll", n)
        return n

    def __repr__(self):
        return f"<unvme.QueuePair {self.id if self._h else '(closed)'}>"
