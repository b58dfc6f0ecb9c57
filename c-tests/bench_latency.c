/* Append latency of the tape writer through the C ABI (a benchmark, not a
 * test; run by scripts/bench-latency.sh).
 *
 *   bench_latency DIR [--events N] [--rate PER_S] [--max-segment-bytes B]
 *                     [--durability none|flush|close] [--journal] [--lz4]
 *                     [--tail spin|block] [--throughput]
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
 * --tail spin|block: append-to-tailer latency. The writer stamps each
 * trade's exchange_ts_ns with CLOCK_MONOTONIC at the append (paced: its
 * intended start, so a writer stall counts too); a tailer in another
 * process (this executable re-run, started before the first append)
 * follows the tape from its beginning with floxlog_tape_tail_next_trades
 * and subtracts the stamp from the clock when a batch is handed to it
 * (and, printed below it, the append's actual start, stamped in
 * recv_ts_ns: the writer's lateness left out):
 * `spin` polls with timeout 0 in a loop (FLOXLOG_TAIL_WAIT_BUSY_SPIN),
 * `block` waits with no time limit (FLOXLOG_TAIL_WAIT_BLOCKING: sleeps
 * from 10 us doubling up to 10 ms while nothing arrives). Both processes
 * print their histogram (same clock: CLOCK_MONOTONIC is system-wide).
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

#define SUB_BITS 8
#define SUB (1u << SUB_BITS)  /* exact below this; then SUB/2 sub-buckets per power of two */
#define HALF (SUB / 2)
#define NBUCKETS (SUB + 64 * HALF)

typedef struct {
  uint64_t counts[NBUCKETS];
  uint64_t total, max, over_50us;
} hist_t;

static unsigned bucket_of(uint64_t v) {
  if (v < SUB) return (unsigned)v;
  unsigned msb = 63u - (unsigned)__builtin_clzll(v);
  unsigned shift = msb - (SUB_BITS - 1); /* v >> shift is in [HALF, SUB) */
  return SUB + (shift - 1) * HALF + (unsigned)((v >> shift) - HALF);
}

/* The largest value of bucket `b` (what a percentile reports). */
static uint64_t bucket_top(unsigned b) {
  if (b < SUB) return b;
  unsigned j = b - SUB, shift = j / HALF + 1;
  uint64_t m = j % HALF + HALF;
  return ((m + 1) << shift) - 1;
}

static void record(hist_t *h, uint64_t v) {
  h->counts[bucket_of(v)]++;
  h->total++;
  if (v > h->max) h->max = v;
  if (v > 50000) h->over_50us++;
}

static uint64_t percentile(const hist_t *h, double p) {
  uint64_t want = (uint64_t)(p / 100.0 * (double)h->total + 0.5);
  if (want == 0) want = 1;
  uint64_t seen = 0;
  for (unsigned b = 0; b < NBUCKETS; b++) {
    seen += h->counts[b];
    if (seen >= want) {
      uint64_t top = bucket_top(b);
      return top < h->max ? top : h->max;
    }
  }
  return h->max;
}

static uint64_t clock_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

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

static void print_hist(const char *what, const hist_t *h) {
  printf("%-34s p50 %6llu  p90 %6llu  p99 %7llu  p99.9 %8llu  p99.99 %9llu  max %10llu ns; "
         "over 50us: %llu of %llu\n",
         what, (unsigned long long)percentile(h, 50), (unsigned long long)percentile(h, 90),
         (unsigned long long)percentile(h, 99), (unsigned long long)percentile(h, 99.9),
         (unsigned long long)percentile(h, 99.99), (unsigned long long)h->max,
         (unsigned long long)h->over_50us, (unsigned long long)h->total);
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

/* The tailer process: opens a tail on `dir` (mode "spin" or "block"),
 * says so on `ready_fd`, then records each trade's latency (the clock on
 * receipt minus its exchange_ts_ns stamp) until the writer closes the
 * tape. */
static int tail_child(const char *dir, const char *mode, int ready_fd) {
  const int spin = strcmp(mode, "spin") == 0;
  floxlog_tail_options o;
  floxlog_tail_options_default(&o);
  o.wait = spin ? FLOXLOG_TAIL_WAIT_BUSY_SPIN : FLOXLOG_TAIL_WAIT_BLOCKING;
  floxlog_tape_tail *t = NULL;
  floxlog_tape_error err;
  if (floxlog_tape_tail_open(dir, &o, &t, &err) != FLOXLOG_OK) {
    fprintf(stderr, "tail open: %s\n", err.message);
    return 1;
  }
  hist_t *h = calloc(1, sizeof *h), *ha = calloc(1, sizeof *ha);
  if (!h || !ha) return 1;
  if (write(ready_fd, "r", 1) != 1) return 1;
  close(ready_fd);
  static floxlog_trade buf[256];
  floxlog_result rc;
  for (;;) {
    size_t n = 0;
    rc = floxlog_tape_tail_next_trades(t, buf, 256, &n, spin ? 0 : -1, &err);
    if (rc == FLOXLOG_TIMEOUT) continue;
    if (rc != FLOXLOG_OK) break;
    const uint64_t now = now_ns();
    for (size_t i = 0; i < n; i++) {
      const uint64_t stamp = (uint64_t)buf[i].exchange_ts_ns;
      const uint64_t began = (uint64_t)buf[i].recv_ts_ns;
      record(h, now > stamp ? now - stamp : 0);
      record(ha, now > began ? now - began : 0);
    }
  }
  if (rc != FLOXLOG_END) {
    fprintf(stderr, "tail: %s: %s\n", floxlog_result_name(rc), err.message);
    return 1;
  }
  floxlog_tape_tail_free(t);
  char what[64];
  snprintf(what, sizeof what, "  append-to-tailer (%s)", spin ? "busy-spin" : "blocking");
  print_hist(what, h);
  /* From when the append actually began: the writer's own lateness (a
   * paced run's queue) left out. */
  snprintf(what, sizeof what, "    from the append's actual start");
  print_hist(what, ha);
  free(h);
  free(ha);
  return 0;
}

/* Starts the tailer process (this executable with --tail-child) on `dir`
 * and waits until its tail is open; returns its pid, or -1. */
static pid_t start_tailer(const char *self, const char *dir, const char *mode) {
  int p[2];
  if (pipe(p) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", p[1]);
    execl(self, self, "--tail-child", dir, mode, fd, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  char c;
  ssize_t got = read(p[0], &c, 1);
  close(p[0]);
  return pid > 0 && got == 1 ? pid : -1;
}

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "--tail-child")) return tail_child(argv[2], argv[3], atoi(argv[4]));
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [--events N] [--rate PER_S] [--max-segment-bytes B] "
                    "[--durability none|flush|close] [--journal] [--lz4] [--tail spin|block] "
                    "[--throughput]\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  uint64_t events = 10000000, rate = 0, max_bytes = 64u << 20;
  uint8_t durability = FLOXLOG_DURABILITY_SYNC_ON_CLOSE;
  int journal = 0, lz4 = 0;
  const char *dur_name = "close";
  const char *tail_mode = NULL;
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
    else if (!strcmp(argv[i], "--tail") && i + 1 < argc) {
      tail_mode = argv[++i];
      if (strcmp(tail_mode, "spin") && strcmp(tail_mode, "block"))
        return fprintf(stderr, "--tail takes spin or block\n"), 2;
    } else return fprintf(stderr, "unknown argument %s\n", argv[i]), 2;
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
  pid_t tailer = -1;
  if (tail_mode && (tailer = start_tailer(argv[0], dir, tail_mode)) < 0) {
    fprintf(stderr, "the tailer did not start\n");
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
    if (tail_mode) {
      /* For the tailer: when the append was due, and when it began. */
      t.exchange_ts_ns = (int64_t)start;
      t.recv_ts_ns = (int64_t)actual;
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
  if (tailer > 0) {
    int status = 0;
    waitpid(tailer, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "the tailer failed (status 0x%x)\n", status);
      return 1;
    }
  }
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
