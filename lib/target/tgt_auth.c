/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DH-HMAC-CHAP as the controller (NVMe Base 2.0 section 8.13.5). A host on a subsystem's
 * allow-list with a secret must authenticate each queue before anything but fabrics commands
 * is accepted (Authentication Required otherwise). The controller picks the hash and DH group
 * configured for the host, challenges, checks the host's response and, when the host asks,
 * answers the host's challenge with the controller key. A failure is reported (Failure1),
 * logged, and the connection closed, as Linux's target does.
 */
#include <string.h>

#include "unvme/spec/auth.h"
#include "tgt.h"

void tgt_auth_reset(struct tgt_conn *c)
{
	dhchap_dh_free(&c->auth.dh);
	memset(&c->auth, 0, sizeof(c->auth));
	c->auth.step = NVME_AUTH_NEGOTIATE;
}

static void fail1(struct tgt_conn *c, uint8_t why)
{
	c->auth.step = NVME_AUTH_FAILURE1;
	c->auth.status = why;
}

static bool in_list(const uint8_t *list, uint8_t n, uint8_t id)
{
	for (uint8_t i = 0; i < n; i++)
		if (list[i] == id)
			return true;
	return false;
}

static void negotiate(struct tgt_conn *c, const uint8_t *buf, uint32_t len)
{
	const struct tgt_host *host = c->ctrl->host;
	const struct nvme_auth_negotiate *n = (const void *)buf;
	tgt_auth_reset(c);
	c->auth.tid = n->hdr.t_id;
	if (len < sizeof(*n) || n->napd == 0 || len < sizeof(*n) + (size_t)n->napd * sizeof(n->desc[0])) {
		fail1(c, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
		return;
	}
	if (n->sc_c != 0) {
		fail1(c, NVME_AUTH_FAIL_CONCAT_MISMATCH);
		return;
	}
	const struct nvme_auth_dhchap_desc *d = NULL;
	for (uint8_t i = 0; i < n->napd; i++)
		if (n->desc[i].authid == NVME_AUTH_PROTOCOL_DHCHAP)
			d = &n->desc[i];
	if (!d || d->halen > NVME_AUTH_DHLIST_OFFSET || d->dhlen > NVME_AUTH_DHLIST_OFFSET) {
		fail1(c, NVME_AUTH_FAIL_NOT_USABLE);
		return;
	}
	if (!in_list(d->idlist, d->halen, host->hash)) {
		fail1(c, NVME_AUTH_FAIL_HASH_UNUSABLE);
		return;
	}
	if (!in_list(d->idlist + NVME_AUTH_DHLIST_OFFSET, d->dhlen, host->dhgroup)) {
		fail1(c, NVME_AUTH_FAIL_DHGROUP_UNUSABLE);
		return;
	}
	c->auth.hash = host->hash;
	c->auth.dhgroup = host->dhgroup;
	c->auth.step = NVME_AUTH_CHALLENGE;
}

static uint32_t challenge(struct tgt_conn *c, uint8_t *buf)
{
	struct tgt_auth *a = &c->auth;
	size_t hl = dhchap_hash_len(a->hash), gl = dhchap_group_len(a->dhgroup);
	if (dhchap_random(a->c1, hl) || dhchap_random(&a->s1, sizeof(a->s1)) ||
	    (gl && dhchap_dh_generate(&a->dh, a->dhgroup, a->pub))) {
		fail1(c, NVME_AUTH_FAIL_FAILED);
		return 0;
	}
	if (a->s1 == 0)
		a->s1 = 1;
	struct nvme_auth_challenge *m = (void *)buf;
	m->hdr.auth_type = NVME_AUTH_DHCHAP;
	m->hdr.auth_id = NVME_AUTH_CHALLENGE;
	m->hdr.t_id = a->tid;
	m->hl = (uint8_t)hl;
	m->hashid = a->hash;
	m->dhgid = a->dhgroup;
	m->dhvlen = (uint16_t)gl;
	m->seqnum = a->s1;
	memcpy(m->cval, a->c1, hl);
	if (gl)
		memcpy(m->cval + hl, a->pub, gl);
	a->step = NVME_AUTH_REPLY;
	return (uint32_t)(sizeof(*m) + hl + gl);
}

static void reply(struct tgt_conn *c, const uint8_t *buf, uint32_t len)
{
	struct tgt_auth *a = &c->auth;
	const struct tgt_ctrl *ctrl = c->ctrl;
	const struct tgt_host *host = ctrl->host;
	const struct nvme_auth_reply *r = (const void *)buf;
	size_t hl = dhchap_hash_len(a->hash), gl = dhchap_group_len(a->dhgroup);
	if (len < sizeof(*r) || r->hl != hl || r->dhvlen != gl || len < sizeof(*r) + 2 * hl + gl) {
		fail1(c, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
		return;
	}
	uint8_t sess[DHCHAP_MAX_DH];
	if (gl && dhchap_dh_derive(&a->dh, r->rval + 2 * hl, gl, sess)) {
		fail1(c, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
		return;
	}
	uint8_t kh[DHCHAP_MAX_HASH], want[DHCHAP_MAX_HASH];
	size_t khl = dhchap_key_transform(&host->key, ctrl->hostnqn, kh);
	if (!khl || dhchap_response(a->hash, kh, khl, a->c1, a->s1, a->tid, "HostHost", ctrl->hostnqn,
				    c->ss->nqn, gl ? sess : NULL, gl, want) ||
	    !dhchap_equal(want, r->rval, hl)) {
		tgt_log(c->t, "host %s (%s): DH-HMAC-CHAP authentication for %s failed: wrong response "
			"(the host's key does not match)", c->peer, ctrl->hostnqn, c->ss->nqn);
		fail1(c, NVME_AUTH_FAIL_FAILED);
		return;
	}
	a->bidi = r->cvalid != 0;
	if (a->bidi) {
		uint8_t kc[DHCHAP_MAX_HASH];
		size_t kcl = host->has_ckey ? dhchap_key_transform(&host->ckey, c->ss->nqn, kc) : 0;
		if (!kcl || r->seqnum == 0 ||
		    dhchap_response(a->hash, kc, kcl, r->rval + hl, r->seqnum, a->tid, "Controller",
				    c->ss->nqn, ctrl->hostnqn, gl ? sess : NULL, gl, a->r2)) {
			tgt_log(c->t, "host %s (%s): asks %s to authenticate itself, but no controller key "
				"is configured for it", c->peer, ctrl->hostnqn, c->ss->nqn);
			fail1(c, NVME_AUTH_FAIL_FAILED);
			return;
		}
		a->s2 = r->seqnum;
	}
	a->step = NVME_AUTH_SUCCESS1;
}

static uint32_t success1(struct tgt_conn *c, uint8_t *buf)
{
	struct tgt_auth *a = &c->auth;
	size_t hl = dhchap_hash_len(a->hash);
	struct nvme_auth_success1 *m = (void *)buf;
	m->hdr.auth_type = NVME_AUTH_DHCHAP;
	m->hdr.auth_id = NVME_AUTH_SUCCESS1;
	m->hdr.t_id = a->tid;
	m->hl = (uint8_t)hl;
	m->rvalid = a->bidi;
	if (a->bidi)
		memcpy(m->rval, a->r2, hl);
	if (a->bidi) {
		a->step = NVME_AUTH_SUCCESS2;
	} else {
		c->auth_needed = false;
		a->step = NVME_AUTH_NEGOTIATE;
	}
	return (uint32_t)(sizeof(*m) + hl);
}

static bool auth_cmd_ok(const struct tgt_cmd *cmd)
{
	const struct nvmf_auth_cmd *a = (const void *)&cmd->sqe;
	return a->secp == NVME_AUTH_SECP && a->spsp0 == NVME_AUTH_SPSP && a->spsp1 == NVME_AUTH_SPSP &&
	       a->len == cmd->len && cmd->len > 0;
}

static bool configured(const struct tgt_conn *c)
{
	return c->ctrl && c->ctrl->host && c->ctrl->host->has_key;
}

void tgt_auth_send(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	if (!auth_cmd_ok(cmd) || !configured(c)) {
		tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return;
	}
	const struct nvme_auth_hdr *h = (const void *)cmd->buf;
	struct tgt_auth *a = &c->auth;
	if (cmd->len < sizeof(*h)) {
		fail1(c, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	} else if (h->auth_type == NVME_AUTH_COMMON && h->auth_id == NVME_AUTH_NEGOTIATE) {
		negotiate(c, cmd->buf, cmd->len); /* also restarts a transaction */
	} else if (h->auth_type == NVME_AUTH_COMMON && h->auth_id == NVME_AUTH_FAILURE2) {
		tgt_log(c->t, "host %s (%s): gave up authenticating to %s (it did not accept the "
			"controller)", c->peer, c->ctrl->hostnqn, c->ss->nqn);
		snprintf(c->why, sizeof(c->why), "authentication failed");
		tgt_complete(cmd, 0, 0);
		tgt_conn_close_after_send(c);
		return;
	} else if (h->auth_type != NVME_AUTH_DHCHAP || h->t_id != a->tid || h->auth_id != a->step) {
		fail1(c, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	} else if (h->auth_id == NVME_AUTH_REPLY) {
		reply(c, cmd->buf, cmd->len);
	} else if (h->auth_id == NVME_AUTH_SUCCESS2) {
		c->auth_needed = false;
		a->step = NVME_AUTH_NEGOTIATE;
	} else {
		fail1(c, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	}
	tgt_complete(cmd, 0, 0);
}

void tgt_auth_recv(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	if (!auth_cmd_ok(cmd) || !configured(c)) {
		tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return;
	}
	struct tgt_auth *a = &c->auth;
	memset(cmd->buf, 0, cmd->len);
	/* every message fits in 16 + 2 x 64 + 1024 bytes: ask for at least that much */
	if (cmd->len < sizeof(struct nvme_auth_challenge) + DHCHAP_MAX_HASH + dhchap_group_len(a->dhgroup)) {
		tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return;
	}
	uint32_t n = 0;
	if (a->step == NVME_AUTH_CHALLENGE)
		n = challenge(c, cmd->buf);
	else if (a->step == NVME_AUTH_SUCCESS1)
		n = success1(c, cmd->buf);
	else if (a->step != NVME_AUTH_FAILURE1)
		fail1(c, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	if (a->step == NVME_AUTH_FAILURE1) {
		struct nvme_auth_failure *f = (void *)cmd->buf;
		memset(cmd->buf, 0, sizeof(*f));
		f->hdr.auth_type = NVME_AUTH_COMMON;
		f->hdr.auth_id = NVME_AUTH_FAILURE1;
		f->hdr.t_id = a->tid;
		f->rescode = NVME_AUTH_REASON_FAILED;
		f->rescode_exp = a->status;
		n = sizeof(*f);
		cmd->send_len = cmd->len;
		snprintf(c->why, sizeof(c->why), "authentication failed");
		tgt_complete(cmd, 0, 0);
		/* as Linux's target: a failed authentication ends the connection */
		tgt_conn_close_after_send(c);
		return;
	}
	(void)n;
	cmd->send_len = cmd->len;
	tgt_complete(cmd, 0, 0);
}
