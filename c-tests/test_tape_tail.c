/*
 * The live tailer (floxlog_tape_tail_*) against a writer in another
 * process: a recorder child (fork) appends trades numbered 0, 1, 2...
 * through floxlog_tape_writer with FLOXLOG_DURABILITY_FLUSH (each append
 * is in the file when it returns) and 16 KiB segments (it rotates every
 * ~300 trades), and reports through a pipe how many appends returned.
 * The parent tails the tape and checks:
 *
 *   - round 1, the writer closes: every event arrives, in order, once,
 *     then FLOXLOG_END (and FLOXLOG_END again on a later call); a tailer
 *     resumed from a saved position continues with the next event; one
 *     started at the end gets FLOXLOG_END at once;
 *   - round 2, the writer is SIGKILLed mid-stream: the events arrive in
 *     order, once, at least as many as the writer acknowledged, then
 *     FLOXLOG_WRITER_GONE (with no time limit: it must not hang), read with
 *     floxlog_tape_tail_next_trades;
 *   - round 3, a spec-layout tape of two series (trades and book deltas,
 *     journal mode, rotating every few dozen events): a tailer stopped
 *     after every number of events (inside segments and right at their
 *     rolls), its position saved as bytes and resumed, gets every later
 *     event of each series once, in order;
 *   - bad arguments are refused with codes, never a crash.
 *
 * Usage: test_tape_tail WORKDIR (created; must not exist).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define TS_BASE 1710000000000000000ll
#define ROUND1 20000ull
/* Round 2: the kill comes once the tailer has this many events. */
#define KILL_AFTER 3000ull
/* Ten seconds: longer than any wait of a passing run. */
#define PATIENCE_NS 10000000000ll

static floxlog_trade trade_of(uint64_t i) {
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = TS_BASE + (int64_t)i * 1000;
  t.recv_ts_ns = t.exchange_ts_ns + 7;
  t.price_raw = 6500000000000ll + (int64_t)(i % 977);
  t.qty_raw = 1 + (int64_t)(i % 13);
  t.trade_id = i;
  t.symbol_id = (uint32_t)(i % 5);
  t.side = (uint8_t)(i % 2);
  t.instrument = 1;
  t.exchange_id = 3;
  return t;
}

static void write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) _exit(3);
    c += k;
    n -= (size_t)k;
  }
}

/* The recorder: opens the tape, says so (count 0), appends `n` trades
 * (reporting every 100), closes when `n` is reached. */
static void recorder(const char *dir, uint64_t n, int fd) {
  floxlog_tape_writer_config cfg;
  floxlog_tape_error err;
  floxlog_tape_writer *w = NULL;
  if (floxlog_tape_writer_config_default(&cfg) != FLOXLOG_OK) _exit(2);
  cfg.durability = FLOXLOG_DURABILITY_FLUSH;
  cfg.max_segment_bytes = 16u << 10;
  if (floxlog_tape_writer_open(dir, &cfg, &w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "recorder: %s\n", err.message);
    _exit(2);
  }
  uint64_t done = 0;
  write_all(fd, &done, sizeof done);
  for (uint64_t i = 0; i < n; ++i) {
    floxlog_trade t = trade_of(i);
    if (floxlog_tape_writer_append_trade(w, &t, &err) != FLOXLOG_OK) {
      fprintf(stderr, "recorder: %s\n", err.message);
      _exit(2);
    }
    if ((i + 1) % 100 == 0) {
      done = i + 1;
      write_all(fd, &done, sizeof done);
    }
  }
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) _exit(2);
  floxlog_tape_writer_free(w);
  _exit(0);
}

/* Starts a recorder and waits until its writer holds the tape. */
static pid_t start_recorder(const char *dir, uint64_t n, int *rd) {
  int p[2];
  if (pipe(p) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    recorder(dir, n, p[1]);
  }
  close(p[1]);
  uint64_t first = 1;
  if (read(p[0], &first, sizeof first) != (ssize_t)sizeof first || first != 0) {
    fprintf(stderr, "the recorder did not start\n");
    exit(1);
  }
  *rd = p[0];
  return pid;
}

/* Checks that `ev` is trade number `want`. */
static int is_trade(const floxlog_event *ev, uint64_t want) {
  floxlog_trade t = trade_of(want);
  return ev->kind == FLOXLOG_EVENT_TRADE && ev->data.trade.trade_id == want &&
         ev->data.trade.exchange_ts_ns == t.exchange_ts_ns &&
         ev->data.trade.price_raw == t.price_raw;
}

static void round_closed(const char *dir) {
  floxlog_tape_error err;
  floxlog_tape_tail *t = NULL;
  CHECK(mkdir(dir, 0755) == 0);
  int rd;
  pid_t pid = start_recorder(dir, ROUND1, &rd);
  CHECK_RC(floxlog_tape_tail_open(dir, NULL, &t, &err), FLOXLOG_OK);
  uint64_t got = 0, bad = 0;
  uint8_t saved[FLOXLOG_TAIL_POSITION_MAX];
  size_t saved_len = 0;
  floxlog_result rc;
  floxlog_event ev;
  for (;;) {
    rc = floxlog_tape_tail_next(t, &ev, PATIENCE_NS, &err);
    if (rc != FLOXLOG_OK) break;
    if (!is_trade(&ev, got)) ++bad;
    ++got;
    if (got == 1000) CHECK_RC(floxlog_tape_tail_position(t, saved, sizeof saved, &saved_len, &err), FLOXLOG_OK);
  }
  if (rc != FLOXLOG_END) fprintf(stderr, "round 1 ended with %s: %s\n", floxlog_result_name(rc), err.message);
  CHECK_RC(rc, FLOXLOG_END);
  CHECK(got == ROUND1);
  CHECK(bad == 0);
  CHECK_RC(floxlog_tape_tail_next(t, &ev, 0, &err), FLOXLOG_END);
  int status = -1;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(rd);
  floxlog_tape_tail_free(t);

  /* Resume after event 999: the next is 1000. */
  floxlog_tape_tail_options o;
  CHECK_RC(floxlog_tape_tail_options_default(&o), FLOXLOG_OK);
  CHECK(o.start == FLOXLOG_TAIL_START_BEGINNING && o.verify_crc == 1 &&
        o.wait == FLOXLOG_TAIL_WAIT_BLOCKING);
  o.start = FLOXLOG_TAIL_START_POSITION;
  o.position = saved;
  o.position_len = saved_len;
  CHECK(saved_len > 12 && memcmp(saved, "FLTP", 4) == 0);
  CHECK_RC(floxlog_tape_tail_open(dir, &o, &t, &err), FLOXLOG_OK);
  CHECK_RC(floxlog_tape_tail_next(t, &ev, 0, &err), FLOXLOG_OK);
  CHECK(is_trade(&ev, 1000));
  floxlog_tape_tail_free(t);

  /* From the end of a closed tape: nothing, the end. */
  o.start = FLOXLOG_TAIL_START_END;
  o.wait = FLOXLOG_TAIL_WAIT_BUSY_SPIN;
  CHECK_RC(floxlog_tape_tail_open(dir, &o, &t, &err), FLOXLOG_OK);
  CHECK_RC(floxlog_tape_tail_next(t, &ev, -1, &err), FLOXLOG_END);
  floxlog_tape_tail_free(t);
}

static void round_killed(const char *dir) {
  floxlog_tape_error err;
  floxlog_tape_tail *t = NULL;
  CHECK(mkdir(dir, 0755) == 0);
  int rd;
  pid_t pid = start_recorder(dir, UINT64_MAX, &rd);
  floxlog_tape_tail_options o;
  CHECK_RC(floxlog_tape_tail_options_default(&o), FLOXLOG_OK);
  o.wait = FLOXLOG_TAIL_WAIT_SPIN_YIELD;
  CHECK_RC(floxlog_tape_tail_open(dir, &o, &t, &err), FLOXLOG_OK);
  floxlog_trade batch[64];
  uint64_t got = 0, bad = 0;
  int killed = 0;
  floxlog_result rc;
  for (;;) {
    size_t n = 0;
    /* No limit once killed: the tailer must see that the writer is gone. */
    rc = floxlog_tape_tail_next_trades(t, batch, 64, &n, killed ? -1 : PATIENCE_NS, &err);
    if (rc != FLOXLOG_OK) break;
    for (size_t i = 0; i < n; ++i, ++got)
      if (batch[i].trade_id != got || batch[i].exchange_ts_ns != trade_of(got).exchange_ts_ns) ++bad;
    if (!killed && got >= KILL_AFTER) {
      CHECK(kill(pid, SIGKILL) == 0);
      int status = -1;
      CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
      killed = 1;
    }
  }
  if (rc != FLOXLOG_WRITER_GONE) fprintf(stderr, "round 2 ended with %s: %s\n", floxlog_result_name(rc), err.message);
  CHECK_RC(rc, FLOXLOG_WRITER_GONE);
  CHECK(killed);
  CHECK(bad == 0);
  /* Every append the writer saw return is there. */
  uint64_t acked = 0, v;
  while (read(rd, &v, sizeof v) == (ssize_t)sizeof v) acked = v;
  close(rd);
  CHECK(acked >= KILL_AFTER);
  CHECK(got >= acked);
  if (got < acked) fprintf(stderr, "got %" PRIu64 " of %" PRIu64 " acknowledged\n", got, acked);
  /* Still gone on a later call, at once. */
  size_t n = 99;
  CHECK_RC(floxlog_tape_tail_next_trades(t, batch, 64, &n, -1, &err), FLOXLOG_WRITER_GONE);
  CHECK(n == 0);
  /* The size asked with no buffer, then a buffer one byte short. */
  size_t len = 0;
  CHECK_RC(floxlog_tape_tail_position(t, NULL, 0, &len, &err), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(len > 12 && len <= FLOXLOG_TAIL_POSITION_MAX);
  uint8_t p[FLOXLOG_TAIL_POSITION_MAX];
  memset(p, 0xAB, sizeof p);
  size_t short_len = 0;
  CHECK_RC(floxlog_tape_tail_position(t, p, len - 1, &short_len, &err), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(short_len == len && p[0] == 0xAB);
  CHECK_RC(floxlog_tape_tail_position(t, p, sizeof p, &short_len, &err), FLOXLOG_OK);
  CHECK(short_len == len && memcmp(p, "FLTP", 4) == 0);
  floxlog_tape_tail_free(t);
}

#define SERIES_EVENTS 600

/* Event i of round 3: even numbers trades (trade_id i), odd ones book
 * deltas (seq i). */
static floxlog_result append_mixed(floxlog_tape_writer *w, uint64_t i, floxlog_tape_error *err) {
  if (i % 2 == 0) {
    floxlog_trade t = trade_of(i);
    return floxlog_tape_writer_append_trade(w, &t, err);
  }
  floxlog_level lv = {6500000000000ll + (int64_t)i, 1 + (int64_t)(i % 7)};
  floxlog_book b;
  memset(&b, 0, sizeof b);
  b.exchange_ts_ns = TS_BASE + (int64_t)i * 1000;
  b.recv_ts_ns = b.exchange_ts_ns + 9;
  b.seq = (int64_t)i;
  b.symbol_id = 2;
  b.instrument = 1;
  b.exchange_id = 3;
  b.bids = &lv;
  b.bid_count = 1;
  return floxlog_tape_writer_append_book_delta(w, &b, err);
}

/* The number of event `ev` of round 3, or -1 if it is not one. */
static int64_t mixed_number(const floxlog_event *ev) {
  if (ev->kind == FLOXLOG_EVENT_TRADE) return (int64_t)ev->data.trade.trade_id;
  if (ev->kind == FLOXLOG_EVENT_BOOK_DELTA) return ev->data.book.seq;
  return -1;
}

/* Checks the next event against what its series expects (next[0] the
 * next trade number, next[1] the next book number); counts a mismatch. */
static void take_mixed(const floxlog_event *ev, int64_t next[2], uint64_t *bad) {
  int64_t n = mixed_number(ev);
  int s = ev->kind == FLOXLOG_EVENT_TRADE ? 0 : 1;
  if (n != next[s]) ++*bad;
  next[s] = n + 2;
}

static void round_series(const char *dir) {
  floxlog_tape_error err;
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer *w = NULL;
  CHECK_RC(floxlog_tape_writer_config_default(&cfg), FLOXLOG_OK);
  cfg.layout = FLOXLOG_LAYOUT_SPEC;
  cfg.journal = 1;
  cfg.durability = FLOXLOG_DURABILITY_NONE;
  cfg.max_segment_bytes = 4096;
  CHECK_RC(floxlog_tape_writer_open(dir, &cfg, &w, &err), FLOXLOG_OK);
  for (uint64_t i = 0; i < SERIES_EVENTS; ++i) CHECK_RC(append_mixed(w, i, &err), FLOXLOG_OK);
  CHECK_RC(floxlog_tape_writer_close(w, &err), FLOXLOG_OK);
  floxlog_tape_writer_free(w);

  floxlog_event ev;
  uint64_t bad = 0, lost = 0;
  for (uint64_t stop = 0; stop <= SERIES_EVENTS; ++stop) {
    floxlog_tape_tail *t = NULL;
    CHECK_RC(floxlog_tape_tail_open(dir, NULL, &t, &err), FLOXLOG_OK);
    int64_t next[2] = {0, 1};
    uint64_t got = 0;
    while (got < stop && floxlog_tape_tail_next(t, &ev, 0, &err) == FLOXLOG_OK) {
      take_mixed(&ev, next, &bad);
      ++got;
    }
    if (got != stop) ++lost;
    uint8_t pos[FLOXLOG_TAIL_POSITION_MAX];
    size_t len = 0;
    CHECK_RC(floxlog_tape_tail_position(t, pos, sizeof pos, &len, &err), FLOXLOG_OK);
    floxlog_tape_tail_free(t);

    floxlog_tape_tail_options o;
    CHECK_RC(floxlog_tape_tail_options_default(&o), FLOXLOG_OK);
    o.start = FLOXLOG_TAIL_START_POSITION;
    o.position = pos;
    o.position_len = len;
    CHECK_RC(floxlog_tape_tail_open(dir, &o, &t, &err), FLOXLOG_OK);
    floxlog_result rc;
    while ((rc = floxlog_tape_tail_next(t, &ev, 0, &err)) == FLOXLOG_OK) {
      take_mixed(&ev, next, &bad);
      ++got;
    }
    CHECK_RC(rc, FLOXLOG_END);
    if (got != SERIES_EVENTS || next[0] != SERIES_EVENTS || next[1] != SERIES_EVENTS + 1) ++lost;
    floxlog_tape_tail_free(t);
  }
  CHECK(bad == 0);
  CHECK(lost == 0);

  /* Damaged position bytes are refused, naming the byte. */
  floxlog_tape_tail *t = NULL;
  CHECK_RC(floxlog_tape_tail_open(dir, NULL, &t, &err), FLOXLOG_OK);
  CHECK_RC(floxlog_tape_tail_next(t, &ev, 0, &err), FLOXLOG_OK);
  uint8_t pos[FLOXLOG_TAIL_POSITION_MAX];
  size_t len = 0;
  CHECK_RC(floxlog_tape_tail_position(t, pos, sizeof pos, &len, &err), FLOXLOG_OK);
  floxlog_tape_tail_free(t);
  pos[len / 2] ^= 0x10;
  floxlog_tape_tail_options o;
  floxlog_tape_tail_options_default(&o);
  o.start = FLOXLOG_TAIL_START_POSITION;
  o.position = pos;
  o.position_len = len;
  CHECK_RC(floxlog_tape_tail_open(dir, &o, &t, &err), FLOXLOG_INVALID_INPUT);
  CHECK(strstr(err.message, "saved tail position") != NULL);
  o.position = NULL;
  CHECK_RC(floxlog_tape_tail_open(dir, &o, &t, &err), FLOXLOG_NULL_POINTER);
}

static void bad_arguments(const char *dir) {
  floxlog_tape_error err;
  floxlog_tape_tail *t = NULL;
  floxlog_event ev;
  CHECK_RC(floxlog_tape_tail_open(NULL, NULL, &t, &err), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_tape_tail_open(dir, NULL, NULL, &err), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_tape_tail_next(NULL, &ev, 0, &err), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_tape_tail_options_default(NULL), FLOXLOG_NULL_POINTER);
  floxlog_tape_tail_options o;
  floxlog_tape_tail_options_default(&o);
  o.wait = 9;
  CHECK_RC(floxlog_tape_tail_open(dir, &o, &t, &err), FLOXLOG_INVALID_INPUT);
  CHECK(strstr(err.message, "FLOXLOG_TAIL_WAIT_") != NULL);
  CHECK_RC(floxlog_tape_tail_open("/nonexistent/tape", NULL, &t, &err), FLOXLOG_IO_ERROR);
  CHECK(strstr(err.message, "/nonexistent/tape") != NULL);
  floxlog_tape_tail_free(NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_tape_tail WORKDIR\n");
    return 2;
  }
  /* A hang is a failure, not a stuck ctest. */
  alarm(240);
  char a[4096], b[4096], c[4096];
  CHECK(mkdir(argv[1], 0755) == 0);
  snprintf(a, sizeof a, "%s/closed", argv[1]);
  snprintf(b, sizeof b, "%s/killed", argv[1]);
  snprintf(c, sizeof c, "%s/series", argv[1]);
  round_closed(a);
  round_killed(b);
  round_series(c);
  bad_arguments(a);
  return check_report("test_tape_tail");
}
