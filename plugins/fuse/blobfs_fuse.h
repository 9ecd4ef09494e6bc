/* SPDX-License-Identifier: BSD-3-Clause */
/* The FUSE server behind `unvme fuse` (blobfs_fuse.c). */
#ifndef UNVME_BLOBFS_FUSE_H
#define UNVME_BLOBFS_FUSE_H

/* argv[0] is "fuse"; returns the process exit code (0 mounted / served and unmounted,
 * 2 usage, 3 the device or the mount failed). */
int blobfs_fuse_main(int argc, char **argv);

#endif
