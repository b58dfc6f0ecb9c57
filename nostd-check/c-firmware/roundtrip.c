/* See roundtrip.h. Everything the codec borrows is static (.bss on the
 * target): caller storage for the handles, the writer's buffers sized by
 * floxlog_writer_get_buffer_sizes, the reader's scratch. No allocation. */
#include "roundtrip.h"

#include <string.h>

#define FLOXLOG_CODEC_ONLY
#include "floxlog.h"

/* Events per segment: a third each of trades, books (snapshots and deltas
 * in turn, up to LEVELS levels a side) and option quotes. */
#define EVENTS 96
#define INTERVAL 32
#define LEVELS 4
#define FILE_CAP (24 * 1024)
#define BLOCK_CAP (16 * 1024)
#define OUT_CAP (16 * 1024)
#define INDEX_CAP 8

/* Handle storage: uint64_t arrays are FLOXLOG_STORAGE_ALIGN (8) aligned. */
static uint64_t writer_storage[FLOXLOG_WRITER_STORAGE_BYTES / 8];
static uint64_t reader_storage[FLOXLOG_READER_STORAGE_BYTES / 8];
static uint8_t out_buf[OUT_CAP], block_buf[BLOCK_CAP], file_buf[FILE_CAP], scratch_buf[BLOCK_CAP];
static floxlog_index_entry index_buf[INDEX_CAP];

typedef char storage_aligned[(FLOXLOG_STORAGE_ALIGN <= 8) ? 1 : -1];

static const int64_t T0 = INT64_C(1700000000000000000);

static void fail(const char *what, int i, const floxlog_error *e) {
  char n[24];
  rt_print("FAIL: ");
  rt_print(what);
  rt_print(" at event ");
  rt_print(rt_u64((uint64_t)i, n));
  if (e) {
    rt_print(": ");
    rt_print(floxlog_result_name(e->code));
    rt_print(" (");
    rt_print(e->what);
    rt_print(")");
  }
  rt_print("\n");
}

static floxlog_trade trade_at(int i) {
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = T0 + i * 1000;
  t.recv_ts_ns = T0 + i * 1000 + 7;
  t.price_raw = INT64_C(6512300000000) + i;
  t.qty_raw = INT64_C(2500000) * (i + 1);
  t.trade_id = UINT64_C(900000) + (uint64_t)i;
  t.symbol_id = 11 + (uint32_t)(i % 3);
  t.side = (uint8_t)(i % 2);
  t.instrument = 1;
  t.exchange_id = 4;
  return t;
}

static floxlog_option_quote quote_at(int i) {
  floxlog_option_quote q;
  memset(&q, 0, sizeof q);
  q.exchange_ts_ns = T0 + i * 1000;
  q.recv_ts_ns = T0 + i * 1000 + 9;
  q.mark_price_raw = 100 + i;
  q.index_price_raw = 200 + i;
  q.underlying_price_raw = 300 + i;
  q.iv_raw = 400 + i;
  q.bid_price_raw = 500 + i;
  q.ask_price_raw = 600 + i;
  q.bid_size_raw = 700 + i;
  q.ask_size_raw = 800 + i;
  q.bid_iv_raw = 900 + i;
  q.ask_iv_raw = 1000 + i;
  q.open_interest_raw = 1100 + i;
  q.symbol_id = 77;
  q.instrument = 3;
  q.exchange_id = 5;
  return q;
}

/* A book: bids then asks in `lv`, 1..LEVELS a side by event. */
static floxlog_book book_at(int i, floxlog_level *lv) {
  floxlog_book b;
  size_t nb = (size_t)(1 + i % LEVELS), na = (size_t)(1 + (i / 3) % LEVELS);
  memset(&b, 0, sizeof b);
  for (size_t k = 0; k < nb + na; k++) {
    lv[k].price_raw = INT64_C(6500000000000) + (k < nb ? -1 : 1) * (int64_t)(k + 1) * 100 + i;
    lv[k].qty_raw = (int64_t)(k + 1) * 1000 + i;
  }
  b.exchange_ts_ns = T0 + i * 1000;
  b.recv_ts_ns = T0 + i * 1000 + 5;
  b.seq = 5000 + i;
  b.symbol_id = 42;
  b.instrument = 2;
  b.exchange_id = 6;
  b.bids = lv;
  b.bid_count = nb;
  b.asks = lv + nb;
  b.ask_count = na;
  return b;
}

/* Event i's kind: trade, book (snapshot on even i, delta on odd), quote. */
static uint32_t kind_at(int i) {
  switch (i % 3) {
  case 0: return FLOXLOG_EVENT_TRADE;
  case 1: return i % 2 ? FLOXLOG_EVENT_BOOK_DELTA : FLOXLOG_EVENT_BOOK_SNAPSHOT;
  default: return FLOXLOG_EVENT_OPTION_QUOTE;
  }
}

__attribute__((noinline)) size_t rt_write_segment(uint8_t compression) {
  floxlog_writer_config cfg;
  floxlog_writer_buffer_sizes sz;
  floxlog_error e;
  floxlog_writer *w = NULL;
  floxlog_level lv[2 * LEVELS];
  size_t file_len = 0, n = 0;
  uint8_t header[FLOXLOG_SEGMENT_HEADER_LEN];

  floxlog_writer_config_default(&cfg);
  cfg.compression = compression;
  cfg.index_interval = INTERVAL;
  cfg.created_ns = T0;
  /* The largest frame is a book of LEVELS levels a side. */
  if (floxlog_writer_get_buffer_sizes(&cfg, 12 + FLOXLOG_BOOK_HEADER_LEN + 2 * LEVELS * FLOXLOG_LEVEL_LEN,
                                      EVENTS, &sz, &e) != FLOXLOG_OK) {
    fail("floxlog_writer_get_buffer_sizes", 0, &e);
    return 0;
  }
  if (sz.out_len > OUT_CAP || sz.block_len > BLOCK_CAP || sz.index_capacity > INDEX_CAP) {
    fail("buffer sizes over the static buffers", 0, NULL);
    return 0;
  }
  floxlog_writer_buffers bufs = {out_buf, sz.out_len, compression ? block_buf : NULL, sz.block_len,
                                 index_buf, sz.index_capacity};
  if (floxlog_writer_init(writer_storage, sizeof writer_storage, &cfg, &bufs, &w, &e) != FLOXLOG_OK) {
    fail("floxlog_writer_init", 0, &e);
    return 0;
  }
  for (int i = 0; i < EVENTS; i++) {
    floxlog_result rc;
    floxlog_trade t;
    floxlog_option_quote q;
    floxlog_book b;
    switch (kind_at(i)) {
    case FLOXLOG_EVENT_TRADE:
      t = trade_at(i);
      rc = floxlog_writer_append_trade(w, &t, &e);
      break;
    case FLOXLOG_EVENT_OPTION_QUOTE:
      q = quote_at(i);
      rc = floxlog_writer_append_option_quote(w, &q, &e);
      break;
    case FLOXLOG_EVENT_BOOK_SNAPSHOT:
      b = book_at(i, lv);
      rc = floxlog_writer_append_book_snapshot(w, &b, &e);
      break;
    default:
      b = book_at(i, lv);
      rc = floxlog_writer_append_book_delta(w, &b, &e);
      break;
    }
    if (rc != FLOXLOG_OK) {
      fail("append", i, &e);
      return 0;
    }
    /* Drained after every append, as the buffer sizes assume. */
    if (floxlog_writer_drain(w, file_buf + file_len, FILE_CAP - file_len, &n) != FLOXLOG_OK) {
      fail("floxlog_writer_drain", i, NULL);
      return 0;
    }
    file_len += n;
  }
  if (floxlog_writer_finish(w, header, sizeof header, &e) != FLOXLOG_OK) {
    fail("floxlog_writer_finish", EVENTS, &e);
    return 0;
  }
  if (floxlog_writer_drain(w, file_buf + file_len, FILE_CAP - file_len, &n) != FLOXLOG_OK) {
    fail("floxlog_writer_drain", EVENTS, NULL);
    return 0;
  }
  file_len += n;
  memcpy(file_buf, header, sizeof header);
  return file_len;
}

#define SAME(field) (a->field == b->field)

static int same_trade(const floxlog_trade *a, const floxlog_trade *b) {
  return SAME(exchange_ts_ns) && SAME(recv_ts_ns) && SAME(price_raw) && SAME(qty_raw) && SAME(trade_id) &&
         SAME(symbol_id) && SAME(side) && SAME(instrument) && SAME(exchange_id);
}

static int same_quote(const floxlog_option_quote *a, const floxlog_option_quote *b) {
  return SAME(exchange_ts_ns) && SAME(recv_ts_ns) && SAME(mark_price_raw) && SAME(index_price_raw) &&
         SAME(underlying_price_raw) && SAME(iv_raw) && SAME(bid_price_raw) && SAME(ask_price_raw) &&
         SAME(bid_size_raw) && SAME(ask_size_raw) && SAME(bid_iv_raw) && SAME(ask_iv_raw) &&
         SAME(open_interest_raw) && SAME(symbol_id) && SAME(instrument) && SAME(pad) && SAME(exchange_id);
}

static int same_levels(const floxlog_level *a, const floxlog_level *b, size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (a[k].price_raw != b[k].price_raw || a[k].qty_raw != b[k].qty_raw) return 0;
  }
  return 1;
}

/* `a` as read, `b` as written; header_type as the reference profile
 * stores it (0 snapshot, 1 delta). */
static int same_book(const floxlog_book *a, const floxlog_book *b, uint8_t header_type) {
  return SAME(exchange_ts_ns) && SAME(recv_ts_ns) && SAME(seq) && SAME(symbol_id) && a->header_type == header_type &&
         SAME(instrument) && SAME(exchange_id) && SAME(bid_count) && SAME(ask_count) &&
         same_levels(a->bids, b->bids, b->bid_count) && same_levels(a->asks, b->asks, b->ask_count);
}

__attribute__((noinline)) int rt_read_segment(size_t len) {
  floxlog_error e;
  floxlog_reader *r = NULL;
  floxlog_event ev;
  floxlog_level got[2 * LEVELS], want[2 * LEVELS];
  size_t scratch = 0;
  int i = 0;
  floxlog_result rc;

  if (floxlog_segment_scratch_len(file_buf, len, &scratch, &e) != FLOXLOG_OK || scratch > BLOCK_CAP) {
    fail("floxlog_segment_scratch_len", 0, &e);
    return 0;
  }
  if (floxlog_reader_init(reader_storage, sizeof reader_storage, file_buf, len, NULL,
                          scratch ? scratch_buf : NULL, scratch, &r, &e) != FLOXLOG_OK) {
    fail("floxlog_reader_init", 0, &e);
    return 0;
  }
  while ((rc = floxlog_reader_next(r, &ev, got, 2 * LEVELS, &e)) == FLOXLOG_OK) {
    int ok = i < EVENTS && ev.kind == kind_at(i);
    if (ok) {
      floxlog_trade t;
      floxlog_option_quote q;
      floxlog_book b;
      switch (ev.kind) {
      case FLOXLOG_EVENT_TRADE:
        t = trade_at(i);
        ok = same_trade(&ev.data.trade, &t);
        break;
      case FLOXLOG_EVENT_OPTION_QUOTE:
        q = quote_at(i);
        ok = same_quote(&ev.data.option_quote, &q);
        break;
      default:
        b = book_at(i, want);
        ok = same_book(&ev.data.book, &b, ev.kind == FLOXLOG_EVENT_BOOK_DELTA);
        break;
      }
    }
    if (!ok) {
      fail("a field differs from what was written", i, NULL);
      return 0;
    }
    i++;
  }
  if (rc != FLOXLOG_END) {
    fail("floxlog_reader_next", i, &e);
    return 0;
  }
  if (i != EVENTS) {
    fail("the segment ended early", i, NULL);
    return 0;
  }
  return 1;
}

const uint8_t *rt_file(void) { return file_buf; }

uint32_t rt_crc32(const uint8_t *p, size_t len) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t k = 0; k < len; k++) {
    c ^= p[k];
    for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

char *rt_u64(uint64_t v, char *buf) {
  char tmp[21];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int k = 0; k < n; k++) buf[k] = tmp[n - 1 - k];
  buf[n] = 0;
  return buf;
}
