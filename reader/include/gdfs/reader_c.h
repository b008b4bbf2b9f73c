/* libgdfs from C (and from any language with a C FFI): the Reader of gdfs/reader.h behind an opaque
 * handle. Pure C99.
 *
 *   uint32_t ino;
 *   size_t got;
 *   gdfs_reader* r = gdfs_open("tree.gdfs", NULL);
 *   if (!r) { fprintf(stderr, "%s\n", gdfs_last_error()); ... }
 *   if (gdfs_lookup(r, "/data/x.bin", &ino) == 0 && gdfs_read(r, ino, 0, sizeof buf, buf, &got) == 0) ...
 *   gdfs_close(r);
 *
 * Every call but gdfs_open returns 0 or an errno value (ENOENT, ENOTDIR, EISDIR, EINVAL, EIO, ENOTSUP,
 * ERANGE, ENOMEM), and none lets a C++ exception out. A failing call also records a one-line message for the
 * calling thread, naming the image and, where they apply, the path, inode and page ("tree.gdfs: inode 12
 * (page 3): stored-bytes checksum mismatch (image damaged) [path /data/x.bin]"). gdfs_last_error() returns
 * it; successful calls leave it as it was (like errno).
 *
 * One reader serves any number of threads at once; gdfs_close must not race with other calls on it.
 */
#ifndef GDFS_READER_C_H
#define GDFS_READER_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gdfs_reader gdfs_reader;

enum {
  GDFS_DECODER_AUTO = 0, /* the GPU when one is usable, else the CPU */
  GDFS_DECODER_CPU = 1,  /* never touches CUDA */
  GDFS_DECODER_GPU = 2   /* the GPU; gdfs_open fails with EINVAL without a usable one */
};

/* Reader options. Fill with gdfs_options_init (the defaults), then change what you need. */
typedef struct gdfs_options {
  uint64_t cache_size; /* bytes of decoded pages kept (LRU); 0: an eighth of RAM or of a lower cgroup
                          limit, 64 MiB..4 GiB */
  unsigned threads;    /* CPU decode threads; 0: one per core */
  int decoder;         /* GDFS_DECODER_* */
  uint64_t readahead;  /* bytes decoded ahead of a sequential reader; 0: off (default 4 MiB) */
} gdfs_options;

/* What `stat` says about one inode. */
typedef struct gdfs_stat_t {
  uint32_t ino;
  uint32_t mode; /* type and permission bits, as st_mode */
  uint32_t nlink;
  uint32_t uid;
  uint32_t gid;
  uint64_t size;
  int64_t mtime_ns; /* nanoseconds since the epoch */
  uint64_t rdev;    /* device number of character and block devices */
  uint64_t blocks;  /* 512-byte units the data occupies, as st_blocks (holes take none) */
  uint32_t blksize; /* the image's page size, as st_blksize */
} gdfs_stat_t;

/* One range of a batch read. The caller sets ino, offset, length and dst (host memory for
 * gdfs_read_batch, device memory for gdfs_read_batch_device); the call sets bytes (short only at end of
 * file) and error (0 or an errno value). */
typedef struct gdfs_request {
  uint32_t ino;
  uint64_t offset;
  size_t length;
  void* dst;
  size_t bytes;
  int error;
} gdfs_request;

/* The library's version, as every gdfs tool prints it: "0.1.0 (gdfs image format 2.3)". */
const char* gdfs_version(void);

/* The message of the calling thread's last failed call ("" before any). Valid until this thread's next
 * failing call. */
const char* gdfs_last_error(void);
/* The errno value of the calling thread's last failed call (0 before any). */
int gdfs_last_errno(void);

void gdfs_options_init(gdfs_options* options);

/* Opens and validates an image (a path, or a URL where the build reads remote images). `options` NULL:
 * the defaults. Returns the handle, or NULL with errno (and gdfs_last_errno()) set to ENOENT or EACCES
 * (the file cannot be opened; a server's 404 or 410, 401 or 403 too), EIO (damaged or not an image, or
 * a server that cannot be reached), EINVAL (bad options, or decoder GPU without a usable GPU) or ENOMEM. */
gdfs_reader* gdfs_open(const char* path_or_url, const gdfs_options* options);
/* Frees the reader. NULL is fine. */
void gdfs_close(gdfs_reader* reader);

/* ---- metadata ---------------------------------------------------------------------------------- */

/* "/a/b" (or "a/b"; "/" is the root) to an inode, as the kernel resolves a path: symlinks on the way are
 * followed (an absolute target from the image's root), a symlink at the end is not (lstat(2)).
 * ENOENT (also for ""), ENOTDIR, ELOOP. */
int gdfs_lookup(gdfs_reader* reader, const char* path, uint32_t* ino);
/* The same, and a symlink at the end is followed too, as open(2) and stat(2) do. */
int gdfs_lookup_follow(gdfs_reader* reader, const char* path, uint32_t* ino);
/* ENOENT: no such inode. */
int gdfs_stat(gdfs_reader* reader, uint32_t ino, gdfs_stat_t* st);

/* Called once per entry of a directory, in name order. `name` is NUL-terminated (names hold any byte but
 * '/' and NUL), `name_len` its length, `mode` the entry's st_mode. Return 0 to go on; anything else
 * stops the listing, and gdfs_list returns that value. */
typedef int (*gdfs_list_fn)(void* context, const char* name, size_t name_len, uint32_t ino, uint32_t mode);
/* Lists directory `dir` (ENOTDIR when it is not one, ENOENT when there is no such inode). */
int gdfs_list(gdfs_reader* reader, uint32_t dir, gdfs_list_fn fn, void* context);

/* The target of symlink `ino` into buf, NUL-terminated; *len (when not NULL) is set to the target's
 * length either way. ERANGE when buf holds fewer than *len + 1 bytes (nothing written then); EINVAL when
 * `ino` is not a symlink. */
int gdfs_readlink(gdfs_reader* reader, uint32_t ino, char* buf, size_t size, size_t* len);

/* The names of the xattrs of `ino` into buf, each followed by a NUL as listxattr(2) gives them, then one
 * NUL more; *len (when not NULL) is set to the names' bytes (without that last NUL) either way. ERANGE
 * when buf holds fewer than *len + 1 bytes (nothing written then). */
int gdfs_listxattr(gdfs_reader* reader, uint32_t ino, char* buf, size_t size, size_t* len);
/* The value of xattr `name` of `ino` into buf, then a NUL (a value may hold NULs: *len, when not NULL,
 * is set to its length either way). ERANGE as gdfs_listxattr; ENODATA when `ino` has no such xattr. */
int gdfs_getxattr(gdfs_reader* reader, uint32_t ino, const char* name, char* buf, size_t size, size_t* len);

/* lseek's SEEK_DATA (`data` nonzero) or SEEK_HOLE on regular file `ino`: *result is the first offset at
 * or after `offset` in data (or in a hole; the end of the file counts as one). ENXIO when `offset` is at
 * or past the end or no data follows; EINVAL for anything but a regular file. */
int gdfs_seek(gdfs_reader* reader, uint32_t ino, uint64_t offset, int data, uint64_t* result);

/* ---- data -------------------------------------------------------------------------------------- */

/* Up to `length` bytes of regular file `ino` at `offset` into host memory `dst`; *got (when not NULL)
 * is the byte count, short only at end of file. EISDIR (not a regular file), EIO (a page failed its
 * checks: the message names the page). */
int gdfs_read(gdfs_reader* reader, uint32_t ino, uint64_t offset, size_t length, void* dst, size_t* got);

/* Many ranges, of any files, in one fetch batch and one decode batch. Every request gets its own
 * `bytes` and `error`; one bad page fails only the requests that need it. Returns 0 when every request
 * succeeded, else the error of the first that failed (whose message gdfs_last_error() then holds). */
int gdfs_read_batch(gdfs_reader* reader, gdfs_request* requests, size_t n);
/* gdfs_read_batch with an access hint: GDFS_ACCESS_NORMAL, or GDFS_ACCESS_ONCE for bytes read once (a
 * data loader's epoch): a page that lies whole inside one request and is not cached is decoded straight
 * into its dst and not cached. EINVAL for another value. */
#define GDFS_ACCESS_NORMAL 0
#define GDFS_ACCESS_ONCE 1
int gdfs_read_batch_access(gdfs_reader* reader, gdfs_request* requests, size_t n, int access);

/* The same into device memory (`dst` a CUDA device pointer; `stream` a cudaStream_t, NULL: the default
 * stream). Returns once the bytes are in place. ENOTSUP where this process has no usable CUDA device
 * (gdfs_device_reads says why). */
int gdfs_read_device(gdfs_reader* reader, uint32_t ino, uint64_t offset, size_t length, void* dst,
                     void* stream, size_t* got);
int gdfs_read_batch_device(gdfs_reader* reader, gdfs_request* requests, size_t n, void* stream);
/* 0 when device reads work here; ENOTSUP, with the reason in gdfs_last_error(), when not. */
int gdfs_device_reads(gdfs_reader* reader);

/* ---- state ------------------------------------------------------------------------------------- */

/* The reader's counters as one JSON object (README, "Counters"), NUL-terminated into buf; *len (when not
 * NULL) is set to its length either way. ERANGE when buf holds fewer than *len + 1 bytes. */
int gdfs_stats_json(gdfs_reader* reader, char* buf, size_t size, size_t* len);

#ifdef __cplusplus
}
#endif

#endif /* GDFS_READER_C_H */
