/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event listeners and Asynchronous Events through the driver: an enabled controller keeps an
 * Asynchronous Event Request outstanding, a temperature threshold crossed on the emulated
 * controller reaches the listeners from unvme_ctrlr_process_events with its DW0, the next
 * event of the type comes only after its log page was read, the request is sent again after
 * a controller reset and after a re-insertion, and admin commands work meanwhile.
 */
#include <errno.h>
#include <string.h>

#include "unvme/emu.h"
#include "unvme/unvme.h"
#include "test_util.h"

struct heard {
	int aer;
	uint32_t dw0;
	char serial[21];
};

static void listen(struct unvme_ctrlr *c, const struct unvme_event *ev, void *arg)
{
	(void)c;
	struct heard *h = arg;
	if (ev->type == UNVME_EVENT_AER) {
		h->aer++;
		h->dw0 = ev->aer_dw0;
		memcpy(h->serial, ev->serial, sizeof(h->serial));
	}
}

static int set_threshold(struct unvme_ctrlr *c, uint32_t kelvin)
{
	return unvme_set_features(c, NVME_FEAT_TEMP_THRESH, 0, kelvin, false, NULL);
}

/* Polls events for up to a second; returns how many were delivered. */
static int wait_events(struct unvme_ctrlr *c)
{
	int got = 0;
	uint64_t deadline = test_now_ms() + 1000;
	while (got == 0 && test_now_ms() < deadline) {
		int rc = unvme_ctrlr_process_events(c);
		if (rc > 0)
			got += rc;
		else
			test_sleep_ms(1);
	}
	return got;
}

/* A crossing: the threshold below 313 K (event), then back above (no event). */
static void cross(struct unvme_ctrlr *c)
{
	CHECK_EQ(set_threshold(c, 300), 0);
	CHECK_EQ(set_threshold(c, 343), 0);
}

static void test_temperature_event(void)
{
	const char *dev = "emu://ev1";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	struct heard h = { 0 };
	CHECK_EQ(unvme_ctrlr_add_event_cb(c, listen, &h), 0);
	CHECK_EQ(unvme_ctrlr_aer_enable(c), 0);
	CHECK_EQ(unvme_set_features(c, NVME_FEAT_ASYNC_EVENT, 0, 1u << 1, false, NULL), 0);
	CHECK_EQ(unvme_ctrlr_process_events(c), 0); /* nothing yet */

	cross(c);
	CHECK_EQ(wait_events(c), 1);
	CHECK_EQ(h.aer, 1);
	CHECK_EQ(h.dw0 & 7u, 1);                /* SMART / health */
	CHECK_EQ((h.dw0 >> 8) & 0xffu, 1);      /* temperature threshold */
	CHECK_EQ((h.dw0 >> 16) & 0xffu, NVME_LOG_SMART);
	CHECK(strncmp(h.serial, "EMU", 3) == 0);

	/* held back until the SMART log is read */
	cross(c);
	CHECK_EQ(wait_events(c), 0);
	uint8_t smart[512];
	CHECK_EQ(unvme_get_log_page(c, NVME_LOG_SMART, 0xffffffffu, smart, sizeof(smart), 0), 0);
	CHECK_EQ(wait_events(c), 1); /* the crossing held back is reported now */
	CHECK_EQ(h.aer, 2);

	/* a reset takes the outstanding request; the next process_events sends it again */
	CHECK_EQ(unvme_get_log_page(c, NVME_LOG_SMART, 0xffffffffu, smart, sizeof(smart), 0), 0);
	CHECK_EQ(unvme_ctrlr_reset(c), 0);
	CHECK_EQ(unvme_ctrlr_process_events(c), 0);
	CHECK_EQ(unvme_set_features(c, NVME_FEAT_ASYNC_EVENT, 0, 1u << 1, false, NULL), 0);
	cross(c);
	CHECK_EQ(wait_events(c), 1);
	CHECK_EQ(h.aer, 3);

	/* and after a re-insertion, from the new card */
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	CHECK_EQ(unvme_ctrlr_process_events(c), -ENODEV);
	CHECK_EQ(unvme_emu_plug(dev, "emu://ev1b?serial=NEWCARD"), 0);
	CHECK_EQ(unvme_ctrlr_process_events(c), 0);
	CHECK_EQ(unvme_set_features(c, NVME_FEAT_ASYNC_EVENT, 0, 1u << 1, false, NULL), 0);
	cross(c);
	CHECK_EQ(wait_events(c), 1);
	CHECK_EQ(h.aer, 4);
	CHECK(strcmp(h.serial, "NEWCARD") == 0);

	/* admin commands are not held up by the request on the admin queue */
	struct nvme_id_ctrl id;
	CHECK_EQ(unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id), 0);
	unvme_ctrlr_remove_event_cb(c, listen, &h);
	unvme_ctrlr_close(c);
}

static void listen_nothing(struct unvme_ctrlr *c, const struct unvme_event *ev, void *arg)
{
	(void)c;
	(void)ev;
	(void)arg;
}

static void test_listener_limits(void)
{
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open("emu://ev2", NULL, &c) == 0);
	int marks[9];
	for (int i = 0; i < 8; i++)
		CHECK_EQ(unvme_ctrlr_add_event_cb(c, listen_nothing, &marks[i]), 0);
	CHECK_EQ(unvme_ctrlr_add_event_cb(c, listen_nothing, &marks[8]), -ENOSPC);
	CHECK(strstr(unvme_errmsg(), "8 event listeners") != NULL);
	CHECK_EQ(unvme_ctrlr_add_event_cb(c, listen_nothing, &marks[0]), -EEXIST);
	CHECK_EQ(unvme_ctrlr_add_event_cb(c, NULL, NULL), -EINVAL);
	unvme_ctrlr_remove_event_cb(c, listen_nothing, &marks[3]);
	CHECK_EQ(unvme_ctrlr_add_event_cb(c, listen_nothing, &marks[8]), 0);
	CHECK_EQ(unvme_ctrlr_aer_enable(NULL), -EINVAL);
	CHECK_EQ(unvme_ctrlr_process_events(NULL), -EINVAL);
	CHECK_EQ(unvme_ctrlr_is_removed(c), 0);
	unvme_ctrlr_close(c);
}

TEST_MAIN(TEST(test_temperature_event), TEST(test_listener_limits))
