/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP PDU header checks and small builders, shared by the host transport and the target
 * (and fuzzed on their own, tests/fuzz). Both ends receive byte streams from a peer they must
 * not trust: a header is checked field by field, lowest offset first, before anything in it is
 * used, and an error names the Fatal Error Status and the offset of the field (FEI) the
 * TermReq reports.
 */
#ifndef UNVME_DRIVER_TCP_PDU_H
#define UNVME_DRIVER_TCP_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unvme/spec/tcp.h"

/* What the receiving end expects of its peer's PDUs on an established connection. */
struct tcp_pdu_rules {
	bool controller; /* the receiver is the controller: it accepts only host-to-controller PDUs */
	bool hdgst;      /* header digests negotiated */
	bool ddgst;      /* data digests negotiated */
	uint32_t pda;    /* data alignment the receiver asked for, in bytes (4 x (xPDA + 1)) */
};

enum tcp_pdu_verdict {
	TCP_PDU_OK = 0,
	TCP_PDU_FATAL,   /* report fes/fei in a TermReq, then close */
	TCP_PDU_DROP,    /* close without a TermReq (a TermReq of invalid length) */
};

/* The parse of a common header. */
struct tcp_pdu_info {
	uint32_t plen;
	uint32_t hdr_bytes;  /* bytes before the data (PDO), or the whole PDU when it has none */
	uint32_t data_len;   /* data bytes, without the data digest */
	uint16_t fes;        /* when FATAL */
	uint32_t fei;
	const char *why;     /* when not OK: a short reason for the log */
};

/* Checks the common header of a PDU on an established connection (anything but ICReq and
 * ICResp, which are refused there). */
enum tcp_pdu_verdict tcp_pdu_check(const struct nvme_tcp_hdr *h, const struct tcp_pdu_rules *r,
				   struct tcp_pdu_info *out);

/* Checks an ICReq (on the controller) or ICResp (on the host), the first PDU of a connection. */
enum tcp_pdu_verdict tcp_pdu_check_icreq(const struct nvme_tcp_icreq *req, struct tcp_pdu_info *out);
enum tcp_pdu_verdict tcp_pdu_check_icresp(const struct nvme_tcp_icresp *rsp, uint8_t asked_dgst,
					  struct tcp_pdu_info *out);

/* Header digest over the first hlen bytes. */
uint32_t tcp_hdgst(const void *hdr, size_t hlen);

/* Fills a TermReq (H2C from the host, C2H from the controller) that echoes up to 128 bytes of
 * the offending header; returns its length. out must hold 24 + 128 bytes. */
size_t tcp_pdu_term(uint8_t *out, bool from_controller, uint16_t fes, uint32_t fei,
		    const void *bad, size_t bad_len);

/* Name of a PDU type or a fatal error status, for messages. */
const char *tcp_pdu_type_name(uint8_t type);
const char *tcp_fes_name(uint16_t fes);

/* The data offset (PDO) of a PDU that carries data after a header of hlen bytes: the header
 * digest, then padding up to the receiver's alignment. */
static inline uint32_t tcp_pdu_data_offset(uint32_t hlen, bool hdgst, uint32_t pda)
{
	uint32_t off = hlen + (hdgst ? NVME_TCP_DIGEST_LEN : 0);
	if (pda > 4)
		off = (off + pda - 1) / pda * pda;
	return off;
}

#endif
