/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS on-disk format, version 1. All integers little endian; every structure's size is
 * checked at compile time. Block numbers count BLOBFS_BLOCK_SIZE (4 KiB) blocks from the
 * start of the namespace, whatever its LBA size.
 *
 *   block 0                superblock (struct bfs_sb_disk, rest of the block zero)
 *   ckpt_a .. +ckpt_blocks checkpoint slot A: struct bfs_ckpt_hdr, payload from the next block
 *   ckpt_b .. +ckpt_blocks checkpoint slot B
 *   journal .. +jnl_blocks circular journal of transactions (struct bfs_txn_hdr + records)
 *   data_start ..          nclusters clusters of cluster_size bytes
 *   last block             copy of the superblock
 *
 * Version 2 adds special files (FIFO, devices, sockets: inode types 4..7; a device's number
 * is kept in the checkpoint's size field and after a CREATE record's symlink target) and the
 * PUNCH record. Version 1 file systems are read and written as they are; the version 2
 * features are refused on them (-EOPNOTSUPP).
 *
 * A checkpoint is a snapshot of all metadata after transaction `seq`; the journal holds
 * transactions seq+1, seq+2, ... from block `jnl_head` of the journal on. Mount takes the
 * valid checkpoint with the highest seq and applies transactions while their header has the
 * file system's uuid, the next seq and a good checksum.
 */
#ifndef BLOBFS_FORMAT_H
#define BLOBFS_FORMAT_H

#include <stdint.h>

#include "unvme/blobfs.h"

#define BFS_MAGIC "UNVMEBFS"                  /* superblock, 8 bytes */
#define BFS_CKPT_MAGIC 0x54504b43u            /* "CKPT" */
#define BFS_TXN_MAGIC 0x4e584254u             /* "TBXN" */
#define BFS_ROOT_INO 1u
#define BFS_MIN_DEVICE (8ull << 20)
#define BFS_CLUSTERS_MAX (1ull << 28) /* mkfs's default cluster keeps the count at most this */

struct bfs_sb_disk {
	char magic[8];
	uint32_t version;
	uint32_t crc;            /* CRC-32 of this structure with crc = 0 */
	uint32_t block_size;     /* 4096 */
	uint32_t lba_size;       /* of the namespace at mkfs */
	uint32_t cluster_size;   /* bytes */
	uint32_t flags;          /* 0 */
	uint64_t total_blocks;   /* blocks of the namespace at mkfs */
	uint64_t ckpt_a;         /* first block of checkpoint slot A */
	uint64_t ckpt_b;
	uint64_t ckpt_blocks;    /* blocks per slot */
	uint64_t jnl_start;
	uint64_t jnl_blocks;
	uint64_t data_start;     /* block of cluster 0, cluster aligned */
	uint64_t nclusters;
	uint8_t uuid[16];
	char label[32];
	int64_t mkfs_time_ns;
	uint8_t reserved[136];
};
_Static_assert(sizeof(struct bfs_sb_disk) == 288, "superblock layout");

struct bfs_ckpt_hdr {
	uint32_t magic;
	uint32_t crc;            /* CRC-32 of this header with crc = 0 */
	uint64_t seq;            /* last transaction included */
	uint8_t uuid[16];
	uint64_t jnl_head;       /* journal block where transaction seq+1 starts */
	uint64_t next_ino;
	uint64_t ninodes;
	uint64_t payload_len;    /* bytes from the slot's second block on */
	uint32_t payload_crc;
	uint32_t clean;          /* 1: written by unmount, nothing was logged after it */
	int64_t time_ns;
	uint8_t reserved[48];
};
_Static_assert(sizeof(struct bfs_ckpt_hdr) == 128, "checkpoint header layout");

/* Checkpoint payload: ninodes records, each a struct bfs_ckpt_inode, then name_len bytes of
 * name, link_len bytes of symlink target, and nextents struct bfs_extent_disk, padded to 8. */
struct bfs_ckpt_inode {
	uint64_t ino;
	uint64_t parent;         /* 0 for the root */
	uint64_t size;           /* devices: their number */
	int64_t atime_ns, mtime_ns, ctime_ns;
	uint32_t mode, uid, gid;
	uint8_t type;            /* enum blobfs_type */
	uint8_t pad;
	uint16_t name_len;
	uint32_t nextents;
	uint32_t link_len;
};
_Static_assert(sizeof(struct bfs_ckpt_inode) == 72, "checkpoint inode layout");

struct bfs_extent_disk {
	uint64_t lclu;           /* first cluster of the file */
	uint64_t pclu;           /* first data-area cluster */
	uint32_t count;
	uint32_t pad;
};
_Static_assert(sizeof(struct bfs_extent_disk) == 24, "extent layout");

/* A transaction: this header at the start of a journal block, then payload_len bytes of
 * records, over nblocks blocks. The crc covers the header (crc = 0) and the payload. A
 * transaction never wraps past the journal's end: the journal is checkpointed instead. */
struct bfs_txn_hdr {
	uint32_t magic;
	uint32_t crc;
	uint64_t seq;
	uint8_t uuid[16];
	uint32_t nblocks;
	uint32_t payload_len;
	uint32_t nrecords;
	uint32_t pad;
};
_Static_assert(sizeof(struct bfs_txn_hdr) == 48, "transaction header layout");

/* Records: a struct bfs_rec_hdr, then the fields of the type, names last. */
enum bfs_rec_type {
	BFS_REC_CREATE = 1,      /* ino, parent, type, mode, uid, gid, time, name, link */
	BFS_REC_UNLINK = 2,      /* parent, name: the entry and (no hard links) its inode go */
	BFS_REC_RENAME = 3,      /* src parent, dst parent, src name, dst name; replaces dst */
	BFS_REC_MAP = 4,         /* ino, lclu, pclu, count: clusters now hold the file's data */
	BFS_REC_SETSIZE = 5,     /* ino, size, mtime, ctime: the file grew (or only its times moved) */
	BFS_REC_TRUNCATE = 6,    /* ino, size, mtime, ctime: drop clusters from ceil(size) on */
	BFS_REC_SETATTR = 7,     /* ino, mask, mode, uid, gid, atime, mtime, ctime */
	BFS_REC_PUNCH = 8,       /* ino, lclu, count, mtime, ctime: the clusters become a hole (v2) */
};
#define BFS_TYPE_MAX 7u          /* highest enum blobfs_type (version 2; 3 in version 1) */

struct bfs_rec_hdr {
	uint16_t type;
	uint16_t len;            /* payload bytes after this header */
};
_Static_assert(sizeof(struct bfs_rec_hdr) == 4, "record header layout");

#endif
