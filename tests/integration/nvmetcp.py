# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the NVMe/TCP integration tests: running `unvme target`, DH-HMAC-CHAP secrets in
nvme-cli's format, and a raw NVMe/TCP host that speaks the protocol byte by byte, so that the
tests can send the target PDUs no correct host would (bad lengths, unknown types, digests that
do not match, data nobody asked for)."""
import base64
import os
import select
import signal
import socket
import struct
import subprocess
import time
import zlib

from conftest import TOOL

DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery"


class Target:
    """`unvme target` in the background on 127.0.0.1 and a port the system picked."""

    def __init__(self, env, tmp, args, name="tgt", wrap=()):
        self.port_file = tmp / f"{name}.port"
        self.log = tmp / f"{name}.log"
        self.args = ["target", "--listen", "127.0.0.1:0", "--port-file", str(self.port_file), *args]
        self.env = env
        self.wrap = list(wrap)  # a command the tool runs under (prlimit ...)
        self.proc = None
        self.start()

    def start(self, port=None):
        if port is not None:
            self.args[2] = f"127.0.0.1:{port}"
        if self.port_file.exists():
            self.port_file.unlink()
        self.logf = open(self.log, "a")
        self.proc = subprocess.Popen([*self.wrap, str(TOOL), *map(str, self.args)], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=self.logf)
        deadline = time.time() + 30
        while not self.port_file.exists():
            assert self.proc.poll() is None, f"unvme target exited:\n{self.log.read_text()}"
            assert time.time() < deadline, "unvme target did not start"
            time.sleep(0.05)
        self.port = int(self.port_file.read_text())

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        rc = self.proc.returncode
        self.proc = None
        return rc

    def devid(self, nqn, query=""):
        return f"nvme-tcp://127.0.0.1:{self.port}/{nqn}" + (f"?{query}" if query else "")

    def log_text(self):
        if not self.logf.closed:
            self.logf.flush()
        return self.log.read_text()


def dhchap_key(transform=0, nbytes=32):
    """A secret as `nvme gen-dhchap-key` prints it: DHHC-1:XX:base64(key || crc32(key)):"""
    key = os.urandom(nbytes)
    raw = key + struct.pack("<I", zlib.crc32(key) & 0xFFFFFFFF)
    return f"DHHC-1:{transform:02d}:{base64.b64encode(raw).decode()}:"


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# PDU types and flags (NVMe TCP Transport 1.0)
ICREQ, ICRESP, H2C_TERM, C2H_TERM, CAPSULE_CMD, CAPSULE_RESP, H2C_DATA, C2H_DATA, R2T = \
    0, 1, 2, 3, 4, 5, 6, 7, 9
F_HDGST, F_DDGST, F_LAST = 1, 2, 4
SGL_INCAPSULE, SGL_TRANSPORT = 0x01, 0x5A


def sqe(opc, cid, nsid=0, cdw10=0, cdw11=0, cdw12=0, sgl_len=0, sgl_type=SGL_TRANSPORT, fctype=None,
        extra=b""):
    """A 64-byte command with an SGL data pointer (PSDT 01b). fctype: a fabrics command."""
    b = bytearray(64)
    struct.pack_into("<BBHI", b, 0, opc, 0x40, cid, nsid)
    if fctype is not None:
        b[4:8] = bytes([fctype, 0, 0, 0])
    struct.pack_into("<QI3xB", b, 24, 0, sgl_len, sgl_type)
    struct.pack_into("<III", b, 40, cdw10, cdw11, cdw12)
    if extra:
        b[40:40 + len(extra)] = extra
    return bytes(b)


class RawHost:
    """A byte-level NVMe/TCP host connection."""

    def __init__(self, port, timeout=5.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.hd = self.dd = False

    def close(self):
        self.s.close()

    def send(self, data):
        self.s.sendall(data)

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise ConnectionError(f"closed after {len(buf)} of {n} bytes")
            buf += chunk
        return buf

    def closed(self, timeout=5.0):
        """True when the target closes the connection (EOF or reset) within timeout."""
        end = time.time() + timeout
        while time.time() < end:
            r, _, _ = select.select([self.s], [], [], 0.1)
            if r:
                try:
                    if not self.s.recv(4096):
                        return True
                except (ConnectionResetError, OSError):
                    return True
        return False

    def recv_pdu(self):
        h = self.recv_exact(8)
        typ, flags, hlen, pdo, plen = struct.unpack("<BBBBI", h)
        return typ, flags, hlen, pdo, h + self.recv_exact(plen - 8)

    def icreq(self, dgst=0, pfv=0, hpda=0, raw=None):
        pdu = raw or struct.pack("<BBBBIHBBI112x", ICREQ, 0, 128, 0, 128, pfv, hpda, dgst, 0)
        self.send(pdu)
        typ, _, _, _, p = self.recv_pdu()
        if typ == ICRESP:
            _, _, maxh2c = struct.unpack_from("<BBI", p, 10)
            self.hd = bool(p[11] & 1)
            self.dd = bool(p[11] & 2)
            self.maxh2c = maxh2c
        return typ, p

    def header(self, typ, flags, hdr, data=b"", bad_hdgst=False, bad_ddgst=False):
        """A PDU with digests as negotiated (optionally wrong)."""
        hlen = 8 + len(hdr)
        if self.hd:
            flags |= F_HDGST
        if self.dd and data:
            flags |= F_DDGST
        hd = 4 if self.hd else 0
        pdo = hlen + hd if data else 0
        plen = hlen + hd + len(data) + (4 if self.dd and data else 0)
        ch = struct.pack("<BBBBI", typ, flags, hlen, pdo, plen) + hdr
        out = ch
        if self.hd:
            out += struct.pack("<I", crc32c(ch) ^ (1 if bad_hdgst else 0))
        out += data
        if self.dd and data:
            out += struct.pack("<I", crc32c(data) ^ (1 if bad_ddgst else 0))
        return out

    def capsule(self, cmd, data=b"", **kw):
        self.send(self.header(CAPSULE_CMD, 0, cmd, data, **kw))

    def response(self):
        """The next CapsuleResp: (cid, SCT << 8 | SC, dw0); DNR and More are left out."""
        typ, _, _, _, p = self.recv_pdu()
        assert typ == CAPSULE_RESP, f"expected CapsuleResp, got type {typ}: {p.hex()}"
        dw0, _, _, _, cid, st = struct.unpack_from("<IIHHHH", p, 8)
        return cid, (st >> 1) & 0x7FF, dw0

    def connect(self, nqn, hostnqn, qid=0, cntlid=0xFFFF, sqsize=31, kato=None):
        data = bytearray(1024)
        data[16:18] = struct.pack("<H", cntlid)
        data[256:256 + len(nqn)] = nqn.encode()
        data[512:512 + len(hostnqn)] = hostnqn.encode()
        kato = (0 if qid else 5000) if kato is None else kato
        extra = struct.pack("<HHHBxI", 0, qid, sqsize, 0, kato)
        self.capsule(sqe(0x7F, 1, sgl_len=1024, sgl_type=SGL_INCAPSULE, fctype=1, extra=extra), bytes(data))
        return self.response()

    def prop_set(self, off, val, cid=2):
        extra = struct.pack("<B3xIQ", 0, off, val)
        self.capsule(sqe(0x7F, cid, fctype=0, extra=extra))
        return self.response()

    def establish(self, port, nqn, hostnqn, dgst=0):
        """ICReq, admin Connect and CC.EN = 1: returns the controller id."""
        typ, _ = self.icreq(dgst=dgst)
        assert typ == ICRESP
        cid, st, dw0 = self.connect(nqn, hostnqn)
        assert st == 0, f"Connect failed: status {st:#x}"
        assert self.prop_set(0x14, 0x460001)[1] == 0
        return dw0 & 0xFFFF


def term_of(p):
    """(FES, FEI) of a TermReq PDU."""
    fes = struct.unpack_from("<H", p, 8)[0]
    fei = struct.unpack_from("<I", p, 10)[0]
    return fes, fei
