/* Order books through the C ABI: floxlog_book_* over caller arrays (hand-
 * computed books, errors), and floxlog_tape_book_at on a tape written here.
 * argv[1]: a directory to create the tape in (must not exist). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static floxlog_level L(int64_t p, int64_t q) {
  floxlog_level l;
  l.price_raw = p;
  l.qty_raw = q;
  return l;
}

static floxlog_book rec(int64_t ts, const floxlog_level *bids, size_t nb,
                        const floxlog_level *asks, size_t na) {
  floxlog_book b;
  memset(&b, 0, sizeof b);
  b.exchange_ts_ns = ts;
  b.recv_ts_ns = ts;
  b.symbol_id = 7;
  b.bids = bids;
  b.bid_count = nb;
  b.asks = asks;
  b.ask_count = na;
  return b;
}

static floxlog_event ev(uint32_t kind, floxlog_book b) {
  floxlog_event e;
  memset(&e, 0, sizeof e);
  e.kind = kind;
  b.header_type = kind == FLOXLOG_EVENT_BOOK_SNAPSHOT ? 0 : 1;
  e.data.book = b;
  return e;
}

static int same(const floxlog_level *a, const floxlog_level *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i].price_raw != b[i].price_raw || a[i].qty_raw != b[i].qty_raw) return 0;
  return 1;
}

static void book_state(void) {
  floxlog_level bs[3], as[3];
  floxlog_book_state book;
  floxlog_error err;
  CHECK_RC(floxlog_book_init(&book, bs, 3, as, 3, &err), FLOXLOG_OK);
  CHECK(book.bid_count == 0 && book.ask_count == 0);
  floxlog_level best;
  CHECK_RC(floxlog_book_best(&book, FLOXLOG_BOOK_BID, &best), FLOXLOG_END);

  /* Snapshot listed out of order, then a delta: upsert, insert, remove. */
  floxlog_level sb[] = {L(98, 2), L(100, 1)}, sa[] = {L(103, 4), L(101, 3)};
  floxlog_event e = ev(FLOXLOG_EVENT_BOOK_SNAPSHOT, rec(1, sb, 2, sa, 2));
  CHECK_RC(floxlog_book_apply(&book, &e, 64, &err), FLOXLOG_OK);
  floxlog_level db[] = {L(99, 7), L(100, 5)}, da[] = {L(101, 0)};
  e = ev(FLOXLOG_EVENT_BOOK_DELTA, rec(2, db, 2, da, 1));
  CHECK_RC(floxlog_book_apply(&book, &e, 128, &err), FLOXLOG_OK);
  floxlog_level want_b[] = {L(100, 5), L(99, 7), L(98, 2)}, want_a[] = {L(103, 4)};
  const floxlog_level *side = NULL;
  size_t n = 0;
  CHECK_RC(floxlog_book_side(&book, FLOXLOG_BOOK_BID, &side, &n), FLOXLOG_OK);
  CHECK(n == 3 && same(side, want_b, 3));
  CHECK_RC(floxlog_book_side(&book, FLOXLOG_BOOK_ASK, &side, &n), FLOXLOG_OK);
  CHECK(n == 1 && same(side, want_a, 1));
  CHECK_RC(floxlog_book_best(&book, FLOXLOG_BOOK_BID, &best), FLOXLOG_OK);
  CHECK(best.price_raw == 100 && best.qty_raw == 5);
  CHECK_RC(floxlog_book_best(&book, FLOXLOG_BOOK_ASK, &best), FLOXLOG_OK);
  CHECK(best.price_raw == 103);

  /* A fourth bid does not fit: capacity error, book emptied. */
  floxlog_level more[] = {L(97, 1)};
  e = ev(FLOXLOG_EVENT_BOOK_DELTA, rec(3, more, 1, NULL, 0));
  CHECK_RC(floxlog_book_apply(&book, &e, 200, &err), FLOXLOG_CAPACITY_EXCEEDED);
  CHECK(err.offset == 200 && book.bid_count == 0 && book.ask_count == 0);

  /* A negative quantity is a data error at the event's offset. */
  floxlog_level neg[] = {L(97, -1)};
  e = ev(FLOXLOG_EVENT_BOOK_DELTA, rec(4, neg, 1, NULL, 0));
  CHECK_RC(floxlog_book_apply(&book, &e, 300, &err), FLOXLOG_MALFORMED_RECORD);
  CHECK(err.offset == 300);

  /* Misuse: NULL pointers, a trade, levels inside the storage, a bad side. */
  CHECK_RC(floxlog_book_apply(NULL, &e, 0, &err), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_book_apply(&book, NULL, 0, &err), FLOXLOG_NULL_POINTER);
  floxlog_event t;
  memset(&t, 0, sizeof t);
  t.kind = FLOXLOG_EVENT_TRADE;
  CHECK_RC(floxlog_book_apply(&book, &t, 0, &err), FLOXLOG_INVALID_INPUT);
  e = ev(FLOXLOG_EVENT_BOOK_SNAPSHOT, rec(5, bs, 1, NULL, 0));
  CHECK_RC(floxlog_book_apply(&book, &e, 0, &err), FLOXLOG_INVALID_INPUT);
  CHECK_RC(floxlog_book_side(&book, 2, &side, &n), FLOXLOG_INVALID_INPUT);
  CHECK_RC(floxlog_book_init(&book, bs, 3, bs + 1, 2, &err), FLOXLOG_INVALID_INPUT);
  CHECK_RC(floxlog_book_init(&book, NULL, 3, as, 3, &err), FLOXLOG_NULL_POINTER);
  /* A struct changed behind the book's back is refused, not trusted. */
  CHECK_RC(floxlog_book_init(&book, bs, 3, as, 3, &err), FLOXLOG_OK);
  book.bid_count = 4;
  e = ev(FLOXLOG_EVENT_BOOK_DELTA, rec(6, more, 1, NULL, 0));
  CHECK_RC(floxlog_book_apply(&book, &e, 0, &err), FLOXLOG_INVALID_INPUT);
  CHECK_RC(floxlog_book_clear(&book), FLOXLOG_OK);
  CHECK_RC(floxlog_book_apply(&book, &e, 0, &err), FLOXLOG_OK);
  CHECK(book.bid_count == 1);
}

static void tape_book_at(const char *dir) {
  floxlog_tape_error terr;
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  floxlog_tape_writer *w = NULL;
  CHECK_RC(floxlog_tape_writer_open(dir, &cfg, &w, &terr), FLOXLOG_OK);
  if (!w) return;
  floxlog_level sb[] = {L(100, 1), L(98, 2)}, sa[] = {L(101, 3), L(103, 4)};
  floxlog_book b = rec(100, sb, 2, sa, 2);
  b.header_type = 0;
  CHECK_RC(floxlog_tape_writer_append_book_snapshot(w, &b, &terr), FLOXLOG_OK);
  floxlog_level db[] = {L(99, 7), L(100, 5)}, da[] = {L(101, 0)};
  b = rec(200, db, 2, da, 1);
  b.header_type = 1;
  CHECK_RC(floxlog_tape_writer_append_book_delta(w, &b, &terr), FLOXLOG_OK);
  floxlog_level neg[] = {L(1, -1)};
  b = rec(300, neg, 1, NULL, 0);
  b.header_type = 1;
  CHECK_RC(floxlog_tape_writer_append_book_delta(w, &b, &terr), FLOXLOG_OK);
  CHECK_RC(floxlog_tape_writer_close(w, &terr), FLOXLOG_OK);
  floxlog_tape_writer_free(w);

  floxlog_level bo[2], ao[4];
  size_t nb = 99, na = 99;
  CHECK_RC(floxlog_tape_book_at(dir, 7, 150, bo, 2, ao, 4, &nb, &na, &terr), FLOXLOG_OK);
  CHECK(nb == 2 && na == 2 && same(bo, sb, 2) && same(ao, sa, 2));
  /* Capacities act as a depth: the best 2 bids of 3. */
  CHECK_RC(floxlog_tape_book_at(dir, 7, 299, bo, 2, ao, 4, &nb, &na, &terr), FLOXLOG_OK);
  floxlog_level want_b[] = {L(100, 5), L(99, 7)}, want_a[] = {L(103, 4)};
  CHECK(nb == 2 && na == 1 && same(bo, want_b, 2) && same(ao, want_a, 1));
  CHECK_RC(floxlog_tape_book_at(dir, 7, 50, NULL, 0, NULL, 0, &nb, &na, &terr), FLOXLOG_OK);
  CHECK(nb == 0 && na == 0);
  /* The negative quantity at 300: an error naming the file and offset. */
  CHECK_RC(floxlog_tape_book_at(dir, 7, 300, bo, 2, ao, 4, &nb, &na, &terr),
           FLOXLOG_MALFORMED_RECORD);
  CHECK(terr.has_file && terr.has_offset && terr.offset > 64);
  CHECK(strstr(terr.message, "negative qty_raw") != NULL);
  CHECK_RC(floxlog_tape_book_at(NULL, 7, 0, bo, 2, ao, 4, &nb, &na, &terr),
           FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_tape_book_at(dir, 7, 0, bo, 2, ao, 4, NULL, &na, &terr),
           FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_tape_book_at("/nonexistent/tape", 7, 0, bo, 2, ao, 4, &nb, &na, &terr),
           FLOXLOG_IO_ERROR);
}

/* Whether `s` names a CLI flag (`--word`) or a `floxlog <command>`: the C
 * ABI names its own functions and settings (issue 23). */
static int cli_words(const char *s) {
  static const char *const cmds[] = {"recover", "reindex", "manifest", "verify", "cat",
                                     "inspect", "export", "convert", "encode"};
  for (const char *p = s; *p; p++) {
    if (p[0] == '-' && p[1] == '-' && islower((unsigned char)p[2])) return 1;
    if (strncmp(p, "floxlog ", 8) == 0)
      for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strncmp(p + 8, cmds[i], strlen(cmds[i])) == 0) return 1;
  }
  return 0;
}

static int64_t bad_clock(void *ctx) {
  int *calls = (int *)ctx;
  return (*calls)++ == 0 ? -1 : 1000 + *calls;
}

/* Book appends take a zeroed struct, name a contradicting `header_type`
 * (no byte offset), pointer errors name the argument, and a negative clock
 * is refused naming `clock_ns`. */
static void tape_words(const char *base) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s-words", base);
  floxlog_tape_error terr;
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  int calls = 0;
  cfg.clock_ns = bad_clock;
  cfg.clock_ctx = &calls;
  floxlog_tape_writer *w = NULL;
  CHECK_RC(floxlog_tape_writer_open(dir, &cfg, &w, &terr), FLOXLOG_OK);
  if (!w) return;
  floxlog_level one[] = {L(100, 1)};
  floxlog_book b;
  memset(&b, 0, sizeof b);
  b.exchange_ts_ns = 1;
  b.bids = one;
  b.bid_count = 1;
  CHECK_RC(floxlog_tape_writer_append_book_snapshot(w, &b, &terr), FLOXLOG_INVALID_INPUT);
  CHECK(strstr(terr.message, "`clock_ns`") != NULL && !cli_words(terr.message));
  CHECK_RC(floxlog_tape_writer_append_book_delta(w, &b, &terr), FLOXLOG_OK);
  b.header_type = 2;
  CHECK_RC(floxlog_tape_writer_append_book_delta(w, &b, &terr), FLOXLOG_INVALID_INPUT);
  CHECK(terr.has_offset == 0 && strstr(terr.message, "`header_type`") != NULL);
  CHECK(strstr(terr.message, "at byte") == NULL && !cli_words(terr.message));
  b.header_type = 0;
  b.bids = NULL;
  b.bid_count = 5;
  CHECK_RC(floxlog_tape_writer_append_book_delta(w, &b, &terr), FLOXLOG_NULL_POINTER);
  CHECK(strcmp(terr.message, "`book->bids` is NULL with a count of 5") == 0);
  uint64_t raw[16] = {0};
  const floxlog_trade *odd = (const floxlog_trade *)(const void *)((const uint8_t *)raw + 1);
  CHECK_RC(floxlog_tape_writer_append_trade(w, odd, &terr), FLOXLOG_MISALIGNED);
  CHECK(strstr(terr.message, "`trade` is misaligned") != NULL);
  CHECK_RC(floxlog_tape_writer_close(w, &terr), FLOXLOG_OK);
  floxlog_tape_writer_free(w);
}

int main(int argc, char **argv) {
  book_state();
  tape_book_at(argc > 1 ? argv[1] : "test-book-tape");
  tape_words(argc > 1 ? argv[1] : "test-book-tape");
  return check_report("book");
}
