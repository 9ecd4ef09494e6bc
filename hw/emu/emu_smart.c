/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SMART / Health Information log (NVMe Base 2.0, 5.16.1.3), controller-wide.
 * Host command and data counters are summed over the I/O queues (each queue counts its own
 * commands, so the I/O path shares nothing) plus deleted queues and earlier sessions.
 * Data units are thousands of 512-byte units, rounded up (1 = 1..1000 units).
 */
#include <string.h>

#include "emu_ctrl.h"

/* The log is packed (the temperature is unaligned): build each 128-bit counter aside. */
static struct nvme_u128 u128(uint64_t v)
{
	return (struct nvme_u128){ .lo = v, .hi = 0 };
}

static uint64_t data_units(uint64_t bytes)
{
	uint64_t units = (bytes + 511) / 512;
	return (units + 999) / 1000;
}

void emu_smart_build(struct emu_ctrl *c, struct nvme_smart_log *out)
{
	struct emu_io_stats s;
	emu_io_stats_sum(c, &s);
	s.read_cmds += c->nv.io.read_cmds;
	s.write_cmds += c->nv.io.write_cmds;
	s.bytes_read += c->nv.io.bytes_read;
	s.bytes_written += c->nv.io.bytes_written;

	uint64_t error_count;
	emu_errlog_snapshot(c, NULL, &error_count);

	uint64_t on_secs = c->nv.power_on_secs + (mono_ns() - c->created_ns) / 1000000000ull;

	memset(out, 0, sizeof(*out));
	if (emu_temp_warning(c))
		out->critical_warning |= NVME_SMART_CW_TEMP;
	out->temperature = EMU_TEMP_KELVIN;
	out->avail_spare = 100;
	out->spare_thresh = 10;
	out->percent_used = 0;
	out->data_units_read = u128(data_units(s.bytes_read));
	out->data_units_written = u128(data_units(s.bytes_written));
	out->host_reads = u128(s.read_cmds);
	out->host_writes = u128(s.write_cmds);
	out->power_cycles = u128(c->nv.power_cycles);
	out->power_on_hours = u128(on_secs / 3600);
	out->unsafe_shutdowns = u128(c->nv.unsafe_shutdowns);
	out->media_errors = u128(c->nv.media_errors + atomic_load(&c->media_errors));
	out->num_err_log_entries = u128(error_count);
}
