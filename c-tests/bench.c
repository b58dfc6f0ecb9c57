/*
 * floxlog_bench: trade throughput through the C ABI, line for line the
 * trade part of the core's own benchmark (floxlog-core/benches/codec.rs:
 * same xorshift trades, same sizes, best of 7, single thread), so the two
 * outputs can be read side by side:
 *
 *   cmake --build build --target bench     (runs both)
 *
 * Encode appends a prepared array of trades into a fresh writer, one call
 * per trade (floxlog_writer_append_trade) or one call for all
 * (floxlog_writer_append_trades); decode reads with CRC verification, one
 * call per event (floxlog_reader_next) or per 256 (floxlog_reader_next_batch),
 * and consumes every field (the accumulator is checked afterwards).
 */
#define _POSIX_C_SOURCE 199309L
#include <floxlog.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 7

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* codec.rs `trades`: deterministic, market-like. */
static floxlog_trade *make_trades(size_t n) {
  floxlog_trade *v = malloc(n * sizeof *v);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n && v; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    floxlog_trade *t = &v[i];
    t->exchange_ts_ns = 1700000000000000000 + (int64_t)i * 1000 + (int64_t)(x % 700);
    t->recv_ts_ns = 1700000000000000000 + (int64_t)i * 1000 + 5000;
    t->price_raw = 6500000000000 + (int64_t)(x % 200000);
    t->qty_raw = (int64_t)((x >> 20) % 10000000);
    t->trade_id = 900000000 + (uint64_t)i;
    t->symbol_id = (uint32_t)(x % 50);
    t->side = (uint8_t)(x & 1);
    t->instrument = 1;
    t->exchange_id = 7;
  }
  return v;
}

/* codec.rs `decode`'s accumulator over one trade. */
static uint64_t mix(uint64_t acc, const floxlog_trade *t) {
  acc += (uint64_t)t->exchange_ts_ns ^ (uint64_t)t->recv_ts_ns;
  acc += (uint64_t)t->price_raw ^ (uint64_t)t->qty_raw;
  acc += t->trade_id ^ (uint64_t)t->symbol_id;
  acc += (uint64_t)(t->side ^ t->instrument) + (uint64_t)t->exchange_id;
  return acc;
}

typedef struct {
  uint8_t *out, *block;
  size_t out_len, block_len;
  floxlog_index_entry *index;
  size_t index_cap;
} bufs_t;

/* Encodes the trades into b->out (header patched in); returns the size. */
static size_t encode(const floxlog_writer_config *cfg, const floxlog_trade *ts, size_t n, bufs_t *b,
                     int batch) {
  floxlog_writer_buffers wb = {b->out, b->out_len, b->block, b->block_len, b->index, b->index_cap};
  floxlog_writer *w = NULL;
  floxlog_error err;
  uint8_t header[64];
  const uint8_t *p;
  size_t len = 0;
  if (floxlog_writer_new(cfg, &wb, &w, &err) != FLOXLOG_OK) goto fail;
  if (batch) {
    size_t done = 0;
    if (floxlog_writer_append_trades(w, ts, n, &done, &err) != FLOXLOG_OK || done != n) goto fail;
  } else {
    for (size_t i = 0; i < n; i++)
      if (floxlog_writer_append_trade(w, &ts[i], &err) != FLOXLOG_OK) goto fail;
  }
  if (floxlog_writer_finish(w, header, 64, &err) != FLOXLOG_OK) goto fail;
  floxlog_writer_pending(w, &p, &len); /* p == b->out: nothing was drained */
  floxlog_writer_free(w);               /* the buffer is ours again */
  memcpy(b->out, header, 64);
  return len;
fail:
  fprintf(stderr, "encode failed: %s\n", err.what);
  exit(1);
}

static uint64_t decode(const uint8_t *seg, size_t len, uint8_t *scratch, size_t scratch_len,
                       uint64_t *count, int batch) {
  floxlog_reader *r = NULL;
  floxlog_error err;
  if (floxlog_reader_new(seg, len, NULL, scratch, scratch_len, &r, &err) != FLOXLOG_OK) {
    fprintf(stderr, "open failed: %s\n", err.what);
    exit(1);
  }
  static floxlog_event evs[256];
  uint64_t acc = 0, n = 0;
  floxlog_result rc;
  if (batch) {
    size_t got = 0;
    while ((rc = floxlog_reader_next_batch(r, evs, 256, NULL, 0, &got, &err)) == FLOXLOG_OK) {
      for (size_t i = 0; i < got; i++)
        if (evs[i].kind == FLOXLOG_EVENT_TRADE) acc = mix(acc, &evs[i].data.trade);
      n += got;
    }
  } else {
    while ((rc = floxlog_reader_next(r, &evs[0], NULL, 0, &err)) == FLOXLOG_OK) {
      if (evs[0].kind == FLOXLOG_EVENT_TRADE) acc = mix(acc, &evs[0].data.trade);
      n++;
    }
  }
  floxlog_reader_free(r);
  if (rc != FLOXLOG_END) {
    fprintf(stderr, "decode failed: %s\n", err.what);
    exit(1);
  }
  *count = n;
  return acc;
}

static void report(const char *name, size_t events, size_t bytes, double secs) {
  printf("%-34s %8.1f M ev/s %7.2f GB/s\n", name, (double)events / secs / 1e6,
         (double)bytes / secs / 1e9);
}

static void bench_trades(size_t n, size_t reps, const char *tag) {
  floxlog_trade *ts = make_trades(n);
  bufs_t b = {NULL, NULL, 64 + n * 60 + (1u << 20), 1u << 20, NULL, n / 1000 + 1};
  b.out = malloc(b.out_len);
  b.block = malloc(b.block_len);
  b.index = malloc(b.index_cap * sizeof *b.index);
  size_t scratch_len = 1u << 20;
  uint8_t *scratch = malloc(scratch_len);
  if (!ts || !b.out || !b.block || !b.index || !scratch) exit(2);
  floxlog_writer_config plain, lz4;
  floxlog_writer_config_default(&plain);
  lz4 = plain;
  lz4.compression = FLOXLOG_COMPRESSION_LZ4;

  uint64_t want = 0;
  for (size_t i = 0; i < n; i++) want = mix(want, &ts[i]);

  printf("-- %zu trades, %s (x%zu per run), best of %d, single thread, C ABI\n", n, tag, reps, RUNS);
  const size_t ev = n * reps;
  for (int z = 0; z <= 1; z++) {
    const floxlog_writer_config *cfg = z ? &lz4 : &plain;
    size_t len = encode(cfg, ts, n, &b, 0);
    uint8_t *seg = malloc(len);
    if (!seg) exit(2);
    memcpy(seg, b.out, len);
    /* codec.rs counts LZ4 throughput in frame bytes. */
    const size_t bytes = (z ? n * 60 : len) * reps;
    static const char *const names[2][4] = {
        {"encode trades", "encode trades (batch)", "decode trades (CRC verified)",
         "decode trades (verified, batch)"},
        {"LZ4 encode trades (1000/block)", "LZ4 encode trades (batch)",
         "LZ4 decode trades (CRC verified)", "LZ4 decode trades (verified, batch)"}};

    for (int batch = 0; batch <= 1; batch++) {
      double best = 1e30;
      for (int run = 0; run < RUNS; run++) {
        double t0 = now();
        for (size_t k = 0; k < reps; k++) encode(cfg, ts, n, &b, batch);
        double t = now() - t0;
        if (t < best) best = t;
      }
      if (memcmp(b.out, seg, len) != 0) {
        fprintf(stderr, "batch and single encodes differ\n");
        exit(1);
      }
      report(names[z][batch], ev, bytes, best);
    }
    for (int batch = 0; batch <= 1; batch++) {
      double best = 1e30;
      for (int run = 0; run < RUNS; run++) {
        uint64_t count = 0, acc = 0;
        double t0 = now();
        for (size_t k = 0; k < reps; k++) acc = decode(seg, len, scratch, scratch_len, &count, batch);
        double t = now() - t0;
        if (acc != want || count != n) {
          fprintf(stderr, "decode verification failed (%llu events)\n", (unsigned long long)count);
          exit(1);
        }
        if (t < best) best = t;
      }
      report(names[z][2 + batch], ev, bytes, best);
    }
    free(seg);
  }
  free(ts);
  free(b.out);
  free(b.block);
  free(b.index);
  free(scratch);
}

int main(void) {
  const char *env = getenv("FLOXLOG_BENCH_EVENTS");
  size_t small = env ? (size_t)strtoull(env, NULL, 10) : 20000;
  if (small == 0) return 2;
  bench_trades(small, 100, "in cache");
  bench_trades(2000000, 1, "from RAM");
  return 0;
}
