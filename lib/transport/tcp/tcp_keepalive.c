/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keep Alive on the admin connection: the fabrics layer's thread (nvmf_keepalive.h) running
 * its tick (nvmf_regs_keep_alive_tick: Keep Alive every KATO / 2, and the driver's recovery
 * started when the admin connection died while nothing else was running, as an I/O queue's
 * poll would).
 */
#include "tcp_ctrlr.h"

void tcp_keepalive_start(struct tcp_ctrlr *tc)
{
	if (nvmf_keepalive_start(&tc->ka, tc->p.nvmf.kato_ms, nvmf_regs_keep_alive_tick, &tc->regs))
		tcp_report(tc, "cannot start the keep-alive thread: the controller may end the "
			   "association after %u ms without commands", tc->p.nvmf.kato_ms);
}

void tcp_keepalive_stop(struct tcp_ctrlr *tc)
{
	nvmf_keepalive_stop(&tc->ka);
}
