#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A queue-depth curve from Python: 4 KiB random reads at QD 1..64 on one queue pair with the
asynchronous calls, IOPS per depth, plotted with matplotlib (docs/python.md).

  UNVME_LIB=build/libunvme.so python3 python/examples/qd_curve.py [DEVICE] [--out qd.png]

With the package installed (pip install ./python) or not: from the tree it finds the package
beside it. matplotlib comes from Debian (python3-matplotlib; a venv sees it when made with
--system-site-packages).
"""
import argparse
import random
import sys
import time
from pathlib import Path

try:
    import unvme
except ModuleNotFoundError:  # not installed: the package of the tree this example is in
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import unvme
try:
    import matplotlib
except ModuleNotFoundError:
    sys.exit("qd_curve.py: matplotlib is missing (Debian: apt-get install python3-matplotlib; "
             "a venv sees it when made with --system-site-packages)")


def iops_at(qp, ns, bufs, qd, seconds):
    """Keeps qd reads in flight for about `seconds`; returns completions per second."""
    done = 0
    nblocks = ns.nlbas - 8

    def resubmit(status, i):
        nonlocal done
        if status:
            raise unvme.NvmeError("read", status)
        done += 1
        if time.perf_counter() < end:
            qp.read_async(ns, random.randrange(nblocks), bufs[i].nlb, bufs[i],
                          lambda st, i=i: resubmit(st, i))

    start = time.perf_counter()
    end = start + seconds
    for i in range(qd):
        qp.read_async(ns, random.randrange(nblocks), bufs[i].nlb, bufs[i],
                      lambda st, i=i: resubmit(st, i))
    while qp.outstanding:
        qp.poll()
    return done / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("device", nargs="?", default="emu://qd?ns=mem:256M:512")
    ap.add_argument("--depths", default="1,2,4,8,16,32,64")
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--out", default="qd.png")
    a = ap.parse_args()
    depths = [int(d) for d in a.depths.split(",")]
    with unvme.Controller(a.device) as c, c.queue_pair(depth=max(depths) + 1) as qp:
        ns = c.namespace(1)
        bufs = []
        for _ in range(max(depths)):
            b = unvme.DmaBuffer(4096)
            b.nlb = 4096 // ns.lba_size
            bufs.append(b)
        curve = [(qd, iops_at(qp, ns, bufs, qd, a.seconds)) for qd in depths]
    for qd, iops in curve:
        print(f"QD {qd:3d}: {iops:10.0f} IOPS")

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([q for q, _ in curve], [i for _, i in curve], marker="o")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("queue depth")
    ax.set_ylabel("IOPS (4 KiB random reads)")
    ax.set_title(f"{a.device} from Python")
    fig.tight_layout()
    fig.savefig(a.out)
    print(f"plot: {a.out}")


if __name__ == "__main__":
    main()
