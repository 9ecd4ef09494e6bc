/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>

#include "devid.h"
#include "errmsg.h"
#include "transport.h"
#include "uring_kdev.h"

static const struct unvme_transport_ops *const transports[] = {
	&unvme_transport_emu,
	&unvme_transport_ftl,
	&unvme_transport_hostkv,
	/* devices the kernel keeps, and files: by what the path names (stat) */
	&unvme_transport_uring_passthru,
	&unvme_transport_uring_block,
	&unvme_transport_uring_file,
	&unvme_transport_vfio, /* PCI addresses that are no alias of an emulated device */
	&unvme_transport_tcp,  /* nvme-tcp:// */
};

const struct unvme_transport_ops *unvme_transport_find(const char *address, int *err)
{
	int rc = -ENODEV;
	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
		if (transports[i]->matches(address))
			return transports[i];
	char bdf[13];
	if (kdev_addr_is_kernel(address))
		rc = kdev_explain(address);
	else if (unvme_addr_parse_bdf(address, bdf))
		unvme_fail(-ENODEV, "%s: PCIe devices need the VFIO transport, which this build does not "
			   "have yet; to use an emulated device under this address, declare an alias such "
			   "as UNVME_DEVICES='%s=emu://?ns=mem:1G:512'", bdf, bdf);
	else
		unvme_fail(-ENODEV, "%s: no transport serves this address", address);
	if (err)
		*err = rc;
	return NULL;
}
