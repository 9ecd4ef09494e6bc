/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fio's side of the engine: included by engine.c, options.c and zones.c only. fio's headers come from
 * the source tree of the installed fio (scripts/fio-source.sh), configured by its ./configure.
 * Only functions that /usr/bin/fio exports may be called (fio resolves an engine's symbols
 * lazily, so an unexported one would kill fio at the first call): log_err, log_info,
 * io_u_mark_submit, io_u_queued, fio_gettime, __fio_option_is_set. td_verror() is a macro over __td_verror, which
 * Debian's fio does not export: never use it here.
 */
#ifndef UNVME_FIO_GLUE_H
#define UNVME_FIO_GLUE_H

#include "fio.h"
#include "optgroup.h"

#include "unvme_fio.h"

/* Engine options: fio refuses an option at offset 0, hence the padding. */
struct ufio_opts {
	void *pad;
	char *json_path;
	unsigned int ks;
};

extern struct fio_option ufio_options[];

struct ufio_thread;

/* One device of one job: fio_file->engine_data. */
struct ufio_file {
	struct ufio_dev *dev;
	struct unvme_ns *ns;
	uint32_t nsid;
	struct unvme_qpair *qp;
	struct ufio_thread *t;
	uint32_t outstanding;
	uint32_t lba_shift;
	uint64_t capacity;
	enum ufio_kind kind;
	bool pending; /* queued commands not yet rung */
	struct unvme_qpair *zqp; /* zone commands (zones.c), created on first use */
};

/* zones.c: fio's zonemode=zbd callbacks, and the release of a file's zone queue pair. */
int ufio_zoned_model(struct thread_data *td, struct fio_file *f, enum zbd_zoned_model *model);
int ufio_report_zones(struct thread_data *td, struct fio_file *f, uint64_t offset,
		      struct zbd_zone *zones, unsigned int nr_zones);
int ufio_reset_wp(struct thread_data *td, struct fio_file *f, uint64_t offset, uint64_t length);
int ufio_max_open_zones(struct thread_data *td, struct fio_file *f, unsigned int *max);
void ufio_zones_release(struct ufio_file *uf);

/* options.c: 0, or -1 with one line in err. */
int ufio_check_job(struct thread_data *td, char *err, size_t errlen);
int ufio_check_file(struct thread_data *td, struct fio_file *f, const struct ufio_dev *d,
		    uint32_t ks, char *err, size_t errlen);

#endif
