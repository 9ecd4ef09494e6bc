/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The library writes nothing on stderr unless asked. This program opens an emulated
 * controller (on a host without hugepages the library has a notice about that) and frees
 * memory the library did not allocate (a misuse it has a notice about); with "api" as its
 * argument it asks for the notices with unvme_set_log(1) first. test_static_link.py checks
 * stderr with and without asking (also through UNVME_LOG).
 */
#include <stdio.h>
#include <string.h>

#include "unvme/unvme.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "api") == 0)
		unvme_set_log(1);
	struct unvme_ctrlr *c = NULL;
	if (unvme_ctrlr_open("emu://quiet?ns=mem:16M", NULL, &c))
		return 1;
	int not_dma = 0;
	unvme_dma_free(&not_dma);
	unvme_ctrlr_close(c);
	printf("done\n");
	return 0;
}
