/* SPDX-License-Identifier: BSD-3-Clause */
/* A program of the public API alone, linked against the installed libraries (libunvme.a and
 * libunvme.so): every transport the build enabled (meson passes TRANSPORTS) is there, though
 * nothing names one; a static link that dropped their constructors would miss them. Seen
 * through what a user sees: the schemes an unknown scheme's message lists, and who answers
 * for a PCI address. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "enabled_transports.h"

int main(void)
{
	static const struct { const char *transport, *scheme; } schemes[] = {
		{"emu", "emu://"}, {"tcp", "nvme-tcp://"}, {"rdma", "nvme-rdma://"}, {"uring-file", "file://"},
		{"ftl", "ftl://"}, {"hostkv", "hostkv://"},
	};
	int failed = 0;
	char out[64];
	if (unvme_devid_resolve("nvme://x", out, sizeof(out)) != -EINVAL) {
		fprintf(stderr, "nvme://x resolved\n");
		return 1;
	}
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", unvme_errmsg());
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		bool listed = strstr(msg, schemes[i].scheme) != NULL;
		if (listed != transport_enabled(schemes[i].transport)) {
			fprintf(stderr, "%s %s listed: %s\n", schemes[i].scheme,
				listed ? "is" : "is not", msg);
			failed++;
		}
	}
	/* a PCI address nothing is aliased to: VFIO's to answer when it is there */
	setenv("HOME", "/nonexistent-home", 1);
	unsetenv("UNVME_DEVICES");
	unsetenv("UNVME_CONFIG");
	unsetenv("XDG_CONFIG_HOME");
	struct unvme_ctrlr *c = NULL;
	if (unvme_ctrlr_open("0000:ff:1f.7", NULL, &c) == 0) {
		fprintf(stderr, "0000:ff:1f.7 opened\n");
		return 1;
	}
	bool vfio_missing = strstr(unvme_errmsg(), "need the VFIO transport") != NULL;
	if (vfio_missing == transport_enabled("vfio")) {
		fprintf(stderr, "0000:ff:1f.7: %s\n", unvme_errmsg());
		failed++;
	}
	printf("%s: %d failed\n", failed ? "FAIL" : "ok", failed);
	return failed ? 1 : 0;
}
