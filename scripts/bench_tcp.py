#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""NVMe over TCP for make bench: the same emulated device local and remote, side by side.

`unvme perf` on CPU 0 drives an emulated device either directly (local) or through our host
transport and our target (`unvme target`, pinned to CPU 1) over 127.0.0.1 (remote). Two
devices:
  - the SSD latency model of the device-thread section (80 us reads, 20 us writes, 48
    parallel units; its engine thread on CPU 2, or on CPU 1 with the target when the machine
    has only two), and
  - a memory namespace (inline: the pure software cost of the fabric).
Measured: QD 1 random 4 KiB read and write latency (avg, p50, p99) local and remote and the
latency the fabric adds; random 4 KiB read IOPS against queue depth, local and remote, and the
ratio. The floor under the added latency is measured in the same run: tools/bench/tcp_pingpong
moves the same bytes between the same two CPUs over a loopback TCP connection with busy-polled
sockets and no NVMe work; added minus floor is our software's share. Targets (issue 14): added
QD 1 latency <= 10 us; remote IOPS at QD 32 on the latency model >= 0.9 x local.

TLS (issue 27): the memory namespace also through a second target that requires TLS 1.3 with a
pre-shared key (TLS_AES_128_GCM_SHA256, user-space OpenSSL on both ends), in the same rounds
as plain TCP: QD 1 latency and QD 32 IOPS, with the ratio TLS / plain.

Every figure is the median of the rounds with their range (bench_common). On a 2-CPU machine the
remote latency-model case runs three busy threads (perf, the target's poller, the device
engine standing in for an SSD's hardware) on two CPUs where local runs two: the report says so.

Durations: 2 s per QD 1 latency point (the p99 of the remote latency model's ~1,600 I/Os a
second needs them) and 1 s per IOPS point (the queue-depth sweep, TLS at QD 32: an average
over a thousand to two million I/Os), the same for local and remote: the sweep's 2 s points took
two thirds of the section's five minutes.

  BUILD=build python3 scripts/bench_tcp.py [--seconds N] [--sweep-seconds N] [--qds 1,2,4]
                                          [--json out.json] [--plot-dir DIR]
"""
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import bench_common as bc

PINGPONG = bc.BUILD / "tools" / "bench" / "tcp_pingpong"
NQN = "nqn.2024-01.io.unvme.bench:"
RLAT_US, WLAT_US, UNITS = 80, 20, 48
QDS = (1, 2, 4, 8, 16, 32, 64, 128)
LAT, MEM = "latency model", "memory namespace"


def engine_cpu():
    return 2 if bc.ncpus() >= 3 else 1


def devices(size):
    return {LAT: f"ns=mem:{size}:4096&mode=thread&rlat={RLAT_US}us&wlat={WLAT_US}us"
                 f"&units={UNITS}&cpu={engine_cpu()}",
            MEM: f"ns=mem:{size}:4096"}


def perf(dev, workload, qd, seconds, fill=False):
    """One `unvme perf` run on CPU 0: IOPS and latency (avg, p50, p99) in us."""
    cmd = [bc.UNVME, "perf", "-d", dev, "-w", workload, "-b", "4096", "-q", qd, "-t", seconds,
           "-c", "0", "-o", "json"] + (["--fill"] if fill else [])
    out, _ = bc.run(cmd, timeout=seconds * 10 + 300)
    t = json.loads(out)["total"]
    lat = t["latency_us"]
    return {"iops": t["iops"], "avg_us": lat["avg"], "p50_us": lat["p50"], "p99_us": lat["p99"]}


def floor(rounds):
    """The loopback TCP round trip of one 4 KiB read and write between CPUs 0 and 1."""
    cpus = ["0", "1"] if bc.ncpus() > 1 else ["0", "0"]
    out, _ = bc.run([PINGPONG, *cpus, rounds], timeout=300)
    f = json.loads(out)
    return {"randread": f["read"], "randwrite": f["write"]}


# a fixed PSK (32 bytes, hash 01: TLS_AES_128_GCM_SHA256), as nvme gen-tls-key prints one
TLS_KEY = "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"


class Target:
    """`unvme target` on CPU 1 serving one subsystem per device, any host (with tls: every
    connection TLS 1.3 with TLS_KEY)."""

    def __init__(self, tmp, specs, tls=False, name="tb"):
        cfg = {"listen": ["127.0.0.1:0"], "threads": 1, "subsystems": [
            {"nqn": NQN + str(i), "allow_any_host": True, "namespaces": [f"emu://{name}{i}?{spec}"]}
            for i, spec in enumerate(specs)]}
        if tls:
            cfg["tls"] = True
            for s in cfg["subsystems"]:
                s["tls_key"] = TLS_KEY
        self.query = f"?tls_key={TLS_KEY}" if tls else ""
        path = pathlib.Path(tmp) / f"{name}.json"
        path.write_text(json.dumps(cfg))
        port_file = pathlib.Path(tmp) / f"{name}.port"
        pin = ["taskset", "-c", "1"] if bc.ncpus() > 1 else []
        self.proc = subprocess.Popen(pin + [str(bc.UNVME), "target", "-c", str(path), "--quiet",
                                            "--port-file", str(port_file)],
                                     env=bc.ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        deadline = time.time() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if self.proc.poll() is not None or time.time() > deadline:
                self.proc.kill()
                raise RuntimeError(f"unvme target did not start: {self.proc.stderr.read()}")
            time.sleep(0.05)
        self.port = int(port_file.read_text())

    def devid(self, i):
        return f"nvme-tcp://127.0.0.1:{self.port}/{NQN}{i}{self.query}"

    def stop(self):
        self.proc.terminate()
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise RuntimeError("unvme target did not stop on SIGTERM")
        if rc != 0:
            raise RuntimeError(f"unvme target exited {rc}: {self.proc.stderr.read()[-2000:]}")


def stats(runs):
    return {k: bc.collect(runs, k) for k in ("iops", "avg_us", "p50_us", "p99_us")}


def diff(remote, local, key):
    """The added latency: the median of the per-round differences, with their range."""
    return bc.stat([r[key] - lo[key] for r, lo in zip(remote, local)])


def run(a):
    bc.need(bc.UNVME, "unvme")
    bc.need(PINGPONG, "tcp_pingpong")
    seconds = a.seconds or (1 if bc.QUICK else 2)
    sweep_s = a.sweep_seconds or 1
    size = "16M" if bc.QUICK else "256M"
    qds = [int(q) for q in a.qds.split(",")] if a.qds else ([1, 32] if bc.QUICK else list(QDS))
    specs = devices(size)
    pings = 2000 if bc.QUICK else 20000
    floors = [floor(pings)]
    qd1 = {name: {wl: {"local": [], "remote": []} for wl in ("randread", "randwrite")} for name in specs}
    sweep = {name: {qd: {"local": [], "remote": []} for qd in qds} for name in specs}
    # plain TCP and TLS on the memory namespace: QD 1 both ways, QD 32 reads
    tls_points = [("randread", 1), ("randwrite", 1), ("randread", 32)]
    tls = {p: {"plain": [], "tls": []} for p in tls_points}
    with tempfile.TemporaryDirectory() as tmp:
        t = Target(tmp, specs.values())
        ts = Target(tmp, [specs[MEM]], tls=True, name="tt")
        try:
            # every block written once, so remote reads move data (local runs --fill their own)
            for i in range(len(specs)):
                perf(t.devid(i), "write", 32, 1, fill=True)
            perf(ts.devid(0), "write", 32, 1, fill=True)
            for _ in range(bc.ROUNDS):
                for i, (name, spec) in enumerate(specs.items()):
                    local, remote = f"emu://lb{i}?{spec}", t.devid(i)
                    for wl in ("randread", "randwrite"):
                        qd1[name][wl]["local"].append(perf(local, wl, 1, seconds, fill=wl == "randread"))
                        qd1[name][wl]["remote"].append(perf(remote, wl, 1, seconds))
                    for qd in qds:
                        sweep[name][qd]["local"].append(perf(local, "randread", qd, sweep_s, fill=True))
                        sweep[name][qd]["remote"].append(perf(remote, "randread", qd, sweep_s))
                for wl, qd in tls_points:
                    s = seconds if qd == 1 else sweep_s
                    tls[(wl, qd)]["plain"].append(perf(t.devid(list(specs).index(MEM)), wl, qd, s))
                    tls[(wl, qd)]["tls"].append(perf(ts.devid(0), wl, qd, s))
        finally:
            t.stop()
            ts.stop()
    floors.append(floor(pings))
    # the lower of the two: the machine's floor, not its noise
    fl = {wl: min((f[wl] for f in floors), key=lambda r: r["p50_us"]) for wl in ("randread", "randwrite")}
    out = {"seconds": seconds, "sweep_seconds": sweep_s, "size": size, "rounds": bc.ROUNDS, "engine_cpu": engine_cpu(),
           "cpus": bc.ncpus(), "floor": fl, "floor_runs": floors, "qd1": {}, "sweep": {}, "plots": {},
           "tls": []}
    for (wl, qd), sides in tls.items():
        pl, tl = stats(sides["plain"]), stats(sides["tls"])
        out["tls"].append({"workload": wl, "qd": qd, "plain": pl, "tls": tl,
                           "iops_ratio": bc.ratio(tl["iops"], pl["iops"]),
                           "p50_ratio": bc.ratio(tl["p50_us"], pl["p50_us"]),
                           "runs": sides})
    for name in specs:
        out["qd1"][name] = {}
        for wl, sides in qd1[name].items():
            lo, re = sides["local"], sides["remote"]
            out["qd1"][name][wl] = {"local": stats(lo), "remote": stats(re),
                                    "added_avg_us": diff(re, lo, "avg_us"),
                                    "added_p50_us": diff(re, lo, "p50_us"),
                                    "runs": {"local": lo, "remote": re}}
        rows = []
        for qd in qds:
            lo, re = stats(sweep[name][qd]["local"]), stats(sweep[name][qd]["remote"])
            rows.append({"qd": qd, "local": lo, "remote": re, "ratio": bc.ratio(re["iops"], lo["iops"])})
        out["sweep"][name] = rows
        slug = "lat" if name == LAT else "mem"
        png = pathlib.Path(a.plot_dir) / f"tcp-qd-{slug}.png"
        why = bc.plot_lines(png, f"4 KiB random read, {describe(name)}", "queue depth", "KIOPS", qds,
                            [{"label": "local (emulated device)", "style": "o-",
                              "y": [r["local"]["iops"]["median"] / 1e3 for r in rows]},
                             {"label": "remote: NVMe/TCP over 127.0.0.1", "style": "s--",
                              "y": [r["remote"]["iops"]["median"] / 1e3 for r in rows]}])
        out["plots"][slug] = None if why else str(png)
    return out


def describe(name):
    return (f"latency model ({RLAT_US}/{WLAT_US} us, {UNITS} units)" if name == LAT
            else "memory namespace")


def lat3(s):
    return " / ".join(f"{s[k]['median']:.1f}" for k in ("avg_us", "p50_us", "p99_us"))


def k(x):
    return f"{x / 1e3:.1f}"


def render(d):
    fl = d["floor"]
    out = [f"QD 1, 4 KiB, `unvme perf` on CPU 0, the target on CPU 1, the latency model's engine "
           f"on CPU {d['engine_cpu']}; {d['size']} per device, every block written first; "
           + (f"{d['seconds']} s per QD 1 point and {d['sweep_seconds']} s per IOPS point (the "
              "sweep below, TLS at QD 32)" if d.get("sweep_seconds", d["seconds"]) != d["seconds"]
              else f"{d['seconds']} s per point")
           + f", median of {d['rounds']} runs (range in brackets). "
           "Latency in us: avg / p50 / p99.", ""]
    if d["engine_cpu"] == 1:
        out += ["Only two CPUs: remotely the latency model's engine shares CPU 1 with the target's "
                "poller (three busy threads on two CPUs, two locally), so its remote figures "
                "measure that sharing; the memory namespace (no engine thread) measures the "
                "transport.", ""]
    rows = []
    for name, res in d["qd1"].items():
        for wl, r in res.items():
            share = r["added_p50_us"]["median"] - fl[wl]["p50_us"]
            rows.append([describe(name), wl, lat3(r["local"]), lat3(r["remote"]),
                         bc.fmt(r["added_avg_us"], bc.num(1)), bc.fmt(r["added_p50_us"], bc.num(1)),
                         f"{share:+.1f}"])
    out.append(bc.table(["device", "I/O", "local", "remote", "added avg", "added p50",
                         "ours: added p50 - floor p50"], rows, "llllrrr"))
    out += ["", "Floor (tcp_pingpong: the same bytes over loopback TCP between the same CPUs, "
            "busy-polled, no NVMe; the lower of a run before and after): " + ", ".join(
                f"{wl} {fl[wl]['avg_us']:.1f} / {fl[wl]['p50_us']:.1f} / {fl[wl]['p99_us']:.1f} us"
                for wl in ("randread", "randwrite")) + ".", "",
            "4 KiB random read KIOPS against queue depth, local and remote (ratio remote / local):", ""]
    qds = [r["qd"] for r in next(iter(d["sweep"].values()))]
    rows = []
    for name, sweep in d["sweep"].items():
        rows.append([f"{describe(name)}: local"] + [bc.fmt(r["local"]["iops"], k, False) for r in sweep])
        rows.append([f"{describe(name)}: remote"] + [bc.fmt(r["remote"]["iops"], k, False) for r in sweep])
        rows.append([f"{describe(name)}: ratio"] + [bc.fmt_ratio(r["ratio"]) for r in sweep])
    out.append(bc.table(["device"] + [f"QD {q}" for q in qds], rows))
    if d.get("tls"):
        out += ["", "TLS 1.3 (TLS_AES_128_GCM_SHA256, PSK, OpenSSL in user space on both ends; the "
                "kernel here has no TLS offload) against plain TCP, memory namespace, same rounds:", ""]
        rows = []
        for r in d["tls"]:
            rows.append([f"{r['workload']} QD {r['qd']}", lat3(r["plain"]), lat3(r["tls"]),
                         bc.fmt_ratio(r["p50_ratio"]), bc.fmt(r["plain"]["iops"], k, False),
                         bc.fmt(r["tls"]["iops"], k, False), bc.fmt_ratio(r["iops_ratio"])])
        out.append(bc.table(["I/O", "plain: avg / p50 / p99 us", "TLS: avg / p50 / p99 us",
                             "p50 TLS / plain", "plain KIOPS", "TLS KIOPS", "IOPS TLS / plain"],
                            rows, "lllrrrr"))
    added = max(r["added_p50_us"]["median"] for res in d["qd1"].values() for r in res.values())
    mem_added = max(r["added_p50_us"]["median"] for r in d["qd1"][MEM].values())
    share = max(r["added_p50_us"]["median"] - fl[wl]["p50_us"]
                for res in d["qd1"].values() for wl, r in res.items())
    at32 = next((r["ratio"]["median"] for r in d["sweep"][LAT] if r["qd"] == 32 and r["ratio"]), None)
    out += ["", f"Targets (issue 14): added QD 1 latency (p50) <= 10 us: worst +{added:.1f} us "
            f"(memory namespace +{mem_added:.1f} us) -> {'met' if added <= 10 else 'NOT met'}; the "
            f"loopback floor alone is {max(f['p50_us'] for f in fl.values()):.1f} us and our share at "
            f"most {share:+.1f} us. Remote IOPS at QD 32 on the latency model >= 0.9 x local: " +
            (f"{at32:.2f}x -> {'met' if at32 >= 0.9 else 'NOT met'}." if at32 else "not measured.")]
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--seconds", type=int, default=0, help="per QD 1 latency point (2)")
    ap.add_argument("--sweep-seconds", type=int, default=0,
                    help="per IOPS point: the QD sweep and TLS at QD 32 (1)")
    ap.add_argument("--qds", default="", help="queue depths of the sweep (default 1..128)")


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
