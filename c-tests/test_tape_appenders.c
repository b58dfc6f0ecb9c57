/*
 * Issue 34 through the C ABI: several appender threads into one tape,
 * the writer handle's claim, and encoded frames appended as they are.
 *
 *   - four threads, each with its own floxlog_tape_appender (one event, a
 *     trade or a batch of trades at a time), and the writer's own thread,
 *     rotating every 64 KiB, journal mode and the default writer: every
 *     event read back once, each appender's in its order; verify passes;
 *   - floxlog_tape_writer_close with an appender open: FLOXLOG_BUSY and
 *     nothing changes (the appender goes on); after it is freed, close;
 *   - floxlog_tape_writer_free with an appender open: the tape stays open
 *     (a second writer is refused) until the appender is freed;
 *   - one writer handle shared by two threads: the second call while the
 *     first runs gets FLOXLOG_BUSY (made certain by a clock hook that
 *     waits inside the first append), then four threads hammering one
 *     handle: every call OK or BUSY, the tape holds exactly the OK ones
 *     and verifies;
 *   - encoded frames: appended as they are (the tape reads them back),
 *     a bad CRC in frame k refused with its offset, k frames appended;
 *   - a journal recorder process killed while three appenders and its own
 *     thread append: every append that returned is read back, in order;
 *     recover and verify pass.
 *
 * Usage: test_tape_appenders WORKDIR (created; must not exist).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define PER_THREAD 4000u
#define THREADS 4u

static const char *workdir;

static floxlog_trade trade(uint32_t a, uint64_t i) {
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = (int64_t)i;
  t.recv_ts_ns = (int64_t)i;
  t.price_raw = 100 + (int64_t)i;
  t.qty_raw = 1;
  t.trade_id = i;
  t.symbol_id = a + 1;
  t.side = (uint8_t)(i % 2);
  t.exchange_id = 1;
  return t;
}

static void path_of(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", workdir, name);
}

static floxlog_tape_writer *open_writer(const char *dir, int journal) {
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  cfg.journal = (uint8_t)journal;
  cfg.max_segment_bytes = 64u << 10;
  floxlog_tape_writer *w = NULL;
  floxlog_tape_error err;
  floxlog_result rc = floxlog_tape_writer_open(dir, &cfg, &w, &err);
  CHECK_RC(rc, FLOXLOG_OK);
  if (rc != FLOXLOG_OK) fprintf(stderr, "open %s: %s\n", dir, err.message);
  return w;
}

/* Reads the tape in file order; checks each appender's trades are its
 * first ones in its order, at least at_least[a] of them; returns the
 * count (or UINT64_MAX on a read error). */
static uint64_t check_tape(const char *dir, uint32_t appenders, const uint64_t *at_least) {
  floxlog_tape_reader_options o;
  floxlog_tape_reader_options_default(&o);
  o.order = FLOXLOG_ORDER_FILE;
  floxlog_tape_reader *r = NULL;
  floxlog_tape_error err;
  if (floxlog_tape_reader_open(dir, &o, &r, &err) != FLOXLOG_OK) {
    fprintf(stderr, "read %s: %s\n", dir, err.message);
    CHECK(0);
    return UINT64_MAX;
  }
  uint64_t next[8] = {0}, n = 0;
  floxlog_trade buf[512];
  size_t got = 0;
  floxlog_result rc;
  int order_ok = 1;
  while ((rc = floxlog_tape_reader_next_trades(r, buf, 512, &got, &err)) == FLOXLOG_OK) {
    for (size_t k = 0; k < got; k++) {
      uint32_t a = buf[k].symbol_id - 1;
      if (a >= appenders || buf[k].trade_id != next[a] || buf[k].exchange_ts_ns != (int64_t)next[a]) {
        order_ok = 0;
      } else {
        next[a]++;
      }
      n++;
    }
  }
  CHECK_RC(rc, FLOXLOG_END);
  if (rc != FLOXLOG_END) fprintf(stderr, "read %s: %s\n", dir, err.message);
  CHECK(order_ok);
  for (uint32_t a = 0; a < appenders && at_least; a++) {
    CHECK(next[a] >= at_least[a]);
    if (next[a] < at_least[a])
      fprintf(stderr, "%s: appender %u: %" PRIu64 " read, %" PRIu64 " acknowledged\n", dir, a, next[a],
              at_least[a]);
  }
  floxlog_tape_reader_free(r);
  return n;
}

static void check_verifies(const char *dir) {
  floxlog_verify_summary vs;
  memset(&vs, 0, sizeof vs);
  floxlog_tape_error err;
  floxlog_result rc = floxlog_tape_verify(dir, NULL, NULL, NULL, &vs, &err);
  CHECK_RC(rc, FLOXLOG_OK);
  if (rc != FLOXLOG_OK) fprintf(stderr, "verify %s: %s\n", dir, err.message);
  CHECK(vs.passed == 1 && vs.errors == 0);
}

/* --- several appenders ---------------------------------------------- */

typedef struct {
  floxlog_tape_appender *ap;
  uint32_t a;
  int failures;
} feed_t;

static void *feed(void *arg) {
  feed_t *f = arg;
  floxlog_tape_error err;
  uint64_t i = 0;
  while (i < PER_THREAD) {
    floxlog_result rc;
    if (f->a % 2 == 0 && i % 100 == 0) {
      floxlog_trade batch[100];
      for (int k = 0; k < 100; k++) batch[k] = trade(f->a, i + (uint64_t)k);
      size_t n = 0;
      rc = floxlog_tape_appender_append_trades(f->ap, batch, 100, &n, &err);
      if (n != 100) f->failures++;
      i += 100;
    } else if (i % 3 == 0) {
      floxlog_event ev;
      memset(&ev, 0, sizeof ev);
      ev.kind = FLOXLOG_EVENT_TRADE;
      ev.data.trade = trade(f->a, i);
      rc = floxlog_tape_appender_append(f->ap, &ev, &err);
      i++;
    } else {
      floxlog_trade t = trade(f->a, i);
      rc = floxlog_tape_appender_append_trade(f->ap, &t, &err);
      i++;
    }
    if (rc != FLOXLOG_OK) {
      fprintf(stderr, "appender %u: %s\n", f->a, err.message);
      f->failures++;
      break;
    }
  }
  return NULL;
}

static void test_appenders(int journal) {
  char dir[1024];
  path_of(dir, sizeof dir, journal ? "appenders-journal" : "appenders-default");
  floxlog_tape_writer *w = open_writer(dir, journal);
  if (!w) return;
  floxlog_tape_error err;
  feed_t feeds[THREADS];
  pthread_t th[THREADS];
  for (uint32_t a = 0; a < THREADS; a++) {
    feeds[a].a = a;
    feeds[a].failures = 0;
    CHECK_RC(floxlog_tape_appender_open(w, &feeds[a].ap, &err), FLOXLOG_OK);
    pthread_create(&th[a], NULL, feed, &feeds[a]);
  }
  for (uint64_t i = 0; i < PER_THREAD; i++) {
    floxlog_trade t = trade(THREADS, i);
    CHECK_RC(floxlog_tape_writer_append_trade(w, &t, &err), FLOXLOG_OK);
  }
  for (uint32_t a = 0; a < THREADS; a++) {
    pthread_join(th[a], NULL);
    CHECK(feeds[a].failures == 0);
    floxlog_tape_appender_free(feeds[a].ap);
  }
  uint64_t written = 0, durable = 0;
  CHECK_RC(floxlog_tape_writer_progress(w, &written, &durable), FLOXLOG_OK);
  CHECK_RC(floxlog_tape_writer_close(w, &err), FLOXLOG_OK);
  CHECK_RC(floxlog_tape_writer_progress(w, &written, &durable), FLOXLOG_OK);
  CHECK(written == (THREADS + 1) * (uint64_t)PER_THREAD);
  floxlog_tape_writer_free(w);
  uint64_t want[THREADS + 1];
  for (uint32_t a = 0; a <= THREADS; a++) want[a] = PER_THREAD;
  CHECK(check_tape(dir, THREADS + 1, want) == (THREADS + 1) * (uint64_t)PER_THREAD);
  check_verifies(dir);
}

/* --- close and free with an appender open ----------------------------- */

static void test_close_and_free(int journal) {
  char dir[1024];
  floxlog_tape_error err;
  for (int by_free = 0; by_free < 2; by_free++) {
    snprintf(dir, sizeof dir, "%s/close-%d-%d", workdir, journal, by_free);
    floxlog_tape_writer *w = open_writer(dir, journal);
    if (!w) return;
    floxlog_tape_appender *ap = NULL;
    CHECK_RC(floxlog_tape_appender_open(w, &ap, &err), FLOXLOG_OK);
    floxlog_trade t = trade(0, 0);
    CHECK_RC(floxlog_tape_writer_append_trade(w, &t, &err), FLOXLOG_OK);
    if (by_free) {
      floxlog_tape_writer_free(w);
      w = NULL;
    } else {
      CHECK_RC(floxlog_tape_writer_close(w, &err), FLOXLOG_BUSY);
      CHECK(err.code == FLOXLOG_BUSY);
      /* Nothing changed: the writer still appends. */
      t = trade(0, 1);
      CHECK_RC(floxlog_tape_writer_append_trade(w, &t, &err), FLOXLOG_OK);
    }
    /* Still open: the tape lock is held, the appender appends. */
    floxlog_tape_writer *w2 = NULL;
    CHECK_RC(floxlog_tape_writer_open(dir, NULL, &w2, &err), FLOXLOG_TAPE_LOCKED);
    t = trade(1, 0);
    CHECK_RC(floxlog_tape_appender_append_trade(ap, &t, &err), FLOXLOG_OK);
    floxlog_tape_appender_free(ap);
    if (w) {
      CHECK_RC(floxlog_tape_writer_close(w, &err), FLOXLOG_OK);
      CHECK_RC(floxlog_tape_appender_open(w, &ap, &err), FLOXLOG_FINISHED);
      floxlog_tape_writer_free(w);
    }
    uint64_t want[2] = {by_free ? 1u : 2u, 1};
    CHECK(check_tape(dir, 2, want) == want[0] + want[1]);
    check_verifies(dir);
  }
}

/* --- one writer handle, two threads ---------------------------------- */

typedef struct {
  floxlog_tape_writer *w;
  atomic_int inside;  /* the first append is inside the clock hook */
  atomic_int tried;   /* the second thread's call returned */
  floxlog_result second;
} collide_t;

static collide_t collide;

static int64_t waiting_clock(void *ctx) {
  (void)ctx;
  atomic_store(&collide.inside, 1);
  while (!atomic_load(&collide.tried)) sched_yield();
  return 1;
}

static void *second_call(void *arg) {
  (void)arg;
  while (!atomic_load(&collide.inside)) sched_yield();
  floxlog_trade t = trade(1, 0);
  floxlog_tape_error err;
  collide.second = floxlog_tape_writer_append_trade(collide.w, &t, &err);
  atomic_store(&collide.tried, 1);
  return NULL;
}

typedef struct {
  floxlog_tape_writer *w;
  uint32_t a;
  uint64_t ok, busy, other;
} hammer_t;

static void *hammer(void *arg) {
  hammer_t *h = arg;
  floxlog_tape_error err;
  for (uint64_t i = 0; i < 20000; i++) {
    floxlog_trade t = trade(h->a, h->ok);
    floxlog_result rc = floxlog_tape_writer_append_trade(h->w, &t, &err);
    if (rc == FLOXLOG_OK)
      h->ok++;
    else if (rc == FLOXLOG_BUSY)
      h->busy++;
    else
      h->other++;
  }
  return NULL;
}

static void test_shared_handle(int journal) {
  char dir[1024];
  floxlog_tape_error err;
  snprintf(dir, sizeof dir, "%s/shared-%d", workdir, journal);
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  cfg.journal = (uint8_t)journal;
  cfg.clock_ns = waiting_clock;
  collide.w = NULL;
  CHECK_RC(floxlog_tape_writer_open(dir, &cfg, &collide.w, &err), FLOXLOG_OK);
  if (!collide.w) return;
  atomic_store(&collide.inside, 0);
  atomic_store(&collide.tried, 0);
  pthread_t th;
  pthread_create(&th, NULL, second_call, NULL);
  /* The first segment's clock call waits until the second call returned. */
  floxlog_trade t = trade(0, 0);
  CHECK_RC(floxlog_tape_writer_append_trade(collide.w, &t, &err), FLOXLOG_OK);
  pthread_join(th, NULL);
  CHECK_RC(collide.second, FLOXLOG_BUSY);
  /* The counts stay readable from any thread; the second call did nothing. */
  uint64_t written = 0, durable = 0;
  CHECK_RC(floxlog_tape_writer_progress(collide.w, &written, &durable), FLOXLOG_OK);
  CHECK_RC(floxlog_tape_writer_close(collide.w, &err), FLOXLOG_OK);
  floxlog_tape_writer_free(collide.w);
  uint64_t one[2] = {1, 0};
  CHECK(check_tape(dir, 2, one) == 1);

  /* Four threads, one handle, no lock: OK or BUSY, never a bad tape. */
  snprintf(dir, sizeof dir, "%s/hammer-%d", workdir, journal);
  floxlog_tape_writer *w = open_writer(dir, journal);
  if (!w) return;
  hammer_t hs[4];
  pthread_t ths[4];
  for (uint32_t a = 0; a < 4; a++) {
    hs[a] = (hammer_t){w, a, 0, 0, 0};
    pthread_create(&ths[a], NULL, hammer, &hs[a]);
  }
  uint64_t ok = 0, busy = 0;
  uint64_t want[4];
  for (uint32_t a = 0; a < 4; a++) {
    pthread_join(ths[a], NULL);
    CHECK(hs[a].other == 0);
    ok += hs[a].ok;
    busy += hs[a].busy;
    want[a] = hs[a].ok;
  }
  CHECK_RC(floxlog_tape_writer_close(w, &err), FLOXLOG_OK);
  floxlog_tape_writer_free(w);
  printf("  shared handle (journal %d): %" PRIu64 " appends OK, %" PRIu64 " refused BUSY\n", journal, ok,
         busy);
  CHECK(check_tape(dir, 4, want) == ok);
  check_verifies(dir);
}

/* --- encoded frames --------------------------------------------------- */

#define FRAMES 2000u
#define FRAME_LEN 60u

static void test_frames(int journal) {
  static uint8_t bytes[FRAMES * FRAME_LEN];
  floxlog_error e;
  for (uint32_t i = 0; i < FRAMES; i++) {
    floxlog_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = FLOXLOG_EVENT_TRADE;
    ev.data.trade = trade(0, i);
    size_t n = 0;
    CHECK_RC(floxlog_frame_encode(&ev, FLOXLOG_PROFILE_REFERENCE, bytes + i * FRAME_LEN, FRAME_LEN, &n, &e),
             FLOXLOG_OK);
    CHECK(n == FRAME_LEN);
  }
  char dir[1024];
  floxlog_tape_error err;
  snprintf(dir, sizeof dir, "%s/frames-%d", workdir, journal);
  floxlog_tape_writer *w = open_writer(dir, journal);
  if (!w) return;
  floxlog_tape_appender *ap = NULL;
  CHECK_RC(floxlog_tape_appender_open(w, &ap, &err), FLOXLOG_OK);
  size_t count = 99;
  size_t half = FRAMES / 2 * FRAME_LEN;
  CHECK_RC(floxlog_tape_appender_append_frames(ap, bytes, half, &count, &err), FLOXLOG_OK);
  CHECK(count == FRAMES / 2);
  floxlog_tape_appender_free(ap);
  CHECK_RC(floxlog_tape_writer_append_frames(w, bytes + half, sizeof bytes - half, &count, &err), FLOXLOG_OK);
  CHECK(count == FRAMES - FRAMES / 2);
  CHECK_RC(floxlog_tape_writer_close(w, &err), FLOXLOG_OK);
  floxlog_tape_writer_free(w);
  uint64_t all[1] = {FRAMES};
  CHECK(check_tape(dir, 1, all) == FRAMES);
  check_verifies(dir);

  /* A bad CRC in frame k: k frames appended, the error at its offset. */
  const uint32_t ks[3] = {0, 1, 1234};
  for (int j = 0; j < 3; j++) {
    uint32_t k = ks[j];
    snprintf(dir, sizeof dir, "%s/bad-frames-%d-%u", workdir, journal, k);
    w = open_writer(dir, journal);
    if (!w) return;
    bytes[k * FRAME_LEN + 12 + 5] ^= 0x40;
    count = 99;
    CHECK_RC(floxlog_tape_writer_append_frames(w, bytes, sizeof bytes, &count, &err), FLOXLOG_CRC_MISMATCH);
    bytes[k * FRAME_LEN + 12 + 5] ^= 0x40;
    CHECK(count == k);
    CHECK(err.has_offset && err.offset == (uint64_t)k * FRAME_LEN);
    /* A frame cut short. */
    CHECK_RC(floxlog_tape_writer_append_frames(w, bytes, FRAME_LEN - 1, &count, &err), FLOXLOG_TRUNCATED);
    CHECK(count == 0);
    CHECK_RC(floxlog_tape_writer_append_frames(w, NULL, 1, &count, &err), FLOXLOG_NULL_POINTER);
    CHECK_RC(floxlog_tape_writer_close(w, &err), FLOXLOG_OK);
    floxlog_tape_writer_free(w);
    uint64_t first[1] = {k};
    CHECK(check_tape(dir, 1, first) == k);
    check_verifies(dir);
  }
}

/* --- a killed recorder with several appenders ------------------------- */

typedef struct {
  floxlog_tape_appender *ap;
  floxlog_tape_writer *w;
  uint32_t a;
  _Atomic uint64_t *acked;
} rec_t;

static void *record(void *arg) {
  rec_t *r = arg;
  for (uint64_t i = 0;; i++) {
    floxlog_trade t = trade(r->a, i);
    floxlog_result rc = r->ap ? floxlog_tape_appender_append_trade(r->ap, &t, NULL)
                              : floxlog_tape_writer_append_trade(r->w, &t, NULL);
    if (rc != FLOXLOG_OK) _exit(3);
    atomic_store(r->acked, i + 1);
  }
  return NULL;
}

static void recorder(const char *dir, _Atomic uint64_t *acked) {
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  cfg.journal = 1;
  cfg.max_segment_bytes = 256u << 10;
  floxlog_tape_writer *w = NULL;
  if (floxlog_tape_writer_open(dir, &cfg, &w, NULL) != FLOXLOG_OK) _exit(2);
  static rec_t recs[4];
  pthread_t th[3];
  for (uint32_t a = 0; a < 4; a++) {
    recs[a] = (rec_t){NULL, w, a, &acked[a]};
    if (a < 3) {
      if (floxlog_tape_appender_open(w, &recs[a].ap, NULL) != FLOXLOG_OK) _exit(2);
      pthread_create(&th[a], NULL, record, &recs[a]);
    }
  }
  record(&recs[3]);
}

static void test_killed(void) {
  for (int k = 0; k < 4; k++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/killed-%d", workdir, k);
    _Atomic uint64_t *acked =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(acked != MAP_FAILED);
    if (acked == MAP_FAILED) return;
    pid_t pid = fork();
    if (pid == 0) {
      recorder(dir, acked);
      _exit(0);
    }
    /* The kill delay starts once every appender has an acknowledged
     * append: the writer's lock is not fair, and on a loaded machine one
     * appender can hold it for a while (at most 30 s of waiting). */
    const struct timespec poll = {0, 1000000L};
    for (int tries = 0; tries < 30000; tries++) {
      int all = 1;
      for (int a = 0; a < 4; a++) all &= atomic_load(&acked[a]) > 0;
      if (all) break;
      nanosleep(&poll, NULL);
    }
    struct timespec ts = {0, (20 + 40 * k) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    uint64_t acks[4];
    for (int a = 0; a < 4; a++) {
      acks[a] = atomic_load(&acked[a]);
      CHECK(acks[a] > 0);
    }
    CHECK(check_tape(dir, 4, acks) != UINT64_MAX);
    floxlog_recover_summary sum;
    floxlog_tape_error err;
    floxlog_result rc = floxlog_tape_recover(dir, NULL, NULL, NULL, &sum, &err);
    CHECK_RC(rc, FLOXLOG_OK);
    if (rc != FLOXLOG_OK) fprintf(stderr, "recover %s: %s\n", dir, err.message);
    check_verifies(dir);
    CHECK(check_tape(dir, 4, acks) != UINT64_MAX);
    printf("  killed %d: acknowledged %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", k, acks[0], acks[1],
           acks[2], acks[3]);
    munmap((void *)acked, 4096);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WORKDIR\n", argv[0]);
    return 2;
  }
  workdir = argv[1];
  if (mkdir(workdir, 0755) != 0) {
    perror(workdir);
    return 2;
  }
  for (int journal = 0; journal < 2; journal++) {
    test_appenders(journal);
    test_close_and_free(journal);
    test_shared_handle(journal);
    test_frames(journal);
  }
  test_killed();
  return check_report("test_tape_appenders");
}
