/*
 * Issue 22's crash test of the journal writer with a live tailer: a
 * recorder process (this executable re-run with `--recorder`) appends
 * trades numbered 0, 1, 2... through floxlog_tape_writer in journal mode
 * (segments of 1 MiB mapped shared, rotating every ~15000 trades), with
 * `resume` set, and reports through a pipe how many appends have
 * returned. The parent kills it with SIGKILL at a random point (after a
 * random number of acknowledged trades, then a random delay), KILLS times,
 * and restarts it on the same tape each time; a tailer process (forked
 * first, before this process uses floxlog) follows the tape from its
 * beginning with floxlog_tape_tail_* the whole time, across rotations,
 * kills, recovers and restarts. After each kill:
 *
 *   - the tailer receives every trade the recorder acknowledged, in order,
 *     exactly once (it checks that trade k is trade_id k, field by field);
 *   - floxlog_tape_recover and then floxlog_tape_verify pass (the tailer
 *     still reading);
 *   - the tape holds at least every acknowledged trade and at most the
 *     batch the recorder was in when killed beyond them; the tailer never
 *     got more than the tape holds. The next recorder goes on from there.
 *
 * Then a recorder closes the tape cleanly: the tailer gets FLOXLOG_END
 * after exactly the tape's trades. Seeded (FLOXLOG_CRASH_SEED replays).
 *
 * Usage: test_journal_tail_crash WORKDIR (created; must not exist).
 */
#define _POSIX_C_SOURCE 200809L
/* MAP_ANONYMOUS (the memory the tailer shares with the parent). */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Kills (the issue asks for at least 20). */
#define KILLS 24
/* Most trades acknowledged before a kill is due: ~4.5 segments. */
#define MAX_TARGET 70000ull
/* Most trades per append call (the recorder's batches). */
#define MAX_BATCH 256
/* Trades of the last recorder, which closes the tape. */
#define FINAL 20000ull
#define SEGMENT_BYTES (1u << 20)
#define TS_BASE 1710000000000000000ll
/* Longest any wait of a passing run takes, with room to spare. */
#define PATIENCE_S 30.0

static uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Trade number i of the tape: every field follows from i. */
static floxlog_trade trade_of(uint64_t i) {
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = TS_BASE + (int64_t)i * 1000;
  t.recv_ts_ns = t.exchange_ts_ns + 5000 + (int64_t)(mix64(i) % 100);
  t.price_raw = 6500000000000ll + (int64_t)(mix64(i ^ 7) % 200000);
  t.qty_raw = 1 + (int64_t)(mix64(i ^ 9) % 10000000);
  t.trade_id = i;
  t.symbol_id = (uint32_t)(i % 50);
  t.side = (uint8_t)(i & 1);
  t.instrument = 1;
  t.exchange_id = 7;
  return t;
}

static int same_trade(const floxlog_trade *a, const floxlog_trade *b) {
  return a->exchange_ts_ns == b->exchange_ts_ns && a->recv_ts_ns == b->recv_ts_ns &&
         a->price_raw == b->price_raw && a->qty_raw == b->qty_raw && a->trade_id == b->trade_id &&
         a->symbol_id == b->symbol_id && a->side == b->side && a->instrument == b->instrument &&
         a->exchange_id == b->exchange_id;
}

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    c += (size_t)k;
    n -= (size_t)k;
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Recorder (re-executed child)                                         */

/* Opens the tape (journal, resume), says so (count 0), then appends trades
 * from `start` in batches of 1..MAX_BATCH, sending after each call how many
 * of its appends have returned; closes after `n` (never, if killed first).
 * `pace_us`: a pause after each batch. */
static int recorder(const char *dir, uint64_t start, uint64_t n, long pace_us, uint64_t seed,
                    int fd) {
  floxlog_tape_writer_config cfg;
  floxlog_tape_error err;
  floxlog_tape_writer *w = NULL;
  if (floxlog_tape_writer_config_default(&cfg) != FLOXLOG_OK) return 2;
  cfg.journal = 1;
  cfg.resume = 1;
  cfg.durability = FLOXLOG_DURABILITY_NONE;
  cfg.max_segment_bytes = SEGMENT_BYTES;
  if (floxlog_tape_writer_open(dir, &cfg, &w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "recorder: open: %s\n", err.message);
    return 2;
  }
  uint64_t done = 0;
  if (write_all(fd, &done, sizeof done) != 0) return 3;
  static floxlog_trade batch[MAX_BATCH];
  uint64_t rng = mix64(seed ^ 0xB47Cull);
  while (done < n) {
    rng = mix64(rng);
    size_t b = 1 + (size_t)(rng % MAX_BATCH);
    if (b > n - done) b = (size_t)(n - done);
    for (size_t k = 0; k < b; k++) batch[k] = trade_of(start + done + k);
    size_t appended = 0;
    if (floxlog_tape_writer_append_trades(w, batch, b, &appended, &err) != FLOXLOG_OK ||
        appended != b) {
      fprintf(stderr, "recorder: append: %s\n", err.message);
      return 2;
    }
    /* Sent after the call returned: a count sent is a promise made. */
    done += b;
    if (write_all(fd, &done, sizeof done) != 0) return 3;
    if (pace_us > 0) sleep_us(pace_us);
  }
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "recorder: close: %s\n", err.message);
    return 2;
  }
  floxlog_tape_writer_free(w);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Tailer (forked child) and what it shares with the parent             */

typedef struct {
  /* Tailer -> parent. */
  _Atomic uint64_t received; /* trades received, all checked */
  _Atomic uint32_t bad;      /* trades not the next one expected */
  _Atomic uint32_t ended;    /* got FLOXLOG_END once `closed` was set */
  _Atomic int32_t failed;    /* the floxlog_result of an error, or 0 */
  _Atomic uint64_t ends_early, gone; /* END / WRITER_GONE while not done */
  char message[1280];
  /* Parent -> tailer. */
  _Atomic uint32_t closed; /* the last recorder closed the tape */
  _Atomic uint32_t quit;   /* stop now (the parent gave up) */
} shared_t;

static void tailer(const char *dir, shared_t *sh) {
  floxlog_tape_tail_options o;
  floxlog_tape_error err;
  floxlog_tape_tail *t = NULL;
  floxlog_tape_tail_options_default(&o); /* from the beginning, CRCs, blocking */
  floxlog_result rc;
  /* The directory may hold nothing yet: open as soon as it does. */
  double t0 = now_s();
  while ((rc = floxlog_tape_tail_open(dir, &o, &t, &err)) != FLOXLOG_OK) {
    if (atomic_load(&sh->quit) || now_s() - t0 > PATIENCE_S) {
      snprintf(sh->message, sizeof sh->message, "open: %.1000s", err.message);
      atomic_store(&sh->failed, (int32_t)rc);
      _exit(1);
    }
    sleep_us(1000);
  }
  static floxlog_trade batch[512];
  uint64_t next = 0;
  for (;;) {
    if (atomic_load(&sh->quit)) break;
    size_t n = 0;
    rc = floxlog_tape_tail_next_trades(t, batch, 512, &n, 50000000ll, &err);
    if (rc == FLOXLOG_OK) {
      for (size_t k = 0; k < n; k++, next++) {
        floxlog_trade want = trade_of(next);
        if (!same_trade(&batch[k], &want) && atomic_fetch_add(&sh->bad, 1) == 0)
          snprintf(sh->message, sizeof sh->message,
                   "trade %" PRIu64 " received is trade_id %" PRIu64 " (ts %" PRId64 ")", next,
                   batch[k].trade_id, batch[k].exchange_ts_ns);
      }
      atomic_store(&sh->received, next);
      continue;
    }
    if (rc == FLOXLOG_TIMEOUT) continue;
    if (rc == FLOXLOG_END || rc == FLOXLOG_WRITER_GONE) {
      /* Neither is final: a recorder is restarted after each kill (and
       * a recovered tape looks closed until it is). */
      if (rc == FLOXLOG_END && atomic_load(&sh->closed)) {
        atomic_store(&sh->ended, 1);
        break;
      }
      atomic_fetch_add(rc == FLOXLOG_END ? &sh->ends_early : &sh->gone, 1);
      sleep_us(1000);
      continue;
    }
    snprintf(sh->message, sizeof sh->message, "%s: %.1000s", floxlog_result_name(rc), err.message);
    atomic_store(&sh->failed, (int32_t)rc);
    break;
  }
  floxlog_tape_tail_free(t);
  _exit(0);
}

/* ------------------------------------------------------------------ */
/* Parent                                                               */

static const char *self_exe;

/* A recorder's report pipe and the last count it sent (-1: none yet). */
typedef struct {
  int fd, open;
  int64_t last;
} reports_t;

/* Starts a recorder of `n` trades from `start`; `*rd` gets the report
 * pipe. */
static pid_t start_recorder(const char *dir, uint64_t start, uint64_t n, long pace_us,
                            uint64_t seed, reports_t *rd) {
  int p[2];
  if (pipe(p) != 0) {
    perror("pipe");
    return -1;
  }
  fcntl(p[0], F_SETFD, FD_CLOEXEC);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char a_start[32], a_n[32], a_pace[32], a_seed[32], a_fd[32];
    snprintf(a_start, sizeof a_start, "%" PRIu64, start);
    snprintf(a_n, sizeof a_n, "%" PRIu64, n);
    snprintf(a_pace, sizeof a_pace, "%ld", pace_us);
    snprintf(a_seed, sizeof a_seed, "%" PRIu64, seed);
    snprintf(a_fd, sizeof a_fd, "%d", p[1]);
    char *args[] = {(char *)self_exe, "--recorder", (char *)dir, a_start, a_n, a_pace, a_seed,
                    a_fd, NULL};
    execv(self_exe, args);
    _exit(127);
  }
  close(p[1]);
  rd->fd = p[0];
  rd->open = 1;
  rd->last = -1;
  return pid;
}

/* Reads reports until one says at least `want` or until `deadline` (0:
 * until the pipe closes); returns the last count. */
static int64_t read_reports(reports_t *r, uint64_t want, double deadline) {
  while (r->open) {
    if (deadline > 0 && r->last >= 0 && (uint64_t)r->last >= want) break;
    double left = deadline > 0 ? deadline - now_s() : 1.0;
    if (left <= 0) break;
    struct pollfd pf = {r->fd, POLLIN, 0};
    int k = poll(&pf, 1, (int)(left * 1000) + 1);
    if (k <= 0) continue;
    uint64_t v[64];
    ssize_t got = read(r->fd, v, sizeof v);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      r->open = 0;
      break;
    }
    /* Reports are 8 bytes, written whole (under PIPE_BUF): a read ends on
     * one's end. */
    r->last = (int64_t)v[(size_t)got / sizeof v[0] - 1];
  }
  return r->last;
}

/* Waits until the tailer has `n` trades, failed, or the patience ran out. */
static int wait_received(shared_t *sh, uint64_t n) {
  double t0 = now_s();
  while (atomic_load(&sh->received) < n && !atomic_load(&sh->failed)) {
    if (now_s() - t0 > PATIENCE_S) return 0;
    sleep_us(500);
  }
  return atomic_load(&sh->received) >= n;
}

static uint64_t count_segments(const char *dir) {
  DIR *d = opendir(dir);
  uint64_t n = 0;
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (e->d_name[0] != '.' && l > 8 && strcmp(e->d_name + l - 8, ".floxlog") == 0) n++;
  }
  closedir(d);
  return n;
}

static void on_finding(const floxlog_finding *f, void *ctx) {
  (void)ctx;
  if (f->severity == FLOXLOG_SEVERITY_ERROR) fprintf(stderr, "verify: %s\n", f->text);
}

/* Temporary files recover removed (a killed journal's reserved first
 * segment). */
static uint64_t temps_removed;

static void on_recover(const floxlog_recover_report *rep, void *ctx) {
  (void)ctx;
  if (strcmp(rep->action, "removed_temp") == 0) temps_removed++;
  if (strcmp(rep->action, "failed") == 0)
    fprintf(stderr, "recover failed on %s: %s\n", rep->file,
            rep->error ? rep->error->message : "?");
}

/* recover, then verify; returns the events verify counted. */
static uint64_t recover_and_verify(const char *dir, const char *ctx) {
  floxlog_tape_error err;
  floxlog_recover_summary rs;
  memset(&rs, 0, sizeof rs);
  floxlog_result rc = floxlog_tape_recover(dir, NULL, on_recover, NULL, &rs, &err);
  CHECK_RC(rc, FLOXLOG_OK);
  if (rc != FLOXLOG_OK) fprintf(stderr, "%s: recover: %s\n", ctx, err.message);
  CHECK(rs.failed == 0);
  floxlog_verify_summary vs;
  memset(&vs, 0, sizeof vs);
  rc = floxlog_tape_verify(dir, NULL, on_finding, NULL, &vs, &err);
  CHECK_RC(rc, FLOXLOG_OK);
  if (rc != FLOXLOG_OK) fprintf(stderr, "%s: verify: %s\n", ctx, err.message);
  CHECK(vs.passed == 1 && vs.errors == 0);
  CHECK(rs.events_kept == vs.events);
  return vs.events;
}

int main(int argc, char **argv) {
  if (argc == 8 && strcmp(argv[1], "--recorder") == 0)
    return recorder(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
                    atol(argv[5]), strtoull(argv[6], NULL, 10), atoi(argv[7]));
  if (argc != 2) {
    fprintf(stderr, "usage: test_journal_tail_crash WORKDIR\n");
    return 2;
  }
  self_exe = argv[0];
  signal(SIGPIPE, SIG_IGN);
  /* A hang is a failure, not a stuck ctest. */
  alarm(300);
  const char *env = getenv("FLOXLOG_CRASH_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0)
                      : mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
  printf("journal_tail_crash: seed %" PRIu64 " (replay with FLOXLOG_CRASH_SEED=%" PRIu64 ")\n",
         seed, seed);
  char dir[4096];
  if (mkdir(argv[1], 0755) != 0) {
    perror(argv[1]);
    return 2;
  }
  snprintf(dir, sizeof dir, "%s/tape", argv[1]);
  if (mkdir(dir, 0755) != 0) {
    perror(dir);
    return 2;
  }

  /* The tailer first: forked before this process starts any floxlog
   * thread. */
  shared_t *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  memset(sh, 0, sizeof *sh);
  fflush(NULL);
  pid_t tail_pid = fork();
  if (tail_pid == 0) tailer(dir, sh);

  double t0 = now_s();
  uint64_t total = 0; /* trades the tape holds (the next trade's number) */
  int kills = 0, rotated = 0, before_first = 0;
  for (int k = 0; k < KILLS && check_failures == 0; k++) {
    uint64_t rs = mix64(seed + (uint64_t)k);
    /* One kill in eight as soon as the writer is open; the others after a
     * random count, then a random delay of up to 2 ms. Half the runs
     * paced. */
    uint64_t target = rs % 8 == 0 ? 0 : 1 + (mix64(rs ^ 1) % MAX_TARGET);
    long delay_us = target == 0 ? 0 : (long)(mix64(rs ^ 2) % 2000);
    long pace_us = mix64(rs ^ 3) % 2 ? 0 : 50;
    char ctx[128];
    snprintf(ctx, sizeof ctx, "[kill %d: from trade %" PRIu64 ", after %" PRIu64 " + %ld us]", k,
             total, target, delay_us);
    uint64_t segs_before = count_segments(dir);
    reports_t rd;
    pid_t pid = start_recorder(dir, total, UINT64_MAX / 2, pace_us, rs, &rd);
    CHECK(pid > 0);
    if (pid <= 0) break;
    int64_t acked = read_reports(&rd, target, now_s() + PATIENCE_S);
    if (acked < 0 || (uint64_t)acked < target) {
      fprintf(stderr, "%s: the recorder acknowledged %" PRId64 " trades in %.0f s\n", ctx, acked,
              PATIENCE_S);
      ++check_failures;
    }
    sleep_us(delay_us);
    kill(pid, SIGKILL);
    acked = read_reports(&rd, 0, 0); /* to the pipe's end */
    close(rd.fd);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    if (acked < 0) acked = 0;
    uint64_t want = total + (uint64_t)acked;

    /* Every acknowledged trade reaches the tailer, the writer dead. */
    int all = wait_received(sh, want);
    CHECK(all);
    if (!all)
      fprintf(stderr, "%s: the tailer got %" PRIu64 " of %" PRIu64 " acknowledged trades (%s)\n",
              ctx, atomic_load(&sh->received), want, sh->message);
    CHECK(atomic_load(&sh->bad) == 0);
    CHECK(atomic_load(&sh->failed) == 0);

    /* Killed before its first append, on a tape with no segment yet:
     * nothing to recover. */
    uint64_t n = count_segments(dir) == 0 && want == 0 ? 0 : recover_and_verify(dir, ctx);
    CHECK(n >= want);
    CHECK(n <= want + MAX_BATCH);
    CHECK(atomic_load(&sh->received) <= n);
    if (n < want || n > want + MAX_BATCH)
      fprintf(stderr, "%s: the tape holds %" PRIu64 " trades, %" PRIu64 " acknowledged\n", ctx, n,
              want);
    uint64_t segs = count_segments(dir);
    kills++;
    /* A run leaves its live segment and the next one prepared: a third
     * new file means it rotated. */
    rotated += segs >= segs_before + 3;
    before_first += acked == 0;
    printf("  kill %2d: acknowledged %6" PRId64 " (+%ld us, pace %ld us) -> tape %8" PRIu64
           " trades, %3" PRIu64 " segments, tailer %8" PRIu64 "\n",
           k, acked, delay_us, pace_us, n, segs, atomic_load(&sh->received));
    if (atomic_load(&sh->bad) || atomic_load(&sh->failed))
      fprintf(stderr, "%s: tailer: %s\n", ctx, sh->message);
    total = n;
  }

  /* A recorder that closes the tape: the tailer ends after every trade. */
  if (check_failures == 0) {
    reports_t rd;
    pid_t pid = start_recorder(dir, total, FINAL, 0, seed, &rd);
    int64_t acked = read_reports(&rd, 0, 0);
    close(rd.fd);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(acked == (int64_t)FINAL);
    total += FINAL;
    atomic_store(&sh->closed, 1);
    CHECK(wait_received(sh, total));
    double t1 = now_s();
    while (!atomic_load(&sh->ended) && !atomic_load(&sh->failed) && now_s() - t1 < PATIENCE_S)
      sleep_us(1000);
    CHECK(atomic_load(&sh->ended) == 1);
    CHECK(atomic_load(&sh->received) == total);
    CHECK(atomic_load(&sh->bad) == 0);
    floxlog_tape_error err;
    floxlog_verify_summary vs;
    memset(&vs, 0, sizeof vs);
    CHECK_RC(floxlog_tape_verify(dir, NULL, on_finding, NULL, &vs, &err), FLOXLOG_OK);
    CHECK(vs.passed == 1 && vs.events == total);
  }
  if (atomic_load(&sh->failed) || atomic_load(&sh->bad))
    fprintf(stderr, "tailer: %s\n", sh->message);
  atomic_store(&sh->quit, 1);
  int status = 0;
  waitpid(tail_pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  printf("%d kills (%d with a rotation in the run, %d before the first append) in %.1f s; "
         "%" PRIu64 " trades; %" PRIu64 " temporary files removed by recover; the tailer saw "
         "END %" PRIu64 " and WRITER_GONE %" PRIu64 " times before the tape was closed\n",
         kills, rotated, before_first, now_s() - t0, total, temps_removed,
         atomic_load(&sh->ends_early), atomic_load(&sh->gone));
  CHECK(kills >= 20);
  CHECK(rotated > 0);
  if (check_failures == 0) {
    /* The tape is big: gone unless a failure needs it looked at. */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", argv[1]);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", argv[1]);
  } else {
    fprintf(stderr, "the tape is kept in %s\n", dir);
  }
  return check_report("journal_tail_crash");
}
