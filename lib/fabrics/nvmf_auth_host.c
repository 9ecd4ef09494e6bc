/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DH-HMAC-CHAP as the host (NVMe Base 2.0 section 8.13.5), run on a queue of any fabrics
 * transport whose Connect answered "authentication required": negotiate (every hash and DH
 * group we have, as Linux offers them), answer the controller's challenge, and check the
 * controller's answer to ours when a controller key is given (bidirectional authentication).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/spec/auth.h"
#include "unvme/spec/fabrics.h"
#include "unvme/unvme.h"
#include "lib/driver/errmsg.h"
#include "dhchap.h"
#include "nvmf_host.h"

#define AUTH_BUF 4096

struct auth_run {
	struct nvmf_assoc *assoc;
	void *q;
	uint16_t qid;
	uint16_t tid;
	uint8_t *buf;
};

static const char *peer(const struct auth_run *a)
{
	return a->assoc->ops->peer(a->q);
}

static int auth_xfer(struct auth_run *a, bool send, uint32_t len)
{
	struct nvmf_auth_cmd cmd = {0};
	cmd.opc = NVME_FABRICS_OPC;
	cmd.fctype = send ? NVMF_FCTYPE_AUTH_SEND : NVMF_FCTYPE_AUTH_RECV;
	cmd.secp = NVME_AUTH_SECP;
	cmd.spsp0 = NVME_AUTH_SPSP;
	cmd.spsp1 = NVME_AUTH_SPSP;
	cmd.len = len;
	if (!send)
		memset(a->buf, 0, len);
	int rc = a->assoc->ops->exec(a->q, (struct nvme_sqe *)&cmd, a->buf, len, send, NULL,
				     a->assoc->timeout_ms);
	if (rc > 0)
		rc = unvme_fail(-EACCES, "%s: queue %u: Authentication %s failed: %s", peer(a),
				a->qid, send ? "Send" : "Receive", unvme_status_str(rc, NVME_CSI_NVM));
	return rc;
}

static const char *failure_name(uint8_t exp)
{
	switch (exp) {
	case NVME_AUTH_FAIL_FAILED: return "authentication failed (wrong key?)";
	case NVME_AUTH_FAIL_NOT_USABLE: return "authentication protocol not usable";
	case NVME_AUTH_FAIL_CONCAT_MISMATCH: return "secure channel concatenation mismatch";
	case NVME_AUTH_FAIL_HASH_UNUSABLE: return "no usable hash function";
	case NVME_AUTH_FAIL_DHGROUP_UNUSABLE: return "no usable DH group";
	case NVME_AUTH_FAIL_INCORRECT_PAYLOAD: return "incorrect payload";
	case NVME_AUTH_FAIL_INCORRECT_MESSAGE: return "incorrect protocol message";
	default: return "unknown reason";
	}
}

/* Checks the message received is the one expected (or a Failure1). */
static int expect(struct auth_run *a, uint8_t id)
{
	const struct nvme_auth_hdr *h = (const void *)a->buf;
	if (h->auth_type == NVME_AUTH_COMMON && h->auth_id == NVME_AUTH_FAILURE1) {
		const struct nvme_auth_failure *f = (const void *)a->buf;
		return unvme_fail(-EACCES, "%s: queue %u: the controller refused the host: %s",
				  peer(a), a->qid, failure_name(f->rescode_exp));
	}
	if (h->auth_type != NVME_AUTH_DHCHAP || h->auth_id != id || h->t_id != a->tid)
		return unvme_fail(-EPROTO, "%s: queue %u: unexpected authentication message %02x/%02x",
				  peer(a), a->qid, h->auth_type, h->auth_id);
	return 0;
}

/* Tells the controller we give up (Failure2), then fails with the reason already set. */
static int fail2(struct auth_run *a, uint8_t exp, int rc)
{
	char why[512];
	snprintf(why, sizeof(why), "%s", unvme_errmsg());
	struct nvme_auth_failure *f = (void *)a->buf;
	memset(f, 0, sizeof(*f));
	f->hdr.auth_type = NVME_AUTH_COMMON;
	f->hdr.auth_id = NVME_AUTH_FAILURE2;
	f->hdr.t_id = a->tid;
	f->rescode = NVME_AUTH_REASON_FAILED;
	f->rescode_exp = exp;
	auth_xfer(a, true, sizeof(*f));
	return unvme_fail(rc, "%s", why);
}

static uint32_t negotiate(struct auth_run *a)
{
	struct nvme_auth_negotiate *n = (void *)a->buf;
	size_t len = sizeof(*n) + sizeof(n->desc[0]);
	memset(a->buf, 0, len);
	n->hdr.auth_type = NVME_AUTH_COMMON;
	n->hdr.auth_id = NVME_AUTH_NEGOTIATE;
	n->hdr.t_id = a->tid;
	n->sc_c = 0;
	n->napd = 1;
	struct nvme_auth_dhchap_desc *d = &n->desc[0];
	d->authid = NVME_AUTH_PROTOCOL_DHCHAP;
	d->halen = 3;
	d->dhlen = 6;
	for (int i = 0; i < 3; i++)
		d->idlist[i] = (uint8_t)(NVME_AUTH_HASH_SHA256 + i);
	for (int i = 0; i < 6; i++)
		d->idlist[NVME_AUTH_DHLIST_OFFSET + i] = (uint8_t)(NVME_AUTH_DH_NULL + i);
	return (uint32_t)len;
}

int nvmf_auth_host(struct nvmf_assoc *assoc, void *q, uint16_t qid)
{
	char err[160];
	struct dhchap_key hkey, ckey;
	bool bidi = assoc->dhchap_ctrl_secret[0] != '\0';
	if (dhchap_key_parse(assoc->dhchap_secret, &hkey, err, sizeof(err)))
		return unvme_fail(-EINVAL, "dhchap_secret: %s", err);
	if (bidi && dhchap_key_parse(assoc->dhchap_ctrl_secret, &ckey, err, sizeof(err)))
		return unvme_fail(-EINVAL, "dhchap_ctrl_secret: %s", err);
	struct auth_run a = {.assoc = assoc, .q = q, .qid = qid,
			     .tid = (uint16_t)__atomic_fetch_add(&assoc->next_tid, 1, __ATOMIC_RELAXED)};
	a.buf = calloc(1, AUTH_BUF);
	if (!a.buf)
		return -ENOMEM;
	struct dhchap_dh dh = {0};
	uint8_t *sess = NULL;
	int rc = auth_xfer(&a, true, negotiate(&a));
	if (rc == 0)
		rc = auth_xfer(&a, false, AUTH_BUF);
	if (rc == 0)
		rc = expect(&a, NVME_AUTH_CHALLENGE);
	if (rc)
		goto out;

	/* the challenge: the controller chose a hash and a group from our lists */
	struct nvme_auth_challenge ch;
	memcpy(&ch, a.buf, sizeof(ch));
	size_t hl = dhchap_hash_len(ch.hashid);
	size_t gl = dhchap_group_len(ch.dhgid);
	if (!hl || ch.hl != hl) {
		rc = fail2(&a, NVME_AUTH_FAIL_HASH_UNUSABLE,
			   unvme_fail(-EPROTO, "%s: controller chose hash %u of length %u",
				      assoc->ops->peer(q), ch.hashid, ch.hl));
		goto out;
	}
	if (!dhchap_group_name(ch.dhgid) || ch.dhvlen != gl || sizeof(ch) + hl + gl > AUTH_BUF) {
		rc = fail2(&a, NVME_AUTH_FAIL_DHGROUP_UNUSABLE,
			   unvme_fail(-EPROTO, "%s: controller chose DH group %u with a %u-byte value",
				      assoc->ops->peer(q), ch.dhgid, ch.dhvlen));
		goto out;
	}
	uint8_t c1[DHCHAP_MAX_HASH], pub[DHCHAP_MAX_DH];
	memcpy(c1, a.buf + sizeof(ch), hl);
	if (gl) {
		sess = malloc(gl);
		if (!sess || dhchap_dh_generate(&dh, ch.dhgid, pub) ||
		    dhchap_dh_derive(&dh, a.buf + sizeof(ch) + hl, gl, sess)) {
			rc = fail2(&a, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
				   unvme_fail(-EPROTO, "%s: Diffie-Hellman exchange (%s) failed", assoc->ops->peer(q),
					      dhchap_group_name(ch.dhgid)));
			goto out;
		}
	}

	/* our reply: R1, our challenge C2 when we authenticate the controller, g^x */
	uint8_t kh[DHCHAP_MAX_HASH], r1[DHCHAP_MAX_HASH], c2[DHCHAP_MAX_HASH] = {0};
	size_t khl = dhchap_key_transform(&hkey, assoc->hostnqn, kh);
	if (!khl || dhchap_response(ch.hashid, kh, khl, c1, ch.seqnum, a.tid, "HostHost", assoc->hostnqn,
				    assoc->subnqn, sess, gl, r1)) {
		rc = fail2(&a, NVME_AUTH_FAIL_FAILED, unvme_fail(-EIO, "DH-HMAC-CHAP response failed"));
		goto out;
	}
	uint32_t s2 = 0;
	if (bidi) {
		dhchap_random(c2, hl);
		while (s2 == 0)
			dhchap_random(&s2, sizeof(s2));
	}
	struct nvme_auth_reply *rp = (void *)a.buf;
	memset(a.buf, 0, sizeof(*rp) + 2 * hl + gl);
	rp->hdr.auth_type = NVME_AUTH_DHCHAP;
	rp->hdr.auth_id = NVME_AUTH_REPLY;
	rp->hdr.t_id = a.tid;
	rp->hl = (uint8_t)hl;
	rp->cvalid = bidi;
	rp->dhvlen = (uint16_t)gl;
	rp->seqnum = s2;
	memcpy(rp->rval, r1, hl);
	memcpy(rp->rval + hl, c2, hl);
	if (gl)
		memcpy(rp->rval + 2 * hl, pub, gl);
	rc = auth_xfer(&a, true, (uint32_t)(sizeof(*rp) + 2 * hl + gl));
	if (rc == 0)
		rc = auth_xfer(&a, false, AUTH_BUF);
	if (rc == 0)
		rc = expect(&a, NVME_AUTH_SUCCESS1);
	if (rc)
		goto out;

	const struct nvme_auth_success1 *s1 = (const void *)a.buf;
	if (bidi) {
		uint8_t kc[DHCHAP_MAX_HASH], r2[DHCHAP_MAX_HASH];
		size_t kcl = dhchap_key_transform(&ckey, assoc->subnqn, kc);
		bool ok = s1->rvalid && s1->hl == hl && kcl &&
			  dhchap_response(ch.hashid, kc, kcl, c2, s2, a.tid, "Controller", assoc->subnqn,
					  assoc->hostnqn, sess, gl, r2) == 0 &&
			  dhchap_equal(r2, s1->rval, hl);
		if (!ok) {
			rc = fail2(&a, NVME_AUTH_FAIL_FAILED,
				   unvme_fail(-EACCES, "%s: the controller did not prove it has the "
					      "controller key (dhchap_ctrl_secret)", assoc->ops->peer(q)));
			goto out;
		}
		struct nvme_auth_success2 *ok2 = (void *)a.buf;
		memset(ok2, 0, sizeof(*ok2));
		ok2->hdr.auth_type = NVME_AUTH_DHCHAP;
		ok2->hdr.auth_id = NVME_AUTH_SUCCESS2;
		ok2->hdr.t_id = a.tid;
		rc = auth_xfer(&a, true, sizeof(*ok2));
	}
out:
	dhchap_dh_free(&dh);
	free(sess);
	memset(a.buf, 0, AUTH_BUF);
	free(a.buf);
	return rc;
}
