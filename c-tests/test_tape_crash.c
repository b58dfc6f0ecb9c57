/*
 * Crash test of the C tape writer: a recorder process (this executable,
 * re-run with `--recorder`) writes a reproducible event stream through
 * floxlog_tape_writer into a temporary tape directory and, after every
 * append batch, tells the parent through a pipe how many events it has
 * appended and what floxlog_tape_writer_written_events and _durable_events
 * say. The parent kills it with SIGKILL after a random delay (seeded: set
 * FLOXLOG_CRASH_SEED to replay) and then checks, with the C tape API only:
 *
 *   - floxlog_tape_recover returns FLOXLOG_OK (rewriting at most the open
 *     last segment of each series, none after a clean close);
 *   - reading the tape back (file order, before and after recover) returns
 *     at least every event last reported written (which includes every
 *     event reported durable: the process died, the OS did not), and the
 *     events are exactly the generator's, field by field, in the writer's
 *     file order (per series in the spec layout; LZ4 blocks sorted by
 *     timestamp): a prefix of what was appended, nothing else;
 *   - reading merged by time returns the same number, in order;
 *   - floxlog_tape_verify then passes;
 *   - a second writer on the directory is refused with FLOXLOG_TAPE_LOCKED
 *     (and recover too) while the recorder lives, and with a printable
 *     error once the directory holds its tape;
 *   - segment names follow the recorder's clock hook.
 *
 * Configurations: flox layout uncompressed with SYNC_EVERY_N (n=1000) and
 * 256 KiB segments (~4400 trades: four syncs each); flox layout LZ4 with
 * SYNC_EVERY_BLOCK (128 trades a block) and 32 KiB segments; spec layout
 * (trades, book snapshots and deltas in their series) with FLUSH and
 * 64 KiB segments; journal mode (segments mapped shared, published frame
 * by frame, prepared one ahead), flox layout with NONE and 1 MiB segments
 * and spec layout mixed with SYNC_ON_CLOSE and 256 KiB segments, where a
 * kill leaves zero tails (and maybe an empty prepared segment per series)
 * that readers take as torn tails and recover cuts off. Each runs several
 * killed rounds (most of them paced,
 * so that kills land mid-segment rather than in a rotation's fsyncs) and
 * one that finishes and closes.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Killed rounds per configuration (plus one that finishes). */
#define KILL_ROUNDS 5
/* Events a killed recorder is asked for: far more than it gets to write. */
#define ENDLESS 50000000ull
/* Events of the round that finishes. */
#define SHORT 5000ull
/* Longest random delay before the kill, after the first written event. */
#define MAX_DELAY_MS 250
/* Base of the recorder's clock: segment k is stamped BASE + k * STEP. */
#define CLOCK_BASE 1700000000000000000ll
#define CLOCK_STEP 1000ll
#define TS_BASE 1710000000000000000ll
#define MAX_LEVELS 5 /* per side */
/* Most events the recorder appends between two reports. */
#define MAX_BATCH 256

/* ------------------------------------------------------------------ */
/* Configurations                                                       */

typedef struct {
  const char *name;
  uint8_t layout, durability, compression, profile;
  uint16_t interval;
  uint32_t sync_every_n;
  uint64_t max_segment_bytes;
  int mixed; /* trades, book snapshots and deltas (else trades only) */
  int journal; /* journal mode: segments mapped, prepared one ahead */
} setup_t;

static const setup_t SETUPS[] = {
    {"flox none sync_every_n=1000 256KiB", FLOXLOG_LAYOUT_FLOX, FLOXLOG_DURABILITY_SYNC_EVERY_N,
     FLOXLOG_COMPRESSION_NONE, FLOXLOG_PROFILE_REFERENCE, 1000, 1000, 256u << 10, 0, 0},
    {"flox lz4 sync_every_block 128/block 32KiB", FLOXLOG_LAYOUT_FLOX,
     FLOXLOG_DURABILITY_SYNC_EVERY_BLOCK, FLOXLOG_COMPRESSION_LZ4, FLOXLOG_PROFILE_REFERENCE, 128,
     1, 32u << 10, 0, 0},
    {"spec mixed flush 64KiB", FLOXLOG_LAYOUT_SPEC, FLOXLOG_DURABILITY_FLUSH,
     FLOXLOG_COMPRESSION_NONE, FLOXLOG_PROFILE_SPEC, 100, 1, 64u << 10, 1, 0},
    {"flox journal none 1MiB", FLOXLOG_LAYOUT_FLOX, FLOXLOG_DURABILITY_NONE,
     FLOXLOG_COMPRESSION_NONE, FLOXLOG_PROFILE_REFERENCE, 1000, 1, 1u << 20, 0, 1},
    {"spec mixed journal sync_on_close 256KiB", FLOXLOG_LAYOUT_SPEC,
     FLOXLOG_DURABILITY_SYNC_ON_CLOSE, FLOXLOG_COMPRESSION_NONE, FLOXLOG_PROFILE_SPEC, 100, 1,
     256u << 10, 1, 1},
};
#define NSETUPS (sizeof SETUPS / sizeof SETUPS[0])

static int syncs(const setup_t *s) {
  return s->durability != FLOXLOG_DURABILITY_NONE && s->durability != FLOXLOG_DURABILITY_FLUSH;
}

static floxlog_tape_writer_config writer_config(const setup_t *s) {
  floxlog_tape_writer_config c;
  floxlog_tape_writer_config_default(&c);
  c.segment.compression = s->compression;
  c.segment.index_interval = s->interval;
  c.segment.profile = s->profile;
  c.layout = s->layout;
  c.durability = s->durability;
  c.sync_every_n = s->sync_every_n;
  c.max_segment_bytes = s->max_segment_bytes;
  c.journal = (uint8_t)s->journal;
  return c;
}

/* ------------------------------------------------------------------ */
/* The reproducible event stream: event i depends on (seed, i) only.    */

static uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t ev_hash(uint64_t seed, uint64_t i, uint64_t k) {
  return mix64(seed ^ mix64(i * 0x100000001B3ull + k));
}

/* FLOXLOG_EVENT_* of event i. */
static uint32_t gen_kind(const setup_t *s, uint64_t seed, uint64_t i) {
  if (!s->mixed) return FLOXLOG_EVENT_TRADE;
  uint64_t r = ev_hash(seed, i, 1) % 10;
  return r < 6 ? FLOXLOG_EVENT_TRADE : r < 8 ? FLOXLOG_EVENT_BOOK_SNAPSHOT : FLOXLOG_EVENT_BOOK_DELTA;
}

/* Exchange timestamp of event i: rising, with jitter wider than the
 * spacing, so neighbours are often out of order (LZ4 blocks get sorted). */
static int64_t gen_ts(uint64_t seed, uint64_t i) {
  return TS_BASE + (int64_t)i * 1000 + (int64_t)(ev_hash(seed, i, 0) % 2500);
}

/* Event i; book levels go to `levels` (2 * MAX_LEVELS). */
static void gen_event(const setup_t *s, uint64_t seed, uint64_t i, floxlog_event *ev,
                      floxlog_level *levels) {
  uint64_t h = ev_hash(seed, i, 0), h2 = ev_hash(seed, i, 1);
  int64_t ts = gen_ts(seed, i);
  memset(ev, 0, sizeof *ev);
  ev->kind = gen_kind(s, seed, i);
  if (ev->kind == FLOXLOG_EVENT_TRADE) {
    floxlog_trade *t = &ev->data.trade;
    t->exchange_ts_ns = ts;
    t->recv_ts_ns = ts + 5000 + (int64_t)((h2 >> 8) % 100);
    t->price_raw = 6500000000000 + (int64_t)((h >> 12) % 200000);
    t->qty_raw = 1 + (int64_t)((h >> 32) % 10000000);
    t->trade_id = 900000000 + i;
    t->symbol_id = (uint32_t)((h >> 40) % 50);
    t->side = (uint8_t)((h >> 50) & 1);
    t->instrument = (uint8_t)((h >> 52) % 4);
    t->exchange_id = 7;
    return;
  }
  floxlog_book *b = &ev->data.book;
  size_t nb = (size_t)((h2 >> 8) % (MAX_LEVELS + 1));
  size_t na = (size_t)((h2 >> 16) % (MAX_LEVELS + 1));
  for (size_t j = 0; j < nb + na; j++) {
    uint64_t l = ev_hash(seed, i, 2 + j);
    int64_t step = (int64_t)(j < nb ? j : j - nb) * 100000;
    levels[j].price_raw = j < nb ? 6500000000000 - step : 6500000100000 + step;
    /* Deltas remove a level now and then (quantity 0). */
    levels[j].qty_raw = ev->kind == FLOXLOG_EVENT_BOOK_DELTA && l % 5 == 0
                            ? 0
                            : 1 + (int64_t)(l % 100000000);
  }
  b->exchange_ts_ns = ts;
  b->recv_ts_ns = ts + 3000 + (int64_t)((h2 >> 24) % 100);
  b->seq = (int64_t)i;
  b->symbol_id = (uint32_t)((h >> 40) % 8);
  /* The spec profile's (and the spec text's) book header types. */
  b->header_type = ev->kind == FLOXLOG_EVENT_BOOK_SNAPSHOT ? 2 : 3;
  b->instrument = 1;
  b->exchange_id = 7;
  b->bids = levels;
  b->bid_count = nb;
  b->asks = levels + nb;
  b->ask_count = na;
}

static int64_t event_ts(const floxlog_event *e) {
  return e->kind == FLOXLOG_EVENT_TRADE ? e->data.trade.exchange_ts_ns
                                        : e->data.book.exchange_ts_ns;
}

static int same_levels(const floxlog_level *a, const floxlog_level *b, size_t n) {
  for (size_t j = 0; j < n; j++)
    if (a[j].price_raw != b[j].price_raw || a[j].qty_raw != b[j].qty_raw) return 0;
  return 1;
}

/* Every field of two events (trades or books). */
static int same_event(const floxlog_event *a, const floxlog_event *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == FLOXLOG_EVENT_TRADE) {
    const floxlog_trade *x = &a->data.trade, *y = &b->data.trade;
    return x->exchange_ts_ns == y->exchange_ts_ns && x->recv_ts_ns == y->recv_ts_ns &&
           x->price_raw == y->price_raw && x->qty_raw == y->qty_raw &&
           x->trade_id == y->trade_id && x->symbol_id == y->symbol_id && x->side == y->side &&
           x->instrument == y->instrument && x->exchange_id == y->exchange_id;
  }
  if (a->kind != FLOXLOG_EVENT_BOOK_SNAPSHOT && a->kind != FLOXLOG_EVENT_BOOK_DELTA) return 0;
  const floxlog_book *x = &a->data.book, *y = &b->data.book;
  return x->exchange_ts_ns == y->exchange_ts_ns && x->recv_ts_ns == y->recv_ts_ns &&
         x->seq == y->seq && x->symbol_id == y->symbol_id && x->header_type == y->header_type &&
         x->instrument == y->instrument && x->exchange_id == y->exchange_id &&
         x->bid_count == y->bid_count && x->ask_count == y->ask_count &&
         same_levels(x->bids, y->bids, x->bid_count) && same_levels(x->asks, y->asks, x->ask_count);
}

static void print_event(const char *what, const floxlog_event *e) {
  if (e->kind == FLOXLOG_EVENT_TRADE) {
    const floxlog_trade *t = &e->data.trade;
    fprintf(stderr, "  %s: trade ts %" PRId64 " recv %" PRId64 " px %" PRId64 " qty %" PRId64
                    " id %" PRIu64 " sym %" PRIu32 " side %u instr %u exch %u\n",
            what, t->exchange_ts_ns, t->recv_ts_ns, t->price_raw, t->qty_raw, t->trade_id,
            t->symbol_id, t->side, t->instrument, t->exchange_id);
  } else if (e->kind == FLOXLOG_EVENT_BOOK_SNAPSHOT || e->kind == FLOXLOG_EVENT_BOOK_DELTA) {
    const floxlog_book *b = &e->data.book;
    fprintf(stderr, "  %s: book kind %" PRIu32 " ts %" PRId64 " seq %" PRId64
                    " sym %" PRIu32 " type %u bids %zu asks %zu\n",
            what, e->kind, b->exchange_ts_ns, b->seq, b->symbol_id, b->header_type, b->bid_count,
            b->ask_count);
  } else {
    fprintf(stderr, "  %s: event kind %" PRIu32 "\n", what, e->kind);
  }
}

/* The series (spec layout) of an event kind: 0 trades, 1 book; the flox
 * layout has one. */
static int series_of(const setup_t *s, uint32_t kind) {
  return s->layout == FLOXLOG_LAYOUT_SPEC && kind != FLOXLOG_EVENT_TRADE ? 1 : 0;
}
#define MAX_SERIES 2

/* ------------------------------------------------------------------ */
/* Recorder (child)                                                     */

enum { R_READY = 1, R_PROGRESS = 2, R_DONE = 3, R_FAIL = 4 };

/* One report through the pipe (well under PIPE_BUF: written atomically). */
typedef struct {
  uint32_t kind;
  uint32_t pad;
  uint64_t appended, written, durable, clock_calls;
} report_t;

typedef struct {
  uint64_t calls;
  int off_thread;
} rec_clock_t;

static _Thread_local int on_main_thread;

static int64_t recorder_clock(void *ctx) {
  rec_clock_t *c = ctx;
  if (!on_main_thread) c->off_thread = 1;
  return CLOCK_BASE + (int64_t)(c->calls++) * CLOCK_STEP;
}

static int send_report(int fd, uint32_t kind, uint64_t appended, floxlog_tape_writer *w,
                       const rec_clock_t *clk) {
  report_t r;
  memset(&r, 0, sizeof r);
  r.kind = kind;
  r.appended = appended;
  r.clock_calls = clk->calls;
  if (w) {
    /* Durable first: both grow in the background (the I/O thread), so
     * read the other way round durable could pass written. */
    floxlog_tape_writer_durable_events(w, &r.durable);
    floxlog_tape_writer_written_events(w, &r.written);
  }
  /* Queried after the append returned, so a count sent is a promise the
   * writer made before this point. */
  return write(fd, &r, sizeof r) == (ssize_t)sizeof r ? 0 : -1;
}

static int recorder_fail(int fd, const char *what, const floxlog_tape_error *err) {
  report_t r;
  memset(&r, 0, sizeof r);
  r.kind = R_FAIL;
  fprintf(stderr, "recorder: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
  if (write(fd, &r, sizeof r) < 0) return 1;
  return 1;
}

static int recorder(int setup_ix, const char *dir, uint64_t seed, uint64_t events, long pace_us,
                    int fd) {
  const setup_t *s = &SETUPS[setup_ix];
  on_main_thread = 1;
  rec_clock_t clk = {0, 0};
  floxlog_tape_writer_config cfg = writer_config(s);
  cfg.clock_ns = recorder_clock;
  cfg.clock_ctx = &clk;
  floxlog_tape_error err;
  floxlog_tape_writer *w = NULL;
  if (floxlog_tape_writer_open(dir, &cfg, &w, &err) != FLOXLOG_OK)
    return recorder_fail(fd, "open", &err);
  if (send_report(fd, R_READY, 0, w, &clk) != 0) return 1;

  floxlog_trade trades[MAX_BATCH];
  floxlog_event evs[MAX_BATCH];
  static floxlog_level levels[MAX_BATCH][2 * MAX_LEVELS];
  uint64_t rng = mix64(seed ^ 0xC0FFEEull);
  uint64_t i = 0, prev_written = 0, prev_durable = 0;
  while (i < events) {
    rng = mix64(rng);
    size_t b = 1 + (size_t)(rng % MAX_BATCH);
    if (b > events - i) b = (size_t)(events - i);
    int per_call = (rng >> 20) % 4 == 0;
    for (size_t k = 0; k < b; k++) gen_event(s, seed, i + k, &evs[k], levels[k]);
    floxlog_result rc = FLOXLOG_OK;
    size_t appended = 0;
    if (!s->mixed) {
      for (size_t k = 0; k < b; k++) trades[k] = evs[k].data.trade;
      if (per_call) {
        for (; appended < b && rc == FLOXLOG_OK; appended++)
          rc = floxlog_tape_writer_append_trade(w, &trades[appended], &err);
        if (rc != FLOXLOG_OK) appended--;
      } else {
        rc = floxlog_tape_writer_append_trades(w, trades, b, &appended, &err);
      }
    } else if (per_call) {
      for (; appended < b && rc == FLOXLOG_OK; appended++) {
        const floxlog_event *e = &evs[appended];
        rc = e->kind == FLOXLOG_EVENT_TRADE
                 ? floxlog_tape_writer_append_trade(w, &e->data.trade, &err)
             : e->kind == FLOXLOG_EVENT_BOOK_SNAPSHOT
                 ? floxlog_tape_writer_append_book_snapshot(w, &e->data.book, &err)
                 : floxlog_tape_writer_append_book_delta(w, &e->data.book, &err);
      }
      if (rc != FLOXLOG_OK) appended--;
    } else {
      rc = floxlog_tape_writer_append_events(w, evs, b, &appended, &err);
    }
    if (rc != FLOXLOG_OK || appended != b) return recorder_fail(fd, "append", &err);
    i += b;

    uint64_t written = 0, durable = 0;
    floxlog_tape_writer_durable_events(w, &durable); /* first: see send_report */
    floxlog_tape_writer_written_events(w, &written);
    if (written < prev_written || durable < prev_durable || durable > written || written > i)
      return recorder_fail(fd, "counters went backwards or past the appended events", NULL);
    prev_written = written;
    prev_durable = durable;

    /* Now and then the explicit calls, and what they promise. */
    uint64_t dice = (rng >> 32) % 128;
    if (dice == 0) {
      if (floxlog_tape_writer_flush(w, &err) != FLOXLOG_OK) return recorder_fail(fd, "flush", &err);
      floxlog_tape_writer_written_events(w, &written);
      /* Flox layout: the first `written` events; LZ4 keeps the events of
       * an unfinished block staged (blocks start every `interval`). */
      uint64_t want = s->compression == FLOXLOG_COMPRESSION_LZ4 ? i - i % s->interval : i;
      if (s->layout == FLOXLOG_LAYOUT_FLOX || s->compression == FLOXLOG_COMPRESSION_NONE) {
        if (written != want) {
          fprintf(stderr, "recorder: after flush %" PRIu64 " written of %" PRIu64 ", want %" PRIu64 "\n",
                  written, i, want);
          return recorder_fail(fd, "flush did not write everything", NULL);
        }
      }
    } else if (dice == 1) {
      if (floxlog_tape_writer_sync(w, &err) != FLOXLOG_OK) return recorder_fail(fd, "sync", &err);
      floxlog_tape_writer_written_events(w, &written);
      floxlog_tape_writer_durable_events(w, &durable);
      if (durable != written) return recorder_fail(fd, "after sync durable != written", NULL);
    }
    if (clk.off_thread) return recorder_fail(fd, "the clock was called off the caller's thread", NULL);
    if (send_report(fd, R_PROGRESS, i, w, &clk) != 0) return 1;
    if (pace_us > 0) {
      /* A paced recorder spends its time between appends, mid-segment,
       * rather than in rotations' fsyncs: kills then land in open
       * segments. */
      struct timespec d = {0, pace_us * 1000L};
      nanosleep(&d, NULL);
    }
  }
  uint64_t durable_before = 0;
  floxlog_tape_writer_durable_events(w, &durable_before);
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) return recorder_fail(fd, "close", &err);
  uint64_t written = 0, durable = 0;
  floxlog_tape_writer_written_events(w, &written);
  floxlog_tape_writer_durable_events(w, &durable);
  /* Closing writes everything; fsyncs only under a syncing policy
   * (otherwise durable stays what the last explicit sync made it). */
  if (written != events || durable != (syncs(s) ? events : durable_before)) {
    fprintf(stderr, "recorder: closed with %" PRIu64 " written, %" PRIu64 " durable of %" PRIu64 "\n",
            written, durable, events);
    return recorder_fail(fd, "counters after close", NULL);
  }
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_FINISHED)
    return recorder_fail(fd, "a second close did not say FLOXLOG_FINISHED", NULL);
  int rc = send_report(fd, R_DONE, i, w, &clk);
  floxlog_tape_writer_free(w);
  return rc == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* Parent: helpers                                                      */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int remove_tree(const char *path) {
  DIR *d = opendir(path);
  if (!d) return unlink(path);
  struct dirent *e;
  char p[4096];
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", path, e->d_name);
    if (unlink(p) != 0) remove_tree(p);
  }
  closedir(d);
  return rmdir(path);
}

static int printable(const char *s) {
  if (!s[0]) return 0;
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') return 0;
  return 1;
}

/* What the recorder said. */
typedef struct {
  report_t last; /* the last progress (or ready/done) report */
  int ready, done, failed, bad;
  size_t have;   /* bytes of a partial report in buf */
  unsigned char buf[sizeof(report_t)];
} said_t;

/* Takes one report, checking that the counters only grow. */
static void take(said_t *st, const report_t *r) {
  switch (r->kind) {
    case R_READY: st->ready = 1; break;
    case R_DONE: st->done = 1; break;
    case R_FAIL: st->failed = 1; return;
    case R_PROGRESS: break;
    default: st->bad = 1; return;
  }
  if (r->written < st->last.written || r->durable < st->last.durable ||
      r->appended < st->last.appended || r->durable > r->written || r->written > r->appended)
    st->bad = 1;
  st->last = *r;
}

/* Reads what is in the pipe; returns 0 at EOF, 1 otherwise. */
static int drain(int fd, said_t *st) {
  unsigned char chunk[4096];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n == 0) return 0;
  if (n < 0) return errno == EINTR || errno == EAGAIN ? 1 : 0;
  for (ssize_t k = 0; k < n; k++) {
    st->buf[st->have++] = chunk[k];
    if (st->have == sizeof(report_t)) {
      report_t r;
      memcpy(&r, st->buf, sizeof r);
      take(st, &r);
      st->have = 0;
    }
  }
  return 1;
}

/* Drains the pipe until `deadline` (or EOF); returns 0 at EOF. */
static int drain_until(int fd, said_t *st, double deadline) {
  for (;;) {
    double left = deadline - now_s();
    if (left <= 0) return 1;
    struct pollfd p = {fd, POLLIN, 0};
    int ms = (int)(left * 1000.0) + 1;
    int k = poll(&p, 1, ms);
    if (k < 0 && errno != EINTR) return 0;
    if (k > 0 && !drain(fd, st)) return 0;
  }
}

/* Segment files: flox `<n>.floxlog` (n collected, sorted) or spec
 * `<series>-NNNNNN.bin` (counted per series, numbers checked). */
typedef struct {
  size_t count;
  int64_t names[4096];
  size_t per_series[MAX_SERIES];
  int bad_name;
  char last[MAX_SERIES][64]; /* the last segment of each series ("" if none) */
} listing_t;

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void list_segments(const setup_t *s, const char *dir, listing_t *l) {
  memset(l, 0, sizeof *l);
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  /* Spec-layout numbers seen per series (bitmap of the first 4096). */
  static unsigned char seen[MAX_SERIES][4096];
  memset(seen, 0, sizeof seen);
  while ((e = readdir(d)) != NULL) {
    const char *n = e->d_name;
    size_t len = strlen(n);
    if (s->layout == FLOXLOG_LAYOUT_FLOX) {
      if (len > 8 && strcmp(n + len - 8, ".floxlog") == 0 && n[0] != '.') {
        char *end = NULL;
        long long v = strtoll(n, &end, 10);
        if (end != n + len - 8) l->bad_name = 1;
        if (l->count < 4096) l->names[l->count] = v;
        l->count++;
      }
    } else if (len > 4 && strcmp(n + len - 4, ".bin") == 0 && n[0] != '.') {
      int series = strncmp(n, "trades-", 7) == 0 ? 0 : strncmp(n, "book-", 5) == 0 ? 1 : -1;
      const char *num = strchr(n, '-');
      if (series < 0 || !num) {
        l->bad_name = 1;
        continue;
      }
      long v = strtol(num + 1, NULL, 10);
      if (strlen(num + 1) != 6 + 4 || v < 0 || v >= 4096) {
        l->bad_name = 1;
        continue;
      }
      seen[series][v] = 1;
      l->per_series[series]++;
      l->count++;
    }
  }
  closedir(d);
  if (s->layout == FLOXLOG_LAYOUT_FLOX) {
    size_t n = l->count < 4096 ? l->count : 4096;
    qsort(l->names, n, sizeof l->names[0], cmp_i64);
    /* Named by the recorder's clock: BASE, BASE + STEP, ... */
    for (size_t k = 0; k < n; k++)
      if (l->names[k] != CLOCK_BASE + (int64_t)k * CLOCK_STEP) l->bad_name = 1;
    if (n > 0) snprintf(l->last[0], sizeof l->last[0], "%" PRId64 ".floxlog", l->names[n - 1]);
  } else {
    static const char *const series[MAX_SERIES] = {"trades", "book"};
    for (int sr = 0; sr < MAX_SERIES; sr++) {
      for (size_t k = 0; k < l->per_series[sr] && k < 4096; k++)
        if (!seen[sr][k]) l->bad_name = 1; /* numbered 0, 1, 2... without gaps */
      if (l->per_series[sr] > 0)
        snprintf(l->last[sr], sizeof l->last[sr], "%s-%06zu.bin", series[sr], l->per_series[sr] - 1);
    }
  }
}

/* Whether segment `name` was still open, with events in it: more than
 * the placeholder header, and no index yet (the writer indexes every
 * segment it closes). */
static int open_with_events(const char *dir, const char *name) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  uint8_t h[FLOXLOG_SEGMENT_HEADER_LEN + 1];
  ssize_t n = read(fd, h, sizeof h);
  close(fd);
  floxlog_segment_header sh;
  if (n <= FLOXLOG_SEGMENT_HEADER_LEN ||
      floxlog_segment_header_parse(h, (size_t)n, &sh, NULL) != FLOXLOG_OK)
    return 0;
  return (sh.flags & FLOXLOG_FLAG_HAS_INDEX) == 0;
}

/* Segment files whose header is not final (no index yet): what a killed
 * writer left open. */
static size_t count_unfinished(const char *dir) {
  size_t n = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    int seg = (len > 8 && strcmp(e->d_name + len - 8, ".floxlog") == 0) ||
              (len > 4 && strcmp(e->d_name + len - 4, ".bin") == 0);
    if (seg && e->d_name[0] != '.' && open_with_events(dir, e->d_name)) n++;
  }
  closedir(d);
  return n;
}

/* ------------------------------------------------------------------ */
/* Parent: the expected file order                                      */

/* Per series: the generator's events of the series in the writer's file
 * order (LZ4: each block of `interval` events of the series sorted by
 * timestamp, stably; blocks never span segments). `limit` bounds the
 * events generated (a closed tape's last block is short). */
typedef struct {
  const setup_t *s;
  uint64_t seed, limit;
  uint64_t cursor[MAX_SERIES]; /* next generator index to look at */
  uint64_t pos[MAX_SERIES];    /* events of the series checked so far */
  uint64_t *block[MAX_SERIES]; /* generator indices of the current block */
  size_t block_len[MAX_SERIES];
  int64_t *ts;
} expect_t;

static void expect_init(expect_t *x, const setup_t *s, uint64_t seed, uint64_t limit) {
  memset(x, 0, sizeof *x);
  x->s = s;
  x->seed = seed;
  x->limit = limit;
  size_t bl = s->compression == FLOXLOG_COMPRESSION_LZ4 ? s->interval : 1;
  for (int k = 0; k < MAX_SERIES; k++) x->block[k] = malloc(bl * sizeof(uint64_t));
  x->ts = malloc(bl * sizeof(int64_t));
}

static void expect_free(expect_t *x) {
  for (int k = 0; k < MAX_SERIES; k++) free(x->block[k]);
  free(x->ts);
}

/* The generator index of the next event of series `sr` in file order, or
 * UINT64_MAX if the stream (up to the limit) has no more. */
static uint64_t expect_next(expect_t *x, int sr) {
  const setup_t *s = x->s;
  size_t interval = s->compression == FLOXLOG_COMPRESSION_LZ4 ? s->interval : 1;
  size_t at = (size_t)(x->pos[sr] % interval);
  if (at == 0) {
    /* A new block: the next `interval` events of the series. */
    size_t n = 0;
    while (n < interval && x->cursor[sr] < x->limit) {
      uint64_t i = x->cursor[sr]++;
      if (series_of(s, gen_kind(s, x->seed, i)) == sr) x->block[sr][n++] = i;
    }
    /* Stable insertion sort by timestamp. */
    for (size_t a = 0; a < n; a++) x->ts[a] = gen_ts(x->seed, x->block[sr][a]);
    for (size_t a = 1; a < n; a++) {
      uint64_t bi = x->block[sr][a];
      int64_t bt = x->ts[a];
      size_t c = a;
      while (c > 0 && x->ts[c - 1] > bt) {
        x->ts[c] = x->ts[c - 1];
        x->block[sr][c] = x->block[sr][c - 1];
        c--;
      }
      x->ts[c] = bt;
      x->block[sr][c] = bi;
    }
    x->block_len[sr] = n;
  }
  if (at >= x->block_len[sr]) return UINT64_MAX;
  x->pos[sr]++;
  return x->block[sr][at];
}

/* What a read of the tape gave. */
typedef struct {
  uint64_t events, per_series[MAX_SERIES];
  floxlog_tape_reader_stats stats;
  floxlog_result end;
  int mismatch;
} read_t;

/* Reads the tape in file order with floxlog_tape_reader_next and checks
 * every event against the generator. */
static read_t read_file_order(const setup_t *s, const char *dir, uint64_t seed, uint64_t limit,
                              int strict, const char *ctx) {
  read_t out;
  memset(&out, 0, sizeof out);
  floxlog_tape_reader_options o;
  floxlog_tape_reader_options_default(&o);
  o.order = FLOXLOG_ORDER_FILE;
  o.strict = (uint8_t)strict;
  floxlog_tape_error err;
  floxlog_tape_reader *r = NULL;
  floxlog_result rc = floxlog_tape_reader_open(dir, &o, &r, &err);
  if (rc != FLOXLOG_OK) {
    fprintf(stderr, "%s: reader open: %s\n", ctx, err.message);
    out.end = rc;
    out.mismatch = 1;
    return out;
  }
  expect_t x;
  expect_init(&x, s, seed, limit);
  floxlog_event ev, want;
  floxlog_level levels[2 * MAX_LEVELS];
  while ((rc = floxlog_tape_reader_next(r, &ev, &err)) == FLOXLOG_OK) {
    int sr = series_of(s, ev.kind);
    uint64_t k = out.per_series[sr]++;
    out.events++;
    if (out.mismatch) continue;
    uint64_t i = expect_next(&x, sr);
    if (i == UINT64_MAX) {
      fprintf(stderr, "%s: event %" PRIu64 " of series %d was never appended\n", ctx, k, sr);
      print_event("got", &ev);
      out.mismatch = 1;
      continue;
    }
    gen_event(s, seed, i, &want, levels);
    if (!same_event(&ev, &want)) {
      fprintf(stderr, "%s: event %" PRIu64 " of series %d in file order differs (generator event %" PRIu64 ")\n",
              ctx, k, sr, i);
      print_event("got ", &ev);
      print_event("want", &want);
      out.mismatch = 1;
    }
  }
  out.end = rc;
  if (rc != FLOXLOG_END) fprintf(stderr, "%s: reader ended with %s: %s\n", ctx, floxlog_result_name(rc), err.message);
  floxlog_tape_reader_get_stats(r, &out.stats);
  floxlog_tape_reader_free(r);
  expect_free(&x);
  return out;
}

/* Reads merged by time with floxlog_tape_reader_next_batch: the count and
 * the order. */
static uint64_t read_time_order(const char *dir, int *ok) {
  floxlog_tape_error err;
  floxlog_tape_reader *r = NULL;
  *ok = 0;
  if (floxlog_tape_reader_open(dir, NULL, &r, &err) != FLOXLOG_OK) {
    fprintf(stderr, "time-order open: %s\n", err.message);
    return 0;
  }
  static floxlog_event evs[512];
  size_t got = 0;
  uint64_t n = 0;
  int64_t prev = INT64_MIN;
  int sorted = 1;
  floxlog_result rc;
  while ((rc = floxlog_tape_reader_next_batch(r, evs, 512, &got, &err)) == FLOXLOG_OK) {
    for (size_t k = 0; k < got; k++) {
      int64_t ts = event_ts(&evs[k]);
      if (ts < prev) sorted = 0;
      prev = ts;
    }
    n += got;
  }
  floxlog_tape_reader_free(r);
  *ok = rc == FLOXLOG_END && got == 0 && sorted;
  if (rc != FLOXLOG_END) fprintf(stderr, "time-order read ended with %s: %s\n", floxlog_result_name(rc), err.message);
  if (!sorted) fprintf(stderr, "time-order read is not in timestamp order\n");
  return n;
}

/* ------------------------------------------------------------------ */
/* Parent: one round                                                    */

typedef struct {
  uint64_t rewritten, failed, reports;
} recover_seen_t;

static void on_recover(const floxlog_recover_report *rep, void *ctx) {
  recover_seen_t *r = ctx;
  r->reports++;
  if (strcmp(rep->action, "rewritten") == 0) r->rewritten++;
  if (strcmp(rep->action, "failed") == 0) {
    r->failed++;
    fprintf(stderr, "recover failed on %s: %s\n", rep->file, rep->error ? rep->error->message : "?");
  }
}

static void on_finding(const floxlog_finding *f, void *ctx) {
  (void)ctx;
  if (f->severity == FLOXLOG_SEVERITY_ERROR) fprintf(stderr, "verify: %s\n", f->text);
}

static const char *self_exe;

/* Where the kills landed, over every killed round. */
static int n_kills, n_open_tail, n_torn, n_rotated, n_durable;

/* Runs one recorder and checks what it left; returns 0 on success. */
static int round_run(size_t si, int round, const char *root, uint64_t seed, int finish,
                     int lock_check) {
  const setup_t *s = &SETUPS[si];
  char dir[1024], ctx[256];
  snprintf(dir, sizeof dir, "%s/tape-%zu-%d", root, si, round);
  snprintf(ctx, sizeof ctx, "[%s, round %d, seed %" PRIu64 "]", s->name, round, seed);
  int failures_before = check_failures;
  uint64_t events = finish ? SHORT : ENDLESS;
  uint64_t delay_ms = finish ? 0 : mix64(seed ^ 0xDE1A7ull) % (MAX_DELAY_MS + 1);
  /* Two rounds in three paced (a pause after each batch), one at full
   * speed. */
  static const long paces[3] = {0, 200, 1000};
  long pace_us = finish ? 0 : paces[mix64(seed ^ 0x9ACEull) % 3];

  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    return 1;
  }
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 1;
  }
  if (pid == 0) {
    char a_setup[32], a_seed[32], a_events[32], a_pace[32], a_fd[32];
    snprintf(a_setup, sizeof a_setup, "%zu", si);
    snprintf(a_seed, sizeof a_seed, "%" PRIu64, seed);
    snprintf(a_events, sizeof a_events, "%" PRIu64, events);
    snprintf(a_pace, sizeof a_pace, "%ld", pace_us);
    snprintf(a_fd, sizeof a_fd, "%d", fds[1]);
    char *args[] = {(char *)self_exe, "--recorder", a_setup, dir, a_seed, a_events, a_pace, a_fd,
                    NULL};
    execv(self_exe, args);
    _exit(127);
  }
  close(fds[1]);
  int fd = fds[0];
  said_t st;
  memset(&st, 0, sizeof st);

  /* Wait for the recorder's first written event (so that a segment exists),
   * or for its end. */
  double t0 = now_s();
  int open = 1;
  while (open && !st.failed && !st.done && !(st.ready && st.last.written > 0)) {
    if (now_s() - t0 > 30) {
      fprintf(stderr, "%s: the recorder wrote nothing in 30 s\n", ctx);
      kill(pid, SIGKILL);
      break;
    }
    open = drain_until(fd, &st, now_s() + 0.05);
  }
  if (open && lock_check && !finish && !st.done) {
    /* While it lives: a second writer and a recover are refused. */
    floxlog_tape_error err;
    floxlog_tape_writer *w2 = NULL;
    floxlog_result rc = floxlog_tape_writer_open(dir, NULL, &w2, &err);
    CHECK_RC(rc, FLOXLOG_TAPE_LOCKED);
    CHECK(w2 == NULL);
    if (rc != FLOXLOG_OK) {
      char pidtext[32];
      snprintf(pidtext, sizeof pidtext, "%ld", (long)pid);
      CHECK(err.code == rc);
      CHECK(printable(err.message));
      CHECK(strstr(err.message, pidtext) != NULL); /* names the holder */
      printf("  second writer while the recorder runs: %s: %s\n", floxlog_result_name(rc),
             err.message);
    } else {
      floxlog_tape_writer_free(w2);
    }
    CHECK_RC(floxlog_tape_recover(dir, NULL, NULL, NULL, NULL, &err), FLOXLOG_TAPE_LOCKED);
  }
  double t_kill = now_s() + (double)delay_ms / 1000.0;
  if (open && !finish) open = drain_until(fd, &st, t_kill);
  if (!finish) kill(pid, SIGKILL);
  while (drain(fd, &st)) {
  }
  close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  int killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  int exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (st.failed || st.bad || !(killed || exited_ok) || !st.ready) {
    fprintf(stderr, "%s: recorder failed (status 0x%x, ready %d, failed %d, bad report %d)\n", ctx,
            status, st.ready, st.failed, st.bad);
    ++check_failures;
    return 1;
  }
  if (finish && !(exited_ok && st.done)) {
    fprintf(stderr, "%s: the short recorder did not finish\n", ctx);
    ++check_failures;
    return 1;
  }
  const report_t said = st.last;
  int done = st.done && exited_ok;

  /* The files: named by the clock hook (flox) or numbered (spec). */
  listing_t ls;
  list_segments(s, dir, &ls);
  CHECK(!ls.bad_name);
  CHECK(ls.count >= 1);
  /* One clock call per segment (the recorder may have opened one more per
   * series after its last report). */
  size_t nseries = s->layout == FLOXLOG_LAYOUT_SPEC ? MAX_SERIES : 1;
  CHECK(ls.count <= said.clock_calls + nseries);
  if (ls.bad_name) fprintf(stderr, "%s: segment names do not follow the clock / numbering\n", ctx);
  uint64_t limit = done ? said.appended : UINT64_MAX;
  int open_tail = 0;
  for (size_t k = 0; k < nseries; k++)
    if (ls.last[k][0] && open_with_events(dir, ls.last[k])) open_tail = 1;
  if (done) CHECK(!open_tail);

  /* (1) As the crash left it: every complete event, torn tails tolerated. */
  read_t a = read_file_order(s, dir, seed, limit, 0, ctx);
  CHECK(!a.mismatch);
  CHECK_RC(a.end, FLOXLOG_END);
  CHECK(a.stats.errors == 0);
  /* A journal may also leave each series' next segment prepared, with no
   * event (its zeros are a torn tail too, and recover finishes it), and
   * segments its background thread had not finished yet (it fsyncs each
   * one it finishes: under a syncing policy and small segments it can
   * fall several behind): every one unfinished, and no other. */
  size_t open_files = s->journal ? count_unfinished(dir) : nseries;
  CHECK(a.stats.torn_tails <= open_files);
  if (done) CHECK(a.stats.torn_tails == 0);

  /* (2) recover. */
  recover_seen_t rs = {0, 0, 0};
  floxlog_recover_summary sum;
  memset(&sum, 0, sizeof sum);
  floxlog_tape_error err;
  floxlog_result rc = floxlog_tape_recover(dir, NULL, on_recover, &rs, &sum, &err);
  CHECK_RC(rc, FLOXLOG_OK);
  if (rc != FLOXLOG_OK) fprintf(stderr, "%s: recover: %s\n", ctx, err.message);
  CHECK(sum.failed == 0 && rs.failed == 0);
  CHECK(sum.rewritten == rs.rewritten);
  CHECK(sum.rewritten <= open_files); /* only the open last segment(s) of each series */
  CHECK(sum.events_kept == a.events);
  if (done) CHECK(sum.rewritten == 0);

  /* (3) After recover: whole, the same events, at least every one the
   * recorder reported written (and so every durable one). */
  read_t b = read_file_order(s, dir, seed, limit, 1, ctx);
  CHECK(!b.mismatch);
  CHECK_RC(b.end, FLOXLOG_END);
  CHECK(b.stats.errors == 0 && b.stats.torn_tails == 0);
  CHECK(b.events == a.events);
  CHECK(b.events >= said.written);
  CHECK(b.events >= said.durable);
  if (b.events < said.written)
    fprintf(stderr, "%s: read %" PRIu64 " events, the recorder reported %" PRIu64
                    " written (%" PRIu64 " durable)\n",
            ctx, b.events, said.written, said.durable);
  /* Nothing the recorder did not append: at most the batch it was in
   * when it died, past its last report. */
  CHECK(b.events <= said.appended + (done ? 0 : MAX_BATCH));
  if (done) {
    CHECK(b.events == said.appended);
    CHECK(said.written == said.appended);
    if (syncs(s)) CHECK(said.durable == said.appended);
  } else if (s->compression == FLOXLOG_COMPRESSION_LZ4) {
    /* Only whole blocks reach the file before close. */
    for (size_t k = 0; k < nseries; k++) CHECK(b.per_series[k] % s->interval == 0);
  }

  /* (4) Merged by time: the same number, in order. */
  int t_ok = 0;
  uint64_t nt = read_time_order(dir, &t_ok);
  CHECK(t_ok);
  CHECK(nt == b.events);

  /* (5) A new writer must not write into the old tape. */
  {
    floxlog_tape_writer *w2 = NULL;
    floxlog_tape_error e2;
    memset(&e2, 0, sizeof e2);
    floxlog_result r2 = floxlog_tape_writer_open(dir, NULL, &w2, &e2);
    CHECK(r2 != FLOXLOG_OK);
    CHECK(w2 == NULL);
    CHECK(e2.code == r2);
    CHECK(printable(e2.message));
    if (round == 0) printf("  new writer on the old tape: %s: %s\n", floxlog_result_name(r2), e2.message);
    if (r2 == FLOXLOG_OK) {
      floxlog_tape_writer_close(w2, NULL);
      floxlog_tape_writer_free(w2);
    }
  }

  /* (6) verify. */
  floxlog_verify_summary vs;
  memset(&vs, 0, sizeof vs);
  rc = floxlog_tape_verify(dir, NULL, on_finding, NULL, &vs, &err);
  CHECK_RC(rc, FLOXLOG_OK);
  if (rc != FLOXLOG_OK) fprintf(stderr, "%s: verify: %s\n", ctx, err.message);
  CHECK(vs.passed == 1 && vs.errors == 0);
  CHECK(vs.events == b.events);

  if (!done) {
    n_kills++;
    n_open_tail += open_tail;
    n_torn += a.stats.torn_tails > 0;
    n_rotated += ls.count > nseries;
    n_durable += said.durable > 0;
  }
  printf("  round %d: %s after %3" PRIu64 " ms (pace %4ld us): appended %8" PRIu64 " written %8" PRIu64
         " durable %8" PRIu64 " -> read %8" PRIu64 " (%zu segments, %s, %" PRIu64 " torn, %" PRIu64
         " rewritten)\n",
         round, done ? "finished" : "killed  ", delay_ms, pace_us, said.appended, said.written, said.durable,
         b.events, ls.count, open_tail ? "open tail" : "closed tail", a.stats.torn_tails,
         sum.rewritten);
  if (check_failures != failures_before) {
    fprintf(stderr, "%s: FAILED; the tape is kept in %s\n", ctx, dir);
    return 1;
  }
  remove_tree(dir);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 8 && strcmp(argv[1], "--recorder") == 0) {
    int si = atoi(argv[2]);
    if (si < 0 || (size_t)si >= NSETUPS) return 2;
    return recorder(si, argv[3], strtoull(argv[4], NULL, 10), strtoull(argv[5], NULL, 10),
                    atol(argv[6]), atoi(argv[7]));
  }
  self_exe = argv[0];
  signal(SIGPIPE, SIG_IGN);
  const char *env = getenv("FLOXLOG_CRASH_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0)
                      : mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
  printf("tape_crash: seed %" PRIu64 " (replay with FLOXLOG_CRASH_SEED=%" PRIu64 ")\n", seed, seed);

  const char *tmp = getenv("TMPDIR");
  char root[1024];
  snprintf(root, sizeof root, "%s/floxlog-crash-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(root)) {
    perror("mkdtemp");
    return 1;
  }
  double t0 = now_s();
  int failed_rounds = 0;
  for (size_t si = 0; si < NSETUPS; si++) {
    printf("%s:\n", SETUPS[si].name);
    for (int round = 0; round <= KILL_ROUNDS; round++) {
      uint64_t rseed = mix64(seed + si * 1000 + (uint64_t)round);
      int finish = round == KILL_ROUNDS;
      failed_rounds += round_run(si, round, root, rseed, finish, round == 0);
    }
  }
  printf("%zu configurations in %.1f s, %d failed rounds; of %d kills: %d left an open segment "
         "with events, %d a torn tail, %d after rotations, %d with durable events\n",
         NSETUPS, now_s() - t0, failed_rounds, n_kills, n_open_tail, n_torn, n_rotated, n_durable);
  /* The case recover is for must have come up (paced rounds make it the
   * common one). */
  CHECK(n_open_tail > 0);
  if (failed_rounds == 0) remove_tree(root);
  else fprintf(stderr, "failed tapes kept under %s\n", root);
  return check_report("tape_crash");
}
