/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport registry: every transport this build enabled (meson passes their names as
 * TRANSPORTS) registered itself before main, with nothing naming it; kinds agree with the
 * functions; the scheme list devid.c prints comes from the registry in rank order; a wrapper's
 * claim and the lifecycle events it listens to. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "lib/driver/transport.h"
#include "enabled_transports.h"
#include "test_util.h"

static void test_every_enabled_transport_registered(void)
{
	char list[] = TRANSPORTS;
	size_t want = 0;
	for (char *save, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		want++;
		if (!unvme_transport_by_name(t)) {
			fprintf(stderr, "  transport '%s' is enabled but not registered\n", t);
			CHECK(false);
		}
	}
	size_t n = 0;
	for (const struct unvme_transport *t; (t = unvme_transport_at(n)); n++)
		if (!transport_enabled(t->name)) {
			fprintf(stderr, "  transport '%s' is registered but not enabled\n", t->name);
			CHECK(false);
		}
	CHECK_EQ(n, want);
	CHECK(unvme_transport_at(n) == NULL);
}

static void test_rank_order_and_kinds(void)
{
	const struct unvme_transport *prev = NULL;
	for (size_t i = 0; unvme_transport_at(i); prev = unvme_transport_at(i++)) {
		const struct unvme_transport *t = unvme_transport_at(i);
		if (prev)
			CHECK(prev->rank <= t->rank);
		CHECK(t->kind != UNVME_TRANSPORT_CLIENT);
		CHECK((t->kind == UNVME_TRANSPORT_MESSAGE) == (t->ops->msg != NULL));
		CHECK((t->kind == UNVME_TRANSPORT_FABRICS) == (t->ops->qp_connect != NULL));
	}
	const struct unvme_transport *emu = unvme_transport_by_name("emu");
	CHECK(emu && emu->kind == UNVME_TRANSPORT_REGISTERS);
	if (transport_enabled("tcp"))
		CHECK_EQ(unvme_transport_by_name("tcp")->kind, UNVME_TRANSPORT_FABRICS);
	if (transport_enabled("rdma"))
		CHECK_EQ(unvme_transport_by_name("rdma")->kind, UNVME_TRANSPORT_FABRICS);
	if (transport_enabled("vfio"))
		CHECK_EQ(unvme_transport_by_name("vfio")->kind, UNVME_TRANSPORT_REGISTERS);
	if (transport_enabled("uring-file"))
		CHECK_EQ(unvme_transport_by_name("uring-file")->kind, UNVME_TRANSPORT_MESSAGE);
}

/* devid.c's list: every registered scheme once, in rank order, as the messages always had it
 * when every transport is there. */
static void test_scheme_list(void)
{
	char want[256] = "";
	for (size_t i = 0; unvme_transport_at(i); i++)
		for (const char *const *s = unvme_transport_at(i)->schemes; s && *s; s++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
				 want[0] ? ", " : "", *s);
	CHECK_STREQ(unvme_transport_schemes(), want);
	if (transport_enabled("tcp") && transport_enabled("uring-file"))
		CHECK_STREQ(unvme_transport_schemes(),
			    transport_enabled("rdma") ? "emu://, nvme-tcp://, nvme-rdma://, file://, ftl://, hostkv://"
						      : "emu://, nvme-tcp://, file://, ftl://, hostkv://");
	char out[64];
	CHECK_EQ(unvme_devid_resolve("nvme://x", out, sizeof(out)), -EINVAL);
	CHECK(strstr(unvme_errmsg(), want) != NULL);
}

static void test_find_and_claims(void)
{
	int err = 0;
	CHECK(unvme_transport_find("emu://x?ns=mem:1M:512", &err) == unvme_transport_by_name("emu"));
	CHECK(unvme_transport_find("ftl://x", &err) == unvme_transport_by_name("ftl"));
	CHECK(unvme_transport_claims("hostkv://x"));
	CHECK(!unvme_transport_claims("emu0"));
	CHECK(!unvme_transport_claims("0000:02:00.0")); /* PCI addresses may be aliases */
	if (transport_enabled("tcp")) {
		CHECK(unvme_transport_find("nvme-tcp://127.0.0.1/nqn.x", &err) ==
		      unvme_transport_by_name("tcp"));
		CHECK(unvme_transport_claims("nvme-tcp://h"));
	}
	if (transport_enabled("uring-file"))
		CHECK(unvme_transport_claims("/some/path") && unvme_transport_claims("file:///x"));
	err = 0;
	CHECK(unvme_transport_find("nothing-serves-this", &err) == NULL);
	CHECK_EQ(err, -ENODEV);
	CHECK(strstr(unvme_errmsg(), "no transport serves this address") != NULL);
}

/* A wrapper of this test's own (multi-process is the library's): armed, it takes the next
 * controller that attaches, keeps it on its transport and records its lifecycle; its claim or
 * its ATTACHED listener may refuse with an errno. */
static struct {
	bool armed;
	int claim_rc;    /* what the claim returns when it does not take the controller (< 0) */
	int attach_rc;   /* what the ATTACHED listener returns */
	const struct unvme_transport *seen; /* the transport the claim was asked about */
	enum ctrlr_life events[16];
	int nr_events;
} tw;

static int tw_life(struct unvme_ctrlr *c, enum ctrlr_life ev, int status, void *arg)
{
	(void)status;
	CHECK(arg == &tw);
	if (tw.nr_events < 16)
		tw.events[tw.nr_events++] = ev;
	if (ev == CTRLR_LIFE_ATTACHED && tw.attach_rc)
		return unvme_fail(tw.attach_rc, "%s: the test wrapper refuses it", c->devid);
	return 0;
}

static int tw_claim(struct unvme_ctrlr *c, const struct unvme_transport **use)
{
	if (!tw.armed)
		return 0;
	tw.armed = false;
	tw.seen = *use;
	if (tw.claim_rc)
		return unvme_fail(tw.claim_rc, "%s: the test wrapper's claim fails", c->devid);
	int rc = ctrlr_life_listen(c, tw_life, &tw);
	return rc ? rc : 1;
}

static const struct unvme_transport_wrapper test_wrapper = { .name = "test", .claim = tw_claim };
UNVME_TRANSPORT_WRAPPER_REGISTER(test_wrapper);

static int count_events(enum ctrlr_life ev)
{
	int n = 0;
	for (int i = 0; i < tw.nr_events; i++)
		n += tw.events[i] == ev;
	return n;
}

static void test_wrapper_claim_and_lifecycle(void)
{
	setenv("UNVME_MP", "0", 1); /* (the multi-process wrapper declines every device) */
	const char *dev = "emu://?ns=mem:1M:512";
	struct unvme_ctrlr *c = NULL;

	/* not armed: nobody takes it, nothing is heard */
	memset(&tw, 0, sizeof(tw));
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	unvme_ctrlr_close(c);
	CHECK_EQ(tw.nr_events, 0);

	/* taken: asked with the address's transport, hears attached, a reset, closing */
	memset(&tw, 0, sizeof(tw));
	tw.armed = true;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	CHECK(tw.seen == unvme_transport_by_name("emu"));
	CHECK_STREQ(unvme_ctrlr_transport(c), "emu");
	/* (the attach's own disable comes before: the controller was not attached yet) */
	REQUIRE(tw.nr_events >= 1);
	CHECK_EQ(tw.events[tw.nr_events - 1], CTRLR_LIFE_ATTACHED);
	int lost = count_events(CTRLR_LIFE_QUEUES_LOST);
	CHECK_EQ(unvme_ctrlr_reset(c), 0);
	CHECK_EQ(count_events(CTRLR_LIFE_QUEUES_LOST), lost + 1);
	unvme_ctrlr_close(c);
	CHECK_EQ(count_events(CTRLR_LIFE_CLOSING), 1);
	CHECK_EQ(count_events(CTRLR_LIFE_ATTACHED), 1);

	/* a claim that fails fails the open with its errno and message */
	memset(&tw, 0, sizeof(tw));
	tw.armed = true;
	tw.claim_rc = -EMLINK;
	c = NULL;
	CHECK_EQ(unvme_ctrlr_open(dev, NULL, &c), -EMLINK);
	CHECK(c == NULL);
	CHECK(strstr(unvme_errmsg(), "the test wrapper's claim fails") != NULL);

	/* so does a listener that refuses the attached controller; it is torn down unopened */
	memset(&tw, 0, sizeof(tw));
	tw.armed = true;
	tw.attach_rc = -EMLINK;
	CHECK_EQ(unvme_ctrlr_open(dev, NULL, &c), -EMLINK);
	CHECK(c == NULL);
	CHECK(strstr(unvme_errmsg(), "the test wrapper refuses it") != NULL);
	CHECK_EQ(count_events(CTRLR_LIFE_CLOSING), 0);
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0); /* the device is free again */
	unvme_ctrlr_close(c);
	unsetenv("UNVME_MP");
}

TEST_MAIN(TEST(test_every_enabled_transport_registered), TEST(test_rank_order_and_kinds),
	  TEST(test_scheme_list), TEST(test_find_and_claims), TEST(test_wrapper_claim_and_lifecycle))
