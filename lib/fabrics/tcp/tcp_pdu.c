/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP common header checks (NVMe TCP Transport 1.0, sections 3.6 and 3.7). Fields are
 * checked in the order they appear so that the error reported is the lowest field in error.
 */
#include <stddef.h>
#include <string.h>

#include "lib/util/crc.h"
#include "tcp_pdu.h"

#define TERM_MAX_PLEN (sizeof(struct nvme_tcp_term) + NVME_TCP_TERM_MAX_DATA)

static enum tcp_pdu_verdict fatal(struct tcp_pdu_info *out, uint16_t fes, uint32_t fei,
				  const char *why)
{
	out->fes = fes;
	out->fei = fei;
	out->why = why;
	return TCP_PDU_FATAL;
}

static enum tcp_pdu_verdict bad_field(struct tcp_pdu_info *out, size_t field, const char *why)
{
	return fatal(out, NVME_TCP_FES_INVALID_HEADER, (uint32_t)field, why);
}

/* The header length each PDU type has; 0 for types that never appear on an established
 * connection. */
static uint32_t expected_hlen(uint8_t type)
{
	switch (type) {
	case NVME_TCP_H2C_TERM:
	case NVME_TCP_C2H_TERM:
		return sizeof(struct nvme_tcp_term);
	case NVME_TCP_CAPSULE_CMD:
		return sizeof(struct nvme_tcp_cmd);
	case NVME_TCP_CAPSULE_RESP:
		return sizeof(struct nvme_tcp_rsp);
	case NVME_TCP_H2C_DATA:
	case NVME_TCP_C2H_DATA:
	case NVME_TCP_R2T:
		return sizeof(struct nvme_tcp_data);
	default:
		return 0;
	}
}

static uint8_t allowed_flags(uint8_t type)
{
	switch (type) {
	case NVME_TCP_CAPSULE_CMD:
		return NVME_TCP_F_HDGST | NVME_TCP_F_DDGST;
	case NVME_TCP_CAPSULE_RESP:
	case NVME_TCP_R2T:
		return NVME_TCP_F_HDGST;
	case NVME_TCP_H2C_DATA:
		return NVME_TCP_F_HDGST | NVME_TCP_F_DDGST | NVME_TCP_F_LAST_PDU;
	case NVME_TCP_C2H_DATA:
		return NVME_TCP_F_HDGST | NVME_TCP_F_DDGST | NVME_TCP_F_LAST_PDU | NVME_TCP_F_SUCCESS;
	default:
		return 0; /* TermReq */
	}
}

static bool carries_data(uint8_t type)
{
	return type == NVME_TCP_CAPSULE_CMD || type == NVME_TCP_H2C_DATA || type == NVME_TCP_C2H_DATA;
}

enum tcp_pdu_verdict tcp_pdu_check(const struct nvme_tcp_hdr *h, const struct tcp_pdu_rules *r,
				   struct tcp_pdu_info *out)
{
	memset(out, 0, sizeof(*out));
	uint32_t plen = h->plen;
	out->plen = plen;

	/* PDU type: bit 0 is the direction (0 host to controller). */
	bool h2c = (h->type & 1u) == 0;
	uint32_t want_hlen = expected_hlen(h->type);
	if (want_hlen == 0 || h2c != r->controller)
		return bad_field(out, offsetof(struct nvme_tcp_hdr, type),
				 h->type == NVME_TCP_ICREQ || h->type == NVME_TCP_ICRESP
					 ? "connection initialisation PDU on an established connection"
					 : "PDU type not valid in this direction");
	bool term = h->type == NVME_TCP_H2C_TERM || h->type == NVME_TCP_C2H_TERM;
	if (term && (plen < sizeof(struct nvme_tcp_term) || plen > TERM_MAX_PLEN)) {
		out->why = "termination request of invalid length";
		return TCP_PDU_DROP; /* answered by closing, never by another TermReq */
	}

	/* Flags: only those the type defines, digests exactly as negotiated (no data digest on
	 * a PDU without data), SUCCESS only on the last C2HData. */
	uint32_t hd = (h->flags & NVME_TCP_F_HDGST) ? NVME_TCP_DIGEST_LEN : 0;
	uint32_t data_len = plen > h->hlen + hd ? plen - h->pdo : 0;
	uint8_t allowed = allowed_flags(h->type);
	if (h->flags & ~allowed)
		return bad_field(out, offsetof(struct nvme_tcp_hdr, flags), "flag not defined for the PDU type");
	uint8_t want_dg = 0;
	if (r->hdgst && !term)
		want_dg |= NVME_TCP_F_HDGST;
	if (r->ddgst && carries_data(h->type) && plen > want_hlen + hd)
		want_dg |= NVME_TCP_F_DDGST;
	if ((h->flags & (NVME_TCP_F_HDGST | NVME_TCP_F_DDGST)) != (want_dg & allowed))
		return bad_field(out, offsetof(struct nvme_tcp_hdr, flags),
				 "digest flags differ from the negotiated digests");
	if (h->type == NVME_TCP_C2H_DATA &&
	    (h->flags & (NVME_TCP_F_SUCCESS | NVME_TCP_F_LAST_PDU)) == NVME_TCP_F_SUCCESS)
		return bad_field(out, offsetof(struct nvme_tcp_hdr, flags), "SUCCESS without LAST_PDU");

	if (h->hlen != want_hlen)
		return bad_field(out, offsetof(struct nvme_tcp_hdr, hlen), "header length wrong for the PDU type");

	/* PDO: zero for PDUs without data; else past the header (and its digest), within the
	 * PDU and aligned as the receiver asked. */
	uint32_t full_hlen = h->hlen + hd;
	if (!carries_data(h->type)) {
		if (h->pdo != 0)
			return bad_field(out, offsetof(struct nvme_tcp_hdr, pdo), "data offset on a PDU without data");
	} else if (!(data_len == 0 && h->pdo == 0)) {
		uint32_t pda = r->pda ? r->pda : 4;
		if (h->pdo < full_hlen || h->pdo > plen || h->pdo % pda)
			return bad_field(out, offsetof(struct nvme_tcp_hdr, pdo), "data offset out of place");
	}

	/* PLEN: at least the header; exactly the header for PDUs without data; room for the
	 * data digest; data PDUs must carry data. */
	if (plen < full_hlen)
		return bad_field(out, offsetof(struct nvme_tcp_hdr, plen), "PDU shorter than its header");
	if (term) {
		data_len = plen - h->hlen;
	} else if (!carries_data(h->type)) {
		if (plen != full_hlen)
			return bad_field(out, offsetof(struct nvme_tcp_hdr, plen), "PDU without data has extra bytes");
	} else {
		if (data_len == 0 && plen != full_hlen)
			return bad_field(out, offsetof(struct nvme_tcp_hdr, plen), "PDU length does not match its header");
		if (h->flags & NVME_TCP_F_DDGST) {
			if (data_len <= NVME_TCP_DIGEST_LEN)
				return bad_field(out, offsetof(struct nvme_tcp_hdr, plen), "PDU too short for its data digest");
			data_len -= NVME_TCP_DIGEST_LEN;
		}
		if ((h->type == NVME_TCP_H2C_DATA || h->type == NVME_TCP_C2H_DATA) && data_len == 0)
			return bad_field(out, offsetof(struct nvme_tcp_hdr, plen), "data PDU without data");
	}
	out->data_len = data_len;
	out->hdr_bytes = term ? h->hlen : (data_len ? h->pdo : full_hlen);
	return TCP_PDU_OK;
}

static enum tcp_pdu_verdict check_ic_common(const struct nvme_tcp_hdr *h, uint8_t type,
					    struct tcp_pdu_info *out)
{
	memset(out, 0, sizeof(*out));
	out->plen = h->plen;
	out->hdr_bytes = sizeof(struct nvme_tcp_icreq);
	if (h->type != type)
		return bad_field(out, offsetof(struct nvme_tcp_hdr, type), "first PDU is not connection initialisation");
	if (h->flags)
		return bad_field(out, offsetof(struct nvme_tcp_hdr, flags), "flags in connection initialisation");
	if (h->hlen != sizeof(struct nvme_tcp_icreq))
		return bad_field(out, offsetof(struct nvme_tcp_hdr, hlen), "connection initialisation header length");
	if (h->pdo)
		return bad_field(out, offsetof(struct nvme_tcp_hdr, pdo), "data offset in connection initialisation");
	if (h->plen != sizeof(struct nvme_tcp_icreq))
		return bad_field(out, offsetof(struct nvme_tcp_hdr, plen), "connection initialisation length");
	return TCP_PDU_OK;
}

enum tcp_pdu_verdict tcp_pdu_check_icreq(const struct nvme_tcp_icreq *req, struct tcp_pdu_info *out)
{
	enum tcp_pdu_verdict v = check_ic_common(&req->hdr, NVME_TCP_ICREQ, out);
	if (v != TCP_PDU_OK)
		return v;
	if (req->pfv != 0)
		return fatal(out, NVME_TCP_FES_UNSUPPORTED, offsetof(struct nvme_tcp_icreq, pfv),
			     "PDU format version not supported");
	if (req->hpda > NVME_TCP_PDA_MAX)
		return fatal(out, NVME_TCP_FES_UNSUPPORTED, offsetof(struct nvme_tcp_icreq, hpda),
			     "host PDU data alignment out of range");
	if (req->dgst & ~(NVME_TCP_DGST_HDR | NVME_TCP_DGST_DATA))
		return bad_field(out, offsetof(struct nvme_tcp_icreq, dgst), "unknown digest bits");
	return TCP_PDU_OK;
}

enum tcp_pdu_verdict tcp_pdu_check_icresp(const struct nvme_tcp_icresp *rsp, uint8_t asked_dgst,
					  struct tcp_pdu_info *out)
{
	enum tcp_pdu_verdict v = check_ic_common(&rsp->hdr, NVME_TCP_ICRESP, out);
	if (v != TCP_PDU_OK)
		return v;
	if (rsp->pfv != 0)
		return fatal(out, NVME_TCP_FES_UNSUPPORTED, offsetof(struct nvme_tcp_icresp, pfv),
			     "PDU format version not supported");
	if (rsp->cpda > NVME_TCP_PDA_MAX)
		return fatal(out, NVME_TCP_FES_UNSUPPORTED, offsetof(struct nvme_tcp_icresp, cpda),
			     "controller PDU data alignment out of range");
	/* The controller may only turn on digests the host asked for. */
	if (rsp->dgst & ~asked_dgst)
		return bad_field(out, offsetof(struct nvme_tcp_icresp, dgst), "digest the host did not ask for");
	if (rsp->maxh2cdata < NVME_TCP_MIN_MAXH2CDATA || rsp->maxh2cdata % 4)
		return fatal(out, NVME_TCP_FES_UNSUPPORTED, offsetof(struct nvme_tcp_icresp, maxh2cdata),
			     "MAXH2CDATA below 4096 or not a multiple of 4");
	return TCP_PDU_OK;
}

uint32_t tcp_hdgst(const void *hdr, size_t hlen)
{
	return crc32c(0, hdr, hlen);
}

size_t tcp_pdu_term(uint8_t *out, bool from_controller, uint16_t fes, uint32_t fei,
		    const void *bad, size_t bad_len)
{
	if (bad_len > NVME_TCP_TERM_MAX_DATA)
		bad_len = NVME_TCP_TERM_MAX_DATA;
	struct nvme_tcp_term t = {0};
	t.hdr.type = from_controller ? NVME_TCP_C2H_TERM : NVME_TCP_H2C_TERM;
	t.hdr.hlen = sizeof(t);
	t.hdr.plen = (uint32_t)(sizeof(t) + bad_len);
	t.fes = fes;
	for (int i = 0; i < 4; i++)
		t.fei[i] = (uint8_t)(fei >> (8 * i));
	memcpy(out, &t, sizeof(t));
	if (bad_len)
		memcpy(out + sizeof(t), bad, bad_len);
	return sizeof(t) + bad_len;
}

const char *tcp_pdu_type_name(uint8_t type)
{
	switch (type) {
	case NVME_TCP_ICREQ: return "ICReq";
	case NVME_TCP_ICRESP: return "ICResp";
	case NVME_TCP_H2C_TERM: return "H2CTermReq";
	case NVME_TCP_C2H_TERM: return "C2HTermReq";
	case NVME_TCP_CAPSULE_CMD: return "CapsuleCmd";
	case NVME_TCP_CAPSULE_RESP: return "CapsuleResp";
	case NVME_TCP_H2C_DATA: return "H2CData";
	case NVME_TCP_C2H_DATA: return "C2HData";
	case NVME_TCP_R2T: return "R2T";
	default: return "unknown PDU type";
	}
}

const char *tcp_fes_name(uint16_t fes)
{
	switch (fes) {
	case NVME_TCP_FES_INVALID_HEADER: return "Invalid PDU Header Field";
	case NVME_TCP_FES_PDU_SEQUENCE: return "PDU Sequence Error";
	case NVME_TCP_FES_HDR_DIGEST: return "Header Digest Error";
	case NVME_TCP_FES_DATA_RANGE: return "Data Transfer Out of Range";
	case NVME_TCP_FES_DATA_LIMIT: return "Data Transfer Limit Exceeded";
	case NVME_TCP_FES_UNSUPPORTED: return "Unsupported Parameter";
	default: return "unknown fatal error status";
	}
}
