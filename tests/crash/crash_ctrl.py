#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writer and checker of the crash harness for the controller's non-volatile state (component
"ctrl"): Format NVM (the LBA size) and firmware download and commit, through the unvme tool
as a user runs it: every command is its own process, so every command is a power cycle.

    crash_ctrl.py write --unvme PATH --dev URI --log FILE --round R --seed S --dir DIR
    crash_ctrl.py check --unvme PATH --dev URI --log FILE --state FILE

The writer logs each command before it runs (M <seq> <lbaf>: format namespace 1 with LBA
format lbaf; P <seq> <slot> <n>: download revision R<n> into slot, active at the next power-on;
X <seq> <slot>: activate slot now) and "A <seq>" once the tool exited 0. It stops when a
command dies (a crash point ended it) and is killed by the harness otherwise.

The checker opens the device (a power-on), reads the LBA size of namespace 1, the running
revision and the revisions in the slots, and holds them against the state the acknowledged
commands leave (from the state the previous check found) or the state one command issued
after them leaves. It prints one JSON verdict like the C checkers.
"""
import json
import os
import random
import subprocess
import sys


def arg(name, default=None):
    if f"--{name}" in sys.argv:
        return sys.argv[sys.argv.index(f"--{name}") + 1]
    return default


def tool(unvme, *args):
    return subprocess.run([unvme, *map(str, args)], capture_output=True, text=True, timeout=120)


def log_line(fd, text):
    os.write(fd, (text + "\n").encode())  # one write per line: whole or absent after a kill


def write():
    unvme, dev, log, d = arg("unvme"), arg("dev"), arg("log"), arg("dir")
    rnd, rng = int(arg("round", 0)), random.Random(int(arg("seed", 1)))
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    seq = rnd << 32
    print("READY", flush=True)
    while True:
        seq += 1
        dice = rng.random()
        if dice < 0.4:
            lbaf = rng.randint(0, 1)
            log_line(fd, f"M {seq} {lbaf}")
            r = tool(unvme, "format", dev, "-n", 1, "-l", lbaf, "--force")
        elif dice < 0.8:
            slot, n = rng.randint(2, 3), seq & 0xffffff
            img = os.path.join(d, f"fw-{n}.bin")
            if tool(unvme, "fw-image", "-r", f"R{n}", "--output", img).returncode:
                sys.exit("crash_ctrl: fw-image failed")
            log_line(fd, f"P {seq} {slot} {n}")
            # download and commit in one process, as one step of the log
            r = subprocess.run([unvme, "batch", dev], input=f"fw-download -f {img}\n"
                               f"fw-commit -s {slot} -a 1\n", capture_output=True, text=True,
                               timeout=120)
            os.unlink(img)
        else:
            slot = rng.randint(1, 3)
            log_line(fd, f"X {seq} {slot}")
            r = tool(unvme, "fw-commit", dev, "-s", slot, "-a", 3)
        if r.returncode < 0:
            sys.stderr.write(r.stderr)  # "crash point ... reached", for the harness's count
            print(f"crash_ctrl: the tool died ({r.returncode})", flush=True)
            return 0
        if r.returncode == 0:
            log_line(fd, f"A {seq}")
        elif "Invalid Firmware" not in r.stderr:
            # activating an empty slot is refused by the device: anything else is not
            sys.exit(f"crash_ctrl: unexpected failure: {r.stderr.strip()}")


def observe(unvme, dev):
    """(lba size, running revision, {slot: revision}) of the device now, or an error."""
    ns = tool(unvme, "id-ns", dev, "-n", 1, "-o", "json")
    ctrl = tool(unvme, "id-ctrl", dev, "-o", "json")
    fw = tool(unvme, "fw-log", dev, "-o", "json")
    for r in (ns, ctrl, fw):
        if r.returncode:
            return None, r.stderr.strip()
    ns, ctrl, fw = json.loads(ns.stdout), json.loads(ctrl.stdout), json.loads(fw.stdout)
    lba = 1 << ns["lbaf"][ns["flbas"] & 0xf]["lbads"]
    slots = {s: fw[f"frs{s}"] for s in (1, 2, 3) if fw.get(f"frs{s}")}
    return (lba, ctrl["fr"].strip(), slots), None


def apply(state, op):
    """The state after op and the power cycle that follows it (the next tool's open)."""
    lba, running, slots = state
    slots = dict(slots)
    kind = op[0]
    if kind == "M":
        lba = 512 if op[2] == 0 else 4096
    elif kind == "P":
        slots[op[2]] = f"R{op[3]}"
        running = slots[op[2]]  # committed for activation at the next reset: the power-on
    elif kind == "X" and op[2] in slots:
        running = slots[op[2]]
    return lba, running, slots


def check():
    unvme, dev, log, state_path = arg("unvme"), arg("dev"), arg("log"), arg("state")
    verdict = {"component": "ctrl", "powerloss": False, "ops": 0, "acked": 0, "durable": 0,
               "flushes": 0, "checked": 0, "intact": 0, "inflight": 0, "lost": 0, "corrupt": 0,
               "resurrected": 0, "damaged": 0, "iter_keys": 0, "violations": 0, "first": []}

    def violation(text):
        verdict["violations"] += 1
        if len(verdict["first"]) < 8:
            verdict["first"].append(text)

    base = None
    if os.path.exists(state_path):
        with open(state_path) as f:
            s = json.load(f)
            base = (s["lba"], s["running"], {int(k): v for k, v in s["slots"].items()})
    ops = []
    with open(log) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            w = line.split()
            if w[0] == "A":
                for op in ops:
                    if op[1] == int(w[1]):
                        op[-1] = True
            else:
                ops.append([w[0]] + [int(x) for x in w[1:]] + [False])
    got, err = observe(unvme, dev)
    if got is None:
        violation(f"the device does not open: {err}")
        print(json.dumps(verdict))
        return 1
    if base is None:
        base = (got[0], "EMU1.0", {1: "EMU1.0"})  # the first round starts from a new device
    # the state the acknowledged commands leave, then the one in-flight command after them
    promised, later = base, []
    for op in ops:
        verdict["ops"] += 1
        if op[-1]:
            verdict["acked"] += 1
            verdict["durable"] += 1
            promised, later = apply(promised, op), []
        else:
            later.append(apply(promised, op))
    verdict["checked"] = 1
    if got == promised:
        verdict["intact"] = 1
    elif got in later:
        verdict["inflight"] = 1
    else:
        verdict["lost"] = 1
        violation(f"found {got}, expected {promised} or one of {later}")
    with open(state_path + ".tmp", "w") as f:
        json.dump({"lba": got[0], "running": got[1], "slots": got[2]}, f)
    os.replace(state_path + ".tmp", state_path)
    print(json.dumps(verdict))
    return 1 if verdict["violations"] else 0


if __name__ == "__main__":
    sys.exit(write() if sys.argv[1:2] == ["write"] else check())
