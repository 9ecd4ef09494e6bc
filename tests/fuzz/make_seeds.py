#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of each fuzz target (tests/fuzz/corpus/<target>/seed-*): valid
inputs the fuzzer starts from, so it spends its time past the first checks. The files are
kept in the tree (small); run this again after changing a target's input format. Inputs
found by fuzzing that crashed a target are kept next to them as regress-* files."""
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CORPUS = HERE / "corpus"


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data if isinstance(data, bytes) else data.encode())


# ---- emu_cmd: records of flags, op index, SQE, payload (fuzz_emu_cmd.c) ----
OPS = [0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0a, 0x0c, 0x10, 0x11, 0x80, 0xc1, 0x18,
       0x00, 0x01, 0x02, 0x05, 0x08, 0x09, 0x0c, 0x04,
       0x06, 0x10, 0x14,
       0x81, 0x83, 0x90, 0xa1, 0xb1, 0xb2, 0xb3]


def op_index(opc, io):
    start = 15 if io else 0
    return OPS.index(opc, start)


def sqe(nsid=0, cdw2=0, cdw3=0, mptr=0, prp1=0, prp2=0, cdw10=0, cdw11=0, cdw12=0, cdw13=0,
        cdw14=0, cdw15=0):
    # opcode and CID are filled in by the target
    return struct.pack("<BBHIIIQQQIIIIII", 0, 0, 0, nsid, cdw2, cdw3, mptr, prp1, prp2, cdw10,
                       cdw11, cdw12, cdw13, cdw14, cdw15)


def rec(opc, io=False, mode=1, payload=b"", hold=False, **kw):
    flags = (1 if io else 0) | (mode << 1) | (8 if hold else 0)
    n = (len(payload) + 31) // 32
    payload = payload.ljust(n * 32, b"\0")
    return bytes([flags, op_index(opc, io)]) + sqe(**kw) + bytes([n]) + payload


def kv_key16(k):
    k = k.ljust(16, b"\0")
    return struct.unpack("<IIII", k)


def seeds_emu_cmd():
    k = kv_key16(b"seedkey1")
    cases = {
        "identify": rec(0x06, cdw10=1) + rec(0x06, nsid=1, cdw10=0) + rec(0x06, nsid=2, cdw10=5, cdw11=1 << 24),
        "logs": rec(0x02, cdw10=0x02 | (127 << 16)) + rec(0x02, cdw10=0x01 | (63 << 16)) +
        rec(0x02, nsid=0xffffffff, cdw10=0xc0 | (127 << 16)),
        "features": rec(0x09, cdw10=0x06, cdw11=0) + rec(0x0a, cdw10=0x06) + rec(0x09, cdw10=0x07, cdw11=0x00030003),
        "rw": rec(0x01, io=True, nsid=1, cdw12=3, payload=b"A" * 2048) +
        rec(0x02, io=True, nsid=1, cdw12=3) + rec(0x05, io=True, nsid=1, cdw12=3, payload=b"A" * 2048) +
        rec(0x00, io=True, nsid=1) + rec(0x08, io=True, nsid=3, cdw10=2, cdw12=1),
        "prplist": rec(0x01, io=True, mode=2, nsid=3, cdw12=3, payload=struct.pack("<4Q", 1, 2, 3, 4)),
        "dsm": rec(0x09, io=True, nsid=1, cdw10=0, cdw11=4, payload=struct.pack("<IIQ", 0, 8, 0)),
        "kv_vendor": rec(0x81, io=True, nsid=0, cdw10=16, cdw11=7, cdw12=k[0], cdw13=k[1],
                         payload=b"v" * 64) +
        rec(0x90, io=True, nsid=0, cdw10=16, cdw11=7, cdw12=k[0], cdw13=k[1]) +
        rec(0xb3, io=True, nsid=0, cdw11=7, cdw12=k[0], cdw13=k[1]) +
        rec(0xb1, io=True, nsid=0, cdw11=0x05 << 8) +
        rec(0xb2, io=True, nsid=0, cdw10=8192, cdw11=1) +
        rec(0xa1, io=True, nsid=0, cdw11=7, cdw12=k[0], cdw13=k[1]),
        "kv_std": rec(0x01, io=True, nsid=2, cdw2=k[0], cdw3=k[1], cdw14=k[2], cdw15=k[3],
                      cdw10=64, cdw11=8, payload=b"s" * 64) +
        rec(0x02, io=True, nsid=2, cdw2=k[0], cdw3=k[1], cdw10=64, cdw11=8) +
        rec(0x06, io=True, nsid=2, cdw10=4096, cdw11=0) +
        rec(0x14, io=True, nsid=2, cdw2=k[0], cdw3=k[1], cdw11=8) +
        rec(0x10, io=True, nsid=2, cdw2=k[0], cdw3=k[1], cdw11=8),
        "format": rec(0x80, nsid=1, cdw10=1) + rec(0x80, nsid=2, cdw10=0),
        "firmware": rec(0x11, cdw10=1023, cdw11=0, payload=b"UNVMEFW1SEED    " + bytes(16)) +
        rec(0x10, cdw10=(1 << 3) | 2),
        "faults": rec(0xc1, cdw10=2, cdw11=1) + rec(0x02, io=True, nsid=1, cdw12=0) +
        rec(0x08, cdw10=1 | (0 << 16)) + rec(0xc1, cdw10=3, cdw11=1) + rec(0x02, io=True, nsid=1) +
        rec(0xc1, cdw10=0),
        "queues": rec(0x05, mode=0, prp1=0x100000000 + 0x200000, cdw10=(15 << 16) | 2, cdw11=1) +
        rec(0x01, mode=0, prp1=0x100000000 + 0x201000, cdw10=(15 << 16) | 2, cdw11=(2 << 16) | 1) +
        rec(0x00, cdw10=2) + rec(0x04, cdw10=2),
        "aer_abort": rec(0x0c) + rec(0x08, cdw10=0),
        "reset": bytes([0, 0xfe]) + bytes(65) + rec(0x06, cdw10=1),
        "doorbell": bytes([0, 0xff]) + sqe(cdw10=5, cdw11=3) + b"\0" + rec(0x02, cdw10=1 | (15 << 16)),
    }
    for name, data in cases.items():
        write("emu_cmd", name, data)


# ---- kv_log: log files (fuzz_kv_log.c: first byte's bit 0 adds a superblock) ----
def kv_rec(seq, key, val=b"", delete=False, ks=0):
    hdr = struct.pack("<QIBBBB", seq, len(val), 2 if delete else 1, ks, len(key), 0)
    body = hdr + key + val
    crc = crc32c(body)
    r = struct.pack("<II", 0x3152564B, crc) + body
    return r + bytes((-len(r)) % 8)


def seeds_kv_log():
    recs = kv_rec(1, b"key-one", b"x" * 40) + kv_rec(2, b"key-two", b"y" * 100, ks=1) + \
        kv_rec(3, b"key-one", b"z" * 8) + kv_rec(4, b"key-two", delete=True, ks=1)
    write("kv_log", "records", b"\x01" + recs)
    write("kv_log", "records_mutate", b"\x03" + recs)
    write("kv_log", "torn_tail", b"\x01" + recs + kv_rec(5, b"key-three", b"w" * 64)[:30])
    mid = bytearray(recs)
    mid[40] ^= 0xff
    write("kv_log", "damaged_middle", b"\x03" + bytes(mid))
    sb = bytearray(64)
    sb[:8] = b"UNVMEKV1"
    sb[8:12] = struct.pack("<I", 1)
    sb[12:16] = struct.pack("<I", crc32c(bytes(sb[:12])))
    write("kv_log", "own_superblock", b"\x00" + bytes(sb) + recs)
    write("kv_log", "bad_superblock", b"\x00" + b"NOTAKVLG" + bytes(56))


# ---- kv_config: JSON files ----
def seeds_kv_config():
    for p in list((REPO / "tests/unit/kvsdk/configs").glob("*.json")) + \
            list((REPO / "plugins/fio/examples").glob("*.json")):
        write("kv_config", p.stem, p.read_bytes())
    write("kv_config", "every_key", """{ "cache": "on", "cache_algorithm": "radix",
  "cache_reclaim_policy": "lru", "slab_size": 128, "app_hugemem_size": 16,
  "slab_alloc_policy": "posix", "ssd_type": "lba", "submit_retry_interval": -1,
  "log_level": 3, "log_file": "/tmp/x.log", "cq_idle_sleep_max_us": 250,
  "cq_coalesce_max_us": 0,
  "device_description": [ { "dev_id": "emu0", "core_mask": 10, "sync_mask": "0x10",
    "cq_thread_mask": "c", "queue_depth": 64 }, { "dev_id": "0000:02:00.0" } ] }""")


# ---- devid: mode byte, then the text ----
def seeds_devid():
    uris = ["", "x?ns=mem:1M:512", "fast?ns=null:1T", "disk?ns=file:0:4096:/tmp/a.img",
            "two?ns=mem:4G&ns=mem:4G:4096", "ssd?ns=mem:8G&rlat=80us&wlat=20us&units=32&bw=3G",
            "x?type=file&file=/tmp/x.img&size=1G&lba=4096", "kv?ns=kv:1G",
            "kvf?ns=kv:1G::/var/tmp/kv.img", "q?ns=mem:1M&queues=8&mqes=64&dstrd=2&serial=ABC&model=M&fw=F1",
            "t?mode=thread&cpu=1&engine=3", "p?ns=file:1M:512:/tmp/a%20b%26c.img&state="]
    for i, u in enumerate(uris):
        write("devid", f"uri{i}", b"\x00" + u.encode())
    write("devid", "env", b"\x01" + b"a=emu://a?ns=mem:1M;b=a;c=0000:02:00.0;d=nope")
    write("devid", "file", b"\x02" + b'{ "devices": { "a": "emu://fa?ns=mem:1M", "b": "a", '
          b'"0000:02:00.0": "emu://pci?ns=kv:1M" } }')
    for i, b in enumerate(["0000:02:00.0", "02:00.0", "0000.02.00.0", "ffff:ff:1f.7"]):
        write("devid", f"bdf{i}", b"\x03" + b.encode())


# ---- cli: batch lines (first byte even) and argv (odd) ----
def seeds_cli():
    lines = ["id-ctrl emu0 -o json", "read emu0 -s 0 -c 7 -z 4096 -d /tmp/x; flush emu0",
             "write 'emu://x?ns=mem:1M' --start-block=0x10 --data-size=4k --data \"/tmp/a b\"",
             "format emu0 -n 1 --lbaf 1 --ses 0 --force # comment",
             "perf emu0 -w randread -b 4k -q 32 -t 5 --cores 0,1 -d emu1 -d emu2",
             "kv-write emu0 -k key1 -v /tmp/v -s 4096 -o 0 -i 2 -n 1 -w -t -a",
             "kv-open-it emu0 -p 0x1234 -b 0xffff0000 -i 3; kv-read-it emu0 -i 1 -s 32768",
             "admin-passthru emu0 --opcode 0x06 --cdw10 1 --data-len 4096 -r",
             "get-log emu0 --log-id 2 --log-len 512 --offset 0 -b",
             "set-feature emu0 -f 6 -v 0 --save", "inject-fault emu0 --drop 3",
             "fw-download emu0 -f /tmp/fw; fw-commit emu0 -s 2 -a 1 --reset", "help read", "version"]
    for i, ln in enumerate(lines):
        write("cli", f"line{i}", b"\x00" + ln.encode())
    write("cli", "argv", b"\x01" + b"\0".join([b"write", b"emu0", b"-s", b"5", b"-c", b"2",
                                              b"--data=/tmp/x", b"--", b"extra"]))


# ---- mp: a secondary's session, messages {u16 length | 0x8000 with the memfd, bytes} ----
def mp_msg(op, body=b"", fd=False):
    # requests are exactly as long as their operation (mp_req_len): header and body
    data = struct.pack("<II", op, 0) + body
    return struct.pack("<H", len(data) | (0x8000 if fd else 0)) + data


def mp_sqe(opc, nsid=0, cdw10=0, cdw11=0, prp1=0, prp2=0):
    return struct.pack("<BBHIIIQQQIIIIII", opc, 0, 0, nsid, 0, 0, 0, prp1, prp2, cdw10, cdw11, 0,
                       0, 0, 0)


def mp_admin(sqe_bytes, iova, length):
    return mp_msg(3, sqe_bytes + struct.pack("<QII", iova, length, 0))


def seeds_mp():
    iova = 0x100000000000
    hello = mp_msg(1, struct.pack("<Ii", 4, 1234))  # MP_VERSION 4
    dma_map = mp_msg(6, struct.pack("<QQQ", iova, 2 << 20, 0), fd=True)
    write("mp", "hello_regs", hello + mp_msg(2, struct.pack("<II", 0x1c, 4))
          + mp_msg(2, struct.pack("<II", 0, 8)) + mp_msg(2, struct.pack("<II", 0xffc, 8)))
    write("mp", "identify", hello + dma_map
          + mp_admin(mp_sqe(0x06, cdw10=1), iova, 4096)
          + mp_admin(mp_sqe(0x02, nsid=0xffffffff, cdw10=(1023 << 16) | 2), iova, 4096)
          + mp_admin(mp_sqe(0x02, cdw10=(0xffff << 16) | 2, cdw11=0xffff), iova, 4096)
          + mp_admin(mp_sqe(0x02, cdw10=(127 << 16) | 2, prp1=iova, prp2=iova + 4096), 0, 0))
    write("mp", "queues", hello + dma_map
          + mp_msg(4, struct.pack("<IIQQ", 16, 0, iova + 0x10000, iova + 0x20000))
          + mp_msg(4, struct.pack("<IIQQ", 64, 0, iova + 0x40000, iova + 0x60000))
          + mp_admin(mp_sqe(0x08, cdw10=1), 0, 0) + mp_admin(mp_sqe(0x00, cdw10=1), 0, 0)
          + mp_admin(mp_sqe(0x04, cdw10=1), 0, 0)
          + mp_msg(5, struct.pack("<I", 2)) + mp_msg(7, struct.pack("<QQQ", iova, 2 << 20, 0)))
    write("mp", "refused", hello + mp_admin(mp_sqe(0x01), 0, 0) + mp_admin(mp_sqe(0x0c), 0, 0)
          + mp_admin(mp_sqe(0x09, cdw10=7), 0, 0) + mp_admin(mp_sqe(0x7c), 0, 0)
          + mp_admin(mp_sqe(0x09, cdw10=0x0d), 0, 0)
          + mp_msg(6, struct.pack("<QQQ", iova, 64 << 20, 0), fd=True)
          + mp_msg(6, struct.pack("<QQQ", iova, 4096, 0)) + mp_msg(99) + mp_msg(2, b"\0" * 3))
    write("mp", "control", mp_msg(13) + mp_msg(12) + hello + mp_msg(8) + mp_msg(9) + mp_msg(13)
          + mp_msg(11, struct.pack("<I", 4) + b"ab\0c"))
    write("mp", "hotplug", hello + dma_map
          + mp_msg(4, struct.pack("<IIQQ", 16, 0, iova + 0x10000, iova + 0x20000))
          + mp_msg(10) + mp_msg(10) + mp_msg(11, struct.pack("<I", 0)) + mp_msg(8)
          + mp_msg(5, struct.pack("<I", 1)))


# ---- target_session: operations on up to four connections (fuzz_target_session.c) ----
T_OPS = ["identify", "get-log", "get-features", "set-features", "keep-alive", "aer", "abort",
         "format", "read", "write", "compare", "flush", "write-zeroes", "dsm", "verify",
         "write-uncor", "copy", "zone-append", "zone-recv", "zone-send", "kv-store", "kv-retrieve",
         "kv-list", "kv-delete", "kv-exist", "kvv-store", "kvv-retrieve", "kvv-delete", "kvv-exist",
         "kvv-iter-req", "kvv-iter-read", "kvv-append", "fabrics"]
T_LENGTHS = [0, 16, 512, 1024, 4096, 8192, 65536, 512 * 256, 1 << 20, 2 << 20]
SUBS = {"A": 0, "B": 1, "disc": 2, "none": 3}
HOSTS = {"A": 0, "B": 1, "K": 2, "stranger": 3}


def t_open():
    return b"\x00"


def t_icreq(conn, dgst=0, hpda=0):
    return bytes([0x02 | conn << 4, dgst | hpda << 2])


def t_connect(conn, sub, host, qid=0, of=0, sqsize=31, kato=50, cid=1):
    mode = (0x80 | qid | of << 3) if qid else 0
    return bytes([0x03 | conn << 4, mode, SUBS[sub] | HOSTS[host] << 2, sqsize, kato]) + struct.pack("<H", cid)


def t_enable(conn, cid=2):
    return bytes([0x04 | conn << 4, 0x09]) + struct.pack("<H", cid)


def t_cmd(conn, op, nsid=0, cdw=(0, 0, 0, 0, 0, 0), length=0, incapsule=False, cid=3, fill=0x5a,
          data=b""):
    flags = sum(1 << i for i, v in enumerate(cdw) if v > 0xff)
    out = bytes([0x05 | conn << 4, T_OPS.index(op), flags]) + struct.pack("<HB", cid, nsid)
    for v in cdw:
        out += struct.pack("<I", v) if v > 0xff else bytes([v])
    out += bytes([T_LENGTHS.index(length), (1 if incapsule else 0) | (0x10 if data else 0), fill])
    return out + data


def seeds_target_session():
    a = t_open() + t_icreq(0) + t_connect(0, "A", "A") + t_enable(0)
    io = t_open() + t_icreq(1) + t_connect(1, "A", "A", qid=1, sqsize=7, kato=0)
    write("target_session", "admin", a + t_cmd(0, "identify", cdw=(1, 0, 0, 0, 0, 0), length=4096)
          + t_cmd(0, "get-log", cdw=(0x03ff0002, 0, 0, 0, 0, 0), length=4096))
    write("target_session", "io", a + io
          + t_cmd(1, "write", nsid=1, cdw=(0, 0, 7, 0, 0, 0), length=4096) + bytes([0x18, 0, 0x22])
          + t_cmd(1, "read", nsid=1, cdw=(0, 0, 7, 0, 0, 0), length=4096)
          + t_cmd(1, "write", nsid=1, cdw=(9, 0, 0, 0, 0, 0), length=512, incapsule=True)
          + t_cmd(1, "compare", nsid=1, cdw=(9, 0, 0, 0, 0, 0), length=512, incapsule=True))
    b = (t_open() + t_icreq(2) + t_connect(2, "B", "B") + t_enable(2) + t_open() + t_icreq(3, dgst=3)
         + t_connect(3, "B", "B", qid=1, of=2, sqsize=7, kato=0))
    write("target_session", "two-hosts", a + io + b
          + t_cmd(3, "read", nsid=1, cdw=(0, 0, 127, 0, 0, 0), length=65536)
          + t_cmd(1, "read", nsid=1, cdw=(0, 0, 15, 0, 0, 0), length=8192)
          + t_cmd(1, "read", nsid=1, cdw=(0, 0, 0, 0, 0, 0), length=65536))
    write("target_session", "auth", t_open() + t_icreq(0) + t_connect(0, "A", "K") + bytes([0x0a, 0, 7, 0])
          + t_enable(0) + t_cmd(0, "identify", cdw=(1, 0, 0, 0, 0, 0), length=4096))
    write("target_session", "discovery", t_open() + t_icreq(0) + t_connect(0, "disc", "B", kato=0)
          + t_enable(0) + t_cmd(0, "get-log", cdw=(0x03ff0070, 0, 0, 0, 0, 0), length=4096))
    write("target_session", "kv", a + t_open() + t_icreq(1) + t_connect(1, "A", "A", qid=2, sqsize=7)
          + t_cmd(1, "kv-store", nsid=2, cdw=(16, 8, 0, 0, 0, 0), length=16, incapsule=True)
          + t_cmd(1, "kv-retrieve", nsid=2, cdw=(16, 8, 0, 0, 0, 0), length=16)
          + t_cmd(1, "kvv-store", nsid=0, cdw=(4, 7, 0x61616161, 0x62626262, 0, 0), length=16, incapsule=True,
                  data=b"value of sixteen")
          + t_cmd(1, "kvv-retrieve", nsid=0, cdw=(4, 7, 0x61616161, 0x62626262, 0, 0), length=16))
    # a host that does not read: 2 MiB retrieves of a small value hold 2 MiB each until sent
    write("target_session", "backpressure", a + io
          + t_cmd(1, "kvv-store", nsid=0, cdw=(4, 7, 0x61616161, 0x62626262, 0, 0), length=16,
                  incapsule=True, data=b"value of sixteen") + bytes([0x1b])
          + b"".join(t_cmd(1, "kvv-retrieve", nsid=0, cdw=(0x80000, 7, 0x61616161, 0x62626262, 0, 0),
                           length=2 << 20, cid=10 + i) for i in range(4))
          + b"".join(t_cmd(1, "read", nsid=1, cdw=(0, 0, 127, 0, 0, 0), length=65536, cid=20 + i)
                     for i in range(3)) + bytes([0x1b, 0x0d]))
# ---- rdma: mode byte, then (0) bytes for the parsers, (1, 2) messages {u16 length, bytes}
# a lying host (1) or controller (2) sends, or (3) target session operations (fuzz_rdma.c) ----
def rdma_sqe(opc, cid, sgl, cdw10=0, cdw12=0):
    return struct.pack("<BBHIIIQ", opc, 0x40, cid, 1, 0, 0, 0) + sgl + struct.pack("<6I", cdw10, 0, cdw12, 0, 0, 0)


def rdma_keyed(off, length):
    # address (an offset into the host's buffer: the harness rebases it), 24-bit length, key, type 40h
    return struct.pack("<Q", off) + length.to_bytes(3, "little") + b"\0\0\0\0" + b"\x40"


def rdma_incapsule(length):
    return struct.pack("<QI3xB", 0, length, 0x01)


def rdma_msg(b):
    return struct.pack("<H", len(b)) + b


def seeds_rdma():
    req = struct.pack("<5H22x", 0, 1, 128, 127, 0)
    write("rdma", "cm_req", b"\x00" + req)
    write("rdma", "capsule_keyed", b"\x00" + bytes([0, 64, 16]) + rdma_sqe(2, 1, rdma_keyed(0, 4096)))
    write("rdma", "capsule_icd", b"\x00" + bytes([0, 64, 16]) + rdma_sqe(1, 1, rdma_incapsule(512)) + bytes(512))
    ctl = (rdma_msg(rdma_sqe(1, 0, rdma_incapsule(512)) + bytes(range(256)) * 2)
           + rdma_msg(rdma_sqe(1, 1, rdma_keyed(4096, 8192)))
           + rdma_msg(rdma_sqe(2, 2, rdma_keyed(0, 16384)))
           + rdma_msg(rdma_sqe(0, 3, rdma_keyed(0, 0)))
           + rdma_msg(rdma_sqe(2, 4, struct.pack("<QI3xB", 0, 64, 0x5a)))
           + rdma_msg(b"short"))
    write("rdma", "controller", b"\x01" + ctl)
    rsp = b"".join(rdma_msg(struct.pack("<IIHHHH", 0, 0, i, 1, i, 0)) for i in range(8))
    write("rdma", "host", b"\x02" + rsp + rdma_msg(struct.pack("<IIHHHH", 0, 0, 0, 1, 3, 0)) + rdma_msg(bytes(17)))
    # mode 3, whole target sessions (fuzz_rdma_target.c): an operation byte (low 3 bits what,
    # bits 4-5 which host) and its arguments
    def tsqe(opc, cid, cdw10=0, cdw12=0, fctype=0):
        head = struct.pack("<BBH", opc, 0x40, cid)
        if opc == 0x7F:
            return head + bytes([fctype]) + bytes(59)
        return head + struct.pack("<IIIQ", 1, 0, 0, 0) + bytes(16) + struct.pack("<6I", cdw10, 0, cdw12, 0, 0, 0)
    ses = (bytes([0x00, 0, 0, 31]) + bytes([0x02, 0, 31]) + struct.pack("<H", 0) + bytes([0x04])
           + bytes([0x10, 0, 1, 15]) + bytes([0x12, 1, 15]) + struct.pack("<H", 0)
           + bytes([0x13]) + tsqe(1, 1, cdw12=7) + bytes([2]) + struct.pack("<I", 4096) + bytes(range(256)) * 16
           + bytes([0x13]) + tsqe(2, 2, cdw12=7) + bytes([0]) + struct.pack("<IH", 4096, 0)
           + bytes([0x13]) + tsqe(1, 3, cdw12=7) + bytes([0]) + struct.pack("<IH", 4096, 4096)
           + bytes([0x13]) + tsqe(2, 4, cdw12=7) + bytes([1]) + struct.pack("<IHBI", 4096, 0, 1, 0x5A5A5A5A)
           + bytes([0x13]) + tsqe(0x7F, 5, fctype=8) + bytes([0]) + struct.pack("<IH", 0, 0)
           + bytes([0x05]) + struct.pack("<H", 0xFFFF) + bytes([0x06]))
    write("rdma", "target_session", b"\x03" + ses)
    write("rdma", "target_refusals", b"\x03" + bytes([0x00, 1, 5]) + b"short" + bytes([0x10, 0, 9, 200])
          + bytes([0x20, 0, 0, 31]) + bytes([0x22, 8 | 2, 31]) + struct.pack("<H", 0)
          + bytes([0x22, 16, 31]) + struct.pack("<HH", 0, 77) + bytes([0x21]) + struct.pack("<H", 3) + b"abc")


if __name__ == "__main__":
    seeds_emu_cmd()
    seeds_kv_log()
    seeds_kv_config()
    seeds_devid()
    seeds_cli()
    seeds_mp()
    seeds_target_session()
    seeds_rdma()
    print("seed corpora written under", CORPUS)
