/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program that happens to define functions with the names of the library's internals
 * (qpair_free, ctrlr_enable) and uses the public API: linked statically against
 * libunvme.a it must link (no duplicate symbols) and both sides must call their own
 * functions. test_static_link.py builds and runs it.
 */
#include <stdio.h>
#include <string.h>

#include "unvme/unvme.h"

static int own_calls;

/* Same names as functions inside the library (lib/driver). */
void qpair_free(void *qp);
void qpair_free(void *qp)
{
	(void)qp;
	own_calls++;
}

int ctrlr_enable(void *c);
int ctrlr_enable(void *c)
{
	(void)c;
	return ++own_calls;
}

int main(void)
{
	struct unvme_ctrlr *c = NULL;
	int rc = unvme_ctrlr_open("emu://static?ns=mem:16M", NULL, &c);
	if (rc) {
		fprintf(stderr, "open: %d %s\n", rc, unvme_errmsg());
		return 1;
	}
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(c);
	char mn[41];
	memcpy(mn, id->mn, 40);
	mn[40] = '\0';
	/* the library's own qpair_free runs here, for its queues */
	unvme_ctrlr_close(c);
	qpair_free(NULL);
	ctrlr_enable(NULL);
	printf("model=%.8s own_calls=%d\n", mn, own_calls);
	return own_calls == 2 ? 0 : 1;
}
