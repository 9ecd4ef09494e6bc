/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening devices and reporting results. Controllers opened by a command stay open until the
 * process ends, keyed by the device id as given: in `unvme batch` the next line finds the
 * same controller, so a memory namespace keeps its data and an injected fault stays armed.
 * Every failure leaves through cli_result()/cli_fail(), which fix the message and exit code.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_OPEN 32

struct open_dev {
	char *devid;
	struct unvme_ctrlr *ctrlr;
	struct unvme_qpair *qp; /* the CLI's own I/O queue pair, created on first use */
};

static struct open_dev open_devs[MAX_OPEN];
static unsigned n_open;

const char *cli_echo(const char *s)
{
	static char ring[8][CLI_ECHO_MAX + 48];
	static unsigned next;
	if (!s)
		return "(null)";
	size_t n = strlen(s);
	if (n <= CLI_ECHO_MAX)
		return s;
	char *b = ring[next++ % 8];
	snprintf(b, sizeof(ring[0]), "%.*s... (%zu characters)", CLI_ECHO_MAX - 16, s, n);
	return b;
}

int cli_fail(const char *cmd, int code, const char *fmt, ...)
{
	char msg[CLI_MSG_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "unvme: %s: %s%s\n", cli_echo(cmd ? cmd : "error"), msg,
		n > CLI_MSG_MAX ? "... (message cut)" : "");
	return code;
}

int cli_result(const char *cmd, int rc, uint8_t csi)
{
	if (rc == 0)
		return EXIT_OK;
	if (rc > 0 && NVME_STATUS_SCT(rc) == NVME_SCT_PATH && unvme_errmsg()[0])
		/* path errors are the host's (the kernel refused or failed the command): say why */
		return cli_fail(cmd, EXIT_NVME, "%s (SCT %Xh, SC %Xh): %s", unvme_status_str(rc, csi),
				NVME_STATUS_SCT(rc), NVME_STATUS_SC(rc), unvme_errmsg());
	if (rc > 0)
		return cli_fail(cmd, EXIT_NVME, "%s (SCT %Xh, SC %Xh)", unvme_status_str(rc, csi),
				NVME_STATUS_SCT(rc), NVME_STATUS_SC(rc));
	const char *msg = unvme_errmsg();
	if (!msg || !*msg)
		msg = strerror(-rc);
	return cli_fail(cmd, EXIT_HOST, "%s", msg);
}

int cli_try_open(const char *devid, struct unvme_ctrlr **out)
{
	for (unsigned i = 0; i < n_open; i++) {
		if (strcmp(open_devs[i].devid, devid) == 0) {
			*out = open_devs[i].ctrlr;
			return 0;
		}
	}
	if (n_open == MAX_OPEN)
		return -EMFILE;
	struct unvme_ctrlr *c = NULL;
	int rc = unvme_ctrlr_open(devid, NULL, &c);
	if (rc)
		return rc;
	char *copy = strdup(devid);
	if (!copy) {
		unvme_ctrlr_close(c);
		return -ENOMEM;
	}
	open_devs[n_open].devid = copy;
	open_devs[n_open].ctrlr = c;
	open_devs[n_open].qp = NULL;
	n_open++;
	*out = c;
	return 0;
}

int cli_open_devid(const char *cmd, const char *devid, struct unvme_ctrlr **out)
{
	int rc = cli_try_open(devid, out);
	if (rc == 0)
		return EXIT_OK;
	if (rc == -EMFILE)
		return cli_fail(cmd, EXIT_HOST, "too many devices open at once (%d)", MAX_OPEN);
	const char *msg = unvme_errmsg();
	return cli_fail(cmd, EXIT_HOST, "cannot open %s: %s", cli_echo(devid),
			msg && *msg ? msg : strerror(rc < 0 ? -rc : EIO));
}

int cli_open(const struct cli_args *a, struct unvme_ctrlr **out)
{
	return cli_open_devid(a->cmd, a->positional, out);
}

int cli_io_qpair(const struct cli_args *a, struct unvme_ctrlr *ctrlr, struct unvme_qpair **out)
{
	for (unsigned i = 0; i < n_open; i++) {
		if (open_devs[i].ctrlr != ctrlr)
			continue;
		if (!open_devs[i].qp) {
			/* Small and shallow: CLI commands are synchronous. */
			struct unvme_qpair_opts qo = { .depth = 16, .timeout_ms = 0 };
			int rc = unvme_qpair_create(ctrlr, &qo, &open_devs[i].qp);
			if (rc)
				return cli_result(a->cmd, rc, 0);
		}
		*out = open_devs[i].qp;
		return EXIT_OK;
	}
	return cli_fail(a->cmd, EXIT_HOST, "internal error: controller not opened through the CLI");
}

void cli_close_all(void)
{
	cli_monitor_stop(); /* it uses the devices */
	while (n_open) {
		struct open_dev *d = &open_devs[--n_open];
		if (d->qp)
			unvme_qpair_destroy(d->qp);
		unvme_ctrlr_close(d->ctrlr);
		free(d->devid);
	}
}
