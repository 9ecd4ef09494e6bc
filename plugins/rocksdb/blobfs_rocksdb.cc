// SPDX-License-Identifier: BSD-3-Clause
//
// RocksDB FileSystem on BlobFS: Debian's unmodified db_bench and ldb (RocksDB 7.8) run on a
// user-space NVMe namespace with
//
//   LD_PRELOAD=libblobfs_rocksdb.so db_bench --fs_uri='id=blobfs;device=emu0;retain_cache=true' ...
//   LD_PRELOAD=libblobfs_rocksdb.so db_bench --fs_uri=blobfs://nvme0 ...      (an alias, no options)
//
// Loading the library registers the "blobfs" factory in RocksDB's default object library
// (a static initializer), which is where --fs_uri / FileSystem::CreateFromString looks.
// The options (the original db_bench's --use_retain_cache, --use_prefetch_ctl,
// --prefetch_threshold, --use_blobfs_direct_read/write, --spdk_cache_size) ride in the URI:
//
//   device              device id: alias, emu:// URI, PCI address   (or blobfs://<device>)
//   nsid                namespace, 0 = the first active one          (0)
//   retain_cache        keep cached data after a hit and after close (true)
//   prefetch            sequential readahead                          (true)
//   prefetch_threshold  sequential bytes before readahead starts      (131072)
//   prefetch_size       bytes read ahead                              (1048576)
//   direct_read         reads bypass the BlobFS cache                 (false)
//   direct_write        writes bypass the BlobFS cache                (false)
//   cache_size          BlobFS cache bytes                            (268435456)
//   format              never | if_empty | always: mkfs at open       (never)
//   cluster_size        cluster size for a format                     (0: mkfs's default)
//   kill_safe           WAL writes survive a kill of the process      (true)
//   shadow_dir          where the kill-safe copies live (tmpfs)       (/dev/shm)
//   shadow_size         bytes of each half of that copy               (0: 16 MiB)
//
// Durability: what RocksDB syncs (Sync/Fsync: its synced writes, SSTs, MANIFEST, CURRENT)
// survives a kill and a power cut. With kill_safe, every write to a WAL file (*.log) is also
// copied into BlobFS's shadow in shadow_dir as it is appended, so a kill of the process
// loses no write RocksDB has acknowledged (RocksDB appends a write batch to the WAL before
// it returns), as on ext4, where those bytes sit in the kernel; a new WAL's name is
// committed when it is created. Without it a kill loses what the last commit (every 5 s,
// or a sync) did not cover.
//
// The file system is mounted when RocksDB has configured the object (PrepareOptions) and
// unmounted when the last reference goes (db_bench exit). All paths are BlobFS paths;
// RocksDB's relative paths are taken from the root.
#include <fcntl.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <rocksdb/file_system.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/utilities/options_type.h>

extern "C" {
#include "unvme/blobfs.h"
}

namespace blobfs_rocksdb {

using namespace ROCKSDB_NAMESPACE;

struct BlobFsOptions {
	static const char *kName() { return "BlobFsOptions"; }
	std::string device;
	uint32_t nsid = 0;
	bool retain_cache = true;
	bool prefetch = true;
	uint64_t prefetch_threshold = 0;
	uint64_t prefetch_size = 0;
	bool direct_read = false;
	bool direct_write = false;
	uint64_t cache_size = 0;
	std::string format = "never";
	uint64_t cluster_size = 0;
	bool kill_safe = true;
	std::string shadow_dir = "/dev/shm";
	uint64_t shadow_size = 0;
};

static const std::unordered_map<std::string, OptionTypeInfo> blobfs_option_info = {
	{ "device", { offsetof(BlobFsOptions, device), OptionType::kString } },
	{ "nsid", { offsetof(BlobFsOptions, nsid), OptionType::kUInt32T } },
	{ "retain_cache", { offsetof(BlobFsOptions, retain_cache), OptionType::kBoolean } },
	{ "prefetch", { offsetof(BlobFsOptions, prefetch), OptionType::kBoolean } },
	{ "prefetch_threshold", { offsetof(BlobFsOptions, prefetch_threshold), OptionType::kUInt64T } },
	{ "prefetch_size", { offsetof(BlobFsOptions, prefetch_size), OptionType::kUInt64T } },
	{ "direct_read", { offsetof(BlobFsOptions, direct_read), OptionType::kBoolean } },
	{ "direct_write", { offsetof(BlobFsOptions, direct_write), OptionType::kBoolean } },
	{ "cache_size", { offsetof(BlobFsOptions, cache_size), OptionType::kUInt64T } },
	{ "format", { offsetof(BlobFsOptions, format), OptionType::kString } },
	{ "cluster_size", { offsetof(BlobFsOptions, cluster_size), OptionType::kUInt64T } },
	{ "kill_safe", { offsetof(BlobFsOptions, kill_safe), OptionType::kBoolean } },
	{ "shadow_dir", { offsetof(BlobFsOptions, shadow_dir), OptionType::kString } },
	{ "shadow_size", { offsetof(BlobFsOptions, shadow_size), OptionType::kUInt64T } },
};

// A BlobFS result as a RocksDB status, with BlobFS's message.
static IOStatus Err(int rc, const std::string &what)
{
	std::string msg = what + ": " + blobfs_errmsg();
	switch (rc) {
	case -ENOENT: return IOStatus::PathNotFound(msg);
	case -ENOSPC: {
		IOStatus s = IOStatus::NoSpace(msg);
		return s;
	}
	case -EINVAL:
	case -ENAMETOOLONG: return IOStatus::InvalidArgument(msg);
	case -EBUSY:
	case -EAGAIN: return IOStatus::Busy(msg);
	case -ENOTSUP: return IOStatus::NotSupported(msg);
	default: return IOStatus::IOError(msg);
	}
}

// RocksDB passes paths like "/db/000012.sst" or "db/LOG"; BlobFS takes both.
static std::string Norm(const std::string &p)
{
	std::string out;
	out.reserve(p.size() + 1);
	if (p.empty() || p[0] != '/')
		out.push_back('/');
	for (size_t i = 0; i < p.size(); i++) {
		if (p[i] == '/' && !out.empty() && out.back() == '/')
			continue;
		out.push_back(p[i]);
	}
	while (out.size() > 1 && out.back() == '/')
		out.pop_back();
	return out;
}

class Handle {
public:
	explicit Handle(blobfs_file *f) : f_(f) {}
	~Handle()
	{
		if (f_)
			blobfs_close(f_);
	}
	int Close()
	{
		int rc = f_ ? blobfs_close(f_) : 0;
		f_ = nullptr;
		return rc;
	}
	blobfs_file *f_;
};

// A read's result (a byte count or an error) as a Slice and a status.
static IOStatus Result(ssize_t r, char *scratch, Slice *result, const std::string &name)
{
	if (r < 0)
		return Err((int)r, "read " + name);
	*result = Slice(scratch, (size_t)r);
	return IOStatus::OK();
}

class BlobSequentialFile : public FSSequentialFile {
public:
	BlobSequentialFile(blobfs_file *f, std::string name, bool direct) : h_(f), name_(std::move(name)), direct_(direct) {}
	IOStatus Read(size_t n, const IOOptions &, Slice *result, char *scratch, IODebugContext *) override
	{
		return Result(blobfs_read(h_.f_, scratch, n), scratch, result, name_);
	}
	IOStatus PositionedRead(uint64_t off, size_t n, const IOOptions &, Slice *result, char *scratch,
				IODebugContext *) override
	{
		return Result(blobfs_pread(h_.f_, scratch, n, off), scratch, result, name_);
	}
	IOStatus Skip(uint64_t n) override
	{
		int64_t r = blobfs_seek(h_.f_, (int64_t)n, SEEK_CUR);
		return r < 0 ? Err((int)r, "skip in " + name_) : IOStatus::OK();
	}
	bool use_direct_io() const override { return direct_; }
	size_t GetRequiredBufferAlignment() const override { return BLOBFS_BLOCK_SIZE; }

private:
	Handle h_;
	std::string name_;
	bool direct_;
};

class BlobRandomAccessFile : public FSRandomAccessFile {
public:
	BlobRandomAccessFile(blobfs_file *f, std::string name, bool direct) : h_(f), name_(std::move(name)), direct_(direct) {}
	IOStatus Read(uint64_t off, size_t n, const IOOptions &, Slice *result, char *scratch,
		      IODebugContext *) const override
	{
		return Result(blobfs_pread(h_.f_, scratch, n, off), scratch, result, name_);
	}
	IOStatus Prefetch(uint64_t, size_t, const IOOptions &, IODebugContext *) override
	{
		return IOStatus::OK(); // BlobFS detects sequential access itself
	}
	bool use_direct_io() const override { return direct_; }
	size_t GetRequiredBufferAlignment() const override { return BLOBFS_BLOCK_SIZE; }

private:
	Handle h_;
	std::string name_;
	bool direct_;
};

class BlobWritableFile : public FSWritableFile {
public:
	BlobWritableFile(blobfs_file *f, std::string name, bool direct, const FileOptions &fo, uint64_t size)
		: FSWritableFile(fo), h_(f), name_(std::move(name)), direct_(direct), size_(size) {}
	~BlobWritableFile() override { h_.Close(); }
	IOStatus Append(const Slice &data, const IOOptions &, IODebugContext *) override
	{
		ssize_t r = blobfs_pwrite(h_.f_, data.data(), data.size(), size_);
		if (r != (ssize_t)data.size())
			return Err(r < 0 ? (int)r : -EIO, "append to " + name_);
		size_ += data.size();
		return IOStatus::OK();
	}
	IOStatus Append(const Slice &data, const IOOptions &o, const DataVerificationInfo &, IODebugContext *d) override
	{
		return Append(data, o, d);
	}
	IOStatus PositionedAppend(const Slice &data, uint64_t off, const IOOptions &, IODebugContext *) override
	{
		ssize_t r = blobfs_pwrite(h_.f_, data.data(), data.size(), off);
		if (r != (ssize_t)data.size())
			return Err(r < 0 ? (int)r : -EIO, "write to " + name_);
		if (off + data.size() > size_)
			size_ = off + data.size();
		return IOStatus::OK();
	}
	IOStatus PositionedAppend(const Slice &data, uint64_t off, const IOOptions &o,
				  const DataVerificationInfo &, IODebugContext *d) override
	{
		return PositionedAppend(data, off, o, d);
	}
	IOStatus Truncate(uint64_t size, const IOOptions &, IODebugContext *) override
	{
		int rc = blobfs_ftruncate(h_.f_, size);
		if (rc)
			return Err(rc, "truncate " + name_);
		size_ = size;
		return IOStatus::OK();
	}
	IOStatus Close(const IOOptions &, IODebugContext *) override
	{
		int rc = h_.Close();
		return rc ? Err(rc, "close " + name_) : IOStatus::OK();
	}
	IOStatus Flush(const IOOptions &, IODebugContext *) override { return IOStatus::OK(); }
	IOStatus Sync(const IOOptions &, IODebugContext *) override
	{
		int rc = blobfs_fsync(h_.f_);
		return rc ? Err(rc, "sync " + name_) : IOStatus::OK();
	}
	IOStatus Fsync(const IOOptions &o, IODebugContext *d) override { return Sync(o, d); }
	bool IsSyncThreadSafe() const override { return true; }
	bool use_direct_io() const override { return direct_; }
	size_t GetRequiredBufferAlignment() const override { return BLOBFS_BLOCK_SIZE; }
	uint64_t GetFileSize(const IOOptions &, IODebugContext *) override { return size_; }
	IOStatus InvalidateCache(size_t, size_t) override { return IOStatus::OK(); }

private:
	Handle h_;
	std::string name_;
	bool direct_;
	uint64_t size_;
};

class BlobDirectory : public FSDirectory {
public:
	explicit BlobDirectory(blobfs_file *f) : h_(f) {}
	IOStatus Fsync(const IOOptions &, IODebugContext *) override
	{
		int rc = blobfs_fsync(h_.f_);
		return rc ? Err(rc, "sync directory") : IOStatus::OK();
	}
	IOStatus Close(const IOOptions &, IODebugContext *) override
	{
		int rc = h_.Close();
		return rc ? Err(rc, "close directory") : IOStatus::OK();
	}

private:
	Handle h_;
};

class BlobLock : public FileLock {
public:
	explicit BlobLock(blobfs_lock *l) : l_(l) {}
	blobfs_lock *l_;
};

class BlobFileSystem : public FileSystem {
public:
	static const char *kClassName() { return "BlobFS"; }
	const char *Name() const override { return kClassName(); }
	bool IsInstanceOf(const std::string &name) const override
	{
		return name == kClassName() || name == "blobfs" || FileSystem::IsInstanceOf(name);
	}

	explicit BlobFileSystem(const std::string &device)
	{
		o_.device = device;
		RegisterOptions(&o_, &blobfs_option_info);
	}
	~BlobFileSystem() override
	{
		if (fs_ && getenv("BLOBFS_STATS")) {
			// What the cache and the device did, for tuning (BLOBFS_STATS=1).
			struct blobfs_stats st;
			blobfs_get_stats(fs_, &st);
			fprintf(stderr, "blobfs: cache hits %llu misses %llu read ahead %llu (used %llu) evictions %llu; "
				"device reads %llu (%llu MiB) writes %llu (%llu MiB) flushes %llu; commits %llu "
				"checkpoints %llu; replayed %llu transactions and %llu shadowed writes\n",
				(unsigned long long)st.cache_hits, (unsigned long long)st.cache_misses,
				(unsigned long long)st.prefetch_pages, (unsigned long long)st.prefetch_hits,
				(unsigned long long)st.evictions, (unsigned long long)st.dev_reads,
				(unsigned long long)(st.dev_read_bytes >> 20), (unsigned long long)st.dev_writes,
				(unsigned long long)(st.dev_write_bytes >> 20), (unsigned long long)st.dev_flushes,
				(unsigned long long)st.commits, (unsigned long long)st.checkpoints,
				(unsigned long long)st.replayed, (unsigned long long)st.shadow_replayed);
		}
		if (fs_)
			blobfs_unmount(fs_);
		if (ctrlr_)
			unvme_ctrlr_close(ctrlr_);
	}

	Status PrepareOptions(const ConfigOptions &opts) override
	{
		Status s = FileSystem::PrepareOptions(opts);
		if (s.ok())
			s = Mount();
		return s;
	}

	IOStatus NewSequentialFile(const std::string &fname, const FileOptions &fo,
				   std::unique_ptr<FSSequentialFile> *result, IODebugContext *) override
	{
		return Readable<BlobSequentialFile>(fname, fo, result);
	}
	IOStatus NewRandomAccessFile(const std::string &fname, const FileOptions &fo,
				     std::unique_ptr<FSRandomAccessFile> *result, IODebugContext *) override
	{
		return Readable<BlobRandomAccessFile>(fname, fo, result);
	}
	IOStatus NewWritableFile(const std::string &fname, const FileOptions &fo,
				 std::unique_ptr<FSWritableFile> *result, IODebugContext *) override
	{
		return Writable(fname, fo, O_RDWR | O_CREAT | O_TRUNC, result);
	}
	IOStatus ReopenWritableFile(const std::string &fname, const FileOptions &fo,
				    std::unique_ptr<FSWritableFile> *result, IODebugContext *) override
	{
		return Writable(fname, fo, O_RDWR | O_CREAT, result);
	}
	IOStatus ReuseWritableFile(const std::string &fname, const std::string &old, const FileOptions &fo,
				   std::unique_ptr<FSWritableFile> *result, IODebugContext *d) override
	{
		IOStatus s = RenameFile(old, fname, IOOptions(), d);
		return s.ok() ? NewWritableFile(fname, fo, result, d) : s;
	}
	IOStatus NewDirectory(const std::string &name, const IOOptions &, std::unique_ptr<FSDirectory> *result,
			      IODebugContext *) override
	{
		blobfs_file *f;
		IOStatus s = Open(name, O_RDONLY, &f);
		if (s.ok())
			result->reset(new BlobDirectory(f));
		return s;
	}
	IOStatus FileExists(const std::string &fname, const IOOptions &, IODebugContext *) override
	{
		struct blobfs_stat st;
		return Stat(fname, &st);
	}
	IOStatus GetChildren(const std::string &dir, const IOOptions &, std::vector<std::string> *result,
			     IODebugContext *) override
	{
		IOStatus s = Ready();
		if (!s.ok())
			return s;
		blobfs_dir *d;
		int rc = blobfs_opendir(fs_, Norm(dir).c_str(), &d);
		if (rc)
			return rc == -ENOENT ? IOStatus::NotFound(dir) : Err(rc, "list " + dir);
		result->clear();
		blobfs_dirent e;
		while (blobfs_readdir(d, &e) == 1)
			result->push_back(e.name);
		blobfs_closedir(d);
		return IOStatus::OK();
	}
	IOStatus DeleteFile(const std::string &fname, const IOOptions &, IODebugContext *) override
	{
		return Call([&] { return blobfs_unlink(fs_, Norm(fname).c_str()); }, "delete " + fname);
	}
	IOStatus Truncate(const std::string &fname, size_t size, const IOOptions &, IODebugContext *) override
	{
		return Call([&] { return blobfs_truncate(fs_, Norm(fname).c_str(), size); }, "truncate " + fname);
	}
	IOStatus CreateDir(const std::string &name, const IOOptions &, IODebugContext *) override
	{
		return Call([&] { return blobfs_mkdir(fs_, Norm(name).c_str(), 0755); }, "create directory " + name);
	}
	IOStatus CreateDirIfMissing(const std::string &name, const IOOptions &, IODebugContext *) override
	{
		IOStatus s = Ready();
		if (!s.ok())
			return s;
		std::string p = Norm(name);
		// With parents: db_bench's default path is a few levels deep.
		for (size_t i = 1; i <= p.size(); i++) {
			if (i < p.size() && p[i] != '/')
				continue;
			int rc = blobfs_mkdir(fs_, p.substr(0, i).c_str(), 0755);
			if (rc && rc != -EEXIST)
				return Err(rc, "create directory " + name);
		}
		struct blobfs_stat st;
		s = Stat(name, &st);
		if (!s.ok())
			return s;
		return st.type == BLOBFS_TYPE_DIR ? IOStatus::OK() : IOStatus::IOError(name + " is not a directory");
	}
	IOStatus DeleteDir(const std::string &name, const IOOptions &, IODebugContext *) override
	{
		return Call([&] { return blobfs_rmdir(fs_, Norm(name).c_str()); }, "delete directory " + name);
	}
	IOStatus GetFileSize(const std::string &fname, const IOOptions &, uint64_t *size, IODebugContext *) override
	{
		struct blobfs_stat st;
		IOStatus s = Stat(fname, &st);
		if (s.ok())
			*size = st.size;
		return s;
	}
	IOStatus GetFileModificationTime(const std::string &fname, const IOOptions &, uint64_t *mtime,
					 IODebugContext *) override
	{
		struct blobfs_stat st;
		IOStatus s = Stat(fname, &st);
		if (s.ok())
			*mtime = (uint64_t)(st.mtime_ns / 1000000000);
		return s;
	}
	IOStatus RenameFile(const std::string &src, const std::string &dst, const IOOptions &, IODebugContext *) override
	{
		return Call([&] { return blobfs_rename(fs_, Norm(src).c_str(), Norm(dst).c_str(), 0); }, "rename " + src);
	}
	IOStatus IsDirectory(const std::string &path, const IOOptions &, bool *is_dir, IODebugContext *) override
	{
		struct blobfs_stat st;
		IOStatus s = Stat(path, &st);
		if (s.ok())
			*is_dir = st.type == BLOBFS_TYPE_DIR;
		return s;
	}
	IOStatus LockFile(const std::string &fname, const IOOptions &, FileLock **lock, IODebugContext *) override
	{
		IOStatus s = Ready();
		if (!s.ok())
			return s;
		blobfs_lock *l;
		int rc = blobfs_lock_file(fs_, Norm(fname).c_str(), &l);
		if (rc)
			return Err(rc, "lock " + fname);
		*lock = new BlobLock(l);
		return IOStatus::OK();
	}
	IOStatus UnlockFile(FileLock *lock, const IOOptions &, IODebugContext *) override
	{
		BlobLock *b = static_cast<BlobLock *>(lock);
		int rc = blobfs_unlock_file(b->l_);
		delete b;
		return rc ? Err(rc, "unlock") : IOStatus::OK();
	}
	IOStatus GetTestDirectory(const IOOptions &, std::string *path, IODebugContext *) override
	{
		*path = "/test";
		return CreateDirIfMissing(*path, IOOptions(), nullptr);
	}
	IOStatus GetAbsolutePath(const std::string &db_path, const IOOptions &, std::string *out, IODebugContext *) override
	{
		*out = Norm(db_path);
		return IOStatus::OK();
	}
	IOStatus GetFreeSpace(const std::string &, const IOOptions &, uint64_t *free, IODebugContext *) override
	{
		IOStatus s = Ready();
		if (!s.ok())
			return s;
		struct blobfs_statfs sf;
		blobfs_statfs(fs_, &sf);
		*free = sf.free_clusters * sf.cluster_size;
		return IOStatus::OK();
	}

private:
	Status Mount()
	{
		std::lock_guard<std::mutex> g(mount_lock_);
		if (fs_)
			return Status::OK();
		if (o_.device.empty())
			return Status::InvalidArgument("BlobFS: no device given (device=... or blobfs://<device>)");
		if (o_.format != "never" && o_.format != "if_empty" && o_.format != "always")
			return Status::InvalidArgument("BlobFS: format must be never, if_empty or always, not '" +
						       o_.format + "'");
		blobfs_opts mo = {};
		mo.cache_size = o_.cache_size;
		mo.no_retain = !o_.retain_cache;
		mo.no_prefetch = !o_.prefetch;
		mo.prefetch_threshold = (uint32_t)o_.prefetch_threshold;
		mo.prefetch_size = (uint32_t)o_.prefetch_size;
		mo.direct_read = o_.direct_read;
		mo.direct_write = o_.direct_write;
		mo.format_if_empty = o_.format == "if_empty";
		if (o_.kill_safe) {
			mo.shadow_dir = o_.shadow_dir.c_str();
			mo.shadow_size = o_.shadow_size;
		}
		int rc = unvme_ctrlr_open(o_.device.c_str(), nullptr, &ctrlr_);
		if (rc)
			return Status::IOError("BlobFS: cannot open " + o_.device + ": " + unvme_errmsg());
		uint32_t nsid = o_.nsid ? o_.nsid : unvme_ctrlr_first_nsid(ctrlr_);
		unvme_ns *ns = nsid ? unvme_ctrlr_ns(ctrlr_, nsid) : nullptr;
		if (!ns)
			rc = -ENODEV;
		if (!rc && o_.format == "always") {
			blobfs_mkfs_opts m = {};
			m.force = true;
			m.cluster_size = (uint32_t)o_.cluster_size;
			rc = blobfs_mkfs(ns, &m);
		}
		if (!rc)
			rc = blobfs_mount(ns, &mo, &fs_);
		if (rc) {
			std::string msg = rc == -ENODEV ? "no namespace " + std::to_string(nsid) : blobfs_errmsg();
			unvme_ctrlr_close(ctrlr_);
			ctrlr_ = nullptr;
			return Status::IOError("BlobFS on " + o_.device + ": " + msg);
		}
		return Status::OK();
	}

	IOStatus Stat(const std::string &path, struct blobfs_stat *st)
	{
		IOStatus s = Ready();
		if (!s.ok())
			return s;
		int rc = blobfs_stat(fs_, Norm(path).c_str(), st);
		return rc ? (rc == -ENOENT ? IOStatus::NotFound(path) : Err(rc, path)) : IOStatus::OK();
	}

	IOStatus Ready()
	{
		if (fs_)
			return IOStatus::OK();
		Status s = Mount(); // when RocksDB did not call PrepareOptions
		return s.ok() ? IOStatus::OK() : IOStatus::IOError(s.ToString());
	}

	// Runs op once the file system is mounted (it may not be when RocksDB skipped
	// PrepareOptions).
	template <typename Op> IOStatus Call(Op op, const std::string &what)
	{
		IOStatus s = Ready();
		if (!s.ok())
			return s;
		int rc = op();
		return rc ? Err(rc, what) : IOStatus::OK();
	}

	IOStatus Open(const std::string &fname, int flags, blobfs_file **f)
	{
		IOStatus s = Ready();
		if (!s.ok())
			return s;
		int rc = blobfs_open(fs_, Norm(fname).c_str(), flags, 0644, f);
		if (rc)
			return rc == -ENOENT ? IOStatus::PathNotFound(fname + ": " + blobfs_errmsg()) : Err(rc, "open " + fname);
		return IOStatus::OK();
	}

	template <typename F, typename Base>
	IOStatus Readable(const std::string &fname, const FileOptions &fo, std::unique_ptr<Base> *result)
	{
		blobfs_file *f;
		bool direct = fo.use_direct_reads || o_.direct_read;
		IOStatus s = Open(fname, O_RDONLY | (direct ? O_DIRECT : 0), &f);
		if (s.ok())
			result->reset(new F(f, fname, direct));
		return s;
	}

	IOStatus Writable(const std::string &fname, const FileOptions &fo, int flags,
			  std::unique_ptr<FSWritableFile> *result)
	{
		bool direct = fo.use_direct_writes || o_.direct_write;
		blobfs_file *f;
		IOStatus s = Open(fname, flags | (direct ? O_DIRECT : 0), &f);
		if (!s.ok())
			return s;
		struct blobfs_stat st;
		blobfs_fstat(f, &st);
		if (o_.kill_safe && IsWal(fname)) {
			// Its appends are acknowledged to RocksDB's writers: kept outside the process.
			blobfs_file_opts fopt = {};
			fopt.shadow = 1;
			blobfs_file_set_opts(f, &fopt);
			// Its name durable now, or a kill could lose the file the copies belong to.
			int rc = blobfs_commit(fs_);
			if (rc) {
				blobfs_close(f);
				return Err(rc, "commit the creation of " + fname);
			}
		}
		result->reset(new BlobWritableFile(f, fname, direct, fo, st.size));
		return IOStatus::OK();
	}

	// RocksDB's write-ahead logs: NNNNNN.log (the info log is LOG, LOG.old.*).
	static bool IsWal(const std::string &fname)
	{
		return fname.size() > 4 && fname.compare(fname.size() - 4, 4, ".log") == 0;
	}

	BlobFsOptions o_;
	blobfs *fs_ = nullptr;
	unvme_ctrlr *ctrlr_ = nullptr;
	std::mutex mount_lock_;
};

// "blobfs" alone (options carry the device) or "blobfs://<device>".
static int RegisterFactory()
{
	ObjectLibrary::Default()->AddFactory<FileSystem>(
		ObjectLibrary::PatternEntry("blobfs", true).AddSeparator("://", false),
		[](const std::string &uri, std::unique_ptr<FileSystem> *guard, std::string *) {
			std::string dev;
			size_t p = uri.find("://");
			if (p != std::string::npos)
				dev = uri.substr(p + 3);
			guard->reset(new BlobFileSystem(dev));
			return guard->get();
		});
	return 1;
}

static int registered = RegisterFactory();

} // namespace blobfs_rocksdb
