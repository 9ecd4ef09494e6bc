/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport registry: every transport the build has adds itself before main runs
 * (UNVME_TRANSPORT_REGISTER, transport.h); the driver finds the transport of an address here
 * and devid.c the schemes it accepts and prints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "devid.h"
#include "errmsg.h"
#include "transport.h"

#define MAX_TRANSPORTS 16
#define MAX_WRAPPERS 4

static const struct unvme_transport *registry[MAX_TRANSPORTS];
static size_t nr_registered;
static const struct unvme_transport_wrapper *wrappers[MAX_WRAPPERS];
static size_t nr_wrappers;
static char scheme_list[256];

static void refuse(const struct unvme_transport *t, const char *why)
{
	fprintf(stderr, "unvme: transport '%s' cannot be registered: %s\n",
		t->name ? t->name : "(unnamed)", why);
	abort();
}

/* The functions each kind is driven through (transport.h): a table that lacks one would
 * crash the first controller it serves, so it is refused when the program starts. */
static const char *kind_mismatch(const struct unvme_transport *t)
{
	const struct unvme_transport_ops *o = t->ops;
	bool registers = o->read32 && o->write32 && o->read64 && o->write64 && o->dma_map &&
			 o->dma_unmap;
	bool fabric = o->qp_init && o->qp_fini && o->qp_reset && o->qp_connect &&
		      o->qp_disconnect && o->qp_map && o->qp_pump;
	const struct unvme_msg_ops *m = o->msg;
	bool msg = m && m->admin && m->reset && m->qp_create && m->qp_destroy && m->qp_submit &&
		   m->qp_ring && m->qp_poll;
	switch (t->kind) {
	case UNVME_TRANSPORT_REGISTERS:
		return registers && !o->qp_init && !m ? NULL
			: "a register transport needs register and DMA functions and no qp_* or msg";
	case UNVME_TRANSPORT_FABRICS:
		return registers && fabric && !m ? NULL
			: "a fabrics transport needs register (property), DMA and every qp_* function";
	case UNVME_TRANSPORT_MESSAGE:
		return msg && !o->qp_init ? NULL : "a message transport needs every msg function";
	case UNVME_TRANSPORT_CLIENT:
		return "a client transport is a wrapper's, chosen by its claim, never by address";
	}
	return "unknown kind";
}

static void list_schemes(void)
{
	size_t len = 0;
	scheme_list[0] = '\0';
	for (size_t i = 0; i < nr_registered; i++)
		for (const char *const *s = registry[i]->schemes; s && *s; s++) {
			int n = snprintf(scheme_list + len, sizeof(scheme_list) - len, "%s%s",
					 len ? ", " : "", *s);
			if (n < 0 || (size_t)n >= sizeof(scheme_list) - len)
				refuse(registry[i], "the scheme list is too long");
			len += (size_t)n;
		}
}

void unvme_transport_register(const struct unvme_transport *t)
{
	if (!t->name || !t->matches || !t->ops || !t->ops->attach || !t->ops->detach)
		refuse(t, "it needs a name, matches, attach and detach");
	const char *why = kind_mismatch(t);
	if (why)
		refuse(t, why);
	if (unvme_transport_by_name(t->name))
		refuse(t, "another transport has its name");
	if (nr_registered == MAX_TRANSPORTS)
		refuse(t, "the registry is full (MAX_TRANSPORTS)");
	size_t i = nr_registered;
	while (i > 0 && registry[i - 1]->rank > t->rank) {
		registry[i] = registry[i - 1];
		i--;
	}
	registry[i] = t;
	nr_registered++;
	list_schemes();
}

void unvme_transport_wrapper_register(const struct unvme_transport_wrapper *w)
{
	const char *why = !w->name || !w->claim ? "it needs a name and claim"
			  : nr_wrappers == MAX_WRAPPERS ? "too many wrappers (MAX_WRAPPERS)"
			  : NULL;
	if (why) {
		fprintf(stderr, "unvme: transport wrapper '%s' cannot be registered: %s\n",
			w->name ? w->name : "(unnamed)", why);
		abort();
	}
	wrappers[nr_wrappers++] = w;
}

int unvme_transport_wrap(struct unvme_ctrlr *c, const struct unvme_transport **use)
{
	for (size_t i = 0; i < nr_wrappers; i++) {
		int rc = wrappers[i]->claim(c, use);
		if (rc != 0)
			return rc;
	}
	return 0;
}

const struct unvme_transport *unvme_transport_at(size_t i)
{
	return i < nr_registered ? registry[i] : NULL;
}

const struct unvme_transport *unvme_transport_by_name(const char *name)
{
	for (size_t i = 0; i < nr_registered; i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

static bool has_scheme(const struct unvme_transport *t, const char *address)
{
	for (const char *const *s = t->schemes; s && *s; s++)
		if (strncmp(address, *s, strlen(*s)) == 0)
			return true;
	return false;
}

bool unvme_transport_claims(const char *address)
{
	for (size_t i = 0; i < nr_registered; i++)
		if (has_scheme(registry[i], address) ||
		    (registry[i]->shape && registry[i]->shape(address)))
			return true;
	return false;
}

const char *unvme_transport_schemes(void)
{
	return scheme_list;
}

const struct unvme_transport *unvme_transport_find(const char *address, int *err)
{
	for (size_t i = 0; i < nr_registered; i++)
		if (registry[i]->matches(address))
			return registry[i];
	int rc = -ENODEV;
	const struct unvme_transport *shaped = NULL;
	for (size_t i = 0; i < nr_registered && !shaped; i++)
		if (registry[i]->explain && registry[i]->shape && registry[i]->shape(address))
			shaped = registry[i];
	char bdf[13];
	if (shaped)
		rc = shaped->explain(address);
	else if (unvme_addr_parse_bdf(address, bdf))
		/* reached only in a build without it: VFIO serves every PCI address */
		unvme_fail(-ENODEV, "%s: PCIe devices need the VFIO transport, which this build was "
			   "configured without (-Dtransport_vfio); to use an emulated device under this "
			   "address, declare an alias such as UNVME_DEVICES='%s=emu://?ns=mem:1G:512'",
			   bdf, bdf);
	else
		unvme_fail(-ENODEV, "%s: no transport serves this address", address);
	if (err)
		*err = rc;
	return NULL;
}

void unvme_transport_ctx_set(struct unvme_ctrlr *ctrlr, void *ctx)
{
	ctrlr->transport_ctx = ctx;
}

void *unvme_transport_ctx(const struct unvme_ctrlr *ctrlr)
{
	return ctrlr->transport_ctx;
}
