#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The host's hand on the QEMU guest's hot-plug slot: reads the guest's serial log as it grows
and, for each "UNVME-HOTPLUG del" / "UNVME-HOTPLUG add" line the guest test writes
(tests/qemu/vfio_guest_test.c, hotplug), sends QEMU's device_del / device_add (QMP) for the
controller behind the hot-plug root port. Ends when the log says UNVME-DONE or QEMU goes away.

  hotplug_agent.py LOG QMP_SOCKET
"""
import json
import socket
import sys
import time

DEL = {"execute": "device_del", "arguments": {"id": "hp"}}
# a replacement: the same medium (hp.raw) behind a block node of its own (dh2, see
# scripts/qemu/run.sh: QEMU 7.2 sometimes keeps the unplugged controller's hold on dh), another
# serial number
ADD = {"execute": "device_add", "arguments": {"driver": "nvme", "id": "hp", "serial": "unvme-hp2",
                                              "drive": "dh2", "bus": "rp1"}}


def monitor(path, cmd):
    """One QMP command; its answer (the "return" or "error" object)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(10)
    f = s.makefile("rw")
    json.loads(f.readline())  # the greeting
    f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
    f.flush()
    json.loads(f.readline())
    f.write(json.dumps(cmd) + "\n")
    f.flush()
    while True:
        doc = json.loads(f.readline())
        if "return" in doc or "error" in doc:  # (events come in between)
            s.close()
            return doc


def old_holds_dh(mon):
    """Whether a block backend still uses node dh after the replacement went in on dh2."""
    graph = monitor(mon, {"execute": "x-debug-query-block-graph"}).get("return", {})
    ids = {n["id"]: n.get("name", "") for n in graph.get("nodes", [])}
    return any(ids.get(e["child"]) == "dh" for e in graph.get("edges", []))


def main():
    log, mon = sys.argv[1], sys.argv[2]
    pos = 0
    partial = ""  # a line the guest has not finished writing yet
    deadline = time.monotonic() + 3600
    while time.monotonic() < deadline:
        try:
            with open(log, errors="replace") as f:
                f.seek(pos)
                chunk = f.read()
                pos = f.tell()
        except FileNotFoundError:
            chunk = ""
        lines = (partial + chunk).split("\n")
        partial = lines.pop()
        for line in lines:
            line = line.strip()
            cmd = DEL if line == "UNVME-HOTPLUG del" else ADD if line == "UNVME-HOTPLUG add" else None
            if line.startswith("UNVME-DONE"):
                return 0
            if cmd:
                try:
                    out = monitor(mon, cmd)
                    # the guest removed the device, but QEMU deletes it (and lets go of its
                    # drive) once the guest has powered the slot off too: until then the id
                    # or the drive is taken
                    t0 = time.monotonic()
                    seen = set()
                    while cmd is ADD and "error" in out and time.monotonic() - t0 < 60:
                        if json.dumps(out) not in seen:  # each refusal once, for the log
                            seen.add(json.dumps(out))
                            print(f"hotplug agent: device_add refused at {time.monotonic() - t0:.1f} s: "
                                  f"{json.dumps(out)}", file=sys.stderr, flush=True)
                        time.sleep(0.5)
                        out = monitor(mon, cmd)
                    print(f"hotplug agent: {cmd['execute']}: {json.dumps(out)}",
                          file=sys.stderr, flush=True)
                    if cmd is ADD and "return" in out and old_holds_dh(mon):
                        print("hotplug agent: the removed controller still holds block node dh "
                              "(QEMU's defect, see scripts/qemu/run.sh); the replacement uses dh2",
                              file=sys.stderr, flush=True)
                except OSError as e:
                    print(f"hotplug agent: {cmd['execute']}: {e}", file=sys.stderr, flush=True)
                    return 1
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
