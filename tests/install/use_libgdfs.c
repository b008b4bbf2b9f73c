/* A C99 program that knows gdfs only through its installed tree, found by CMake's
 * find_package(gdfs CONFIG): it opens IMAGE, reads PATH whole through gdfs_read and compares it with
 * SOURCE_FILE, and checks that a missing path is ENOENT with a message.
 * usage: use_libgdfs_c IMAGE PATH SOURCE_FILE      exit 0 and one "ok" line, or a message and 1 */
#include <errno.h>
#include <gdfs/reader_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* slurp(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  char* bytes = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    bytes = malloc((size_t)n + 1);
    if (bytes && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
      free(bytes);
      bytes = NULL;
    }
    *size = (size_t)n;
  }
  fclose(f);
  return bytes;
}

int main(int argc, char** argv) {
  gdfs_options opt;
  gdfs_reader* r;
  gdfs_stat_t st;
  uint32_t ino, missing;
  size_t want_size = 0, got = 0;
  char *want, *have;
  int ok;
  if (argc != 4) {
    fprintf(stderr, "usage: use_libgdfs_c IMAGE PATH SOURCE_FILE\n");
    return 2;
  }
  gdfs_options_init(&opt);
  opt.decoder = GDFS_DECODER_CPU;
  r = gdfs_open(argv[1], &opt);
  if (!r) {
    fprintf(stderr, "use_libgdfs_c: %s\n", gdfs_last_error());
    return 1;
  }
  want = slurp(argv[3], &want_size);
  have = malloc(want_size + 1);
  ok = want && have && gdfs_lookup_follow(r, argv[2], &ino) == 0 && gdfs_stat(r, ino, &st) == 0 &&
       st.size == want_size && gdfs_read(r, ino, 0, want_size + 1, have, &got) == 0 && got == want_size &&
       memcmp(have, want, want_size) == 0;
  if (!ok) fprintf(stderr, "use_libgdfs_c: %s differs from %s: %s\n", argv[2], argv[3], gdfs_last_error());
  if (gdfs_lookup(r, "/no/such", &missing) != ENOENT || strstr(gdfs_last_error(), "/no/such") == NULL) {
    fprintf(stderr, "use_libgdfs_c: a missing path is not ENOENT with its name: %s\n", gdfs_last_error());
    ok = 0;
  }
  free(want);
  free(have);
  gdfs_close(r);
  if (!ok) return 1;
  printf("ok: %s, %zu bytes, libgdfs %s\n", argv[2], got, gdfs_version());
  return 0;
}
