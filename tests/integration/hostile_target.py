# SPDX-License-Identifier: BSD-3-Clause
"""A hostile NVMe/TCP target for the host's tests: it speaks enough of the protocol (NVMe TCP
Transport 1.0, NVMe over Fabrics) to accept our host, as a discovery controller or as an NVM
subsystem with one memory namespace, and misbehaves on cue:

  id-short / id-none     Identify Controller answered with 100 bytes of data, or none, then success
  read-r2t               a Read answered with an R2T (asking the host to send its read buffer)
  read-short / read-none a Read answered with half of its data, or none, then success
  write-c2h              a Write answered with C2HData (into the host's write buffer), then success
  write-no-r2t           a Write whose data was not in the capsule answered success, no R2T
  disc-short             a discovery log whose header claims 1000 records, one record sent
  disc-zero              the same, all 1000 records sent, 999 of them zero
  disc-huge              a discovery log header claiming 2^40 records
  stall                  the Nth admin command of an opcode (stall_opcode) never answered
  stall-all              from the Nth admin command of stall_opcode on, nothing is answered
                         on the admin connection (keep alive included)
and reports hostile values in Identify: mdts (255), lbads (32, 63). A discovery log lists the
target itself as a TCP record, then the raw 1024-byte records of `extra` (disc_record makes them,
hostile or not: RDMA records with their TSAS, addresses and ports of any bytes).

It keeps every byte hosts sent (`received`) so that a test can check that no canary from the
host's buffers ever reached it, and what it did (`events`). drop_admin() closes the admin
connections now and refuse_new() refuses every later connection (a host that cannot
reconnect). One thread per connection; for tests only."""
import socket
import struct
import threading

DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery"
ICREQ, ICRESP, H2C_TERM, C2H_TERM, CAPSULE_CMD, CAPSULE_RESP, H2C_DATA, C2H_DATA, R2T = \
    0, 1, 2, 3, 4, 5, 6, 7, 9
F_LAST, F_SUCCESS = 0x04, 0x08
FABRICS = 0x7F
FC_PROP_SET, FC_CONNECT, FC_PROP_GET, FC_DISCONNECT = 0x00, 0x01, 0x04, 0x08
ADM_GET_LOG, ADM_IDENTIFY, ADM_SET_FEAT, ADM_GET_FEAT, ADM_AER, ADM_KA = 0x02, 0x06, 0x09, 0x0A, 0x0C, 0x18
IO_FLUSH, IO_WRITE, IO_READ = 0x00, 0x01, 0x02
SC_INVALID_OPCODE, SC_INVALID_FIELD = 0x01, 0x02
MAXH2C = 65536
ICD = 8192  # in-capsule data the controller takes (IOCCSZ)


TRTYPE_RDMA, TRTYPE_TCP = 1, 3


def disc_record(trtype, traddr, trsvcid, nqn, adrfam=1, subtype=2, qptype=1, prtype=4, cms=1,
                pkey=0, tsas=None):
    """One discovery log record (NVMe Base 2.0 "Discovery Log Page Entry"), fields as bytes or
    str, padded as a controller pads them; an RDMA record's TSAS from qptype, prtype, cms and
    pkey (RDMA Transport Specification Figure 3) unless tsas gives its raw bytes."""
    def b(v):
        return v.encode() if isinstance(v, str) else bytes(v)
    e = bytearray(1024)
    e[0], e[1], e[2], e[3] = trtype, adrfam, subtype, 2
    struct.pack_into("<HHH", e, 4, 1, 0xFFFF, 32)
    e[32:64] = b(trsvcid).ljust(32)[:32]
    e[256:512] = b(nqn).ljust(256, b"\0")[:256]
    e[512:768] = b(traddr).ljust(256)[:256]
    if tsas is None and trtype == TRTYPE_RDMA:
        tsas = struct.pack("<BBB5xH", qptype, prtype, cms, pkey)
    e[768:768 + len(tsas or b"")] = tsas or b""
    return bytes(e)


def _pdu(typ, flags, hdr, data=b""):
    hlen = 8 + len(hdr)
    pdo = hlen if data else 0
    return struct.pack("<BBBBI", typ, flags, hlen, pdo, hlen + len(data)) + hdr + data


def response(cid, sct=0, sc=0, dw0=0, dw1=0, sqid=0):
    return _pdu(CAPSULE_RESP, 0, struct.pack("<IIHHHH", dw0, dw1, 0, sqid, cid, (sct << 9 | sc << 1)))


def c2h(cid, off, data, last=True):
    return _pdu(C2H_DATA, F_LAST if last else 0, struct.pack("<HHIII", cid, 0, off, len(data), 0), data)


class Hostile:
    def __init__(self, nqn="nqn.2024-01.io.unvme.test:hostile", cue=None, nth=1, mdts=5, lbads=9,
                 nblocks=2048, stall_opcode=ADM_GET_FEAT, extra=()):
        self.nqn = nqn
        self.extra = [bytes(r) for r in extra]
        self.cue = cue
        self.nth = nth
        self.mdts = mdts
        self.lbads = lbads
        self.nblocks = nblocks
        self.stall_opcode = stall_opcode
        self.data = bytearray(nblocks * 512)  # the namespace (512-byte blocks when LBADS is 9)
        self.received = bytearray()           # every byte any host sent
        self.events = []
        self.lock = threading.Lock()
        self.seen = {}                        # cue key -> how many times it came
        self.conns = []
        self.refusing = False
        self.stalled = set()                  # admin connections that answer nothing more
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(16)
        self.port = self.lsock.getsockname()[1]
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    # ---- control ----

    def devid(self, nqn=None, query="kato=0"):
        return f"nvme-tcp://127.0.0.1:{self.port}/{nqn or self.nqn}" + (f"?{query}" if query else "")

    def stop(self):
        self.stopping = True
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            pass
        self.thread.join(5)
        self.lsock.close()
        with self.lock:
            for c in self.conns:
                self._close(c)

    def drop_admin(self):
        """Closes every admin connection now (the host finds its admin connection dead)."""
        with self.lock:
            for c in self.conns:
                if c.qid == 0:
                    self._close(c)

    def refuse_new(self):
        self.refusing = True

    def event(self, what):
        with self.lock:
            self.events.append(what)

    def _count(self, key):
        with self.lock:
            self.seen[key] = self.seen.get(key, 0) + 1
            return self.seen[key]

    def _fires(self, cue, key):
        """Is this the occurrence of key at which cue misbehaves?"""
        if self.cue != cue:
            return False
        return self._count(key) == self.nth

    @staticmethod
    def _close(c):
        try:
            c.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        c.sock.close()

    # ---- connections ----

    def _accept(self):
        while not self.stopping:
            try:
                s, _ = self.lsock.accept()
            except OSError:
                return
            if self.stopping or self.refusing:
                s.close()
                continue
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Conn(self, s)
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=conn.run, daemon=True).start()


class _Conn:
    def __init__(self, t, sock):
        self.t = t
        self.sock = sock
        self.qid = None
        self.discovery = False
        self.cc = 0
        self.ttag = 0
        self.writes = {}  # ttag -> (cid, slba, length, buffer)

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        with self.t.lock:
            self.t.received += buf
        return buf

    def send(self, b):
        self.sock.sendall(b)

    def run(self):
        try:
            req = self.recv_exact(128)
            if req[0] != ICREQ:
                return
            self.send(struct.pack("<BBBBIHBBI", ICRESP, 0, 128, 0, 128, 0, 0, 0, MAXH2C) + bytes(112))
            while True:
                h = self.recv_exact(8)
                typ, flags, hlen, pdo, plen = struct.unpack("<BBBBI", h)
                if plen < 8 or plen > 16 << 20:
                    return
                rest = self.recv_exact(plen - 8)
                pdu = h + rest
                if typ == CAPSULE_CMD:
                    self.capsule(pdu[8:72], pdu[pdo:] if pdo else b"")
                elif typ == H2C_DATA:
                    self.h2c(pdu, pdo)
                elif typ == H2C_TERM:
                    self.t.event(("h2cterm", struct.unpack_from("<H", pdu, 8)[0]))
                    return
        except (ConnectionError, OSError):
            pass
        finally:
            try:
                self.sock.close()
            except OSError:
                pass

    # ---- commands ----

    def capsule(self, sqe, icd):
        opc, _, cid, nsid = struct.unpack_from("<BBHI", sqe, 0)
        sgl_len = struct.unpack_from("<I", sqe, 32)[0]
        cdw = struct.unpack_from("<6I", sqe, 40)
        if opc == FABRICS:
            return self.fabrics(cid, sqe, icd)
        if self.qid == 0:
            if self in self.t.stalled:
                self.t.event(("ignored", opc))
                return
            if self.t.cue in ("stall", "stall-all") and opc == self.t.stall_opcode and \
                    self.t._count("stall") == self.t.nth:
                self.t.event(("stalled", opc))
                if self.t.cue == "stall-all":
                    self.t.stalled.add(self)
                return
            return self.admin(opc, cid, nsid, cdw, sgl_len)
        return self.io(opc, cid, nsid, cdw, sgl_len, icd)

    def fabrics(self, cid, sqe, icd):
        fctype = sqe[4]
        if fctype == FC_CONNECT:
            self.qid = struct.unpack_from("<H", sqe, 42)[0]
            subnqn = icd[256:512].split(b"\0")[0].decode(errors="replace")
            self.discovery = subnqn == DISCOVERY_NQN
            if subnqn not in (self.t.nqn, DISCOVERY_NQN):
                return self.send(response(cid, 1, 0x82, dw0=(1 << 16) | 256))
            return self.send(response(cid, dw0=1 if self.qid == 0 else 0))
        if fctype == FC_PROP_GET:
            off = struct.unpack_from("<I", sqe, 44)[0]
            if off == 0x00:  # CAP: MQES 127, CQR, TO 5 s, CSS NVM
                v = 127 | 1 << 16 | 10 << 24 | 1 << 37
            elif off == 0x08:
                v = 0x00020000
            elif off == 0x14:
                v = self.cc
            elif off == 0x1C:  # CSTS: RDY follows CC.EN, shutdown completes at once
                v = (self.cc & 1) | ((2 << 2) if (self.cc >> 14) & 3 else 0)
            else:
                v = 0
            return self.send(response(cid, dw0=v & 0xFFFFFFFF, dw1=v >> 32))
        if fctype == FC_PROP_SET:
            off, val = struct.unpack_from("<IQ", sqe, 44)
            if off == 0x14:
                self.cc = val & 0xFFFFFFFF
            return self.send(response(cid))
        if fctype == FC_DISCONNECT:
            return self.send(response(cid))
        return self.send(response(cid, 0, SC_INVALID_OPCODE))

    def send_data(self, cid, data, cue_short, cue_none):
        """C2HData then a success response, or what the cue says."""
        if cue_none:
            self.t.event(("no-data", cid))
            return self.send(response(cid, sqid=self.qid))
        if cue_short:
            data = data[:100] if len(data) > 200 else data[: len(data) // 2]
            self.t.event(("short-data", cid, len(data)))
        for off in range(0, len(data), MAXH2C):
            self.send(c2h(cid, off, data[off:off + MAXH2C], last=off + MAXH2C >= len(data)))
        self.send(response(cid, sqid=self.qid))

    def admin(self, opc, cid, nsid, cdw, length):
        if opc == ADM_IDENTIFY:
            cns = cdw[0] & 0xFF
            data = self.identify(cns, nsid)
            if data is None:
                return self.send(response(cid, 0, SC_INVALID_FIELD))
            short = cns == 1 and self.t._fires("id-short", "id-ctrl")
            none = cns == 1 and self.t._fires("id-none", "id-ctrl")
            return self.send_data(cid, data[:length], short, none)
        if opc == ADM_GET_LOG:
            lid = cdw[0] & 0xFF
            numd = ((cdw[0] >> 16) | (cdw[1] << 16)) + 1
            off = cdw[2] | cdw[3] << 32
            full = self.log(lid)
            data = (full + bytes(max(0, off + numd * 4 - len(full))))[off:off + numd * 4]
            short = self.t.cue == "disc-short" and lid == 0x70 and numd * 4 > 1024
            return self.send_data(cid, data, short and off == 0, False)
        if opc == ADM_SET_FEAT:
            fid = cdw[0] & 0xFF
            return self.send(response(cid, dw0=(3 << 16 | 3) if fid == 7 else 0))
        if opc in (ADM_GET_FEAT, ADM_KA):
            return self.send(response(cid))
        if opc == ADM_AER:
            return  # answered only on an event, and there are none
        return self.send(response(cid, 0, SC_INVALID_OPCODE))

    def identify(self, cns, nsid):
        b = bytearray(4096)
        if cns == 1:
            struct.pack_into("<HH", b, 0, 0x1D1D, 0x1D1D)
            b[4:24] = b"HOSTILE0001".ljust(20)
            b[24:64] = b"hostile test target".ljust(40)
            b[64:72] = b"1.0".ljust(8)
            b[77] = self.t.mdts & 0xFF
            struct.pack_into("<HI", b, 78, 1, 0x00020000)
            b[111] = 2 if self.discovery else 1
            b[258] = 3  # ACL
            b[259] = 3  # AERL
            b[512], b[513] = 0x66, 0x44
            struct.pack_into("<HI", b, 514, 128, 0 if self.discovery else 1)
            struct.pack_into("<I", b, 536, 1 | 1 << 20)  # SGLs, with offsets
            nqn = (DISCOVERY_NQN if self.discovery else self.t.nqn).encode()
            b[768:768 + len(nqn)] = nqn
            struct.pack_into("<IIHBBH", b, 1792, (64 + ICD) // 16, 1, 0, 0, 1, 0)
            return bytes(b)
        if cns == 0 and nsid == 1:
            struct.pack_into("<QQQ", b, 0, self.t.nblocks, self.t.nblocks, 0)
            b[128 + 2] = self.t.lbads & 0xFF  # LBAF0: ms 0, lbads, rp 0; NLBAF 0, FLBAS 0
            return bytes(b)
        if cns == 2:  # active namespaces above nsid: just 1
            if nsid < 1:
                struct.pack_into("<I", b, 0, 1)
            return bytes(b)
        if cns == 3 and nsid == 1:
            b[0], b[1], b[4] = 0x04, 1, 0  # CSI: NVM
            return bytes(b)
        return None

    def log(self, lid):
        if lid != 0x70:
            return bytes(4096)
        numrec = {"disc-short": 1000, "disc-zero": 1000, "disc-huge": 1 << 40}.get(self.t.cue,
                                                                             1 + len(self.t.extra))
        hdr = bytearray(1024)
        struct.pack_into("<QQH", hdr, 0, 7, numrec, 0)
        e = bytearray(1024)
        e[0], e[1], e[2], e[3] = 3, 1, 2, 2  # TCP, IPv4, NVM subsystem, secure channel not required
        struct.pack_into("<HHH", e, 4, 1, 0xFFFF, 32)
        e[32:64] = str(self.t.port).encode().ljust(32)
        nqn = self.t.nqn.encode()
        e[256:256 + len(nqn)] = nqn
        e[512:512 + 9] = b"127.0.0.1"
        e[512 + 9:768] = b" " * (256 - 9)
        if self.t.cue == "disc-zero":
            return bytes(hdr) + bytes(e) + bytes(1024 * 999)
        return bytes(hdr) + bytes(e) + b"".join(self.t.extra)

    def io(self, opc, cid, nsid, cdw, length, icd):
        if nsid != 1:
            return self.send(response(cid, 0, 0x0B, sqid=self.qid))
        slba = cdw[0] | cdw[1] << 32
        nbytes = ((cdw[2] & 0xFFFF) + 1) * 512
        if opc in (IO_READ, IO_WRITE) and (slba + nbytes // 512 > self.t.nblocks or length != nbytes):
            return self.send(response(cid, 0, 0x80 if length == nbytes else 0x0F, sqid=self.qid))
        if opc == IO_READ:
            if self.t._fires("read-r2t", "read"):
                self.t.event(("r2t-for-read", cid))
                self.ttag += 1
                return self.send(_pdu(R2T, 0, struct.pack("<HHIII", cid, self.ttag, 0, nbytes, 0)))
            short = self.t._fires("read-short", "read")
            none = self.t._fires("read-none", "read")
            return self.send_data(cid, bytes(self.t.data[slba * 512:slba * 512 + nbytes]), short, none)
        if opc == IO_WRITE:
            if self.t._fires("write-c2h", "write"):
                self.t.event(("c2h-for-write", cid))
                self.send(c2h(cid, 0, b"\xEE" * nbytes))
                return self.send(response(cid, sqid=self.qid))
            if icd:
                self.t.data[slba * 512:slba * 512 + len(icd)] = icd[:nbytes]
                return self.send(response(cid, sqid=self.qid))
            if self.t._fires("write-no-r2t", "write"):
                self.t.event(("no-r2t", cid))
                return self.send(response(cid, sqid=self.qid))
            self.ttag += 1
            self.writes[self.ttag] = (cid, slba, nbytes, bytearray(nbytes))
            return self.send(_pdu(R2T, 0, struct.pack("<HHIII", cid, self.ttag, 0, nbytes, 0)))
        if opc == IO_FLUSH:
            return self.send(response(cid, sqid=self.qid))
        return self.send(response(cid, 0, SC_INVALID_OPCODE, sqid=self.qid))

    def h2c(self, pdu, pdo):
        cid, ttag, datao, datal = struct.unpack_from("<HHII", pdu, 8)
        w = self.writes.get(ttag)
        if not w:
            return
        w[3][datao:datao + datal] = pdu[pdo:pdo + datal]
        if pdu[1] & F_LAST:
            cid, slba, n, buf = self.writes.pop(ttag)
            self.t.data[slba * 512:slba * 512 + n] = buf
            self.send(response(cid, sqid=self.qid))
