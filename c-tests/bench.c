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
 * call per event (floxlog_reader_next), per 256 (floxlog_reader_next_batch)
 * or per 256 trades (floxlog_reader_next_trades), and consumes every field
 * (the count and accumulator are checked afterwards).
 * FLOXLOG_BENCH_EVENTS sets the in-cache trades (20,000),
 * FLOXLOG_BENCH_RAM_EVENTS the from-RAM ones (2,000,000).
 *
 * Then the tape API (bench_tape): 5,000,000 trades recorded through
 * floxlog_tape_writer into one segment file in a temporary directory
 * (open to close; per call and 1024 per call; durability NONE and
 * SYNC_ON_CLOSE; the segment the reads use is then written over with its
 * own bytes in 4 KiB write(2) calls, as a C++ recorder using stdio leaves
 * its file), beside the limits measured in the same run: encoding
 * alone (the codec writer into memory, as above) and write(2) of the same
 * segment bytes in 1 MiB chunks (+ fsync); and read back through
 * floxlog_tape_reader (file and time order; per event, per 1024 events
 * and per 1024 trades with floxlog_tape_reader_next_trades; CRCs checked
 * and, verify_crc = 0, not) beside mmap + summing the file as u64 words
 * (every 8-byte word read once). Median of 7 rounds
 * (FLOXLOG_BENCH_TAPE_ROUNDS), the variants interleaved in every round (the
 * machine's speed drifts). FLOXLOG_BENCH_TAPE_EVENTS sets the number of
 * trades (0 skips the tape part); TMPDIR where it writes;
 * FLOXLOG_BENCH_KEEP=1 keeps the two recorded tapes and prints their paths
 * ("kept tape ...: DIR"), for timing other readers (the CLI) on the same
 * files (scripts/bench-limits.sh).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <floxlog.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RUNS 7
/* Bytes per write(2) of the kept tapes' rewrite (rewrite_small). */
#define SMALL_WRITE 4096

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

/* How a loop reads: one event per call, a batch of events, or a batch of
 * trades (the *_next_trades calls). */
enum { READ_NEXT, READ_BATCH, READ_TRADES, READ_MODES };

static uint64_t decode(const uint8_t *seg, size_t len, uint8_t *scratch, size_t scratch_len,
                       uint64_t *count, int mode) {
  floxlog_reader *r = NULL;
  floxlog_error err;
  if (floxlog_reader_new(seg, len, NULL, scratch, scratch_len, &r, &err) != FLOXLOG_OK) {
    fprintf(stderr, "open failed: %s\n", err.what);
    exit(1);
  }
  static floxlog_event evs[256];
  static floxlog_trade trs[256];
  uint64_t acc = 0, n = 0;
  floxlog_result rc;
  if (mode == READ_TRADES) {
    for (;;) {
      size_t got = 0;
      rc = floxlog_reader_next_trades(r, trs, 256, &got, &err);
      if (rc == FLOXLOG_OK) {
        for (size_t i = 0; i < got; i++) acc = mix(acc, &trs[i]);
        n += got;
      } else if (rc == FLOXLOG_NOT_TRADE) {
        /* Not on a trade-only segment; read the other event the general way. */
        if ((rc = floxlog_reader_next(r, &evs[0], NULL, 0, &err)) != FLOXLOG_OK) break;
        n++;
      } else {
        break;
      }
    }
  } else if (mode == READ_BATCH) {
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
    static const char *const names[2][5] = {
        {"encode trades", "encode trades (batch)", "decode trades (CRC verified)",
         "decode trades (verified, batch)", "decode trades (next_trades)"},
        {"LZ4 encode trades (1000/block)", "LZ4 encode trades (batch)",
         "LZ4 decode trades (CRC verified)", "LZ4 decode trades (verified, batch)",
         "LZ4 decode trades (next_trades)"}};

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
    for (int mode = 0; mode < READ_MODES; mode++) {
      double best = 1e30;
      for (int run = 0; run < RUNS; run++) {
        uint64_t count = 0, acc = 0;
        double t0 = now();
        for (size_t k = 0; k < reps; k++) acc = decode(seg, len, scratch, scratch_len, &count, mode);
        double t = now() - t0;
        if (acc != want || count != n) {
          fprintf(stderr, "decode verification failed (%llu events)\n", (unsigned long long)count);
          exit(1);
        }
        if (t < best) best = t;
      }
      report(names[z][2 + mode], ev, bytes, best);
    }
    free(seg);
  }
  free(ts);
  free(b.out);
  free(b.block);
  free(b.index);
  free(scratch);
}

/* ------------------------------------------------------------------ */
/* The tape API (files, on the floxlog CLI's writer and reader) against  */
/* the limits of what it does: encoding, write(2), reading the mapping.  */

/* Rounds of the tape API part: FLOXLOG_BENCH_TAPE_ROUNDS (default 7, at
 * most TAPE_MAX_RUNS). */
#define TAPE_MAX_RUNS 31
static int TAPE_RUNS = 7;
#define TAPE_BATCH 1024
#define IO_CHUNK ((size_t)1 << 20)

static void tape_die(const char *what, const floxlog_tape_error *e) {
  fprintf(stderr, "%s failed: %s\n", what, e ? e->message : "");
  exit(1);
}

/* Records the trades as a new tape in `dir` (one segment); returns the
 * seconds from open to close. */
static double tape_write(const char *dir, const floxlog_trade *ts, size_t n, uint8_t compression,
                         uint8_t durability, int batch) {
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  cfg.segment.compression = compression;
  cfg.durability = durability;
  cfg.max_segment_bytes = (uint64_t)1 << 40; /* one file, like the write(2) limit */
  floxlog_tape_error err;
  floxlog_tape_writer *w = NULL;
  double t0 = now();
  if (floxlog_tape_writer_open(dir, &cfg, &w, &err) != FLOXLOG_OK) tape_die("tape writer open", &err);
  if (batch) {
    for (size_t i = 0; i < n; i += TAPE_BATCH) {
      size_t k = n - i < TAPE_BATCH ? n - i : TAPE_BATCH, done = 0;
      if (floxlog_tape_writer_append_trades(w, ts + i, k, &done, &err) != FLOXLOG_OK)
        tape_die("floxlog_tape_writer_append_trades", &err);
    }
  } else {
    for (size_t i = 0; i < n; i++)
      if (floxlog_tape_writer_append_trade(w, &ts[i], &err) != FLOXLOG_OK)
        tape_die("floxlog_tape_writer_append_trade", &err);
  }
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) tape_die("tape writer close", &err);
  double t = now() - t0;
  floxlog_tape_writer_free(w);
  return t;
}

/* The path of the one segment file in `dir`. */
static void segment_file(const char *dir, char *path, size_t cap) {
  DIR *d = opendir(dir);
  struct dirent *e;
  path[0] = 0;
  while (d && (e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] != '.' && len > 8 && strcmp(e->d_name + len - 8, ".floxlog") == 0)
      snprintf(path, cap, "%s/%s", dir, e->d_name);
  }
  if (d) closedir(d);
  if (!path[0]) {
    fprintf(stderr, "no segment file in %s\n", dir);
    exit(1);
  }
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[4096];
  while (d && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static uint8_t *read_whole(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) exit(2);
  uint8_t *buf = malloc((size_t)st.st_size + 1);
  size_t got = 0;
  while (buf && got < (size_t)st.st_size) {
    ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
    if (k <= 0) exit(2);
    got += (size_t)k;
  }
  close(fd);
  if (!buf) exit(2);
  *len = got;
  return buf;
}

/* Writes `bytes` over the file at `path` in 4 KiB write(2) calls, as a
 * C++ recorder writing through stdio leaves a tape (issue 21, item 5): the
 * page cache then holds the file in small folios, which mapped reads fault
 * in a few pages at a time, not in the large folios one big write makes. */
static void rewrite_small(const char *path, const uint8_t *bytes, size_t len) {
  int fd = open(path, O_WRONLY | O_TRUNC);
  if (fd < 0) exit(2);
  for (size_t off = 0; off < len;) {
    size_t k = len - off < SMALL_WRITE ? len - off : SMALL_WRITE;
    ssize_t w = write(fd, bytes + off, k);
    if (w <= 0) exit(2);
    off += (size_t)w;
  }
  if (close(fd) != 0) exit(2);
}

/* The write(2) limit: the bytes to a new file in 1 MiB chunks (then
 * fsync); open to close. */
static double write_limit(const char *path, const uint8_t *bytes, size_t len, int sync) {
  double t0 = now();
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) exit(2);
  for (size_t off = 0; off < len;) {
    size_t k = len - off < IO_CHUNK ? len - off : IO_CHUNK;
    ssize_t w = write(fd, bytes + off, k);
    if (w <= 0) exit(2);
    off += (size_t)w;
  }
  if (sync && fsync(fd) != 0) exit(2);
  close(fd);
  double t = now() - t0;
  unlink(path);
  return t;
}

/* The read limit: map the file and sum it as u64 words; open to unmap. */
static double mmap_limit(const char *path, uint64_t *sum) {
  double t0 = now();
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) exit(2);
  size_t len = (size_t)st.st_size;
  void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) exit(2);
  const uint64_t *w = m;
  uint64_t acc = 0;
  for (size_t i = 0; i < len / 8; i++) acc += w[i];
  for (size_t i = len / 8 * 8; i < len; i++) acc += ((const uint8_t *)m)[i];
  munmap(m, len);
  close(fd);
  *sum = acc;
  return now() - t0;
}

/* Reads the tape back (open to free), consuming every field; checks the
 * count and the accumulator (a sum: the same in any order). `crc` 0 turns
 * the frame CRC checks off (verify_crc = 0). */
static double tape_read(const char *dir, uint8_t order, int mode, int crc, size_t n, uint64_t want) {
  static floxlog_event evs[TAPE_BATCH];
  static floxlog_trade trs[TAPE_BATCH];
  floxlog_tape_reader_options o;
  floxlog_tape_reader_options_default(&o);
  o.order = order;
  o.verify_crc = crc ? 1 : 0;
  floxlog_tape_error err;
  floxlog_tape_reader *r = NULL;
  uint64_t acc = 0, count = 0;
  floxlog_result rc;
  double t0 = now();
  if (floxlog_tape_reader_open(dir, &o, &r, &err) != FLOXLOG_OK) tape_die("tape reader open", &err);
  if (mode == READ_TRADES) {
    for (;;) {
      size_t got = 0;
      rc = floxlog_tape_reader_next_trades(r, trs, TAPE_BATCH, &got, &err);
      if (rc == FLOXLOG_OK) {
        for (size_t i = 0; i < got; i++) acc = mix(acc, &trs[i]);
        count += got;
      } else if (rc == FLOXLOG_NOT_TRADE) {
        /* Not on this trade-only tape; the held event is read the general way. */
        if ((rc = floxlog_tape_reader_next(r, &evs[0], &err)) != FLOXLOG_OK) break;
        count++;
      } else {
        break;
      }
    }
  } else if (mode == READ_BATCH) {
    size_t got = 0;
    while ((rc = floxlog_tape_reader_next_batch(r, evs, TAPE_BATCH, &got, &err)) == FLOXLOG_OK) {
      for (size_t i = 0; i < got; i++)
        if (evs[i].kind == FLOXLOG_EVENT_TRADE) acc = mix(acc, &evs[i].data.trade);
      count += got;
    }
  } else {
    while ((rc = floxlog_tape_reader_next(r, &evs[0], &err)) == FLOXLOG_OK) {
      if (evs[0].kind == FLOXLOG_EVENT_TRADE) acc = mix(acc, &evs[0].data.trade);
      count++;
    }
  }
  floxlog_tape_reader_free(r);
  double t = now() - t0;
  if (rc != FLOXLOG_END) tape_die("tape read", &err);
  if (count != n || acc != want) {
    fprintf(stderr, "tape read verification failed (%llu events)\n", (unsigned long long)count);
    exit(1);
  }
  return t;
}

/* One line: speed, and as a fraction of up to two limits' speed. */
static void tape_line(const char *name, size_t events, uint64_t bytes, double secs, double lim1,
                      const char *lim1_name, double lim2, const char *lim2_name) {
  printf("%-44s %7.1f M ev/s %7.0f MB/s", name, (double)events / secs / 1e6,
         (double)bytes / secs / 1e6);
  if (lim1 > 0) printf("  %5.2f of %s", lim1 / secs, lim1_name);
  if (lim2 > 0) printf("  %5.2f of %s", lim2 / secs, lim2_name);
  printf("\n");
}

/* The rounds of one tape-API measurement; its value is their median (the
 * rounds of every variant are interleaved, so a slow spell of the machine
 * falls on all of them alike, and the median drops it). */
typedef struct {
  double v[2 * TAPE_MAX_RUNS];
  int n;
} runs_t;

static void add_run(runs_t *r, double t) {
  if (r->n < 2 * TAPE_MAX_RUNS) r->v[r->n++] = t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const runs_t *r) {
  double s[2 * TAPE_MAX_RUNS];
  memcpy(s, r->v, sizeof s);
  qsort(s, (size_t)r->n, sizeof s[0], cmp_double);
  if (r->n == 0) return 1e30;
  return r->n % 2 ? s[r->n / 2] : (s[r->n / 2 - 1] + s[r->n / 2]) / 2;
}

static void bench_tape(size_t n) {
  floxlog_trade *ts = make_trades(n);
  bufs_t b = {NULL, NULL, 64 + n * 60 + (1u << 20), 1u << 20, NULL, n / 1000 + 1};
  b.out = malloc(b.out_len);
  b.block = malloc(b.block_len);
  b.index = malloc(b.index_cap * sizeof *b.index);
  size_t scratch_len = 1u << 20;
  uint8_t *scratch = malloc(scratch_len);
  if (!ts || !b.out || !b.block || !b.index || !scratch) exit(2);
  uint64_t want = 0;
  for (size_t i = 0; i < n; i++) want = mix(want, &ts[i]);

  const char *tmp = getenv("TMPDIR");
  char root[1024], dir[1100], keep[2][1100], seg_path[2][4200], plain_file[1100];
  snprintf(root, sizeof root, "%s/floxlog-bench-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(root)) {
    perror("mkdtemp");
    exit(2);
  }
  snprintf(dir, sizeof dir, "%s/tape", root);
  snprintf(plain_file, sizeof plain_file, "%s/plain.bin", root);
  static const uint8_t comps[2] = {FLOXLOG_COMPRESSION_NONE, FLOXLOG_COMPRESSION_LZ4};
  static const uint8_t durs[2] = {FLOXLOG_DURABILITY_NONE, FLOXLOG_DURABILITY_SYNC_ON_CLOSE};
  floxlog_writer_config wcfg[2];
  floxlog_writer_config_default(&wcfg[0]);
  wcfg[1] = wcfg[0];
  wcfg[1].compression = FLOXLOG_COMPRESSION_LZ4;

  /* The segments to compare with: recorded once (not timed), kept for the
   * reads, and their bytes read into memory for the write(2) limit. */
  uint8_t *seg[2];
  size_t seg_len[2];
  for (int z = 0; z < 2; z++) {
    snprintf(keep[z], sizeof keep[z], "%s/keep-%s", root, z ? "lz4" : "none");
    tape_write(keep[z], ts, n, comps[z], FLOXLOG_DURABILITY_NONE, 1);
    segment_file(keep[z], seg_path[z], sizeof seg_path[z]);
    seg[z] = read_whole(seg_path[z], &seg_len[z]);
    /* Every read below is of the file as a 4 KiB-write recorder leaves it. */
    rewrite_small(seg_path[z], seg[z], seg_len[z]);
  }
  printf("-- tape API: %zu trades, one segment file in %s (uncompressed %.1f MB, LZ4 %.1f MB), "
         "median of %d interleaved rounds, single thread, C ABI\n",
         n, root, (double)seg_len[0] / 1e6, (double)seg_len[1] / 1e6, TAPE_RUNS);
  printf("   write: open..close, vs encoding alone and write(2) of the same bytes in 1 MiB chunks\n"
         "   (write(2) median of %d); read: file in page cache, open..free, vs mmap + sum as u64\n"
         "   words; MB/s of file bytes; \"x of L\": speed as a fraction of limit L's\n",
         2 * TAPE_RUNS);

  /* Write side: [z][0 encode call, 1 encode batch, 2 write, 3 write+fsync,
   * 4 + 2 * dur + batch: tape]. */
  static runs_t wr[2][8];
  memset(wr, 0, sizeof wr);
  int same[2] = {1, 1};
  for (int run = 0; run < TAPE_RUNS; run++) {
    for (int z = 0; z < 2; z++) {
      for (int batch = 0; batch <= 1; batch++) {
        double t0 = now();
        size_t len = encode(&wcfg[z], ts, n, &b, batch);
        add_run(&wr[z][batch], now() - t0);
        /* The tape's segment is the codec's, byte for byte after the
         * header (whose created_ns differs). */
        if (len != seg_len[z] || memcmp(b.out + 64, seg[z] + 64, len - 64) != 0) same[z] = 0;
      }
      /* The limits before and after the tape runs: page cache writes
       * here swing with what ran just before them. */
      for (int sync = 0; sync <= 1; sync++)
        add_run(&wr[z][2 + sync], write_limit(plain_file, seg[z], seg_len[z], sync));
      for (int d = 0; d <= 1; d++)
        for (int batch = 0; batch <= 1; batch++) {
          add_run(&wr[z][4 + 2 * d + batch], tape_write(dir, ts, n, comps[z], durs[d], batch));
          remove_dir(dir);
        }
      for (int sync = 1; sync >= 0; sync--)
        add_run(&wr[z][2 + sync], write_limit(plain_file, seg[z], seg_len[z], sync));
    }
  }
  double wt[2][8];
  for (int z = 0; z < 2; z++)
    for (int k = 0; k < 8; k++) wt[z][k] = median(&wr[z][k]);
  for (int z = 0; z < 2; z++) {
    const char *p = z ? "LZ4 " : "";
    char name[128];
    const size_t bytes = seg_len[z];
    snprintf(name, sizeof name, "%slimit: encode alone (codec, per call)", p);
    tape_line(name, n, bytes, wt[z][0], 0, NULL, 0, NULL);
    snprintf(name, sizeof name, "%slimit: encode alone (codec, one call)", p);
    tape_line(name, n, bytes, wt[z][1], 0, NULL, 0, NULL);
    snprintf(name, sizeof name, "%slimit: write(2)", p);
    tape_line(name, n, bytes, wt[z][2], 0, NULL, 0, NULL);
    snprintf(name, sizeof name, "%slimit: write(2) + fsync", p);
    tape_line(name, n, bytes, wt[z][3], 0, NULL, 0, NULL);
    for (int d = 0; d <= 1; d++)
      for (int batch = 0; batch <= 1; batch++) {
        snprintf(name, sizeof name, "%stape write %s, %s", p, batch ? "1024/call" : "per call",
                 d ? "sync_on_close" : "durability none");
        double io = wt[z][2 + d];
        tape_line(name, n, bytes, wt[z][4 + 2 * d + batch], io, d ? "write+fsync" : "write",
                  io + wt[z][batch], d ? "enc+write+fsync" : "encode+write");
      }
    if (!same[z])
      printf("   NOTE: the %s tape segment differs from the codec's encoding\n", z ? "LZ4" : "uncompressed");
  }

  /* Read side: [z][0 mmap, 1 codec decode, 2 + RD(crc off, order, mode):
   * tape]. */
#define RD(nocrc, order, mode) (((nocrc) * 2 + (order)) * READ_MODES + (mode))
  static runs_t rr[2][2 + RD(1, 1, READ_MODES - 1) + 1];
  memset(rr, 0, sizeof rr);
  const int nrt = (int)(sizeof rr[0] / sizeof rr[0][0]);
  static const uint8_t orders[2] = {FLOXLOG_ORDER_FILE, FLOXLOG_ORDER_TIME};
  static const char *const mode_names[READ_MODES] = {"next", "next_batch 1024", "next_trades 1024"};
  volatile uint64_t sink = 0;
  for (int run = 0; run < TAPE_RUNS; run++) {
    for (int z = 0; z < 2; z++) {
      uint64_t sum = 0, count = 0;
      add_run(&rr[z][0], mmap_limit(seg_path[z], &sum));
      sink += sum;
      double t0 = now();
      uint64_t acc = decode(seg[z], seg_len[z], scratch, scratch_len, &count, READ_BATCH);
      add_run(&rr[z][1], now() - t0);
      if (acc != want || count != n) {
        fprintf(stderr, "decode verification failed\n");
        exit(1);
      }
      for (int nocrc = 0; nocrc <= 1; nocrc++)
        for (int o = 0; o <= 1; o++)
          for (int mode = 0; mode < READ_MODES; mode++)
            add_run(&rr[z][2 + RD(nocrc, o, mode)], tape_read(keep[z], orders[o], mode, !nocrc, n, want));
    }
  }
  (void)sink;
  double rt[2][2 + RD(1, 1, READ_MODES - 1) + 1];
  for (int z = 0; z < 2; z++)
    for (int k = 0; k < nrt; k++) rt[z][k] = median(&rr[z][k]);
  for (int z = 0; z < 2; z++) {
    const char *p = z ? "LZ4 " : "";
    char name[128];
    const size_t bytes = seg_len[z];
    snprintf(name, sizeof name, "%slimit: mmap + sum u64 words", p);
    tape_line(name, n, bytes, rt[z][0], 0, NULL, 0, NULL);
    snprintf(name, sizeof name, "%sref: codec decode (in memory, 256/call)", p);
    tape_line(name, n, bytes, rt[z][1], rt[z][0], "mmap", 0, NULL);
    /* The CRC-checked lines keep their old names (other tools read them). */
    for (int nocrc = 0; nocrc <= 1; nocrc++)
      for (int o = 0; o <= 1; o++)
        for (int mode = 0; mode < READ_MODES; mode++) {
          snprintf(name, sizeof name, "%stape read %s, %s order%s", p, mode_names[mode],
                   o ? "time" : "file", nocrc ? ", no CRC" : "");
          tape_line(name, n, bytes, rt[z][2 + RD(nocrc, o, mode)], rt[z][0], "mmap", rt[z][1],
                    "decode");
        }
  }
#undef RD

  const char *keep_env = getenv("FLOXLOG_BENCH_KEEP");
  const int kept = keep_env && strcmp(keep_env, "1") == 0;
  for (int z = 0; z < 2; z++) {
    if (kept)
      printf("kept tape (%s): %s\n", z ? "LZ4" : "uncompressed", keep[z]);
    else
      remove_dir(keep[z]);
    free(seg[z]);
  }
  if (!kept) rmdir(root);
  free(ts);
  free(b.out);
  free(b.block);
  free(b.index);
  free(scratch);
}

/* FLOXLOG_BENCH_READ_TIME=DIR (or FLOXLOG_BENCH_READ_FILE=DIR: file order):
 * reads the tape DIR through floxlog_tape_reader_next_trades (or, with
 * FLOXLOG_BENCH_READ_NEXT=1, floxlog_tape_reader_next), CRCs checked unless
 * FLOXLOG_BENCH_READ_NOCRC=1, and only that (for peak RSS and profiles of
 * one read path): 0 when the read ends cleanly and, in time order, every
 * exchange timestamp is at or after the one before; 1 otherwise.
 * scripts/bench-limits.sh measures its peak RSS on a big jittered tape
 * (issue 21, item 4). */
static int read_only(const char *dir, uint8_t order) {
  static floxlog_trade trs[TAPE_BATCH];
  static floxlog_event ev;
  const char *next_env = getenv("FLOXLOG_BENCH_READ_NEXT");
  const char *nocrc_env = getenv("FLOXLOG_BENCH_READ_NOCRC");
  const int per_event = next_env && strcmp(next_env, "1") == 0;
  floxlog_tape_reader_options o;
  floxlog_tape_reader_options_default(&o);
  o.order = order;
  o.verify_crc = nocrc_env && strcmp(nocrc_env, "1") == 0 ? 0 : 1;
  floxlog_tape_error err;
  floxlog_tape_reader *r = NULL;
  if (floxlog_tape_reader_open(dir, &o, &r, &err) != FLOXLOG_OK) tape_die("tape reader open", &err);
  uint64_t count = 0, back = 0;
  int64_t last = INT64_MIN;
  floxlog_result rc;
  double t0 = now();
  for (;;) {
    size_t got = 0;
    if (per_event) {
      rc = floxlog_tape_reader_next(r, &ev, &err);
      if (rc != FLOXLOG_OK) break;
      if (ev.kind != FLOXLOG_EVENT_TRADE) continue;
      trs[0] = ev.data.trade;
      got = 1;
    } else {
      rc = floxlog_tape_reader_next_trades(r, trs, TAPE_BATCH, &got, &err);
      if (rc != FLOXLOG_OK) break;
    }
    for (size_t i = 0; i < got; i++) {
      back += trs[i].exchange_ts_ns < last;
      last = trs[i].exchange_ts_ns;
    }
    count += got;
  }
  double t = now() - t0;
  floxlog_tape_reader_free(r);
  if (rc != FLOXLOG_END) tape_die("tape read", &err);
  const int time_order = order == FLOXLOG_ORDER_TIME;
  printf("C %s order: %llu trades, %llu going back, %.3f s, %.1f M/s\n", time_order ? "time" : "file",
         (unsigned long long)count, (unsigned long long)back, t, (double)count / t / 1e6);
  return (!time_order || back == 0) && count > 0 ? 0 : 1;
}

int main(void) {
  const char *read_dir = getenv("FLOXLOG_BENCH_READ_TIME");
  if (read_dir && read_dir[0]) return read_only(read_dir, FLOXLOG_ORDER_TIME);
  read_dir = getenv("FLOXLOG_BENCH_READ_FILE");
  if (read_dir && read_dir[0]) return read_only(read_dir, FLOXLOG_ORDER_FILE);
  const char *env = getenv("FLOXLOG_BENCH_EVENTS");
  size_t small = env ? (size_t)strtoull(env, NULL, 10) : 20000;
  if (small == 0) return 2;
  bench_trades(small, 100, "in cache");
  const char *ram_env = getenv("FLOXLOG_BENCH_RAM_EVENTS");
  size_t ram = ram_env ? (size_t)strtoull(ram_env, NULL, 10) : 2000000;
  if (ram == 0) return 2;
  bench_trades(ram, 1, "from RAM");
  const char *rounds_env = getenv("FLOXLOG_BENCH_TAPE_ROUNDS");
  if (rounds_env) {
    int r = atoi(rounds_env);
    if (r < 1 || r > TAPE_MAX_RUNS) return 2;
    TAPE_RUNS = r;
  }
  const char *tape_env = getenv("FLOXLOG_BENCH_TAPE_EVENTS");
  size_t tape_n = tape_env ? (size_t)strtoull(tape_env, NULL, 10) : 5000000;
  if (tape_n > 0) bench_tape(tape_n);
  return 0;
}
