/* gdfs/reader_c.h from a C program, compiled as C99 with -pedantic-errors (ctest: ReaderC.FromC).
 *
 *   reader_c_from_c IMAGE SOURCE_DIR
 *
 * IMAGE was made from SOURCE_DIR by mkfs.gdfs. Lists the root and checks every name exists in the
 * source, reads every regular file of the root (whole and in a batch) and compares it with the source,
 * checks ENOENT, EISDIR and the error message, and reads the counters. Exit status 0: all passed. */
#define _POSIX_C_SOURCE 200809L /* lstat */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gdfs/reader_c.h"

static int failures = 0;

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "%s:%d: failed: %s (%s)\n", __FILE__, __LINE__, #cond, gdfs_last_error()); \
      ++failures;                                                                                \
    }                                                                                            \
  } while (0)

struct names {
  char items[256][256];
  uint32_t inos[256];
  uint32_t modes[256];
  size_t n;
};

static int collect(void* context, const char* name, size_t len, uint32_t ino, uint32_t mode) {
  struct names* names = (struct names*)context;
  if (names->n == 256 || len >= 256) return E2BIG;
  memcpy(names->items[names->n], name, len + 1);
  names->inos[names->n] = ino;
  names->modes[names->n] = mode;
  names->n++;
  return 0;
}

/* The whole of a source file, malloc'ed; *size its length. */
static unsigned char* slurp(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  unsigned char* data;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = (unsigned char*)malloc((size_t)n + 1);
  *size = fread(data, 1, (size_t)n, f);
  fclose(f);
  return data;
}

int main(int argc, char** argv) {
  static struct names names;
  char path[4096];
  gdfs_reader* r;
  gdfs_options options;
  uint32_t root = 0, ino = 0;
  size_t i, files = 0;

  if (argc != 3) {
    fprintf(stderr, "usage: %s IMAGE SOURCE_DIR\n", argv[0]);
    return 2;
  }
  gdfs_options_init(&options);
  options.threads = 2;
  options.decoder = GDFS_DECODER_CPU;
  r = gdfs_open(argv[1], &options);
  if (!r) {
    fprintf(stderr, "gdfs_open: %s (errno %d)\n", gdfs_last_error(), errno);
    return 1;
  }
  CHECK(gdfs_lookup(r, "/", &root) == 0);
  CHECK(gdfs_list(r, root, collect, &names) == 0);
  CHECK(names.n > 3);
  for (i = 0; i < names.n; ++i) {
    struct stat st;
    gdfs_stat_t g;
    snprintf(path, sizeof path, "%s/%s", argv[2], names.items[i]);
    CHECK(lstat(path, &st) == 0);
    CHECK(gdfs_stat(r, names.inos[i], &g) == 0);
    CHECK(g.mode == (uint32_t)st.st_mode && g.mode == names.modes[i]);
    if (S_ISREG(st.st_mode)) {
      size_t want_size = 0, got = 0;
      unsigned char* want = slurp(path, &want_size);
      unsigned char* buf = (unsigned char*)malloc(want_size + 1);
      gdfs_request req;
      CHECK(want != NULL && g.size == want_size);
      CHECK(gdfs_read(r, names.inos[i], 0, want_size + 1, buf, &got) == 0);
      CHECK(got == want_size && memcmp(buf, want, want_size) == 0);
      memset(buf, 0, want_size + 1);
      req.ino = names.inos[i];
      req.offset = want_size / 3;
      req.length = want_size;
      req.dst = buf;
      CHECK(gdfs_read_batch(r, &req, 1) == 0);
      CHECK(req.error == 0 && req.bytes == want_size - want_size / 3);
      CHECK(memcmp(buf, want + want_size / 3, req.bytes) == 0);
      free(want);
      free(buf);
      ++files;
    }
  }
  CHECK(files > 3);

  CHECK(gdfs_lookup(r, "/no/such/file", &ino) == ENOENT);
  CHECK(strstr(gdfs_last_error(), "/no/such/file") != NULL);
  CHECK(gdfs_last_errno() == ENOENT);
  {
    char buf[16];
    size_t got = 0;
    CHECK(gdfs_read(r, root, 0, sizeof buf, buf, &got) == EISDIR);
  }
  {
    size_t len = 0;
    char* json;
    CHECK(gdfs_stats_json(r, NULL, 0, &len) == ERANGE);
    json = (char*)malloc(len + 1);
    CHECK(gdfs_stats_json(r, json, len + 1, &len) == 0);
    CHECK(json[0] == '{' && strstr(json, "\"decoder\":\"cpu\"") != NULL);
    free(json);
  }
  gdfs_close(r);
  if (failures) return 1;
  printf("C API: %lu entries listed, %lu files read and compared\n", (unsigned long)names.n,
         (unsigned long)files);
  return 0;
}
