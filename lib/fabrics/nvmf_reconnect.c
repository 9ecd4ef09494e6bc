/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabrics reconnect policy (nvmf_reconnect.h). */
#include <errno.h>
#include <stdio.h>

#include "lib/common/clock.h"
#include "lib/driver/errmsg.h"
#include "unvme/unvme.h"
#include "nvmf_reconnect.h"

int nvmf_reconnect_run(const struct nvmf_reconnect *r, int *attempts)
{
	/* the coarse clock's slack (clock.h): without it two readings ctrl_loss_tmo apart may be
	 * a tick less apart in truth, and the controller given up early */
	uint64_t until = mono_ms_coarse() + r->ctrl_loss_tmo_ms + mono_coarse_slack_ms();
	*attempts = 0;
	if (r->closing(r->arg))
		return unvme_fail(-ECANCELED, "the reconnect was stopped");
	for (;;) {
		++*attempts;
		int rc = r->attempt(r->arg);
		if (rc == 0)
			return 0;
		if (rc > 0 || rc == -EACCES || r->closing(r->arg) || mono_ms_coarse() >= until) {
			char why[512];
			snprintf(why, sizeof(why), "%s", unvme_errmsg());
			return unvme_fail(rc < 0 ? rc : -EIO, "%s", why);
		}
		uint32_t delay = r->reconnect_delay_ms ? r->reconnect_delay_ms : 100;
		if (r->pause)
			r->pause(r->arg, delay);
		else
			sleep_us((uint64_t)delay * 1000);
		if (r->closing(r->arg)) {
			char why[512];
			snprintf(why, sizeof(why), "%s", unvme_errmsg());
			return unvme_fail(rc, "%s", why);
		}
	}
}
