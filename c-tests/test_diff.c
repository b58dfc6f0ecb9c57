/* floxlog_tape_diff through the C ABI: tapes written here that are the same
 * (also across compression), differ in one field, or end early; a byte
 * comparison; a damaged corpus segment; misuse.
 * argv[1]: the conformance corpus root; argv[2]: a scratch directory to
 * create (must not exist). */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"

static int64_t fixed_clock(void *ctx) {
  (void)ctx;
  return 1700000000000000000LL;
}

/* Writes `n` trades to `dir`; trade `odd` (if < n) gets another price. */
static void write_tape(const char *dir, uint8_t compression, int n, int odd) {
  floxlog_tape_error terr;
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  cfg.segment.compression = compression;
  cfg.clock_ns = fixed_clock;
  floxlog_tape_writer *w = NULL;
  CHECK_RC(floxlog_tape_writer_open(dir, &cfg, &w, &terr), FLOXLOG_OK);
  if (!w) return;
  for (int i = 0; i < n; i++) {
    floxlog_trade t;
    memset(&t, 0, sizeof t);
    t.exchange_ts_ns = 1000 + 10 * (int64_t)i;
    t.recv_ts_ns = t.exchange_ts_ns + 1;
    t.price_raw = 100 + i + (i == odd ? 1 : 0);
    t.qty_raw = 5;
    t.trade_id = (uint64_t)i;
    t.symbol_id = 3;
    t.side = (uint8_t)(i % 2);
    CHECK_RC(floxlog_tape_writer_append_trade(w, &t, &terr), FLOXLOG_OK);
  }
  CHECK_RC(floxlog_tape_writer_close(w, &terr), FLOXLOG_OK);
  floxlog_tape_writer_free(w);
}

static floxlog_diff_options opts(uint8_t time_order, uint8_t bytes) {
  floxlog_diff_options o;
  memset(&o, 0, sizeof o);
  o.time_order = time_order;
  o.bytes = bytes;
  return o;
}

static void tapes(const char *root) {
  char a[1024], a2[1024], b[1024], c[1024], z[1024];
  snprintf(a, sizeof a, "%s/a", root);
  snprintf(a2, sizeof a2, "%s/a2", root);
  snprintf(b, sizeof b, "%s/b", root);
  snprintf(c, sizeof c, "%s/c", root);
  snprintf(z, sizeof z, "%s/a-lz4", root);
  write_tape(a, FLOXLOG_COMPRESSION_NONE, 1000, 1000);
  write_tape(a2, FLOXLOG_COMPRESSION_NONE, 1000, 1000);
  write_tape(b, FLOXLOG_COMPRESSION_NONE, 1000, 600);
  write_tape(c, FLOXLOG_COMPRESSION_NONE, 999, 1000);
  write_tape(z, FLOXLOG_COMPRESSION_LZ4, 1000, 1000);

  floxlog_diff_result r;
  floxlog_tape_error terr;
  floxlog_diff_options o = opts(0, 0);

  /* The same events, also across compression and in time order. */
  CHECK_RC(floxlog_tape_diff(a, z, &o, &r, &terr), FLOXLOG_OK);
  CHECK(!r.different && !r.damaged && r.equal == 1000);
  CHECK(r.counts_a.events == 1000 && r.counts_a.by_type[1] == 1000);
  CHECK(r.counts_b.events == 1000 && r.counts_b.by_type[1] == 1000);
  o = opts(1, 0);
  CHECK_RC(floxlog_tape_diff(a, z, &o, &r, &terr), FLOXLOG_OK);
  CHECK(!r.different && r.equal == 1000);
  CHECK_RC(floxlog_tape_diff(a, a, NULL, &r, &terr), FLOXLOG_OK);

  /* One price differs at event 600: same place in both tapes. */
  o = opts(0, 0);
  CHECK_RC(floxlog_tape_diff(a, b, &o, &r, &terr), FLOXLOG_DIFFERENT);
  CHECK(r.different && !r.damaged && r.equal == 600);
  CHECK(r.a.present && r.b.present && r.a.frame_type == 1 && r.b.frame_type == 1);
  CHECK(r.a.offset == r.b.offset && r.a.offset >= 64 && r.a.segment == 0);
  CHECK(r.a.in_block == UINT32_MAX);
  CHECK(strstr(r.fields, "price_raw: 700 vs 701") != NULL);
  CHECK(strstr(r.fields, "qty_raw") == NULL);
  /* The same difference against the LZ4 copy: an offset inside a block. */
  CHECK_RC(floxlog_tape_diff(z, b, &o, &r, &terr), FLOXLOG_DIFFERENT);
  CHECK(r.equal == 600 && r.a.in_block != UINT32_MAX && r.b.in_block == UINT32_MAX);

  /* A tape that ends early: B has no event 999. */
  CHECK_RC(floxlog_tape_diff(a, c, &o, &r, &terr), FLOXLOG_DIFFERENT);
  CHECK(r.equal == 999 && r.a.present && !r.b.present);
  CHECK(r.counts_a.events == 1000 && r.counts_b.events == 999);

  /* Bytes: a tape written twice with the same clock is byte-identical;
   * B first differs inside event 600's frame. */
  o = opts(0, 1);
  CHECK_RC(floxlog_tape_diff(a, a2, &o, &r, &terr), FLOXLOG_OK);
  CHECK(!r.different && r.equal > 60000);
  CHECK_RC(floxlog_tape_diff(a, b, &o, &r, &terr), FLOXLOG_DIFFERENT);
  CHECK(r.a.present && r.b.present && r.a.offset == r.b.offset);
  CHECK(r.a.offset > 64 + 600 * 40 && r.a.offset < 64 + 601 * 60);
  CHECK_RC(floxlog_tape_diff(a, z, &o, &r, &terr), FLOXLOG_DIFFERENT);
  CHECK(r.fields[0] != '\0');

  /* Misuse and I/O. */
  CHECK_RC(floxlog_tape_diff(NULL, a, NULL, &r, &terr), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_tape_diff(a, NULL, NULL, &r, &terr), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_tape_diff(a, "/nonexistent/tape", NULL, &r, &terr), FLOXLOG_IO_ERROR);
  CHECK(terr.code == FLOXLOG_IO_ERROR && terr.message[0] != '\0');
  CHECK_RC(floxlog_tape_diff(a, a, NULL, NULL, NULL), FLOXLOG_OK);
}

/* A damaged segment: the reader's error code, file and offset, whichever
 * side it is on, and the result says damaged, not different. */
static void damaged(const char *corpus) {
  char bad[1024], good[1024];
  snprintf(bad, sizeof bad, "%s/corrupt/crc-mismatch/segment.floxlog", corpus);
  snprintf(good, sizeof good, "%s/cases/trades-10k/segments/segment-000.floxlog", corpus);
  floxlog_diff_result r;
  floxlog_tape_error terr;
  CHECK_RC(floxlog_tape_diff(bad, bad, NULL, &r, &terr), FLOXLOG_CRC_MISMATCH);
  CHECK(r.damaged && !r.different && r.equal == 57);
  CHECK(terr.has_file && terr.has_offset && terr.offset == 12852);
  CHECK(strstr(terr.file, "crc-mismatch") != NULL);
  CHECK_RC(floxlog_tape_diff(good, bad, NULL, &r, &terr), FLOXLOG_CRC_MISMATCH);
  CHECK(r.damaged && terr.offset == 12852 && strstr(terr.file, "crc-mismatch") != NULL);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_diff CORPUS_DIR SCRATCH_DIR\n");
    return 2;
  }
  if (mkdir(argv[2], 0777) != 0) {
    perror(argv[2]);
    return 2;
  }
  tapes(argv[2]);
  damaged(argv[1]);
  return check_report("diff");
}
