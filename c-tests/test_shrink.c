/*
 * A segment truncated by another program while the C tape reader reads it
 * (issue: the process died with SIGBUS). The reader must return the good
 * events before the cut, then an error naming the shrinking and the file,
 * in file order and in time order, uncompressed and LZ4; and the process
 * must live (ctest runs this plain and under ASan/UBSan).
 *
 * Usage: test_shrink DIR (a fresh directory for the tapes).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define N_TRADES 200000ull
#define BATCH 256

static void write_tape(const char *dir, uint8_t compression) {
  floxlog_tape_writer_config cfg;
  CHECK_RC(floxlog_tape_writer_config_default(&cfg), FLOXLOG_OK);
  cfg.segment.compression = compression;
  floxlog_tape_writer *w = NULL;
  floxlog_tape_error err;
  CHECK_RC(floxlog_tape_writer_open(dir, &cfg, &w, &err), FLOXLOG_OK);
  if (w == NULL) return;
  for (uint64_t i = 0; i < N_TRADES; ++i) {
    floxlog_trade t;
    memset(&t, 0, sizeof t);
    t.exchange_ts_ns = 1700000000000000000ll + (int64_t)i * 1000;
    t.recv_ts_ns = t.exchange_ts_ns + 7;
    t.price_raw = 100000000ll + (int64_t)(i % 977);
    t.qty_raw = 1 + (int64_t)i;
    t.trade_id = i;
    t.symbol_id = 1;
    t.side = (uint8_t)(i & 1);
    t.instrument = 1;
    t.exchange_id = 1;
    if (floxlog_tape_writer_append_trade(w, &t, &err) != FLOXLOG_OK) {
      CHECK(0);
      break;
    }
  }
  CHECK_RC(floxlog_tape_writer_close(w, &err), FLOXLOG_OK);
  floxlog_tape_writer_free(w);
}

/* The one segment file of tape `dir`, into `out`. */
static int segment_path(const char *dir, char *out, size_t cap) {
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  struct dirent *e;
  int found = 0;
  while ((e = readdir(d)) != NULL) {
    const char *dot = strrchr(e->d_name, '.');
    if (dot != NULL && strcmp(dot, ".floxlog") == 0 && strlen(dir) + strlen(e->d_name) + 2 <= cap) {
      memcpy(out, dir, strlen(dir));
      out[strlen(dir)] = '/';
      memcpy(out + strlen(dir) + 1, e->d_name, strlen(e->d_name) + 1);
      found = 1;
    }
  }
  closedir(d);
  return found;
}

static void read_truncating(const char *dir, const char *seg, uint8_t order) {
  struct stat st;
  CHECK(stat(seg, &st) == 0);
  floxlog_tape_reader_options opts;
  CHECK_RC(floxlog_tape_reader_options_default(&opts), FLOXLOG_OK);
  opts.order = order;
  floxlog_tape_reader *r = NULL;
  floxlog_tape_error err;
  CHECK_RC(floxlog_tape_reader_open(dir, &opts, &r, &err), FLOXLOG_OK);
  if (r == NULL) return;
  floxlog_trade tr[BATCH];
  size_t got = 0;
  uint64_t total = 0;
  int genuine = 1;
  floxlog_result rc;
  while ((rc = floxlog_tape_reader_next_trades(r, tr, BATCH, &got, &err)) == FLOXLOG_OK) {
    for (size_t i = 0; i < got; ++i) {
      /* Trade k was written with trade_id k, in time order. */
      if (tr[i].trade_id != total + i || tr[i].qty_raw != (int64_t)(total + i) + 1) genuine = 0;
    }
    total += got;
    if (total >= 1000 && total < 1000 + BATCH) {
      /* Another program cuts the file to a third. */
      CHECK(truncate(seg, st.st_size / 3) == 0);
    }
  }
  CHECK(genuine);
  CHECK(total >= 1000 && total < N_TRADES);
  CHECK(rc != FLOXLOG_END);
  CHECK(strstr(err.message, "shrank") != NULL);
  CHECK(strstr(err.file, ".floxlog") != NULL);
  if (strstr(err.message, "shrank") == NULL) fprintf(stderr, "message: %s\n", err.message);
  floxlog_tape_reader_free(r);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_shrink DIR\n");
    return 2;
  }
  mkdir(argv[1], 0755);
  static const uint8_t zs[2] = {FLOXLOG_COMPRESSION_NONE, FLOXLOG_COMPRESSION_LZ4};
  static const uint8_t orders[2] = {FLOXLOG_ORDER_FILE, FLOXLOG_ORDER_TIME};
  for (int z = 0; z < 2; ++z) {
    for (int o = 0; o < 2; ++o) {
      char dir[4096];
      snprintf(dir, sizeof dir, "%s/tape-%d-%d", argv[1], z, o);
      write_tape(dir, zs[z]);
      char seg[4200];
      if (!segment_path(dir, seg, sizeof seg)) {
        CHECK(0);
        continue;
      }
      read_truncating(dir, seg, orders[o]);
    }
  }
  return check_report("shrink");
}
