/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine options and the checks of a job that must hold before any I/O (engine.c calls them
 * from setup, so a bad job fails with one line before a thread starts).
 */
#include "fio_glue.h"

struct fio_option ufio_options[] = {
	{
		.name = "json_path",
		.lname = "uNVMe SDK configuration file",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct ufio_opts, json_path),
		.help = "KV SDK JSON configuration (devices, core_mask, queue_depth, ssd_type); "
			"optional when filename names device ids",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "ks",
		.lname = "key size",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct ufio_opts, ks),
		.minval = 4,
		.maxval = 255,
		.def = "16",
		.help = "Key size in bytes on KV namespaces (4..255); the key is the offset",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = NULL,
	},
};

static const char *human(unsigned long long v, char *buf, size_t len)
{
	if (v >= (1ull << 20) && v % (1ull << 20) == 0)
		snprintf(buf, len, "%llu MiB", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, len, "%llu KiB", v >> 10);
	else
		snprintf(buf, len, "%llu bytes", v);
	return buf;
}

int ufio_check_job(struct thread_data *td, char *err, size_t errlen)
{
	if (!td->o.use_thread) {
		snprintf(err, errlen, "job '%s': thread=1 is required (jobs share the devices "
			 "opened in this process; add --thread or thread=1)", td->o.name);
		return -1;
	}
	return 0;
}

/* Where this job starts in the file: fio's own rule (filesetup.c get_start_offset) for
 * offset=, offset as a percentage, and offset_increment / its percentage for the numjobs
 * copies. */
static unsigned long long start_offset(struct thread_data *td, unsigned long long size)
{
	struct thread_options *o = &td->o;
	bool align = false;
	unsigned long long inc = o->offset_increment, off;
	if (o->offset_increment_percent) {
		inc = o->offset_increment_percent * size / 100;
		align = true;
	}
	if (o->start_offset_percent > 0) {
		off = size * o->start_offset_percent / 100 + td->subjob_number * inc;
		align = true;
	} else {
		off = o->start_offset + td->subjob_number * inc;
	}
	if (align) {
		unsigned long long abs = fio_option_is_set(o, start_offset_align) ? o->start_offset_align
										    : td_min_bs(td);
		if (abs)
			off = (off / abs + (off % abs != 0)) * abs;
	}
	return off;
}

int ufio_check_file(struct thread_data *td, struct fio_file *f, const struct ufio_dev *d,
		    uint32_t ks, char *err, size_t errlen)
{
	char a[64], b[64];
	/* fio itself would run such a job to nothing and exit 0: say so instead */
	unsigned long long off = start_offset(td, d->capacity);
	if (off >= d->capacity) {
		snprintf(err, errlen, "%s: job '%s' starts at offset %llu, at or beyond the end of the "
			 "namespace (%llu bytes): nothing would be done; lower offset= (or "
			 "offset_increment=)", f->file_name, td->o.name, off,
			 (unsigned long long)d->capacity);
		return -1;
	}
	if (td->o.size && off + td->o.size > d->capacity && d->kind == UFIO_BLOCK) {
		snprintf(err, errlen, "%s: job '%s' covers offset %llu to %llu, beyond the end of the "
			 "namespace (%llu bytes)", f->file_name, td->o.name, off, off + td->o.size,
			 (unsigned long long)d->capacity);
		return -1;
	}
	static const char *const dname[] = { "read", "write", "trim" };
	for (int dd = DDIR_READ; dd <= DDIR_TRIM; dd++) {
		unsigned long long minbs = td->o.min_bs[dd], maxbs = td->o.max_bs[dd];
		unsigned long long ba = td->o.ba[dd];
		if (d->kind == UFIO_KV) {
			if (dd != DDIR_TRIM && maxbs > d->max_value) {
				snprintf(err, errlen, "%s: bs=%s (%s) is larger than the KV value limit "
					 "of %s", f->file_name, human(maxbs, a, sizeof(a)), dname[dd],
					 human(d->max_value, b, sizeof(b)));
				return -1;
			}
			if (dd != DDIR_TRIM && (minbs % 4 || maxbs % 4)) {
				snprintf(err, errlen, "%s: bs=%llu (%s) is not a multiple of 4: KV "
					 "values move in dwords", f->file_name, minbs, dname[dd]);
				return -1;
			}
		} else {
			unsigned long long lim = dd == DDIR_TRIM ? (1ull << 32) * d->lba_size :
								   d->max_xfer;
			if (maxbs > lim) {
				snprintf(err, errlen, "%s: bs=%s (%s) is larger than the transfer limit "
					 "of %s", f->file_name, human(maxbs, a, sizeof(a)), dname[dd],
					 human(lim, b, sizeof(b)));
				return -1;
			}
			if (minbs % d->lba_size || maxbs % d->lba_size || (ba && ba % d->lba_size)) {
				snprintf(err, errlen, "%s: bs=%llu / blockalign=%llu (%s) must be "
					 "multiples of the %u-byte LBA size", f->file_name, minbs, ba,
					 dname[dd], d->lba_size);
				return -1;
			}
		}
	}
	if (d->kind == UFIO_KV && d->capacity - 1 > ufio_kv_key_limit(ks)) {
		unsigned long long lim = ufio_kv_key_limit(ks);
		if (td->o.size == 0 || td->o.start_offset + td->o.size - 1 > lim) {
			snprintf(err, errlen, "%s: ks=%u keys cannot tell apart offsets above %llu: "
				 "use a larger ks or size=%llu", f->file_name, ks, lim, lim + 1);
			return -1;
		}
	}
	return 0;
}
