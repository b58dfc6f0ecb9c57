/* Replays fuzz/regressions/ through the C ABI: hand-made adversarial
 * segments and every input a fuzzer ever failed on. Each file name states
 * the outcome a strict reader gives (see fuzz/regressions/make.py):
 *   <events>-<kind>@<offset>--<what>.floxlog   events, then an error
 *   <events>-index-<kind>--<what>.floxlog      clean read, the index fails
 * ctest runs this plainly and under ASan/UBSan, so the reader's handling of
 * these inputs is also checked for memory errors at the C boundary. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floxlog.h"

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
  if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* Returns 0 when the file gives the outcome its name states. */
static int check(const char *dir, const char *name) {
  char path[4096], kind[64] = {0};
  unsigned long long want_events = 0, want_off = 0;
  int is_index = 0;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (sscanf(name, "%llu-index-%63[a-z_]--", &want_events, kind) == 2) {
    is_index = 1;
  } else if (sscanf(name, "%llu-%63[a-z_]@%llu--", &want_events, kind, &want_off) != 3) {
    fprintf(stderr, "FAIL %s: the name states no outcome\n", name);
    return 1;
  }
  size_t len = 0;
  unsigned char *data = slurp(path, &len);
  if (!data) {
    fprintf(stderr, "FAIL %s: cannot read\n", name);
    return 1;
  }
  floxlog_error err;
  memset(&err, 0, sizeof err);
  size_t scratch_len = 0;
  uint8_t *scratch = NULL;
  floxlog_reader *r = NULL;
  unsigned long long events = 0;
  uint32_t code = FLOXLOG_OK;
  if (floxlog_segment_scratch_len(data, len, &scratch_len, &err) != FLOXLOG_OK) {
    code = err.code;
  } else {
    scratch = malloc(scratch_len ? scratch_len : 1);
    code = floxlog_reader_new(data, len, NULL, scratch, scratch_len, &r, &err);
  }
  floxlog_level levels[256];
  floxlog_event ev;
  while (code == FLOXLOG_OK) {
    code = floxlog_reader_next(r, &ev, levels, 256, &err);
    if (code == FLOXLOG_OK) events++;
  }
  int bad = 0;
  if (is_index) {
    floxlog_index_header ih;
    size_t n = 0;
    uint32_t ic = code == FLOXLOG_END ? floxlog_reader_index(r, &ih, &n, &err) : code;
    if (code != FLOXLOG_END || events != want_events || strcmp(floxlog_result_name(ic), kind) != 0) {
      fprintf(stderr, "FAIL %s: read %llu events ending in %s, index %s\n", name, events,
              floxlog_result_name(code), floxlog_result_name(ic));
      bad = 1;
    }
  } else if (events != want_events || strcmp(floxlog_result_name(code), kind) != 0 ||
             err.offset != want_off) {
    fprintf(stderr, "FAIL %s: %llu events then %s at %llu\n", name, events,
            floxlog_result_name(code), (unsigned long long)err.offset);
    bad = 1;
  }
  floxlog_reader_free(r);
  free(scratch);
  free(data);
  return bad;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s REGRESSIONS_DIR\n", argv[0]);
    return 2;
  }
  DIR *d = opendir(argv[1]);
  if (!d) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 2;
  }
  int passed = 0, failed = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n < 9 || strcmp(e->d_name + n - 8, ".floxlog") != 0) continue;
    if (check(argv[1], e->d_name)) failed++;
    else passed++;
  }
  closedir(d);
  printf("regressions: %d passed, %d failed\n", passed, failed);
  return failed || passed == 0;
}
