# SPDX-License-Identifier: BSD-3-Clause
"""A hostile NVMe/TCP host for the target's security tests (test_tcp_target_security.py), built
on nvmetcp.RawHost: it keeps every byte the target sent it (to look for another host's canary
data), answers R2Ts, reads C2HData, and can stop reading its socket or never send an ICReq.
It speaks only what the tests need: one command at a time unless told otherwise."""
import socket
import struct
import time

from nvmetcp import (C2H_DATA, C2H_TERM, CAPSULE_RESP, F_LAST, H2C_DATA, ICRESP, R2T,
                     SGL_INCAPSULE, SGL_TRANSPORT, RawHost, sqe)

# statuses as (SCT << 8) | SC
DATA_SGL_LEN_INVALID = 0x00F
INVALID_OPCODE = 0x001
INVALID_FIELD = 0x002
CONNECT_INVALID_HOST = 0x184
AUTH_REQUIRED = 0x191
ATR = 1 << 17


class Host(RawHost):
    """A raw host connection that records what it receives."""

    def __init__(self, port, timeout=10.0, source=None, record=True):
        if source:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((source, 0))
            s.settimeout(timeout)
            s.connect(("127.0.0.1", port))
            self.s = s
            self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.hd = self.dd = False
        else:
            super().__init__(port, timeout)
        self.seen = bytearray()
        self.record = record
        self.cntlid = None

    def recv_exact(self, n):
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = self.s.recv_into(view[got:])
            if not k:
                raise ConnectionError(f"closed after {got} of {n} bytes")
            got += k
        if self.record:
            self.seen += buf
        return bytes(buf)

    def admin(self, port, nqn, hostnqn):
        """ICReq, admin Connect, CC.EN = 1; returns Connect's status and DW0."""
        assert self.icreq()[0] == ICRESP
        _, st, dw0 = self.connect(nqn, hostnqn)
        if st == 0 and not dw0 & ATR:
            assert self.prop_set(0x14, 0x460001)[1] == 0
        self.cntlid = dw0 & 0xFFFF
        return st, dw0

    @classmethod
    def io_queue(cls, port, nqn, hostnqn, cntlid, qid=1, sqsize=127, record=True):
        h = cls(port, record=record)
        assert h.icreq()[0] == ICRESP
        _, st, _ = h.connect(nqn, hostnqn, qid=qid, cntlid=cntlid, sqsize=sqsize)
        assert st == 0, f"I/O Connect failed: {st:#x}"
        return h

    def pdu(self):
        """The next PDU: (type, header-and-data bytes)."""
        typ, _, _, _, p = self.recv_pdu()
        return typ, p

    def command(self, cmd, data=b"", write=b""):
        """Sends a capsule (data in the capsule), answers an R2T with `write`, collects
        C2HData: (status, dw0, the C2H data received)."""
        self.capsule(cmd, data)
        return self.result(write)

    def result(self, write=b""):
        """The next command's outcome, as command() returns it."""
        got = bytearray()
        while True:
            typ, p = self.pdu()
            if typ == R2T:
                cccid, ttag, off, length = struct.unpack_from("<HHII", p, 8)
                chunk = write[off:off + length].ljust(length, b"\0")
                hdr = struct.pack("<HHIII", cccid, ttag, off, length, 0)
                self.send(self.header(H2C_DATA, F_LAST, hdr, chunk))
            elif typ == C2H_DATA:
                pdo = p[3]
                datal = struct.unpack_from("<I", p, 16)[0]
                got += p[pdo:pdo + datal]
                if p[1] & 0x08:  # SUCCESS: no response follows
                    return 0, 0, bytes(got)
            elif typ == CAPSULE_RESP:
                dw0 = struct.unpack_from("<I", p, 8)[0]
                st = struct.unpack_from("<H", p, 22)[0]
                return (st >> 1) & 0x7FF, dw0, bytes(got)
            elif typ == C2H_TERM:
                raise ConnectionError(f"the target ended the connection: {p.hex()}")
            else:
                raise AssertionError(f"unexpected PDU type {typ}")


def rw(opc, cid, nsid, slba, nlb, sgl_len, sgl_type=SGL_TRANSPORT):
    """An NVM Read (02h) / Write (01h) / Compare (05h): NLB is 1's based here."""
    return sqe(opc, cid, nsid=nsid, cdw10=slba & 0xFFFFFFFF, cdw11=slba >> 32, cdw12=nlb - 1,
               sgl_len=sgl_len, sgl_type=sgl_type)


def served(port, source=None):
    """True when a new connection gets an ICResp."""
    try:
        h = Host(port, source=source)
        ok = h.icreq()[0] == ICRESP
        h.close()
        return ok
    except (ConnectionError, OSError):
        return False


def vm_rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def eventually(pred, timeout, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


__all__ = ["Host", "rw", "served", "vm_rss_kib", "eventually", "DATA_SGL_LEN_INVALID",
           "INVALID_OPCODE", "INVALID_FIELD", "CONNECT_INVALID_HOST", "AUTH_REQUIRED", "ATR",
           "SGL_INCAPSULE", "SGL_TRANSPORT", "C2H_DATA", "CAPSULE_RESP"]
