/* Append latency of the tape writer through the C ABI (a benchmark, not a
 * test; run by scripts/bench-latency.sh).
 *
 *   bench_latency DIR [--events N] [--rate PER_S] [--max-segment-bytes B]
 *                     [--durability none|flush|close] [--journal] [--lz4]
 *                     [--throughput]
 *
 * Appends N trades (default 10 M) to a new tape in DIR, timing each
 * append with CLOCK_MONOTONIC, into a log-linear histogram (HDR style: 128
 * sub-buckets per power of two, under 1 % error). With --rate the appends
 * are paced (a busy-wait to each one's intended start) and each latency
 * is measured from its intended start, not its actual one, so a stall
 * counts for every append it delayed (coordinated omission corrected);
 * the uncorrected figures (from each append's actual start: the append's
 * own cost, the pacing loop's lateness left out) are printed below them.
 * Unpaced, it also times write(2) and memcpy of the same bytes (the tape's
 * segment files) for comparison. The rotation stall: the appends that
 * opened a new segment (every segment holds the same number of trades).
 *
 * --journal sets the config's `journal` field (the journal writer).
 * --lz4 writes LZ4 segments (default writer only; blocks of the default
 * index_interval events); the rotation line is then left out (segments
 * hold unequal numbers of trades).
 *
 * --throughput: no clock read per append. Appends N trades one call each
 * (floxlog_tape_writer_append_trade), then N again to a second tape in
 * calls of 256 (floxlog_tape_writer_append_trades: in journal mode one
 * pass seals four frames' CRCs at a time and publishes each run of frames
 * with one release store), each timed as a whole (two clock reads), then
 * write(2) and memcpy of the same bytes; appends/s of each. A second
 * line gives the same rates over CPU time instead of wall time (the
 * appending thread's, and the whole process's: with the writer's
 * background thread), and write(2)'s over its thread's CPU time: on a
 * machine shared with other work, wall time mostly measures the
 * scheduler; CPU time measures the work.
 *
 * The append-to-tailer hand-off is measured by c-tests/bench_handoff.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floxlog.h"

#include "bench_hist.h"

/* CPU time of a phase: this thread's, and the process's (all threads). */
typedef struct {
  double thread_s, process_s;
} cpu_t;

static cpu_t cpu_now(void) {
  cpu_t c = {(double)clock_ns(CLOCK_THREAD_CPUTIME_ID) / 1e9,
             (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9};
  return c;
}

static cpu_t cpu_since(cpu_t a) {
  cpu_t b = cpu_now();
  cpu_t d = {b.thread_s - a.thread_s, b.process_s - a.process_s};
  return d;
}

static floxlog_trade trade(uint64_t i) {
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = 1700000000000000000LL + (int64_t)i * 1000;
  t.recv_ts_ns = t.exchange_ts_ns + 250;
  t.price_raw = 6500000000000LL + (int64_t)(i % 977) * 1000000;
  t.qty_raw = 1000000 + (int64_t)(i % 13) * 100000;
  t.trade_id = i;
  t.symbol_id = (uint32_t)(i % 20);
  t.side = (uint8_t)(i & 1);
  t.exchange_id = 1;
  return t;
}

/* First `"event_count": N` of DIR/manifest.json: trades per segment. */
static uint64_t per_segment(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *p = strstr(buf, "\"event_count\":");
  return p ? strtoull(p + 14, NULL, 10) : 0;
}

/* Bytes of the tape's segment files (from its manifest). */
static uint64_t tape_bytes(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  uint64_t total = 0;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    const char *p = strstr(line, "\"size_bytes\":");
    if (p) total += strtoull(p + 13, NULL, 10);
  }
  fclose(f);
  return total;
}

/* Seconds to write(2) `bytes` bytes to a file in `dir`, and to memcpy
 * them, 1 MiB at a time. */
static int copy_times(const char *dir, uint64_t bytes, double *write_s, double *memcpy_s,
                      cpu_t *write_cpu) {
  const size_t chunk = 1u << 20;
  char *src = malloc(chunk), *dst = malloc(chunk);
  if (!src || !dst) return -1;
  memset(src, 0x5a, chunk);
  char path[4096];
  snprintf(path, sizeof path, "%s/.bench-write", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  const cpu_t c0 = cpu_now();
  uint64_t a = now_ns();
  for (uint64_t done = 0; done < bytes; done += chunk) {
    size_t n = bytes - done < chunk ? (size_t)(bytes - done) : chunk;
    if (write(fd, src, n) != (ssize_t)n) return -1;
  }
  uint64_t b = now_ns();
  if (write_cpu) *write_cpu = cpu_since(c0);
  close(fd);
  unlink(path);
  uint64_t c = now_ns();
  for (uint64_t done = 0; done < bytes; done += chunk) {
    size_t n = bytes - done < chunk ? (size_t)(bytes - done) : chunk;
    src[done / chunk % chunk] ^= 1;
    memcpy(dst, src, n);
  }
  uint64_t d = now_ns();
  volatile char sink = dst[chunk / 2];
  (void)sink;
  free(src);
  free(dst);
  *write_s = (double)(b - a) / 1e9;
  *memcpy_s = (double)(d - c) / 1e9;
  return 0;
}

#define BATCH 256

/* Appends `events` trades to a new tape in `dir` (one call each, or
 * `batch` > 0: calls of BATCH), timed as a whole; seconds, or < 0, and
 * the CPU time of the appends in `*cpu`. */
static double timed_appends(const char *dir, const floxlog_tape_writer_config *cfg, uint64_t events,
                            int batch, cpu_t *cpu) {
  floxlog_tape_writer *w = NULL;
  floxlog_tape_error err;
  if (floxlog_tape_writer_open(dir, cfg, &w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    return -1;
  }
  static floxlog_trade buf[BATCH];
  const cpu_t c0 = cpu_now();
  const uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < events; i += BATCH) {
    const size_t n = events - i < BATCH ? (size_t)(events - i) : BATCH;
    /* The caller's records, made as a recorder would have them. */
    for (size_t k = 0; k < n; k++) buf[k] = trade(i + k);
    if (batch) {
      size_t done = 0;
      if (floxlog_tape_writer_append_trades(w, buf, n, &done, &err) != FLOXLOG_OK) {
        fprintf(stderr, "append_trades: %s\n", err.message);
        return -1;
      }
    } else {
      for (size_t k = 0; k < n; k++)
        if (floxlog_tape_writer_append_trade(w, &buf[k], &err) != FLOXLOG_OK) {
          fprintf(stderr, "append: %s\n", err.message);
          return -1;
        }
    }
  }
  const uint64_t t1 = now_ns();
  *cpu = cpu_since(c0);
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "close: %s\n", err.message);
    return -1;
  }
  floxlog_tape_writer_free(w);
  return (double)(t1 - t0) / 1e9;
}

/* --throughput: see the top of the file. */
static int throughput(const char *dir, const floxlog_tape_writer_config *cfg, uint64_t events,
                      const char *label) {
  char batch_dir[4096];
  snprintf(batch_dir, sizeof batch_dir, "%s-batch", dir);
  cpu_t single_cpu, batched_cpu, write_cpu;
  const double single = timed_appends(dir, cfg, events, 0, &single_cpu);
  const uint64_t bytes = tape_bytes(dir);
  /* One tape on disk at a time (10 M trades are 600 MB). */
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0 || mkdir(dir, 0755) != 0) return 1;
  double ws = 0, ms = 0;
  if (single < 0 || bytes == 0 || copy_times(dir, bytes, &ws, &ms, &write_cpu) != 0) return 1;
  const double batched = timed_appends(batch_dir, cfg, events, 1, &batched_cpu);
  if (batched < 0) return 1;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", batch_dir);
  if (system(cmd) != 0) return 1;
  const double ev = (double)events;
  printf("%-34s one call each %.2f M/s; append_trades(%d) %.2f M/s; write(2) of the same %.1f MB "
         "%.2f M events/s; memcpy %.2f M events/s\n",
         label, ev / single / 1e6, BATCH, ev / batched / 1e6, (double)bytes / 1e6, ev / ws / 1e6,
         ev / ms / 1e6);
  printf("%-34s one call each %.2f M/s (thread) %.2f M/s (process); append_trades(%d) %.2f M/s "
         "(thread) %.2f M/s (process); write(2) %.2f M events/s (thread); batch/write(2) %.2f "
         "(thread) %.2f (process)\n",
         "  over CPU time", ev / single_cpu.thread_s / 1e6, ev / single_cpu.process_s / 1e6, BATCH,
         ev / batched_cpu.thread_s / 1e6, ev / batched_cpu.process_s / 1e6,
         ev / write_cpu.thread_s / 1e6, write_cpu.thread_s / batched_cpu.thread_s,
         write_cpu.thread_s / batched_cpu.process_s);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [--events N] [--rate PER_S] [--max-segment-bytes B] "
                    "[--durability none|flush|close] [--journal] [--lz4] "
                    "[--throughput]\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  uint64_t events = 10000000, rate = 0, max_bytes = 64u << 20;
  uint8_t durability = FLOXLOG_DURABILITY_SYNC_ON_CLOSE;
  int journal = 0, lz4 = 0;
  const char *dur_name = "close";
  int thru = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--events") && i + 1 < argc) events = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--rate") && i + 1 < argc) rate = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--max-segment-bytes") && i + 1 < argc)
      max_bytes = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--durability") && i + 1 < argc) {
      dur_name = argv[++i];
      if (!strcmp(dur_name, "none")) durability = FLOXLOG_DURABILITY_NONE;
      else if (!strcmp(dur_name, "flush")) durability = FLOXLOG_DURABILITY_FLUSH;
      else if (!strcmp(dur_name, "close")) durability = FLOXLOG_DURABILITY_SYNC_ON_CLOSE;
      else return fprintf(stderr, "unknown durability %s\n", dur_name), 2;
    } else if (!strcmp(argv[i], "--journal")) journal = 1;
    else if (!strcmp(argv[i], "--lz4")) lz4 = 1;
    else if (!strcmp(argv[i], "--throughput")) thru = 1;
    else return fprintf(stderr, "unknown argument %s\n", argv[i]), 2;
  }
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  cfg.durability = durability;
  cfg.max_segment_bytes = max_bytes;
  if (journal) {
    cfg.journal = 1;
  }
  if (lz4) cfg.segment.compression = FLOXLOG_COMPRESSION_LZ4;
  if (thru) {
    char label[128];
    snprintf(label, sizeof label, "%s%s %s unclocked", journal ? "journal" : "default", lz4 ? " lz4" : "",
             dur_name);
    return throughput(dir, &cfg, events, label);
  }
  floxlog_tape_writer *w = NULL;
  floxlog_tape_error err;
  if (floxlog_tape_writer_open(dir, &cfg, &w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  uint32_t *lat = malloc(events * sizeof *lat);
  hist_t *h = calloc(1, sizeof *h), *hu = calloc(1, sizeof *hu);
  if (!lat || !h || !hu) return 1;
  const uint64_t interval = rate ? 1000000000u / rate : 0;
  const uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < events; i++) {
    floxlog_trade t = trade(i);
    uint64_t start, actual;
    if (interval) {
      const uint64_t intended = t0 + i * interval;
      while ((actual = now_ns()) < intended) {
      }
      start = intended; /* coordinated omission: from when it was due */
    } else {
      start = actual = now_ns();
    }
    if (floxlog_tape_writer_append_trade(w, &t, &err) != FLOXLOG_OK) {
      fprintf(stderr, "append %llu: %s\n", (unsigned long long)i, err.message);
      return 1;
    }
    const uint64_t end = now_ns();
    const uint64_t d = end - start;
    lat[i] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    record(h, d);
    if (interval) record(hu, end - actual);
  }
  const uint64_t t1 = now_ns();
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "close: %s\n", err.message);
    return 1;
  }
  floxlog_tape_writer_free(w);

  char what[128];
  snprintf(what, sizeof what, "%s%s %s%s", journal ? "journal" : "default", lz4 ? " lz4" : "",
           dur_name, rate ? " paced" : " unpaced");
  print_hist(what, h);
  if (interval) print_hist("  uncorrected (from actual start)", hu);
  fflush(stdout);
  /* The appends that opened a new segment. */
  const uint64_t k = lz4 ? 0 : per_segment(dir);
  if (k > 0 && k < events) {
    hist_t *r = calloc(1, sizeof *r);
    for (uint64_t i = k; i < events; i += k) record(r, lat[i]);
    printf("%-34s %llu rotations (every %llu trades): median %llu ns, max %llu ns\n", "  rotation appends",
           (unsigned long long)r->total, (unsigned long long)k,
           (unsigned long long)percentile(r, 50), (unsigned long long)r->max);
    free(r);
  }
  const double secs = (double)(t1 - t0) / 1e9;
  const uint64_t bytes = tape_bytes(dir);
  if (!rate && bytes > 0) {
    /* write(2) and memcpy of the same bytes, 1 MiB at a time. */
    double ws = 0, ms = 0;
    if (copy_times(dir, bytes, &ws, &ms, NULL) != 0) return 1;
    const double per_ev = (double)bytes / (double)events;
    printf("  unpaced: %.2f M appends/s (%.1f MB/s of tape); write(2) of the same bytes %.2f M events/s "
           "(%.1f MB/s); memcpy %.2f M events/s (%.1f MB/s)\n",
           (double)events / secs / 1e6, (double)bytes / secs / 1e6, (double)bytes / per_ev / ws / 1e6,
           (double)bytes / ws / 1e6, (double)bytes / per_ev / ms / 1e6, (double)bytes / ms / 1e6);
  } else {
    printf("  paced at %llu/s: %.2f s for %llu appends\n", (unsigned long long)rate, secs,
           (unsigned long long)events);
  }
  free(lat);
  free(h);
  free(hu);
  return 0;
}
