/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Namespace discovery: the Active Namespace ID list, then Identify Namespace and the
 * Namespace Identification Descriptors (for the command set) of each. A rescan keeps the
 * struct of a namespace that is still there, so pointers the application holds stay valid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/env.h"
#include "ctrlr.h"
#include "errmsg.h"

static struct unvme_ns *find_ns(struct unvme_ctrlr *c, uint32_t nsid)
{
	size_t lo = 0, hi = c->nr_ns;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->ns[mid]->nsid == nsid)
			return c->ns[mid];
		if (c->ns[mid]->nsid < nsid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void ns_report(const struct unvme_ctrlr *c, const char *what)
{
	if (unvme_log_on())
		fprintf(stderr, "unvme: %s: %s\n", c->devid, what);
}

static uint8_t ns_csi(struct unvme_ctrlr *c, uint32_t nsid)
{
	uint8_t desc[4096];
	if (unvme_identify(c, NVME_CNS_NS_DESC_LIST, nsid, 0, desc) != 0)
		return NVME_CSI_NVM; /* controllers before 1.3 have no descriptors: NVM */
	for (size_t off = 0; off + sizeof(struct nvme_ns_id_desc) <= sizeof(desc);) {
		const struct nvme_ns_id_desc *d = (const void *)(desc + off);
		if (d->nidl == 0 && d->nidt == 0)
			break;
		if (d->nidt == NVME_NIDT_CSI && d->nidl >= 1 && off + 4 < sizeof(desc))
			return desc[off + 4];
		off += sizeof(*d) + d->nidl;
	}
	return NVME_CSI_NVM;
}

static int ns_fill_into(struct unvme_ctrlr *c, struct unvme_ns *ns)
{
	int rc = unvme_identify(c, NVME_CNS_NS, ns->nsid, 0, &ns->id);
	if (rc)
		return rc;
	ns->csi = ns_csi(c, ns->nsid);
	/* The device's word on its geometry is checked before it is used in a shift or a
	 * size: a format index within NLBAF, LBADS 9..NVME_LBADS_MAX, and a size in bytes that
	 * fits 64 bits. */
	ns->lba_size = nvme_ns_lba_size(&ns->id);
	if (!ns->lba_size) {
		unsigned f = nvme_ns_flbas_index(&ns->id);
		return unvme_fail(-EPROTO, "%s: namespace %u reports an unusable LBA format (index %u of "
				  "%u, LBADS %u; the host takes %u..%u)", c->devid, ns->nsid, f,
				  ns->id.nlbaf + 1u, ns->id.lbaf[f].lbads, NVME_LBADS_MIN, NVME_LBADS_MAX);
	}
	ns->lba_shift = (uint32_t)__builtin_ctz(ns->lba_size);
	ns->nlbas = ns->id.nsze;
	if (ns->nlbas > UINT64_MAX >> ns->lba_shift)
		return unvme_fail(-EPROTO, "%s: namespace %u reports %llu blocks of %u bytes: more than "
				  "2^64 bytes", c->devid, ns->nsid, (unsigned long long)ns->nlbas,
				  ns->lba_size);
	if (ns->csi == NVME_CSI_ZNS)
		return zns_ns_fill(c, ns);
	return 0;
}

/* Reads the namespace's data into a copy and stores only what changed: a rescan after a
 * device came back (hotplug.c) runs while other threads' submissions read the struct. */
static int ns_fill(struct unvme_ctrlr *c, struct unvme_ns *ns)
{
	struct unvme_ns *fresh = malloc(sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	*fresh = *ns;
	int rc = ns_fill_into(c, fresh);
	if (rc == 0 && memcmp(fresh, ns, sizeof(*ns)) != 0)
		*ns = *fresh;
	free(fresh);
	return rc;
}

int ns_scan(struct unvme_ctrlr *c)
{
	uint32_t *list = malloc(4096);
	if (!list)
		return -ENOMEM;
	int rc = unvme_identify(c, NVME_CNS_ACTIVE_NS_LIST, 0, 0, list);
	if (rc) {
		free(list);
		return rc > 0 ? unvme_fail(-EIO, "%s: Identify Active Namespace List failed: %s",
					   c->devid, unvme_status_str(rc, 0))
			      : rc;
	}
	/* The list is in increasing NSID order, ended by a zero (NVMe Base 2.0 section 4.4.2):
	 * an entry out of order (or FFFFFFFFh, the broadcast NSID) ends it, so a lookup by
	 * binary search (find_ns) finds every namespace kept. */
	size_t n = 0;
	while (n < NVME_NS_LIST_MAX && list[n] && list[n] != 0xffffffffu &&
	       (n == 0 || list[n] > list[n - 1]))
		n++;
	if (n < NVME_NS_LIST_MAX && list[n])
		ns_report(c, "the Active Namespace ID list is not in increasing order (or holds "
			  "FFFFFFFFh) after its first entries: namespaces from there on are ignored");
	struct unvme_ns **nsv = calloc(n ? n : 1, sizeof(*nsv));
	if (!nsv) {
		free(list);
		return -ENOMEM;
	}
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (ctrlr_kind(c) == UNVME_TRANSPORT_MESSAGE && c->ops->msg->ns_usable && !c->ops->msg->ns_usable(c, list[i]))
			continue; /* the device id names other namespaces, or the kernel hides this one */
		struct unvme_ns *ns = find_ns(c, list[i]);
		if (!ns) {
			ns = calloc(1, sizeof(*ns));
			if (!ns) {
				rc = -ENOMEM;
				break;
			}
			ns->ctrlr = c;
			ns->nsid = list[i];
		}
		rc = ns_fill(c, ns);
		if (rc == -EPROTO) {
			/* a namespace whose data makes no sense is left out, not the controller */
			ns_report(c, unvme_errmsg());
			if (!find_ns(c, ns->nsid))
				free(ns);
			rc = 0;
			continue;
		}
		nsv[kept++] = ns;
		if (rc) {
			rc = rc > 0 ? unvme_fail(-EIO, "%s: Identify Namespace %u failed: %s", c->devid,
						 ns->nsid, unvme_status_str(rc, 0))
				    : rc;
			break;
		}
	}
	/* Namespaces that disappeared are freed; ones still listed moved into nsv. */
	for (uint32_t i = 0; i < c->nr_ns; i++) {
		bool still = false;
		for (size_t k = 0; k < kept; k++)
			still |= nsv[k] == c->ns[i];
		if (!still)
			free(c->ns[i]);
	}
	free(c->ns);
	c->ns = nsv;
	c->nr_ns = (uint32_t)kept;
	free(list);
	return rc;
}

void ns_free_all(struct unvme_ctrlr *c)
{
	for (uint32_t i = 0; i < c->nr_ns; i++)
		free(c->ns[i]);
	free(c->ns);
	c->ns = NULL;
	c->nr_ns = 0;
}

UNVME_API int unvme_ctrlr_refresh_ns(struct unvme_ctrlr *c)
{
	return ns_scan(c);
}

UNVME_API uint32_t unvme_ctrlr_first_nsid(const struct unvme_ctrlr *c)
{
	return c->nr_ns ? c->ns[0]->nsid : 0;
}

UNVME_API uint32_t unvme_ctrlr_next_nsid(const struct unvme_ctrlr *c, uint32_t prev)
{
	for (uint32_t i = 0; i < c->nr_ns; i++)
		if (c->ns[i]->nsid > prev)
			return c->ns[i]->nsid;
	return 0;
}

UNVME_API struct unvme_ns *unvme_ctrlr_ns(struct unvme_ctrlr *c, uint32_t nsid)
{
	return c ? find_ns(c, nsid) : NULL;
}

UNVME_API uint32_t unvme_ns_id(const struct unvme_ns *ns)
{
	return ns->nsid;
}

UNVME_API uint8_t unvme_ns_csi(const struct unvme_ns *ns)
{
	return ns->csi;
}

UNVME_API uint64_t unvme_ns_nlbas(const struct unvme_ns *ns)
{
	return ns->nlbas;
}

UNVME_API uint32_t unvme_ns_lba_size(const struct unvme_ns *ns)
{
	return ns->lba_size;
}

UNVME_API const struct nvme_id_ns *unvme_ns_identify_data(const struct unvme_ns *ns)
{
	return &ns->id;
}

UNVME_API struct unvme_ctrlr *unvme_ns_ctrlr(const struct unvme_ns *ns)
{
	return ns->ctrlr;
}
