/* Append-to-reader hand-off latency (a benchmark, not a test; run by
 * scripts/bench-latency.sh).
 *
 *   bench_handoff DIR --mode limit|limit-futex|spin|poll0|yield|block --rate PER_S
 *                 [--events N] [--busy] [--appenders K] [--seconds S]
 *
 * Two processes. The writer appends one trade per tick of an absolute
 * schedule at PER_S: it sleeps to each tick with clock_nanosleep
 * (TIMER_ABSTIME), so its core is mostly idle and the reader has one of
 * its own; --busy paces by spinning on the clock instead (for rates a
 * sleep cannot keep, 1 MHz). Just before each append it stamps
 * CLOCK_MONOTONIC into the trade's recv_ts_ns; the reader subtracts it
 * from the clock on receipt. Latencies go to an HDR-style histogram.
 *
 * --mode limit: the machine's limit on the same schedule: the writer
 *   stores (stamp, then seq with a release store) into a shared mapping,
 *   the reader spins on seq with acquire loads. No tape.
 * --mode limit-futex: the limit of a sleeping reader (Linux): the same,
 *   but the reader sets a flag and sleeps on seq with FUTEX_WAIT, and the
 *   writer calls FUTEX_WAKE when the flag is set (what the tailer's
 *   blocking wait does on a journal tape).
 * --mode spin: a tailer with FLOXLOG_TAIL_WAIT_BUSY_SPIN waiting inside
 *   floxlog_tape_tail_next (timeout 1 s);
 * --mode poll0: the same, next(..., 0) in the caller's own loop (how a
 *   feed handler's event loop polls);
 * --mode yield: FLOXLOG_TAIL_WAIT_SPIN_YIELD, timeout 1 s;
 * --mode block: FLOXLOG_TAIL_WAIT_BLOCKING, no time limit (the journal
 *   writer wakes it).
 * The tape modes use the journal writer (cfg.journal = 1, durability
 * none). The reader opens its tail before the writer opens the tape (the
 * tailer's writer wait covers the gap), then waits on a pipe until the
 * tape is open (so that it does not spin through the writer's set-up).
 *
 * On a machine shared with other work, run it under SCHED_FIFO (the
 * script's BENCH_PRIO="chrt -f 10"): keep each run under the kernel's
 * real-time budget (sched_rt_runtime_us, 0.95 s a second), or its
 * throttling (tens of ms without the CPU) shows as the tail. Under a
 * real-time policy the reader runs one priority above the writer: FIFO
 * never preempts an equal, so writer threads that keep both cores busy
 * (K appenders each sleeping to its tick: one clock_nanosleep costs tens
 * of us of CPU on a VM) would otherwise starve the reader, and the
 * figure would be the starvation, not the hand-off.
 *
 * --seconds S: the writer stops at S seconds after its first tick even if
 * it has not appended --events (a sleeping writer cannot keep a rate whose
 * tick is shorter than its sleep's own cost); the "kept" column says what
 * rate it kept.
 *
 * --appenders K (tape modes): K threads append through a
 * floxlog_tape_appender each, thread j the events j, j+K, j+2K... on the
 * same schedule (so the tape still gets PER_S events a second, one per
 * tick, from K threads taking turns); 1 (the default): the writer's own
 * handle, no thread. The append p50 is over every thread's appends.
 *
 * Prints one line: mode, rate, the percentiles p50 p90 p99 p99.9 p99.99
 * max (ns), events, the reader's CPU time over the wall time of the run
 * (percent of one core), the p50 of the writer's append call (stamp to
 * return: the part of the hand-off spent before the frame is published;
 * 0 for the limit), and the rate the writers kept (events appended over
 * the time from the first tick to the last append).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floxlog.h"

#include "bench_hist.h"

/* The limit's shared mapping: a ring of stamps, published by seq. */
#define RING 1024
typedef struct {
  _Alignas(64) _Atomic uint64_t seq;
  _Atomic uint32_t futex_seq, waiting, done;
  _Alignas(64) uint64_t stamp[RING];
} shm_t;

static long futex(_Atomic uint32_t *w, int op, uint32_t v) {
  return syscall(SYS_futex, (uint32_t *)w, op, v, NULL, NULL, 0);
}

typedef struct {
  const char *dir, *mode;
  uint64_t rate, events;
  int busy, appenders;
  double seconds;
} args_t;

/* Whether the writer is past --seconds (0: no limit) at `now`. */
static int over_time(const args_t *a, uint64_t t0, uint64_t now) {
  return a->seconds > 0 && now >= t0 + (uint64_t)(a->seconds * 1e9);
}

/* Sleeps (or spins, `busy`) until `t` on CLOCK_MONOTONIC. Busy-paced
 * appender threads (more threads than one) yield while they wait: K
 * spinning threads on two cores would otherwise hold the reader's core. */
static void wait_until(uint64_t t, int busy, int yields) {
  if (busy) {
    while (now_ns() < t) {
      if (yields) sched_yield();
    }
    return;
  }
  struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static floxlog_trade trade(uint64_t i, uint64_t stamp) {
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = (int64_t)stamp;
  t.recv_ts_ns = (int64_t)stamp;
  t.price_raw = 100;
  t.qty_raw = 1;
  t.trade_id = i;
  t.symbol_id = 1;
  return t;
}

/* The reader's result, written into the shared mapping's tail. */
typedef struct {
  hist_t h;
  double cpu_s, wall_s;
  int failed;
} result_t;

static double cpu_s(void) { return (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9; }

static void read_limit(const args_t *a, shm_t *m, result_t *r, int sleeps) {
  uint64_t last = 0;
  while (last < a->events) {
    uint64_t s = atomic_load_explicit(&m->seq, memory_order_acquire);
    if (s == last && atomic_load(&m->done)) break; /* --seconds ran out */
    if (s == last && sleeps) {
      atomic_store(&m->waiting, 1);
      const uint32_t seen = atomic_load(&m->futex_seq);
      if (atomic_load(&m->seq) == last && !atomic_load(&m->done)) futex(&m->futex_seq, FUTEX_WAIT, seen);
      continue;
    }
    if (s == last) continue;
    const uint64_t now = now_ns();
    for (uint64_t k = last; k < s; k++) {
      const uint64_t st = m->stamp[k % RING];
      record(&r->h, now > st ? now - st : 0);
    }
    last = s;
  }
}

static void read_tail(const args_t *a, int ready_fd, int go_fd, result_t *r) {
  floxlog_tape_tail_options o;
  floxlog_tape_tail_options_default(&o);
  int64_t timeout = 1000000000; /* 1 s */
  if (!strcmp(a->mode, "spin")) o.wait = FLOXLOG_TAIL_WAIT_BUSY_SPIN;
  else if (!strcmp(a->mode, "poll0")) o.wait = FLOXLOG_TAIL_WAIT_BUSY_SPIN, timeout = 0;
  else if (!strcmp(a->mode, "yield")) o.wait = FLOXLOG_TAIL_WAIT_SPIN_YIELD;
  else o.wait = FLOXLOG_TAIL_WAIT_BLOCKING, timeout = -1;
  o.writer_wait_ns = 30000000000; /* the writer opens after this tail */
  floxlog_tape_tail *t = NULL;
  floxlog_tape_error err;
  if (floxlog_tape_tail_open(a->dir, &o, &t, &err) != FLOXLOG_OK) {
    fprintf(stderr, "tail open: %s\n", err.message);
    r->failed = 1;
    return;
  }
  if (write(ready_fd, "r", 1) != 1) r->failed = 1;
  /* Waits (without spinning) until the writer has opened the tape. */
  char go;
  if (read(go_fd, &go, 1) != 1) r->failed = 1;
  floxlog_event ev;
  floxlog_result rc;
  for (;;) {
    rc = floxlog_tape_tail_next(t, &ev, timeout, &err);
    if (rc == FLOXLOG_TIMEOUT) continue;
    if (rc != FLOXLOG_OK) break;
    const uint64_t now = now_ns();
    const uint64_t st = (uint64_t)ev.data.trade.recv_ts_ns;
    record(&r->h, now > st ? now - st : 0);
  }
  if (rc != FLOXLOG_END) {
    fprintf(stderr, "tail: %s: %s\n", floxlog_result_name(rc), err.message);
    r->failed = 1;
  }
  floxlog_tape_tail_free(t);
}

/* The writers' pace: the first tick, the last append's end, events. */
static uint64_t first_tick, last_append, appended;

static int write_limit(const args_t *a, shm_t *m, int wakes) {
  const uint64_t interval = 1000000000u / a->rate;
  const uint64_t t0 = now_ns() + 1000000;
  first_tick = t0;
  for (uint64_t i = 0; i < a->events; i++) {
    wait_until(t0 + i * interval, a->busy, 0);
    const uint64_t stamp = now_ns();
    if (over_time(a, t0, stamp)) break;
    m->stamp[i % RING] = stamp;
    atomic_store_explicit(&m->seq, i + 1, memory_order_release);
    if (wakes && atomic_load_explicit(&m->waiting, memory_order_relaxed)) {
      atomic_store(&m->waiting, 0);
      atomic_fetch_add(&m->futex_seq, 1);
      futex(&m->futex_seq, FUTEX_WAKE, INT32_MAX);
    }
    appended++;
  }
  last_append = now_ns();
  atomic_store(&m->done, 1);
  atomic_fetch_add(&m->futex_seq, 1);
  futex(&m->futex_seq, FUTEX_WAKE, INT32_MAX);
  return 0;
}

/* The writer's side: each append's own time (stamp to return). */
static hist_t appends;

/* One appending thread of --appenders K: its appender, its share of the
 * schedule, its own histogram (merged into `appends` after the join). */
typedef struct {
  const args_t *a;
  floxlog_tape_appender *ap;
  uint64_t first, t0, appended, end;
  hist_t h;
  int failed;
} appender_job_t;

static void *append_thread(void *arg) {
  appender_job_t *j = arg;
  const args_t *a = j->a;
  const uint64_t interval = 1000000000u / a->rate;
  floxlog_tape_error err;
  for (uint64_t i = j->first; i < a->events; i += (uint64_t)a->appenders) {
    wait_until(j->t0 + i * interval, a->busy, 1);
    const uint64_t stamp = now_ns();
    if (over_time(a, j->t0, stamp)) break;
    floxlog_trade t = trade(i, stamp);
    if (floxlog_tape_appender_append_trade(j->ap, &t, &err) != FLOXLOG_OK) {
      fprintf(stderr, "appender append %llu: %s\n", (unsigned long long)i, err.message);
      j->failed = 1;
      break;
    }
    j->end = now_ns();
    record(&j->h, j->end - stamp);
    j->appended++;
  }
  return NULL;
}

/* --appenders K > 1: K threads, each with its own appender. */
static int append_threads(const args_t *a, floxlog_tape_writer *w) {
  appender_job_t *jobs = calloc((size_t)a->appenders, sizeof *jobs);
  pthread_t *th = calloc((size_t)a->appenders, sizeof *th);
  if (!jobs || !th) return fprintf(stderr, "out of memory\n"), 1;
  const uint64_t t0 = now_ns() + 1000000;
  first_tick = t0;
  int failed = 0, started = 0;
  floxlog_tape_error err;
  for (int k = 0; k < a->appenders; k++) {
    jobs[k].a = a;
    jobs[k].first = (uint64_t)k;
    jobs[k].t0 = t0;
    if (floxlog_tape_appender_open(w, &jobs[k].ap, &err) != FLOXLOG_OK) {
      fprintf(stderr, "appender open: %s\n", err.message);
      failed = 1;
      break;
    }
    if (pthread_create(&th[k], NULL, append_thread, &jobs[k]) != 0) {
      floxlog_tape_appender_free(jobs[k].ap);
      failed = 1;
      break;
    }
    started++;
  }
  for (int k = 0; k < started; k++) {
    pthread_join(th[k], NULL);
    floxlog_tape_appender_free(jobs[k].ap);
    failed |= jobs[k].failed;
    appended += jobs[k].appended;
    if (jobs[k].end > last_append) last_append = jobs[k].end;
    for (unsigned b = 0; b < NBUCKETS; b++) appends.counts[b] += jobs[k].h.counts[b];
    appends.total += jobs[k].h.total;
    appends.over_50us += jobs[k].h.over_50us;
    if (jobs[k].h.max > appends.max) appends.max = jobs[k].h.max;
  }
  free(jobs);
  free(th);
  return failed;
}

/* --appenders 1: the writer's own handle, on the calling thread. */
static int append_own(const args_t *a, floxlog_tape_writer *w) {
  const uint64_t interval = 1000000000u / a->rate;
  const uint64_t t0 = now_ns() + 1000000;
  first_tick = t0;
  floxlog_tape_error err;
  for (uint64_t i = 0; i < a->events; i++) {
    wait_until(t0 + i * interval, a->busy, 0);
    const uint64_t stamp = now_ns();
    if (over_time(a, t0, stamp)) break;
    floxlog_trade t = trade(i, stamp);
    if (floxlog_tape_writer_append_trade(w, &t, &err) != FLOXLOG_OK) {
      fprintf(stderr, "append %llu: %s\n", (unsigned long long)i, err.message);
      return 1;
    }
    last_append = now_ns();
    record(&appends, last_append - stamp);
    appended++;
  }
  return 0;
}

static int write_tape(const args_t *a, int go_fd) {
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  cfg.journal = 1;
  cfg.durability = FLOXLOG_DURABILITY_NONE;
  cfg.max_segment_bytes = 64u << 20;
  floxlog_tape_writer *w = NULL;
  floxlog_tape_error err;
  if (floxlog_tape_writer_open(a->dir, &cfg, &w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  if (write(go_fd, "g", 1) != 1) return 1;
  if ((a->appenders > 1 ? append_threads(a, w) : append_own(a, w)) != 0) return 1;
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "close: %s\n", err.message);
    return 1;
  }
  floxlog_tape_writer_free(w);
  return 0;
}

int main(int argc, char **argv) {
  args_t a = {NULL, NULL, 0, 0, 0, 1, 0};
  if (argc > 1) a.dir = argv[1];
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--mode") && i + 1 < argc) a.mode = argv[++i];
    else if (!strcmp(argv[i], "--rate") && i + 1 < argc) a.rate = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--events") && i + 1 < argc) a.events = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--busy")) a.busy = 1;
    else if (!strcmp(argv[i], "--appenders") && i + 1 < argc) a.appenders = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) a.seconds = atof(argv[++i]);
    else return fprintf(stderr, "unknown argument %s\n", argv[i]), 2;
  }
  static const char *modes[] = {"limit", "limit-futex", "spin", "poll0", "yield", "block"};
  int known = 0;
  for (size_t k = 0; a.mode && k < sizeof modes / sizeof *modes; k++) known |= !strcmp(a.mode, modes[k]);
  if (!a.dir || !known || a.rate == 0 || a.rate > 1000000000u) {
    fprintf(stderr, "usage: %s DIR --mode limit|limit-futex|spin|poll0|yield|block --rate PER_S [--events N] "
                    "[--busy] [--appenders K] [--seconds S]\n", argv[0]);
    return 2;
  }
  if (a.appenders < 1 || a.appenders > 64) {
    fprintf(stderr, "--appenders: 1 to 64\n");
    return 2;
  }
  if (a.events == 0) a.events = a.rate * 3 < 1000000 ? a.rate * 3 : 1000000;
  const int futexed = !strcmp(a.mode, "limit-futex");
  const int limit = !strcmp(a.mode, "limit") || futexed;
  if (!limit && mkdir(a.dir, 0755) != 0 && errno != EEXIST) return perror("mkdir"), 1;
  shm_t *m = mmap(NULL, sizeof(shm_t) + sizeof(result_t), PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return perror("mmap"), 1;
  result_t *r = (result_t *)(m + 1);
  int p[2], go[2];
  if (pipe(p) != 0 || pipe(go) != 0) return perror("pipe"), 1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return perror("fork"), 1;
  if (pid == 0) {
    close(p[0]);
    close(go[1]);
    /* One priority above the writer under a real-time policy (see the
     * top of the file). */
    const int pol = sched_getscheduler(0);
    if (pol == SCHED_FIFO || pol == SCHED_RR) {
      struct sched_param sp;
      if (sched_getparam(0, &sp) == 0 && sp.sched_priority < sched_get_priority_max(pol)) {
        sp.sched_priority += 1;
        if (sched_setscheduler(0, pol, &sp) != 0) perror("sched_setscheduler");
      }
    }
    const double c0 = cpu_s(), w0 = (double)now_ns() / 1e9;
    if (limit) {
      if (write(p[1], "r", 1) != 1) _exit(1);
      read_limit(&a, m, r, futexed);
    } else {
      read_tail(&a, p[1], go[0], r);
    }
    r->cpu_s = cpu_s() - c0;
    r->wall_s = (double)now_ns() / 1e9 - w0;
    _exit(r->failed);
  }
  close(p[1]);
  close(go[0]);
  char c;
  if (read(p[0], &c, 1) != 1) return fprintf(stderr, "the reader did not start\n"), 1;
  close(p[0]);
  const int rc = limit ? write_limit(&a, m, futexed) : write_tape(&a, go[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s at %llu/s failed (reader status 0x%x)\n", a.mode, (unsigned long long)a.rate,
            status);
    return 1;
  }
  const hist_t *h = &r->h;
  const double kept_s = last_append > first_tick ? (double)(last_append - first_tick) / 1e9 : 0;
  printf("%s %llu%s %llu %llu %llu %llu %llu %llu %llu %.0f %llu %.0f\n", a.mode, (unsigned long long)a.rate,
         a.busy ? "busy" : "", (unsigned long long)percentile(h, 50),
         (unsigned long long)percentile(h, 90), (unsigned long long)percentile(h, 99),
         (unsigned long long)percentile(h, 99.9), (unsigned long long)percentile(h, 99.99),
         (unsigned long long)h->max, (unsigned long long)h->total,
         r->wall_s > 0 ? 100.0 * r->cpu_s / r->wall_s : 0.0,
         (unsigned long long)(appends.total ? percentile(&appends, 50) : 0),
         kept_s > 0 ? (double)appended / kept_s : 0.0);
  return 0;
}
