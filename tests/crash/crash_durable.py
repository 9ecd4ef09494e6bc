# SPDX-License-Identifier: BSD-3-Clause
"""The crash workloads that make each persistent component's largest transactions (the KV
file namespace, the host FTL, the host KV engine, zoned namespaces), each killed with
SIGKILL, at crash points and with power cuts; tests/crash/crash.py registers them.

    kv-big      the KV file namespace through the KV SDK's async calls at queue depth 8-16:
                values up to 2 MiB (5-40% of them 2 MiB whole), so that one batch of the
                controller's group commit carries up to 32 MiB; deletes; compaction
                running (a namespace twice the largest live data); now and then every key
                deleted by a key-and-delete iterator (one command deletes a chunk of keys)
                and formats.
    hostkv-big  the host KV engine the same way on a conventional file namespace of 25
                zones of 5 MiB: a 2 MiB value fills half a unit's data area, collection runs
                all the time (the keys' values fill 40..70% of the capacity).
    ftl-big     the host FTL with writes of up to 2 MiB (512 pages: several write units and
                a full write buffer per command) at queue depth 16, trims, FUA and flushes,
                on 32 MiB with 25% over-provisioning: collection all the time.
    zns         a zoned namespace in a file through the driver's zoned API
                (tests/crash/crash_zns.c): zones written at the write pointer and with Zone
                Append up to 2 MiB per command, filled to their capacity, finished, reset,
                one command in flight per zone on up to 8 zones, flushes.

Every checker holds what the component promises: the KV namespaces every acknowledged
store and delete across a power cut too (--plp); the FTL and zoned namespaces what a Flush
(or FUA) covered across a power cut, every acknowledged write across a process crash.
"""


def components(h):
    """The workload classes, built on the harness module h (crash.py): its Component, Kv,
    Block and Ftl classes and tool_run."""

    class KvBig(h.Kv):
        name = "kv-big"
        api = "sdk-async"
        damage_kinds = []     # the kv-* workloads damage files; these make big transactions
        point_max = dict(h.Kv.point_max, **{"kv.put.before_append": 60, "kv.put.torn": 60,
                                            "kv.put.before_sync": 60, "kv.put.before_index": 60,
                                            "kv.del.before_sync": 30, "kv.del.before_index": 30})
        keys = 32           # at most 64 MiB of values (the capacity of hostkv-big's: 72 MiB)
        depths = [8, 16]
        max_delay = 0.8

        def dev(self):
            return f"emu://crashkvbig?ns=kv:128M::{self.log_file}"

        def writer(self, rnd, log, seed):
            r = self.rng
            return [str(self.build / "tests/crash/crash_kv"), "write", "--api", self.api,
                    "--dev", self.dev(), "--log", str(log), "--round", str(rnd),
                    "--seed", str(seed), "--state", str(self.state), "--keys", str(self.keys),
                    "--max-value", str(2 << 20), "--big-pct", str(r.choice([5, 20, 40])),
                    "--del-pct", str(r.choice([10, 30])), "--qd", str(r.choice(self.depths)),
                    "--no-vwc", "--iterdel-per-mille", "4", "--format-per-mille", "1"]

    class HostKvBig(KvBig):
        name = "hostkv-big"
        points = h.HostKv.points + ["hkv.gc.flushed"]  # collection runs all the time here
        point_max = {"ns.write.before": 150, "ns.write.torn": 150, "ns.write.after": 150,
                     "ns.flush.before": 60, "ns.flush.after": 60, "hkv.commit.sealed": 40,
                     "hkv.gc.flushed": 6, "hkv.erase.marked": 1}

        def fresh(self):
            h.Component.fresh(self)
            self.log_file = self.media / "ns.img"
            h.tool_run(self.build, "id-ctrl", self.dev(fmt=True))  # the engine formats it once

        def dev(self, fmt=False):
            inner = f"emu://crashhkvbig?ns=file:128M:4096:{self.log_file}"
            return f"hostkv://{inner}?zone=5M&op=40" + ("&format=1" if fmt else "")

    class FtlBig(h.Ftl):
        name = "ftl-big"
        raw = 32 << 20
        max_delay = 0.8
        point_max = {"ns.write.before": 300, "ns.write.torn": 300, "ns.write.after": 300,
                     "ns.flush.before": 40, "ns.flush.after": 40}

        def dev(self, own_size=False, fmt=False):
            inner = f"emu://crashftlbig?ns=file:{self.raw}:{self.lba}:{self.img}"
            return f"ftl://{inner}?zone=1M&op=25" + ("&format=1" if fmt else "")

        def writer(self, rnd, log, seed):
            r = self.rng
            return [str(self.build / "tests/crash/crash_block"), "write", "--dev", self.dev(),
                    "--log", str(log), "--round", str(rnd), "--seed", str(seed),
                    "--qd", str(r.choice([4, 16])), "--vwc", "1",
                    "--flush-every", str(r.choice([4, 16, 64])),
                    "--fua-pct", str(r.choice([0, 5])), "--zero-pct", str(r.choice([0, 5])),
                    "--max-nlb", str(r.choice([64, 512]))]

    class Zns(h.Component):
        name = "zns"
        points = h.Block.points  # the data file's: torn and killed writes and flushes
        point_max = {"ns.write.before": 300, "ns.write.torn": 300, "ns.write.after": 300,
                     "ns.flush.before": 40, "ns.flush.after": 40}
        max_delay = 0.8

        def fresh(self):
            super().fresh()
            self.img = self.media / "zns.img"

        def dev(self):
            return f"emu://crashzns?ns=zns,zone=4M,open=0,active=0:32M:4096:{self.img}"

        def writer(self, rnd, log, seed):
            r = self.rng
            return [str(self.build / "tests/crash/crash_zns"), "write", "--dev", self.dev(),
                    "--log", str(log), "--round", str(rnd), "--seed", str(seed),
                    "--qd", str(r.choice([1, 4, 8])), "--vwc", str(r.choice([1, 1, 0])),
                    "--flush-every", str(r.choice([0, 8, 32])),
                    "--fua-pct", str(r.choice([0, 10])), "--append-pct", str(r.choice([0, 50, 100])),
                    "--max-nlb", str(r.choice([16, 512]))]

        def checker(self, log, powerloss, damage):
            return [str(self.build / "tests/crash/crash_zns"), "check", "--dev", self.dev(),
                    "--log", str(log), "--state", str(self.state)] + \
                (["--powerloss"] if powerloss else [])

    return [KvBig, HostKvBig, FtlBig, Zns]
