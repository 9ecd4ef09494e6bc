/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Human-readable names of NVMe identifiers (opcodes, log pages, features, Identify CNS values,
 * command sets), as the specifications write them. Internal to the library: the printers use
 * them to annotate raw numbers. Every lookup returns NULL for a value it does not know, so the
 * caller decides how to show an unnamed value (usually the raw number alone).
 */
#ifndef UNVME_LIB_SPEC_NAMES_H
#define UNVME_LIB_SPEC_NAMES_H

#include <stdint.h>

/* Admin command set opcode (Base 2.0, "Opcodes for Admin Commands"). */
const char *nvme_admin_opc_name(uint8_t opc);
/* I/O command opcode; csi picks the command set (NVM, Key Value, Zoned Namespace). ZNS
 * namespaces also accept every NVM command, so ZNS names fall back to NVM ones. */
const char *nvme_io_opc_name(uint8_t opc, uint8_t csi);
/* Log page identifier (Base 2.0, "Log Page Identifiers"); C0h..FFh are "Vendor Specific". */
const char *nvme_log_page_name(uint8_t lid);
/* Feature identifier (Base 2.0, "Feature Identifiers"); C0h..FFh are "Vendor Specific". */
const char *nvme_feature_name(uint8_t fid);
/* Identify CNS value (Base 2.0, "Identify - CNS Values"). */
const char *nvme_cns_name(uint8_t cns);
/* Command Set Identifier: "NVM", "Key Value", "Zoned Namespace". */
const char *nvme_csi_name(uint8_t csi);
/* Namespace Identifier Type of a Namespace Identification Descriptor: "eui64", "nguid",
 * "uuid", "csi" (lower case: also the JSON key of the identifier). */
const char *nvme_nidt_name(uint8_t nidt);

#endif
