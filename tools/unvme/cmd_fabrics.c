/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe over Fabrics commands, as nvme-cli has them, over NVMe/TCP and NVMe/RDMA:
 *   unvme discover nvme-tcp://HOST:PORT     the Discovery Controller's log page
 *   unvme discover -t rdma -a HOST [-s PORT] (or nvme-rdma://HOST:PORT)
 *   unvme connect nvme-tcp://HOST:PORT/NQN [--alias NAME]   (or nvme-rdma://)
 *   unvme connect-all nvme-tcp://HOST:PORT [--alias PREFIX] every TCP and RDMA record, each
 *                                           over its own fabric
 *   unvme disconnect NAME
 * A user-space driver has no kernel controller to create: connecting checks the subsystem
 * (Connect, Identify, its namespaces) and, with --alias, records the device id under a name
 * in the devices file, so that every tool, the SDK's JSON configuration and fio can name the
 * remote subsystem as they name a local device. disconnect forgets the name.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/spec/fabrics.h"
#include "unvme/spec/rdma.h"
#include "cli.h"

#define MAX_TRIES 3

/* The fabrics these commands reach: nvme-cli's -t name, the device id's scheme, and the
 * discovery log's TRTYPE of each (NVMe Base 2.0 figure "Discovery Log Page Entry"). */
struct fabric {
	const char *name;
	const char *scheme;
	uint8_t trtype;
	const char *word; /* for messages */
};

static const struct fabric fabrics[] = {
	{"tcp", "nvme-tcp://", NVMF_TRTYPE_TCP, "TCP"},
	{"rdma", "nvme-rdma://", NVMF_TRTYPE_RDMA, "RDMA"},
};
#define NFABRICS (sizeof(fabrics) / sizeof(fabrics[0]))

static const struct fabric *fabric_named(const char *name)
{
	for (size_t i = 0; i < NFABRICS; i++)
		if (!strcmp(name, fabrics[i].name))
			return &fabrics[i];
	return NULL;
}

static const struct fabric *fabric_of_id(const char *id)
{
	for (size_t i = 0; i < NFABRICS; i++)
		if (!strncmp(id, fabrics[i].scheme, strlen(fabrics[i].scheme)))
			return &fabrics[i];
	return NULL;
}

static const struct fabric *fabric_of_trtype(uint8_t trtype)
{
	for (size_t i = 0; i < NFABRICS; i++)
		if (fabrics[i].trtype == trtype)
			return &fabrics[i];
	return NULL;
}

/* What follows "SCHEME://" in a device id of one of the fabrics. */
static const char *after_scheme(const char *id)
{
	const struct fabric *f = fabric_of_id(id);
	return f ? id + strlen(f->scheme) : id;
}

/* The address to use: the positional device id, or one built from -t/-a/-s (nvme-cli
 * style). -t with a device id must name the id's fabric. */
static int target_address(const struct cli_args *a, const char *nqn, char *out, size_t len)
{
	char base[2048];
	const struct fabric *f = &fabrics[0];
	if (a->transport && !(f = fabric_named(a->transport))) {
		cli_fail(a->cmd, EXIT_USAGE, "--transport %s: expected tcp or rdma (the fabrics this host "
			 "has; fc and loop are not carried)", a->transport);
		return -EINVAL;
	}
	if (a->traddr) {
		bool v6 = strchr(a->traddr, ':') != NULL;
		snprintf(base, sizeof(base), "%s%s%s%s:%s/%s", f->scheme, v6 ? "[" : "", a->traddr,
			 v6 ? "]" : "", a->trsvcid ? a->trsvcid : "4420", nqn ? nqn : "");
	} else if (a->positional) {
		int rc = unvme_devid_resolve(a->positional, base, sizeof(base));
		if (rc)
			return rc;
		const struct fabric *of = fabric_of_id(base);
		if (!of) {
			cli_fail(a->cmd, EXIT_USAGE, "%s is not an nvme-tcp:// or nvme-rdma:// address", base);
			return -EINVAL;
		}
		if (a->transport && of != f) {
			cli_fail(a->cmd, EXIT_USAGE, "--transport %s does not match %s (an %s address)",
				 a->transport, base, of->scheme);
			return -EINVAL;
		}
	} else {
		cli_fail(a->cmd, EXIT_USAGE, "give the target: nvme-tcp://HOST:PORT, nvme-rdma://HOST:PORT "
			 "or [-t tcp|rdma] -a ADDRESS [-s PORT]");
		return -EINVAL;
	}
	/* options from the command line go into the query */
	char q[1200] = "";
	size_t at = 0;
	const char *keys[] = {"hostnqn", "dhchap_secret", "dhchap_ctrl_secret", "tls", "tls_key"};
	const char *vals[] = {a->hostnqn, a->dhchap_secret, a->dhchap_ctrl_secret, a->tls ? "1" : NULL,
			      a->tls_key};
	for (int i = 0; i < 5; i++)
		if (vals[i])
			at += (size_t)snprintf(q + at, sizeof(q) - at, "%s%s=%s",
					       (at || strchr(base, '?')) ? "&" : "?", keys[i], vals[i]);
	snprintf(out, len, "%s%s", base, q);
	return 0;
}

/* The discovery address with the subsystem NQN replaced (or the discovery NQN put in). */
static void with_nqn(const char *addr, const char *nqn, char *out, size_t len)
{
	const char *s = after_scheme(addr);
	size_t auth = strcspn(s, "/?");
	const char *query = strchr(s, '?');
	snprintf(out, len, "%.*s%.*s/%s%s", (int)(s - addr), addr, (int)auth, s, nqn, query ? query : "");
}

#define MAX_RECORDS 1024

static void field(char *dst, const char *src, size_t n);

/* Reads the whole discovery log, checking that the generation did not change meanwhile. The
 * header is the controller's word and is checked before it sizes anything: at most
 * MAX_RECORDS records, the same count in the page as in the header read first. Returns 0, a
 * negative errno or NVMe status, or -EPROTO after printing what was wrong. */
static int read_log(struct cli_args *a, struct unvme_ctrlr *c, uint8_t **out, uint64_t *numrec)
{
	for (int tries = 0; tries < MAX_TRIES; tries++) {
		struct nvmf_disc_log_hdr h;
		int rc = unvme_get_log_page(c, NVME_LOG_DISCOVERY, 0, &h, sizeof(h), 0);
		if (rc)
			return rc;
		if (h.numrec > MAX_RECORDS) {
			cli_fail(a->cmd, EXIT_HOST, "the discovery log claims %llu records: more than %u, "
				 "refused", (unsigned long long)h.numrec, MAX_RECORDS);
			return -EPROTO;
		}
		size_t len = sizeof(h) + (size_t)h.numrec * sizeof(struct nvmf_disc_log_entry);
		uint8_t *buf = calloc(1, len);
		if (!buf)
			return -ENOMEM;
		uint32_t max = unvme_ctrlr_max_xfer(c) ? unvme_ctrlr_max_xfer(c) : 4096;
		for (size_t off = 0; off < len && rc == 0; off += max) {
			uint32_t n = (uint32_t)(len - off < max ? len - off : max);
			rc = unvme_get_log_page(c, NVME_LOG_DISCOVERY, 0, buf + off, n, off);
		}
		struct nvmf_disc_log_hdr again;
		if (rc == 0)
			rc = unvme_get_log_page(c, NVME_LOG_DISCOVERY, 0, &again, sizeof(again), 0);
		if (rc) {
			free(buf);
			return rc;
		}
		const struct nvmf_disc_log_hdr *in = (const void *)buf;
		if (again.genctr == h.genctr && in->genctr == h.genctr) {
			if (again.numrec != h.numrec || in->numrec != h.numrec) {
				cli_fail(a->cmd, EXIT_HOST, "the discovery log's record count changed from "
					 "%llu to %llu with its generation counter unchanged",
					 (unsigned long long)h.numrec,
					 (unsigned long long)(in->numrec != h.numrec ? in->numrec : again.numrec));
				free(buf);
				return -EPROTO;
			}
			*out = buf;
			*numrec = h.numrec;
			return 0;
		}
		free(buf);
	}
	return -EAGAIN;
}

/* A fixed-width field that must be printable text once its padding (spaces, zeros) is cut
 * off: false for control bytes, or for nothing when something is required. */
static bool text_field(const char *f, size_t width, bool may_be_empty, char out[257])
{
	field(out, f, width < 256 ? width : 256);
	for (size_t i = 0; out[i]; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
			return false;
	return out[0] || may_be_empty;
}

/* The address and port of a TCP or RDMA record, which become the authority of a device id:
 * a host name or an IP address of the record's family (an IPv4 one has no ':' that would end
 * the host), and a port, nothing that could end the authority or start options. false with
 * what is wrong in why. */
static bool bad_ip_endpoint(const struct nvmf_disc_log_entry *e, const char *word, const char *addr,
			    const char *svc, char *why, size_t len)
{
	size_t n = strlen(addr);
	if (e->adrfam != NVMF_ADRFAM_IPV4 && e->adrfam != NVMF_ADRFAM_IPV6)
		snprintf(why, len, "%s adrfam %u: not 1 (IPv4) or 2 (IPv6)", word, e->adrfam);
	else if (n == 0 ||
		 strspn(addr, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.:-_%") < n ||
		 (e->adrfam == NVMF_ADRFAM_IPV4 && strchr(addr, ':')))
		snprintf(why, len, "%s traddr '%s': not a host name or an IP%s address", word, addr,
			 e->adrfam == NVMF_ADRFAM_IPV4 ? "v4" : "v6");
	else if (!svc[0] || strspn(svc, "0123456789") != strlen(svc) || strlen(svc) > 5 || atoi(svc) < 1 ||
		 atoi(svc) > 65535)
		snprintf(why, len, "%s trsvcid '%s': not a port number in 1..65535", word, svc);
	else
		return false;
	return true;
}

/* An RDMA record's TSAS (RDMA Transport Specification 1.0, Figure 3): the values the
 * specification defines; reserved ones are a malformed record. */
static bool bad_rdma_tsas(const struct nvmf_disc_log_entry *e, char *why, size_t len)
{
	const struct nvmf_rdma_tsas *ts = (const void *)e->tsas;
	if (ts->qptype < 1 || ts->qptype > 2)
		snprintf(why, len, "RDMA tsas.qptype %u: not 1 (reliable connected) or 2 (reliable datagram)",
			 ts->qptype);
	else if (ts->prtype < 1 || ts->prtype > 5)
		snprintf(why, len, "RDMA tsas.prtype %u: not 1..5 (not specified, InfiniBand, RoCE, RoCEv2, "
			 "iWARP)", ts->prtype);
	else if (ts->cms != NVMF_RDMA_CMS_RDMA_CM)
		snprintf(why, len, "RDMA tsas.cms %u: not 1 (the RDMA IP connection manager)", ts->cms);
	else
		return false;
	return true;
}

/* Checks a record before anything in it is printed or used to build a device id: what a
 * record of the discovery log must hold (NVMe Base 2.0 figure "Discovery Log Page Entry"). An
 * all-zero record (a count the controller did not fill) is caught here. false, or true with
 * what is wrong (the field named) in why. */
static bool bad_entry(const struct nvmf_disc_log_entry *e, char *why, size_t len)
{
	char nqn[257], addr[257], svc[257];
	const char *what = NULL;
	if (e->trtype != NVMF_TRTYPE_RDMA && e->trtype != NVMF_TRTYPE_FC && e->trtype != NVMF_TRTYPE_TCP &&
	    e->trtype != 0xfe)
		what = "trtype: unknown transport type";
	else if (e->subtype < NVMF_SUBTYPE_DISCOVERY_REFERRAL || e->subtype > NVMF_SUBTYPE_DISCOVERY_CURRENT)
		what = "subtype: unknown subsystem type";
	else if (!text_field(e->subnqn, sizeof(e->subnqn), false, nqn) || strchr(nqn, ' '))
		what = "subnqn: no subsystem NQN, or one with spaces or control characters";
	else if (!text_field(e->traddr, sizeof(e->traddr), true, addr))
		what = "traddr: control characters in the address";
	else if (!text_field(e->trsvcid, sizeof(e->trsvcid), true, svc))
		what = "trsvcid: control characters in the port";
	if (what) {
		snprintf(why, len, "%s", what);
		return true;
	}
	const struct fabric *f = fabric_of_trtype(e->trtype);
	if (!f)
		return false; /* printed, never followed */
	if (e->trtype == NVMF_TRTYPE_RDMA && bad_rdma_tsas(e, why, len))
		return true;
	if (e->trtype == NVMF_TRTYPE_RDMA && e->adrfam == NVMF_ADRFAM_IB)
		return false; /* an InfiniBand GID: printed, never followed (not_followed) */
	return bad_ip_endpoint(e, f->word, addr, svc, why, len);
}

/* Every record checked: EXIT_OK, or the exit code after naming the first bad one. */
static int check_entries(struct cli_args *a, const uint8_t *log, uint64_t n)
{
	const struct nvmf_disc_log_entry *e = (const void *)(log + sizeof(struct nvmf_disc_log_hdr));
	for (uint64_t i = 0; i < n; i++) {
		char why[400];
		if (bad_entry(&e[i], why, sizeof(why)))
			return cli_fail(a->cmd, EXIT_HOST, "discovery log record %llu of %llu is malformed "
					"(%s): the controller's log is refused", (unsigned long long)i,
					(unsigned long long)n, why);
	}
	return EXIT_OK;
}

static const char *trtype_name(uint8_t t)
{
	return t == NVMF_TRTYPE_TCP ? "tcp" : t == NVMF_TRTYPE_RDMA ? "rdma" : t == NVMF_TRTYPE_FC ? "fc" : "unknown";
}

static const char *adrfam_name(uint8_t a)
{
	return a == NVMF_ADRFAM_IPV4 ? "ipv4" : a == NVMF_ADRFAM_IPV6 ? "ipv6" : a == NVMF_ADRFAM_IB ? "infiniband"
											      : "unknown";
}

/* An RDMA record's TSAS, by libnvme's names (nvme-cli prints them as rdma_qptype, rdma_prtype,
 * rdma_cms, rdma_pkey); bad_rdma_tsas passed the values first. */
static const char *qptype_name(uint8_t v)
{
	return v == 1 ? "connected" : v == 2 ? "datagram" : "unrecognized";
}

static const char *prtype_name(uint8_t v)
{
	static const char *const names[] = {"unrecognized", "not specified", "infiniband", "roce",
					    "roce-v2", "iwarp"};
	return v < sizeof(names) / sizeof(names[0]) ? names[v] : "unrecognized";
}

static const char *cms_name(uint8_t v)
{
	return v == NVMF_RDMA_CMS_RDMA_CM ? "rdma-cm" : "unrecognized";
}

static const char *subtype_name(uint8_t s)
{
	switch (s) {
	case NVMF_SUBTYPE_DISCOVERY_REFERRAL: return "discovery subsystem referral";
	case NVMF_SUBTYPE_NVME: return "nvme subsystem";
	case NVMF_SUBTYPE_DISCOVERY_CURRENT: return "current discovery subsystem";
	default: return "unknown";
	}
}

static const char *treq_name(uint8_t t)
{
	switch (t & 3u) {
	case 1: return "required";
	case 2: return "not required";
	default: return "not specified";
	}
}

/* TSAS byte 0 of a TCP record (libnvme's names) */
static const char *sectype_name(const struct nvmf_disc_log_entry *e)
{
	if (e->trtype != NVMF_TRTYPE_TCP)
		return "none";
	switch (e->tsas[0]) {
	case NVMF_TCP_SECTYPE_NONE: return "none";
	case NVMF_TCP_SECTYPE_TLS12: return "tls";
	case NVMF_TCP_SECTYPE_TLS13: return "tls13";
	default: return "unknown";
	}
}

static void field(char *dst, const char *src, size_t n)
{
	size_t l = strnlen(src, n);
	while (l && (src[l - 1] == ' ' || src[l - 1] == '\0'))
		l--;
	memcpy(dst, src, l);
	dst[l] = '\0';
}

/* A controller that could not be opened: its NVMe status, or what went wrong with the device id
 * named (connect-all tries several, discover may have built it from -t/-a/-s). */
static int open_failed(const struct cli_args *a, const char *addr, int rc)
{
	if (rc > 0)
		return cli_result(a->cmd, rc, 0);
	const char *msg = unvme_errmsg();
	return cli_fail(a->cmd, EXIT_HOST, "cannot open %s: %s", cli_echo(addr),
			msg && *msg ? msg : strerror(-rc));
}

static int open_discovery(struct cli_args *a, char *addr, size_t len, struct unvme_ctrlr **c)
{
	char raw[2048];
	int rc = target_address(a, NVMF_DISCOVERY_NQN, raw, sizeof(raw));
	if (rc)
		return EXIT_USAGE;
	/* an address without a subsystem names the discovery subsystem */
	snprintf(addr, len, "%s", raw);
	rc = unvme_ctrlr_open(addr, NULL, c);
	if (rc)
		return open_failed(a, addr, rc);
	return EXIT_OK;
}

/* The discovery log of the controller the arguments name: EXIT_OK with its records, or the
 * exit code after the message. */
static int fetch_log(struct cli_args *a, char *addr, size_t len, uint8_t **log, uint64_t *n)
{
	struct unvme_ctrlr *c;
	int rc = open_discovery(a, addr, len, &c);
	if (rc)
		return rc;
	rc = read_log(a, c, log, n);
	unvme_ctrlr_close(c);
	if (rc == -EAGAIN)
		return cli_fail(a->cmd, EXIT_HOST, "the discovery log kept changing while it was read");
	if (rc == -EPROTO)
		return EXIT_HOST; /* read_log said why */
	if (rc)
		return cli_result(a->cmd, rc, 0);
	rc = check_entries(a, *log, *n);
	if (rc) {
		free(*log);
		*log = NULL;
	}
	return rc;
}

int cmd_discover(struct cli_args *a)
{
	char addr[2048];
	uint8_t *log = NULL;
	uint64_t n = 0;
	int rc = fetch_log(a, addr, sizeof(addr), &log, &n);
	if (rc)
		return rc;
	const struct nvmf_disc_log_hdr *h = (const void *)log;
	const struct nvmf_disc_log_entry *e = (const void *)(log + sizeof(*h));
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *root = json_object_new_object();
		json_object_object_add(root, "genctr", json_object_new_int64((int64_t)h->genctr));
		json_object *recs = json_object_new_array();
		for (uint64_t i = 0; i < n; i++) {
			char s[257];
			json_object *r = json_object_new_object();
			json_object_object_add(r, "trtype", json_object_new_string(trtype_name(e[i].trtype)));
			json_object_object_add(r, "adrfam", json_object_new_string(adrfam_name(e[i].adrfam)));
			json_object_object_add(r, "subtype", json_object_new_string(subtype_name(e[i].subtype)));
			json_object_object_add(r, "treq", json_object_new_string(treq_name(e[i].treq)));
			json_object_object_add(r, "portid", json_object_new_int(e[i].portid));
			field(s, e[i].trsvcid, sizeof(e[i].trsvcid));
			json_object_object_add(r, "trsvcid", json_object_new_string(s));
			field(s, e[i].subnqn, sizeof(e[i].subnqn));
			json_object_object_add(r, "subnqn", json_object_new_string(s));
			field(s, e[i].traddr, sizeof(e[i].traddr));
			json_object_object_add(r, "traddr", json_object_new_string(s));
			json_object_object_add(r, "sectype", json_object_new_string(sectype_name(&e[i])));
			if (e[i].trtype == NVMF_TRTYPE_RDMA) {
				const struct nvmf_rdma_tsas *ts = (const void *)e[i].tsas;
				json_object_object_add(r, "rdma_prtype", json_object_new_string(prtype_name(ts->prtype)));
				json_object_object_add(r, "rdma_qptype", json_object_new_string(qptype_name(ts->qptype)));
				json_object_object_add(r, "rdma_cms", json_object_new_string(cms_name(ts->cms)));
				json_object_object_add(r, "rdma_pkey", json_object_new_int(ts->pkey));
			}
			json_object_array_add(recs, r);
		}
		json_object_object_add(root, "records", recs);
		cli_json_print(root);
	} else {
		printf("\nDiscovery Log Number of Records %llu, Generation counter %llu\n",
		       (unsigned long long)n, (unsigned long long)h->genctr);
		for (uint64_t i = 0; i < n; i++) {
			char s[257];
			printf("=====Discovery Log Entry %llu======\n", (unsigned long long)i);
			printf("trtype:  %s\n", trtype_name(e[i].trtype));
			printf("adrfam:  %s\n", adrfam_name(e[i].adrfam));
			printf("subtype: %s\n", subtype_name(e[i].subtype));
			printf("treq:    %s%s\n", treq_name(e[i].treq),
			       (e[i].treq & NVMF_TREQ_DISABLE_SQFLOW) ? ", sq flow control disable supported" : "");
			printf("portid:  %u\n", e[i].portid);
			field(s, e[i].trsvcid, sizeof(e[i].trsvcid));
			printf("trsvcid: %s\n", s);
			field(s, e[i].subnqn, sizeof(e[i].subnqn));
			printf("subnqn:  %s\n", s);
			field(s, e[i].traddr, sizeof(e[i].traddr));
			printf("traddr:  %s\n", s);
			printf("sectype: %s\n", sectype_name(&e[i]));
			if (e[i].trtype == NVMF_TRTYPE_RDMA) {
				const struct nvmf_rdma_tsas *ts = (const void *)e[i].tsas;
				printf("rdma_prtype: %s\n", prtype_name(ts->prtype));
				printf("rdma_qptype: %s\n", qptype_name(ts->qptype));
				printf("rdma_cms:    %s\n", cms_name(ts->cms));
				printf("rdma_pkey: 0x%04x\n", ts->pkey);
			}
		}
	}
	free(log);
	return EXIT_OK;
}

/* An NQN from the log put in a device id's path: anything but the unreserved characters
 * and ':' percent-encoded, so that no '?', '&' or '%' of the controller's text becomes an
 * option of the id (lib/fabrics/nvmf_params.c decodes it). */
static void pct_encode(const char *in, char *out, size_t len)
{
	size_t o = 0;
	for (; *in && o + 4 < len; in++) {
		unsigned char ch = (unsigned char)*in;
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:", ch))
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02X", ch);
	}
	out[o] = '\0';
}

/* Connects to one subsystem, says what is there, records the alias. */
static int connect_one(struct cli_args *a, const char *addr, const char *alias)
{
	struct unvme_ctrlr *c;
	int rc = unvme_ctrlr_open(addr, NULL, &c);
	if (rc)
		return open_failed(a, addr, rc);
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(c);
	char mn[41], sn[21];
	cli_id_string(id->mn, sizeof(id->mn), mn, sizeof(mn));
	cli_id_string(id->sn, sizeof(id->sn), sn, sizeof(sn));
	uint32_t nns = 0;
	for (uint32_t ns = unvme_ctrlr_first_nsid(c); ns; ns = unvme_ctrlr_next_nsid(c, ns))
		nns++;
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *r = json_object_new_object();
		json_object_object_add(r, "device", json_object_new_string(addr));
		json_object_object_add(r, "subnqn", json_object_new_string(id->subnqn));
		json_object_object_add(r, "cntlid", json_object_new_int(id->cntlid));
		json_object_object_add(r, "model", json_object_new_string(mn));
		json_object_object_add(r, "serial", json_object_new_string(sn));
		json_object_object_add(r, "namespaces", json_object_new_int((int)nns));
		json_object_object_add(r, "io_queues", json_object_new_int((int)unvme_ctrlr_max_io_queues(c)));
		if (alias)
			json_object_object_add(r, "alias", json_object_new_string(alias));
		cli_json_print(r);
	} else {
		printf("connected to %s: controller %u (%s, serial %s), %u namespace%s, %u I/O queues\n",
		       id->subnqn, id->cntlid, mn, sn, nns, nns == 1 ? "" : "s", unvme_ctrlr_max_io_queues(c));
	}
	unvme_ctrlr_close(c);
	if (alias) {
		rc = unvme_devid_save(alias, addr);
		if (rc)
			return cli_result(a->cmd, rc, 0);
		if (a->fmt != UNVME_FMT_JSON)
			printf("device '%s' = %s\n", alias, addr);
	}
	return EXIT_OK;
}

int cmd_connect(struct cli_args *a)
{
	char addr[2048];
	int rc = target_address(a, a->nqn, addr, sizeof(addr));
	if (rc)
		return EXIT_USAGE;
	if (a->nqn && !a->traddr) {
		char tmp[2048];
		with_nqn(addr, a->nqn, tmp, sizeof(tmp));
		snprintf(addr, sizeof(addr), "%s", tmp);
	}
	return connect_one(a, addr, a->alias);
}

/* Why an NVM subsystem record that bad_entry passed is not followed, or NULL: a fabric this
 * host does not have, or an RDMA record it cannot connect to. */
static const char *not_followed(const struct nvmf_disc_log_entry *e)
{
	if (!fabric_of_trtype(e->trtype))
		return "a fabric this host does not have";
	if (e->trtype == NVMF_TRTYPE_RDMA) {
		const struct nvmf_rdma_tsas *ts = (const void *)e->tsas;
		if (e->adrfam == NVMF_ADRFAM_IB)
			return "an InfiniBand address (AF_IB): nvme-rdma:// takes IP addresses";
		if (ts->qptype != NVMF_RDMA_QPTYPE_CONNECTED)
			return "reliable datagram queue pairs: NVMe/RDMA here is reliable connected";
	}
	return NULL;
}

/* The discovery id's query (host NQN, secrets, timeouts) for a record of fabric to: the keys
 * of another fabric that to has not (NVMe/TCP's TLS and digests when an RDMA record comes from
 * a TCP discovery controller) are left out, the rest carried. */
static void carry_query(const char *query, const struct fabric *to, char *out, size_t len)
{
	static const char *const tcp_only[] = {"tls", "tls_key", "tls_identity", "hdgst", "ddgst"};
	size_t o = 0;
	out[0] = '\0';
	if (!query)
		return;
	for (const char *q = query + 1; *q;) {
		size_t n = strcspn(q, "&");
		size_t klen = strcspn(q, "=&");
		bool keep = true;
		for (size_t i = 0; to->trtype != NVMF_TRTYPE_TCP && i < sizeof(tcp_only) / sizeof(tcp_only[0]); i++)
			if (klen == strlen(tcp_only[i]) && !strncmp(q, tcp_only[i], klen))
				keep = false;
		if (keep && o + n + 2 < len)
			o += (size_t)snprintf(out + o, len - o, "%c%.*s", o ? '&' : '?', (int)n, q);
		q += n + (q[n] == '&');
	}
}

int cmd_connect_all(struct cli_args *a)
{
	char addr[2048];
	uint8_t *log = NULL;
	uint64_t n = 0;
	int rc = fetch_log(a, addr, sizeof(addr), &log, &n);
	if (rc)
		return rc;
	const struct nvmf_disc_log_entry *e = (const void *)(log + sizeof(struct nvmf_disc_log_hdr));
	const char *query = strchr(after_scheme(addr), '?');
	int worst = EXIT_OK, k = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (e[i].subtype != NVMF_SUBTYPE_NVME)
			continue;
		const char *skip = not_followed(&e[i]);
		if (skip) {
			if (e[i].trtype != NVMF_TRTYPE_FC) /* as before: FC records pass silently */
				fprintf(stderr, "unvme: %s: discovery log record %llu not followed: %s\n", a->cmd,
					(unsigned long long)i, skip);
			continue;
		}
		const struct fabric *f = fabric_of_trtype(e[i].trtype);
		char traddr[257], svc[33], nqn[257], base[600], one[5200], alias[300], q[1300];
		field(traddr, e[i].traddr, sizeof(e[i].traddr));
		field(svc, e[i].trsvcid, sizeof(e[i].trsvcid));
		field(nqn, e[i].subnqn, sizeof(e[i].subnqn));
		bool v6 = e[i].adrfam == NVMF_ADRFAM_IPV6;
		/* the entry's address (bad_entry checked it), with our query options */
		snprintf(base, sizeof(base), "%s%s%s%s:%s", f->scheme, v6 ? "[" : "", traddr, v6 ? "]" : "", svc);
		char enc[3 * sizeof(nqn)];
		pct_encode(nqn, enc, sizeof(enc));
		carry_query(query, f, q, sizeof(q));
		snprintf(one, sizeof(one), "%s/%s%s", base, enc, q);
		snprintf(alias, sizeof(alias), "%s%d", a->alias ? a->alias : "nvmf", k++);
		int r = connect_one(a, one, a->alias ? alias : NULL);
		if (r && !worst)
			worst = r;
	}
	free(log);
	if (k == 0 && a->fmt != UNVME_FMT_JSON)
		printf("no NVMe subsystem in the discovery log\n");
	return worst;
}

int cmd_disconnect(struct cli_args *a)
{
	if (!a->positional)
		return cli_fail(a->cmd, EXIT_USAGE, "give the alias to forget");
	int rc = unvme_devid_forget(a->positional);
	if (rc)
		return cli_result(a->cmd, rc, 0);
	printf("device '%s' forgotten\n", a->positional);
	return EXIT_OK;
}
