# SPDX-License-Identifier: BSD-3-Clause
"""Errors as exceptions. The library's convention: 0 success, a negative errno for a host-side
failure (HostError, an OSError with the library's reason), a positive NVMe status
(SCT << 8) | SC for a command the device failed (NvmeError, named by the library as the spec
names it); the KV SDK's kv_result codes become KvError, named as kv_types.h names them."""
import errno as _errno
import os

from . import _lib
from .kv_results import kv_result_name

lib = _lib.lib


class UnvmeError(Exception):
    """Every error the bindings raise."""


class NvmeError(UnvmeError):
    """The device completed a command with an NVMe error status."""

    def __init__(self, what, status, csi=0):
        self.what = what
        self.status = status
        self.sct = (status >> 8) & 0x7
        self.sc = status & 0xFF
        self.name = lib.unvme_status_str(status, csi).decode()
        super().__init__(f"{what}: {self.name} (SCT {self.sct:x}h, SC {self.sc:02x}h)")


class HostError(UnvmeError, OSError):
    """A host-side failure (bad argument, device not found, out of memory, timeout, ...)."""

    def __init__(self, what, err):
        reason = (lib.unvme_errmsg() or b"").decode() or os.strerror(err)
        OSError.__init__(self, err, f"{what}: {reason}")
        self.what = what
        self.name = _errno.errorcode.get(err, str(err))


class KvError(UnvmeError):
    """A KV SDK call returned a kv_result other than KV_SUCCESS."""

    def __init__(self, what, result, reason=""):
        self.what = what
        self.result = result
        self.name = kv_result_name(result)
        self.reason = reason  # the SDK's kv_errmsg(): why, when the result does not say it
        super().__init__(f"{what}: {self.name} (0x{result:x})" + (f": {reason}" if reason else ""))


def check(what, rc, csi=0):
    """Raises the exception a library result means; returns nothing on success."""
    if rc < 0:
        raise HostError(what, -rc)
    if rc > 0:
        raise NvmeError(what, rc, csi)


def check_kv(what, rc):
    if rc != 0:
        raise KvError(what, rc, (lib.kv_errmsg() or b"").decode(errors="replace"))
