/*
 * Independent cross-check of the LZ4 codec against the system liblz4:
 *  1. every block our writer produces decodes with LZ4_decompress_safe to
 *     exactly the frames we appended (each block stably sorted by
 *     exchange_ts_ns, as the reference writer does);
 *  2. blocks compressed by liblz4 (LZ4_compress_default, what the
 *     reference uses) read back through our reader to the same events;
 *  3. our compressed blocks are byte-identical to what the system liblz4's
 *     LZ4_compress_default makes of the same bytes: the writer's blocks
 *     above, and one-event blocks of pool-state payloads of many sizes
 *     (past 64 KiB, where liblz4 changes its table mode) and entropies.
 */
#include <lz4.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#define N_EVENTS 1000
#define INTERVAL 100
#define N_BLOCKS (N_EVENTS / INTERVAL)

static floxlog_level g_levels[8] = {{100, 1}, {99, 2}, {98, 3}, {97, 4},
                                    {101, 5}, {102, 6}, {103, 7}, {104, 8}};
static uint8_t g_payload[40];

/* Event i: mostly trades, some books and pool states; timestamps jump
 * back and forth inside each block so the writer has to sort. */
static floxlog_event make_event(int i) {
  floxlog_event e;
  memset(&e, 0, sizeof e);
  const int64_t block = i / INTERVAL;
  const int64_t ts = 1700000000000000000 + block * 1000000 + (int64_t)((i * 7919) % 61) * 100;
  if (i % 10 == 3) {
    e.kind = (i % 20 == 3) ? FLOXLOG_EVENT_BOOK_SNAPSHOT : FLOXLOG_EVENT_BOOK_DELTA;
    e.data.book.exchange_ts_ns = ts;
    e.data.book.recv_ts_ns = ts + 5;
    e.data.book.seq = i;
    e.data.book.symbol_id = 2;
    e.data.book.header_type = e.kind == FLOXLOG_EVENT_BOOK_SNAPSHOT ? 0 : 1;
    e.data.book.bids = g_levels;
    e.data.book.bid_count = (size_t)(i % 4);
    e.data.book.asks = g_levels + 4;
    e.data.book.ask_count = 4;
  } else if (i % 50 == 7) {
    e.kind = FLOXLOG_EVENT_POOL_STATE;
    e.data.pool_state.exchange_ts_ns = ts;
    e.data.pool_state.sub_type = 3;
    e.data.pool_state.payload = g_payload;
    e.data.pool_state.payload_len = (size_t)(i % 40);
  } else {
    e.kind = FLOXLOG_EVENT_TRADE;
    e.data.trade.exchange_ts_ns = ts;
    e.data.trade.recv_ts_ns = ts + 7;
    e.data.trade.price_raw = 5000000000000 + (i % 17) * 100000;
    e.data.trade.qty_raw = 1000000 * (i % 9 + 1);
    e.data.trade.trade_id = (uint64_t)i;
    e.data.trade.symbol_id = 1;
    e.data.trade.side = (uint8_t)(i & 1);
  }
  return e;
}

static int64_t ts_of(const floxlog_event *e) {
  return e->kind == FLOXLOG_EVENT_TRADE ? e->data.trade.exchange_ts_ns
         : e->kind == FLOXLOG_EVENT_POOL_STATE ? e->data.pool_state.exchange_ts_ns
                                              : e->data.book.exchange_ts_ns;
}

/* Expected decompressed bytes of block b: its frames, stably sorted. */
static size_t expected_block(int b, uint8_t *out, size_t cap) {
  int order[INTERVAL];
  floxlog_event evs[INTERVAL];
  for (int k = 0; k < INTERVAL; k++) {
    evs[k] = make_event(b * INTERVAL + k);
    order[k] = k;
  }
  for (int k = 1; k < INTERVAL; k++) { /* insertion sort: stable */
    int v = order[k], j = k - 1;
    while (j >= 0 && ts_of(&evs[order[j]]) > ts_of(&evs[v])) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = v;
  }
  size_t at = 0;
  for (int k = 0; k < INTERVAL; k++) {
    size_t n = 0;
    if (floxlog_frame_encode(&evs[order[k]], FLOXLOG_PROFILE_REFERENCE, out + at, cap - at, &n,
                             NULL) != FLOXLOG_OK)
      return 0;
    at += n;
  }
  return at;
}

/* Payload byte k of a payload of entropy class c (0: zeros, 1: two
 * symbols, 2: 17 symbols, 3: trade-like records, 4: random). */
static uint8_t entropy_byte(int c, size_t k, uint64_t *rng) {
  *rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
  const uint8_t r = (uint8_t)(*rng >> 56);
  switch (c) {
  case 0: return 0;
  case 1: return (uint8_t)(r & 1);
  case 2: return (uint8_t)(r % 17);
  case 3: return (uint8_t)((k % 48) < 40 ? (k % 48) * 3 : r % 4);
  default: return r;
  }
}

/* One LZ4 segment whose blocks each hold one pool state of `len` payload
 * bytes; every block must equal LZ4_compress_default's output. */
static void one_event_blocks(size_t len, int cls, uint64_t seed) {
  static uint8_t payload[1 << 18], out[1 << 20], block[1 << 20], file[1 << 20];
  static uint8_t plain[1 << 19], ref[1 << 20];
  uint64_t rng = seed;
  for (size_t k = 0; k < len; k++) payload[k] = entropy_byte(cls, k, &rng);
  floxlog_index_entry index[2];
  floxlog_writer_config cfg;
  floxlog_writer_config_default(&cfg);
  cfg.compression = FLOXLOG_COMPRESSION_LZ4;
  cfg.index_interval = 1;
  cfg.created_ns = 1;
  floxlog_writer_buffers bufs = {out, sizeof out, block, sizeof block, index, 2};
  floxlog_writer *w = NULL;
  floxlog_error e;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, &e), FLOXLOG_OK);
  if (!w) return;
  floxlog_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = FLOXLOG_EVENT_POOL_STATE;
  ev.data.pool_state.exchange_ts_ns = 1000;
  ev.data.pool_state.sub_type = 2;
  ev.data.pool_state.payload = payload;
  ev.data.pool_state.payload_len = len;
  CHECK_RC(floxlog_writer_append(w, &ev, &e), FLOXLOG_OK);
  uint8_t header[64];
  CHECK_RC(floxlog_writer_finish(w, header, sizeof header, &e), FLOXLOG_OK);
  size_t size = 0;
  CHECK_RC(floxlog_writer_drain(w, file, sizeof file, &size), FLOXLOG_OK);
  floxlog_writer_free(w);
  memcpy(file, header, 64);
  floxlog_block_header bh;
  CHECK_RC(floxlog_block_header_parse(file + 64, size - 64, &bh, &e), FLOXLOG_OK);
  CHECK(bh.original_size <= sizeof plain && 64 + FLOXLOG_BLOCK_HEADER_LEN + bh.compressed_size <= size);
  if (bh.original_size > sizeof plain) return;
  const char *src = (const char *)(file + 64 + FLOXLOG_BLOCK_HEADER_LEN);
  int n = LZ4_decompress_safe(src, (char *)plain, (int)bh.compressed_size, (int)bh.original_size);
  CHECK(n == (int)bh.original_size);
  int c = LZ4_compress_default((const char *)plain, (char *)ref, n, (int)sizeof ref);
  const int same = c > 0 && (uint32_t)c == bh.compressed_size && memcmp(ref, src, (size_t)c) == 0;
  if (!same)
    fprintf(stderr, "block of %d bytes (payload %zu, class %d): liblz4 %d bytes, ours %u\n", n,
            len, cls, c, bh.compressed_size);
  CHECK(same);
}

int main(void) {
  for (size_t i = 0; i < sizeof g_payload; i++) g_payload[i] = (uint8_t)(i * 37 + 1);

  /* Write the segment. */
  static uint8_t out[1 << 20], block[1 << 18], file[1 << 20];
  floxlog_index_entry index[N_BLOCKS];
  floxlog_writer_config cfg;
  floxlog_writer_config_default(&cfg);
  cfg.compression = FLOXLOG_COMPRESSION_LZ4;
  cfg.index_interval = INTERVAL;
  cfg.created_ns = 1;
  floxlog_writer_buffers bufs = {out, sizeof out, block, sizeof block, index, N_BLOCKS};
  floxlog_writer *w = NULL;
  floxlog_error e;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, &e), FLOXLOG_OK);
  for (int i = 0; i < N_EVENTS; i++) {
    floxlog_event ev = make_event(i);
    CHECK_RC(floxlog_writer_append(w, &ev, &e), FLOXLOG_OK);
  }
  uint8_t header[64];
  CHECK_RC(floxlog_writer_finish(w, header, sizeof header, &e), FLOXLOG_OK);
  size_t size = 0;
  CHECK_RC(floxlog_writer_drain(w, file, sizeof file, &size), FLOXLOG_OK);
  floxlog_writer_free(w);
  memcpy(file, header, 64);
  floxlog_segment_header sh;
  CHECK_RC(floxlog_segment_header_parse(file, size, &sh, &e), FLOXLOG_OK);
  CHECK(sh.event_count == N_EVENTS && (sh.flags & FLOXLOG_FLAG_COMPRESSED));
  /* Blocks overlap in time only within themselves: Sorted is set. */
  CHECK((sh.flags & FLOXLOG_FLAG_SORTED) != 0);

  /* 1. Our blocks through liblz4. */
  static uint8_t want[1 << 16], got[1 << 16], short_out[1 << 16];
  static uint8_t rebuilt[1 << 20];
  size_t rebuilt_len = 64;
  size_t pos = 64;
  int blocks = 0;
  while (pos < sh.index_offset) {
    floxlog_block_header bh;
    CHECK_RC(floxlog_block_header_parse(file + pos, sh.index_offset - pos, &bh, &e), FLOXLOG_OK);
    if (bh.magic != FLOXLOG_MAGIC_BLOCK || bh.original_size > sizeof got) break;
    const char *src = (const char *)(file + pos + FLOXLOG_BLOCK_HEADER_LEN);
    int n = LZ4_decompress_safe(src, (char *)got, (int)bh.compressed_size, (int)bh.original_size);
    CHECK(n == (int)bh.original_size);
    /* One byte less room must fail in liblz4 too: the size is exact.
     * (Into another buffer: a failed decode leaves partial output.) */
    CHECK(LZ4_decompress_safe(src, (char *)short_out, (int)bh.compressed_size,
                              (int)bh.original_size - 1) < 0);
    size_t wl = expected_block(blocks, want, sizeof want);
    CHECK(wl == bh.original_size && bh.event_count == INTERVAL);
    CHECK(n > 0 && (size_t)n == wl && memcmp(got, want, wl) == 0);
    /* 3. The reference's compressor makes the same bytes of them. */
    static uint8_t ref[1 << 17];
    int rc = LZ4_compress_default((const char *)want, (char *)ref, (int)wl, (int)sizeof ref);
    CHECK(rc > 0 && (uint32_t)rc == bh.compressed_size &&
          memcmp(ref, file + pos + FLOXLOG_BLOCK_HEADER_LEN, (size_t)rc) == 0);

    /* 2. The same frames compressed by liblz4, for our reader. */
    int bound = LZ4_compressBound((int)wl);
    uint8_t *dst = rebuilt + rebuilt_len + FLOXLOG_BLOCK_HEADER_LEN;
    int c = LZ4_compress_default((const char *)want, (char *)dst, (int)wl, bound);
    CHECK(c > 0);
    floxlog_block_header nb = bh;
    nb.compressed_size = (uint32_t)c;
    memcpy(rebuilt + rebuilt_len, &nb, sizeof nb); /* the struct is the wire layout */
    rebuilt_len += FLOXLOG_BLOCK_HEADER_LEN + (size_t)c;

    pos += FLOXLOG_BLOCK_HEADER_LEN + bh.compressed_size;
    blocks++;
  }
  CHECK(blocks == N_BLOCKS && pos == sh.index_offset);

  /* Header for the rebuilt segment: same fields, no index. */
  floxlog_segment_header nh = sh;
  nh.flags = (uint8_t)(nh.flags & ~FLOXLOG_FLAG_HAS_INDEX);
  nh.index_offset = 0;
  memcpy(rebuilt, &nh, sizeof nh);
  size_t need = 0;
  CHECK_RC(floxlog_segment_scratch_len(rebuilt, rebuilt_len, &need, &e), FLOXLOG_OK);
  static uint8_t scratch[1 << 16];
  CHECK(need > 0 && need <= sizeof scratch);
  floxlog_reader *r = NULL;
  CHECK_RC(floxlog_reader_new(rebuilt, rebuilt_len, NULL, scratch, sizeof scratch, &r, &e),
           FLOXLOG_OK);
  floxlog_event ev;
  floxlog_level levels[16];
  int count = 0, mismatches = 0;
  for (int b = 0; b < N_BLOCKS; b++) {
    size_t wl = expected_block(b, want, sizeof want);
    size_t at = 0;
    for (int k = 0; k < INTERVAL; k++) {
      if (floxlog_reader_next(r, &ev, levels, 16, &e) != FLOXLOG_OK) {
        mismatches++;
        break;
      }
      size_t n = 0;
      if (floxlog_frame_encode(&ev, FLOXLOG_PROFILE_REFERENCE, got, sizeof got, &n, NULL) !=
              FLOXLOG_OK ||
          at + n > wl || memcmp(got, want + at, n) != 0)
        mismatches++;
      at += n;
      count++;
    }
  }
  CHECK(mismatches == 0 && count == N_EVENTS);
  CHECK_RC(floxlog_reader_next(r, &ev, levels, 16, &e), FLOXLOG_END);
  floxlog_reader_free(r);

  /* 3. Sizes around liblz4's thresholds: the 13-byte minimum, its 16-bit
   * table limit (65547 bytes of input: the frame adds 44 bytes of header to
   * the payload), and beyond. */
  static const size_t lens[] = {0,     1,     7,     20,    100,   1000,   4096,  30000,
                                65400, 65490, 65502, 65503, 65504, 65600, 100000, 200000};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
    for (int cls = 0; cls < 5; cls++) one_event_blocks(lens[i], cls, 0x9E3779B97F4A7C15ULL + i);
  printf("compared with the system liblz4 %s\n", LZ4_versionString());
  return check_report("test_lz4_crosscheck");
}
