/*
 * C11 tests of every API family through the static library: messages,
 * writer, reader, standalone frames; with bad input throughout (NULL
 * pointers, buffers one byte too small, truncated and corrupted segments).
 */
#include <stdint.h>
#include <string.h>

#include "check.h"

#ifdef FLOXLOG_TEST_INIT
/* The same tests over handles in caller storage (floxlog_writer_init,
 * floxlog_reader_init), which _new stands for below: built so as c_api_init
 * (full library) and by scripts/test-embedded-c.sh against the codec-only
 * library, which has no _new or _free. A ring of storage: no test keeps a
 * handle while STORAGE_SLOTS more are made. */
#define STORAGE_SLOTS 8
static floxlog_result init_writer(const floxlog_writer_config *cfg, const floxlog_writer_buffers *bufs,
                                  floxlog_writer **out, floxlog_error *err) {
  static uint64_t storage[STORAGE_SLOTS][FLOXLOG_WRITER_STORAGE_BYTES / 8];
  static unsigned next;
  return floxlog_writer_init(storage[next++ % STORAGE_SLOTS], sizeof storage[0], cfg, bufs, out, err);
}
static floxlog_result init_reader(const uint8_t *data, size_t len, const floxlog_reader_options *opts,
                                  uint8_t *scratch, size_t scratch_len, floxlog_reader **out,
                                  floxlog_error *err) {
  static uint64_t storage[STORAGE_SLOTS][FLOXLOG_READER_STORAGE_BYTES / 8];
  static unsigned next;
  return floxlog_reader_init(storage[next++ % STORAGE_SLOTS], sizeof storage[0], data, len, opts, scratch,
                             scratch_len, out, err);
}
#define floxlog_writer_new init_writer
#define floxlog_reader_new init_reader
#ifdef FLOXLOG_CODEC_ONLY
#define floxlog_writer_free(w) ((void)(w))
#define floxlog_reader_free(r) ((void)(r))
#endif
#endif

static floxlog_trade make_trade(int64_t i) {
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = 1000 + 10 * i;
  t.recv_ts_ns = 2000 + 10 * i;
  t.price_raw = 10125000000 + i;
  t.qty_raw = 50000000 + i;
  t.trade_id = (uint64_t)i;
  t.symbol_id = 7;
  t.side = (uint8_t)(i & 1);
  t.instrument = 1;
  t.exchange_id = 3;
  return t;
}

static int same_trade(const floxlog_trade *a, const floxlog_trade *b) {
  return a->exchange_ts_ns == b->exchange_ts_ns && a->recv_ts_ns == b->recv_ts_ns &&
         a->price_raw == b->price_raw && a->qty_raw == b->qty_raw &&
         a->trade_id == b->trade_id && a->symbol_id == b->symbol_id && a->side == b->side &&
         a->instrument == b->instrument && a->exchange_id == b->exchange_id;
}

static floxlog_writer_config config(uint8_t compression, uint16_t interval) {
  floxlog_writer_config c;
  floxlog_writer_config_default(&c);
  c.compression = compression;
  c.index_interval = interval;
  c.created_ns = 1700000000000000000;
  return c;
}

/* Writes n trades; returns the finished segment (malloc'ed) and its size. */
static uint8_t *write_trades(int n, uint8_t compression, uint16_t interval, size_t *size) {
  size_t out_len = 64 + (size_t)n * 60 * 2 + 4096;
  uint8_t *out = malloc(out_len);
  size_t block_len = floxlog_block_scratch_len((size_t)interval * 60, interval);
  uint8_t *block = compression == FLOXLOG_COMPRESSION_LZ4 ? malloc(block_len) : NULL;
  size_t cap = (size_t)floxlog_index_entries_needed((uint64_t)n, interval) + 1;
  floxlog_index_entry *index = malloc(cap * sizeof *index);
  floxlog_writer_config cfg = config(compression, interval);
  floxlog_writer_buffers bufs = {out, out_len, block, block ? block_len : 0, index, cap};
  floxlog_writer *w = NULL;
  uint8_t *seg = NULL;
  if (floxlog_writer_new(&cfg, &bufs, &w, NULL) != FLOXLOG_OK) goto done;
  for (int i = 0; i < n; i++) {
    floxlog_trade t = make_trade(i);
    if (floxlog_writer_append_trade(w, &t, NULL) != FLOXLOG_OK) goto done;
  }
  uint8_t header[64];
  if (floxlog_writer_finish(w, header, sizeof header, NULL) != FLOXLOG_OK) goto done;
  const uint8_t *p;
  size_t len;
  floxlog_writer_pending(w, &p, &len);
  seg = malloc(len);
  memcpy(seg, p, len);
  memcpy(seg, header, 64);
  *size = len;
done:
  floxlog_writer_free(w);
  free(out);
  free(block);
  free(index);
  return seg;
}

/* ------------------------------------------------------------------ */

static void test_messages(void) {
  CHECK(strcmp(floxlog_version(), "0.2.0") == 0);
  CHECK(floxlog_format_version() == 1);
  CHECK(floxlog_lz4_supported());
  CHECK(strcmp(floxlog_result_name(FLOXLOG_OK), "ok") == 0);
  CHECK(strcmp(floxlog_result_name(FLOXLOG_BAD_MAGIC), "bad_magic") == 0);
  CHECK(strcmp(floxlog_result_name(FLOXLOG_BAD_INDEX), "bad_index") == 0);
  CHECK(strcmp(floxlog_result_name(FLOXLOG_NULL_POINTER), "null_pointer") == 0);
  CHECK(strcmp(floxlog_result_name(777), "unknown") == 0);
  /* The corpus kinds are 100..114 in the README's order. */
  static const char *const kinds[] = {
      "bad_magic", "unsupported_version", "unknown_flags", "encrypted",
      "reserved_nonzero", "truncated", "crc_mismatch", "unsupported_record_version",
      "frame_flags_nonzero", "unknown_record_type", "malformed_record",
      "bad_block_magic", "decompression_failed", "index_crc_mismatch", "bad_index"};
  for (unsigned i = 0; i < 15; i++) CHECK(strcmp(floxlog_result_name(100 + i), kinds[i]) == 0);

  char buf[FLOXLOG_MESSAGE_MAX];
  size_t n = 0;
  CHECK_RC(floxlog_strerror(FLOXLOG_TRUNCATED, buf, sizeof buf, &n), FLOXLOG_OK);
  const char *want = "truncated: the data ends inside a header, frame or block";
  CHECK(strcmp(buf, want) == 0 && n == strlen(want));
  /* Exactly message + NUL fits; one byte less writes nothing. */
  char exact[64];
  memset(exact, 'x', sizeof exact);
  size_t n2 = 12345;
  CHECK_RC(floxlog_strerror(FLOXLOG_TRUNCATED, exact, strlen(want), &n2), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(n2 == 12345 && exact[0] == 'x');
  CHECK_RC(floxlog_strerror(FLOXLOG_TRUNCATED, exact, strlen(want) + 1, &n2), FLOXLOG_OK);
  CHECK(strcmp(exact, want) == 0);
  CHECK_RC(floxlog_strerror(FLOXLOG_TRUNCATED, NULL, 10, &n2), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_strerror(FLOXLOG_TRUNCATED, buf, sizeof buf, NULL), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_strerror(4242, buf, sizeof buf, &n), FLOXLOG_OK);
  CHECK(strstr(buf, "4242") != NULL);

  /* error_format copes with any contents: no NUL in `what`, bad code. */
  floxlog_error e;
  memset(&e, 'A', sizeof e);
  e.code = 99999;
  CHECK_RC(floxlog_error_format(&e, buf, sizeof buf, &n), FLOXLOG_OK);
  CHECK(strncmp(buf, "unknown at byte ", 16) == 0 && n < sizeof buf);
  CHECK_RC(floxlog_error_format(NULL, buf, sizeof buf, &n), FLOXLOG_NULL_POINTER);
}

/* ------------------------------------------------------------------ */

static void test_writer_new_bad_input(void) {
  uint8_t out[256];
  floxlog_index_entry index[4];
  floxlog_writer_config cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
  floxlog_writer_buffers bufs = {out, sizeof out, NULL, 0, index, 4};
  floxlog_writer *w = NULL;
  floxlog_error e;

  floxlog_writer_config d;
  CHECK_RC(floxlog_writer_config_default(&d), FLOXLOG_OK);
  CHECK(d.index_interval == 1000 && d.compression == FLOXLOG_COMPRESSION_NONE &&
        d.create_index == 1 && d.profile == FLOXLOG_PROFILE_REFERENCE && d.created_ns == 0);
  CHECK_RC(floxlog_writer_config_default(NULL), FLOXLOG_NULL_POINTER);

  CHECK_RC(floxlog_writer_new(NULL, &bufs, &w, &e), FLOXLOG_NULL_POINTER);
  CHECK(e.code == FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_new(&cfg, NULL, &w, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, NULL, &e), FLOXLOG_NULL_POINTER);
  floxlog_writer_buffers b = bufs;
  b.out = NULL;
  CHECK_RC(floxlog_writer_new(&cfg, &b, &w, &e), FLOXLOG_NULL_POINTER);
  b = bufs;
  b.index = NULL;
  CHECK_RC(floxlog_writer_new(&cfg, &b, &w, &e), FLOXLOG_NULL_POINTER);
  b = bufs;
  b.block = NULL;
  b.block_len = 16;
  CHECK_RC(floxlog_writer_new(&cfg, &b, &w, &e), FLOXLOG_NULL_POINTER);
  /* One byte too small for the placeholder header. */
  b = bufs;
  b.out_len = 63;
  CHECK_RC(floxlog_writer_new(&cfg, &b, &w, &e), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(e.has_needed && e.needed == 64);
  /* Index storage that is not 8-byte aligned (never dereferenced). */
  static uint64_t raw[9];
  b = bufs;
  b.index = (floxlog_index_entry *)(void *)((uint8_t *)raw + 4);
  CHECK_RC(floxlog_writer_new(&cfg, &b, &w, &e), FLOXLOG_MISALIGNED);
  /* Overlapping output and index. */
  b = bufs;
  b.index = (floxlog_index_entry *)(void *)index;
  b.out = (uint8_t *)(void *)index;
  b.out_len = sizeof index;
  CHECK_RC(floxlog_writer_new(&cfg, &b, &w, &e), FLOXLOG_INVALID_INPUT);
  floxlog_writer_config bad = cfg;
  bad.compression = 2;
  CHECK_RC(floxlog_writer_new(&bad, &bufs, &w, &e), FLOXLOG_INVALID_INPUT);
  bad = cfg;
  bad.profile = 9;
  CHECK_RC(floxlog_writer_new(&bad, &bufs, &w, &e), FLOXLOG_INVALID_INPUT);
  bad = cfg;
  bad.index_interval = 0;
  CHECK_RC(floxlog_writer_new(&bad, &bufs, &w, &e), FLOXLOG_INVALID_INPUT);
  CHECK(w == NULL);
  /* Exactly 64 bytes is enough to start. */
  b = bufs;
  b.out_len = 64;
  CHECK_RC(floxlog_writer_new(&cfg, &b, &w, &e), FLOXLOG_OK);
  CHECK(w != NULL);
  floxlog_writer_free(w);
  floxlog_writer_free(NULL);
}

static void test_writer_buffers_full(void) {
  floxlog_error e;
  floxlog_trade t0 = make_trade(0), t1 = make_trade(1), t2 = make_trade(2);

  /* Output one byte too small for header + one trade frame. */
  uint8_t out[64 + 2 * 60];
  floxlog_index_entry index[4];
  floxlog_writer_config cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
  floxlog_writer_buffers bufs = {out, 64 + 60 - 1, NULL, 0, index, 4};
  floxlog_writer *w = NULL;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, NULL), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trade(w, &t0, &e), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(e.has_needed && e.needed == 124 && e.offset == 64);
  floxlog_writer_stats st;
  CHECK_RC(floxlog_writer_get_stats(w, &st), FLOXLOG_OK);
  CHECK(st.events == 0 && st.pending_bytes == 64 && st.segment_bytes == 64);
  floxlog_writer_free(w);

  /* Room for two frames: the third fails until the caller drains. */
  bufs.out_len = sizeof out;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, NULL), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trade(w, &t0, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trade(w, &t1, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trade(w, &t2, &e), FLOXLOG_BUFFER_TOO_SMALL);
  uint8_t file[1024];
  size_t have = 0, n = 0;
  CHECK_RC(floxlog_writer_consume(w, sizeof out + 1), FLOXLOG_INVALID_INPUT);
  CHECK_RC(floxlog_writer_drain(w, NULL, 10, &n), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_drain(w, file, 100, &n), FLOXLOG_OK);
  CHECK(n == 100);
  have += n;
  CHECK_RC(floxlog_writer_drain(w, file + have, sizeof file - have, &n), FLOXLOG_OK);
  CHECK(n == 64 + 120 - 100);
  have += n;
  CHECK_RC(floxlog_writer_drain(w, file + have, sizeof file - have, &n), FLOXLOG_OK);
  CHECK(n == 0);
  CHECK_RC(floxlog_writer_append_trade(w, &t2, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_get_stats(w, &st), FLOXLOG_OK);
  CHECK(st.events == 3 && st.pending_offset == 184 && st.pending_bytes == 60 &&
        st.index_entries == 1 && st.finished == 0);
  floxlog_trade t3 = make_trade(3), t4 = make_trade(4);
  CHECK_RC(floxlog_writer_append_trade(w, &t3, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trade(w, &t4, &e), FLOXLOG_OK);

  /* finish: the header buffer one byte short changes nothing. */
  uint8_t header[64];
  CHECK_RC(floxlog_writer_finish(w, header, 63, &e), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(e.needed == 64);
  CHECK_RC(floxlog_writer_finish(w, NULL, 64, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_get_stats(w, &st), FLOXLOG_OK);
  CHECK(st.finished == 0);
  /* The trailer (48 bytes) does not fit behind three pending frames... */
  CHECK_RC(floxlog_writer_finish(w, header, 64, &e), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(e.needed == 180 + 48);
  /* ...until they are drained. */
  CHECK_RC(floxlog_writer_drain(w, file + have, sizeof file - have, &n), FLOXLOG_OK);
  have += n;
  CHECK_RC(floxlog_writer_finish(w, header, 64, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_drain(w, file + have, sizeof file - have, &n), FLOXLOG_OK);
  have += n;
  CHECK(have == 64 + 5 * 60 + 32 + 16);
  memcpy(file, header, 64);
  CHECK_RC(floxlog_writer_append_trade(w, &t0, &e), FLOXLOG_FINISHED);
  CHECK_RC(floxlog_writer_finish(w, header, 64, &e), FLOXLOG_FINISHED);
  CHECK_RC(floxlog_writer_get_stats(w, &st), FLOXLOG_OK);
  CHECK(st.finished == 1);
  floxlog_writer_free(w);

  /* The drained pieces make a valid segment. */
  floxlog_reader *r = NULL;
  CHECK_RC(floxlog_reader_new(file, have, NULL, NULL, 0, &r, &e), FLOXLOG_OK);
  floxlog_event ev;
  int count = 0;
  while (floxlog_reader_next(r, &ev, NULL, 0, &e) == FLOXLOG_OK) {
    floxlog_trade want = make_trade(count++);
    CHECK(ev.kind == FLOXLOG_EVENT_TRADE && same_trade(&ev.data.trade, &want));
  }
  CHECK(count == 5);
  floxlog_reader_free(r);

  /* Index storage full: interval 1 and two entries. */
  floxlog_writer_config c1 = config(FLOXLOG_COMPRESSION_NONE, 1);
  uint8_t out2[1024];
  floxlog_writer_buffers b2 = {out2, sizeof out2, NULL, 0, index, 2};
  CHECK_RC(floxlog_writer_new(&c1, &b2, &w, NULL), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trade(w, &t0, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trade(w, &t1, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trade(w, &t2, &e), FLOXLOG_INDEX_FULL);
  CHECK(e.has_needed && e.needed == 3);
  CHECK_RC(floxlog_writer_finish(w, header, 64, &e), FLOXLOG_OK);
  floxlog_writer_free(w);
}

static void test_writer_events_bad_input(void) {
  uint8_t out[8192];
  floxlog_index_entry index[8];
  floxlog_writer_config cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
  floxlog_writer_buffers bufs = {out, sizeof out, NULL, 0, index, 8};
  floxlog_writer *w = NULL;
  floxlog_error e;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, NULL), FLOXLOG_OK);

  floxlog_trade t = make_trade(0);
  CHECK_RC(floxlog_writer_append_trade(NULL, &t, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_append_trade(w, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_append_trade(w, NULL, NULL), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_append_book_snapshot(w, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_append_book_delta(w, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_append_option_quote(w, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_append_pool_state(w, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_append(w, NULL, &e), FLOXLOG_NULL_POINTER);

  floxlog_level levels[2] = {{100, 1}, {99, 2}};
  floxlog_book book;
  memset(&book, 0, sizeof book);
  book.exchange_ts_ns = 5;
  book.bid_count = 1;
  book.bids = NULL;
  CHECK_RC(floxlog_writer_append_book_snapshot(w, &book, &e), FLOXLOG_NULL_POINTER);
  CHECK(strcmp(e.what, "`book->bids` is NULL with a count of 1") == 0);
  book.bids = levels;
  book.bid_count = 65536;
  CHECK_RC(floxlog_writer_append_book_snapshot(w, &book, &e), FLOXLOG_INVALID_INPUT);
  book.bid_count = 1;
  book.bids = (const floxlog_level *)(const void *)((const uint8_t *)levels + 1);
  CHECK_RC(floxlog_writer_append_book_snapshot(w, &book, &e), FLOXLOG_MISALIGNED);
  CHECK(strstr(e.what, "`book->bids` is misaligned") != NULL);
  book.bids = levels;
  book.header_type = 1; /* a delta's byte on a snapshot */
  CHECK_RC(floxlog_writer_append_book_snapshot(w, &book, &e), FLOXLOG_INVALID_INPUT);
  CHECK(strstr(e.what, "`header_type`") != NULL);
  /* 0 (a zeroed struct) takes the byte of the function called. */
  book.header_type = 0;
  CHECK_RC(floxlog_writer_append_book_delta(w, &book, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_book_snapshot(w, &book, &e), FLOXLOG_OK);
  book.header_type = 3;
  book.asks = levels + 1;
  book.ask_count = 1;
  CHECK_RC(floxlog_writer_append_book_delta(w, &book, &e), FLOXLOG_OK);

  floxlog_pool_state ps;
  memset(&ps, 0, sizeof ps);
  ps.payload = NULL;
  ps.payload_len = 3;
  CHECK_RC(floxlog_writer_append_pool_state(w, &ps, &e), FLOXLOG_NULL_POINTER);
  ps.payload_len = 0;
  CHECK_RC(floxlog_writer_append_pool_state(w, &ps, &e), FLOXLOG_OK);

  floxlog_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = 9;
  CHECK_RC(floxlog_writer_append(w, &ev, &e), FLOXLOG_INVALID_INPUT);

  /* Raw frames: a valid payload, an unknown type, a short payload. */
  uint8_t frame[60];
  size_t n;
  ev.kind = FLOXLOG_EVENT_TRADE;
  ev.data.trade = t;
  CHECK_RC(floxlog_frame_encode(&ev, FLOXLOG_PROFILE_REFERENCE, frame, sizeof frame, &n, &e),
           FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_raw(w, 1, frame + 12, 48, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_raw(w, 9, frame + 12, 48, &e), FLOXLOG_INVALID_INPUT);
  CHECK_RC(floxlog_writer_append_raw(w, 1, frame + 12, 47, &e), FLOXLOG_INVALID_INPUT);
  CHECK_RC(floxlog_writer_append_raw(w, 1, NULL, 48, &e), FLOXLOG_NULL_POINTER);

  /* Rotation test. */
  bool exceeds = true;
  CHECK_RC(floxlog_writer_would_exceed(w, &ev, 1000000, &exceeds, &e), FLOXLOG_OK);
  CHECK(!exceeds);
  floxlog_writer_stats st;
  floxlog_writer_get_stats(w, &st);
  CHECK_RC(floxlog_writer_would_exceed(w, &ev, st.segment_bytes + 60 - 1, &exceeds, &e),
           FLOXLOG_OK);
  CHECK(exceeds);
  CHECK_RC(floxlog_writer_would_exceed(w, &ev, st.segment_bytes + 60, &exceeds, &e), FLOXLOG_OK);
  CHECK(!exceeds);
  CHECK_RC(floxlog_writer_would_exceed(w, &ev, 0, NULL, &e), FLOXLOG_NULL_POINTER);

  /* current_header: the placeholder while uncompressed. */
  uint8_t h[64];
  CHECK_RC(floxlog_writer_current_header(w, h, 63), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK_RC(floxlog_writer_current_header(w, h, 64), FLOXLOG_OK);
  floxlog_segment_header sh;
  CHECK_RC(floxlog_segment_header_parse(h, 64, &sh, &e), FLOXLOG_OK);
  CHECK(sh.event_count == 0 && sh.index_offset == 0 && sh.created_ns == cfg.created_ns);

  floxlog_writer_free(w);
}

/* ------------------------------------------------------------------ */

static void test_reader(void) {
  size_t size = 0;
  uint8_t *seg = write_trades(100, FLOXLOG_COMPRESSION_NONE, 10, &size);
  CHECK(seg != NULL && size == 64 + 100 * 60 + 32 + 10 * 16);
  if (seg == NULL) return;
  floxlog_error e;
  floxlog_reader *r = NULL;
  floxlog_event ev;

  CHECK_RC(floxlog_reader_new(NULL, size, NULL, NULL, 0, &r, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_reader_new(seg, size, NULL, NULL, 0, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_reader_new(seg, size, NULL, NULL, 8, &r, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_reader_new(seg, size, NULL, seg + 10, 8, &r, &e), FLOXLOG_INVALID_INPUT);
  CHECK(r == NULL);
  floxlog_reader_options opts;
  CHECK_RC(floxlog_reader_options_default(&opts), FLOXLOG_OK);
  CHECK(opts.verify_crc == 1 && opts.skip_unknown_types == 0);
  CHECK_RC(floxlog_reader_new(seg, size, &opts, NULL, 0, &r, &e), FLOXLOG_OK);

  floxlog_segment_header sh;
  CHECK_RC(floxlog_reader_header(r, &sh), FLOXLOG_OK);
  CHECK(sh.event_count == 100 && sh.first_event_ns == 1000 && sh.last_event_ns == 1990);
  CHECK(sh.index_offset == 64 + 6000 && (sh.flags & FLOXLOG_FLAG_HAS_INDEX));
  CHECK_RC(floxlog_reader_header(r, NULL), FLOXLOG_NULL_POINTER);

  floxlog_index_header ih;
  size_t entries = 0;
  CHECK_RC(floxlog_reader_index(r, &ih, &entries, &e), FLOXLOG_OK);
  CHECK(entries == 10 && ih.entry_count == 10 && ih.interval == 10 && ih.first_ts_ns == 1000);
  floxlog_index_entry ie;
  CHECK_RC(floxlog_reader_index_entry(r, 3, &ie, &e), FLOXLOG_OK);
  CHECK(ie.timestamp_ns == 1000 + 300 && ie.file_offset == 64 + 30 * 60);
  CHECK_RC(floxlog_reader_index_entry(r, 10, &ie, &e), FLOXLOG_END);
  CHECK_RC(floxlog_reader_index_seek(r, 1555, &ie, &e), FLOXLOG_OK);
  CHECK(ie.timestamp_ns == 1500 && ie.file_offset == 64 + 50 * 60);
  CHECK_RC(floxlog_reader_index_seek(r, 999, &ie, &e), FLOXLOG_END);

  int count = 0;
  floxlog_position pos;
  floxlog_result rc;
  while ((rc = floxlog_reader_next(r, &ev, NULL, 0, &e)) == FLOXLOG_OK) {
    floxlog_trade want = make_trade(count);
    CHECK(ev.kind == FLOXLOG_EVENT_TRADE && same_trade(&ev.data.trade, &want));
    CHECK_RC(floxlog_reader_position(r, &pos), FLOXLOG_OK);
    CHECK(pos.offset == 64 + (uint64_t)count * 60 && pos.has_in_block == 0);
    count++;
  }
  CHECK(rc == FLOXLOG_END && count == 100);
  CHECK_RC(floxlog_reader_next(r, &ev, NULL, 0, &e), FLOXLOG_END);
  uint64_t nread = 0, next_off = 0;
  CHECK_RC(floxlog_reader_events_read(r, &nread), FLOXLOG_OK);
  CHECK(nread == 100);
  CHECK_RC(floxlog_reader_next_offset(r, &next_off), FLOXLOG_OK);
  CHECK(next_off == 64 + 6000);

  /* Seek: the first event at or after the timestamp, between entries. */
  CHECK_RC(floxlog_reader_seek(r, 1555), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next(r, &ev, NULL, 0, &e), FLOXLOG_OK);
  CHECK(ev.data.trade.exchange_ts_ns == 1560);
  CHECK_RC(floxlog_reader_seek(r, 5000), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next(r, &ev, NULL, 0, &e), FLOXLOG_END);
  CHECK_RC(floxlog_reader_seek(r, INT64_MIN), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next(r, &ev, NULL, 0, &e), FLOXLOG_OK);
  CHECK(ev.data.trade.exchange_ts_ns == 1000);

  /* Trades straight into a caller array, 32 per call, after a seek. */
  CHECK_RC(floxlog_reader_seek(r, INT64_MIN), FLOXLOG_OK);
  floxlog_trade tr[32];
  size_t got = 99;
  int total = 0;
  while ((rc = floxlog_reader_next_trades(r, tr, 32, &got, &e)) == FLOXLOG_OK) {
    CHECK(got >= 1 && got <= 32);
    for (size_t i = 0; i < got; i++, total++) {
      floxlog_trade want = make_trade(total);
      CHECK(same_trade(&tr[i], &want));
    }
  }
  CHECK(rc == FLOXLOG_END && got == 0 && total == 100);
  CHECK_RC(floxlog_reader_next_trades(r, tr, 0, &got, &e), FLOXLOG_INVALID_INPUT);
  CHECK_RC(floxlog_reader_next_trades(r, NULL, 4, &got, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_reader_next_trades(r, tr, 4, NULL, &e), FLOXLOG_NULL_POINTER);

  /* NULL outputs and a writer handle in place of a reader. */
  CHECK_RC(floxlog_reader_next(r, NULL, NULL, 0, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_reader_next(NULL, &ev, NULL, 0, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_reader_index(r, NULL, &entries, &e), FLOXLOG_NULL_POINTER);
  uint8_t out[128];
  floxlog_writer_config cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
  floxlog_writer_buffers bufs = {out, sizeof out, NULL, 0, NULL, 0};
  cfg.create_index = 0;
  floxlog_writer *w = NULL;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, NULL), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next((floxlog_reader *)(void *)w, &ev, NULL, 0, &e),
           FLOXLOG_INVALID_INPUT);
  CHECK(strcmp(e.what, "not a floxlog_reader handle") == 0);
  CHECK_RC(floxlog_writer_append_trade((floxlog_writer *)(void *)r, &ev.data.trade, &e),
           FLOXLOG_INVALID_INPUT);
  floxlog_writer_free(w);
  floxlog_reader_free(r);
  floxlog_reader_free(NULL);
  free(seg);
}

/* Every prefix of a segment: never a crash, and exactly the whole frames
 * before the cut, then `truncated` at the cut frame (or a clean end). */
static void test_reader_truncated(void) {
  size_t size = 0;
  const int n = 12;
  uint8_t *seg = write_trades(n, FLOXLOG_COMPRESSION_NONE, 5, &size);
  if (seg == NULL) {
    CHECK(seg != NULL);
    return;
  }
  int bad = 0;
  for (size_t len = 0; len < size; len++) {
    uint8_t *copy = malloc(len ? len : 1); /* exact size, so ASan sees overreads */
    memcpy(copy, seg, len);
    floxlog_reader *r = NULL;
    floxlog_error e;
    floxlog_result rc = floxlog_reader_new(copy, len, NULL, NULL, 0, &r, &e);
    if (len < 64) {
      bad += rc != FLOXLOG_TRUNCATED || e.offset != 0 || e.needed != 64;
    } else if (rc != FLOXLOG_OK) {
      bad++;
    } else {
      floxlog_event ev;
      uint64_t count = 0;
      while ((rc = floxlog_reader_next(r, &ev, NULL, 0, &e)) == FLOXLOG_OK) count++;
      uint64_t whole = (len - 64) / 60;
      if (whole > (uint64_t)n) whole = (uint64_t)n;
      bad += count != whole;
      if (rc == FLOXLOG_TRUNCATED) {
        bad += e.offset != 64 + count * 60;
      } else {
        bad += rc != FLOXLOG_END;
      }
      floxlog_reader_free(r);
    }
    free(copy);
  }
  CHECK(bad == 0);
  free(seg);
}

/* Every byte of a small segment flipped in turn: codes, never crashes. */
static void test_reader_corrupted(void) {
  size_t size = 0;
  uint8_t *seg = write_trades(6, FLOXLOG_COMPRESSION_NONE, 2, &size);
  uint8_t *lz = NULL;
  size_t lz_size = 0;
  lz = write_trades(30, FLOXLOG_COMPRESSION_LZ4, 10, &lz_size);
  if (seg == NULL || lz == NULL) {
    CHECK(seg != NULL && lz != NULL);
    free(seg);
    free(lz);
    return;
  }
  int unknown_codes = 0, too_many = 0, errors_seen = 0;
  for (int which = 0; which < 2; which++) {
    const uint8_t *src = which ? lz : seg;
    size_t len = which ? lz_size : size;
    uint64_t events = which ? 30 : 6;
    for (size_t at = 0; at < len; at++) {
      uint8_t *copy = malloc(len);
      memcpy(copy, src, len);
      copy[at] ^= 0xA5;
      size_t scratch_len = 0;
      floxlog_error e;
      floxlog_result rc = floxlog_segment_scratch_len(copy, len, &scratch_len, &e);
      uint8_t *scratch = scratch_len ? malloc(scratch_len) : NULL;
      floxlog_reader *r = NULL;
      rc = floxlog_reader_new(copy, len, NULL, scratch, scratch_len, &r, &e);
      if (rc == FLOXLOG_OK) {
        floxlog_event ev;
        floxlog_level levels[4];
        uint64_t count = 0;
        while ((rc = floxlog_reader_next(r, &ev, levels, 4, &e)) == FLOXLOG_OK) count++;
        too_many += count > events;
        floxlog_index_header ih;
        size_t entries;
        floxlog_result irc = floxlog_reader_index(r, &ih, &entries, &e);
        unknown_codes += strcmp(floxlog_result_name(irc), "unknown") == 0;
        floxlog_reader_seek(r, 1100);
        while (floxlog_reader_next(r, &ev, levels, 4, &e) == FLOXLOG_OK) {
        }
        floxlog_reader_free(r);
      }
      errors_seen += rc != FLOXLOG_END;
      unknown_codes += strcmp(floxlog_result_name(rc), "unknown") == 0;
      free(scratch);
      free(copy);
    }
  }
  CHECK(unknown_codes == 0);
  CHECK(too_many == 0);
  /* Most flips (every CRC-covered payload byte) must be detected. */
  CHECK(errors_seen > (int)(size / 2));
  free(seg);
  free(lz);
}

static void test_reader_lz4_scratch(void) {
  size_t size = 0;
  uint8_t *seg = write_trades(250, FLOXLOG_COMPRESSION_LZ4, 100, &size);
  if (seg == NULL) {
    CHECK(seg != NULL);
    return;
  }
  floxlog_error e;
  size_t need = 0;
  CHECK_RC(floxlog_segment_scratch_len(seg, size, &need, &e), FLOXLOG_OK);
  CHECK(need == 100 * 60);
  CHECK_RC(floxlog_segment_scratch_len(seg, size, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_segment_scratch_len(seg, 10, &need, &e), FLOXLOG_TRUNCATED);

  /* One byte too small: the first block cannot be decompressed. */
  uint8_t *scratch = malloc(need);
  floxlog_reader *r = NULL;
  floxlog_event ev;
  CHECK_RC(floxlog_reader_new(seg, size, NULL, scratch, need - 1, &r, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next(r, &ev, NULL, 0, &e), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(e.has_needed && e.needed == need && e.offset == 64);
  floxlog_reader_free(r);

  CHECK_RC(floxlog_reader_new(seg, size, NULL, scratch, need, &r, &e), FLOXLOG_OK);
  floxlog_segment_header sh;
  floxlog_reader_header(r, &sh);
  CHECK(sh.compression == 1 && (sh.flags & FLOXLOG_FLAG_COMPRESSED) && sh.event_count == 250);
  int count = 0;
  floxlog_position pos;
  while (floxlog_reader_next(r, &ev, NULL, 0, &e) == FLOXLOG_OK) {
    floxlog_trade want = make_trade(count);
    CHECK(same_trade(&ev.data.trade, &want));
    floxlog_reader_position(r, &pos);
    CHECK(pos.has_in_block == 1 && pos.in_block == (uint32_t)(count % 100) * 60);
    count++;
  }
  CHECK(count == 250);
  size_t entries;
  floxlog_index_header ih;
  CHECK_RC(floxlog_reader_index(r, &ih, &entries, &e), FLOXLOG_OK);
  CHECK(entries == 3);
  /* Seek into the third block through the index. */
  CHECK_RC(floxlog_reader_seek(r, 1000 + 10 * 230), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next(r, &ev, NULL, 0, &e), FLOXLOG_OK);
  CHECK(ev.data.trade.trade_id == 230);
  floxlog_reader_free(r);
  free(scratch);
  free(seg);
}

/* A book larger than the level scratch is held back, not lost. */
static void test_reader_level_scratch(void) {
  uint8_t out[4096];
  floxlog_index_entry index[2];
  floxlog_writer_config cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
  floxlog_writer_buffers bufs = {out, sizeof out, NULL, 0, index, 2};
  floxlog_writer *w = NULL;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, NULL), FLOXLOG_OK);
  floxlog_level bids[3] = {{300, 1}, {200, 2}, {100, 3}};
  floxlog_level asks[2] = {{400, 4}, {500, 5}};
  floxlog_book book;
  memset(&book, 0, sizeof book);
  book.exchange_ts_ns = 42;
  book.seq = 9;
  book.bids = bids;
  book.bid_count = 3;
  book.asks = asks;
  book.ask_count = 2;
  CHECK_RC(floxlog_writer_append_book_snapshot(w, &book, NULL), FLOXLOG_OK);
  floxlog_trade t = make_trade(5);
  CHECK_RC(floxlog_writer_append_trade(w, &t, NULL), FLOXLOG_OK);
  uint8_t header[64];
  CHECK_RC(floxlog_writer_finish(w, header, 64, NULL), FLOXLOG_OK);
  const uint8_t *p;
  size_t len;
  floxlog_writer_pending(w, &p, &len);
  uint8_t *seg = malloc(len);
  memcpy(seg, p, len);
  memcpy(seg, header, 64);
  floxlog_writer_free(w);

  floxlog_reader *r = NULL;
  floxlog_error e;
  floxlog_event ev;
  floxlog_level levels[5];
  CHECK_RC(floxlog_reader_new(seg, len, NULL, NULL, 0, &r, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next(r, &ev, levels, 4, &e), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(e.has_needed && e.needed == 5);
  CHECK_RC(floxlog_reader_next(r, &ev, NULL, 3, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_reader_next(r, &ev, levels, 5, &e), FLOXLOG_OK);
  CHECK(ev.kind == FLOXLOG_EVENT_BOOK_SNAPSHOT && ev.data.book.seq == 9);
  CHECK(ev.data.book.bid_count == 3 && ev.data.book.ask_count == 2);
  CHECK(ev.data.book.bids == levels && ev.data.book.asks == levels + 3);
  CHECK(memcmp(ev.data.book.bids, bids, sizeof bids) == 0);
  CHECK(memcmp(ev.data.book.asks, asks, sizeof asks) == 0);
  CHECK_RC(floxlog_reader_next(r, &ev, levels, 5, &e), FLOXLOG_OK);
  CHECK(ev.kind == FLOXLOG_EVENT_TRADE && same_trade(&ev.data.trade, &t));
  CHECK_RC(floxlog_reader_next(r, &ev, levels, 5, &e), FLOXLOG_END);
  floxlog_reader_free(r);
  free(seg);
}

/* The batch forms: progress counts, early ends, deferred errors. */
static void test_batches(void) {
  floxlog_trade ts[50];
  for (int i = 0; i < 50; i++) ts[i] = make_trade(i);
  floxlog_error e;
  size_t done = 999;

  /* Output room for 20 frames: the batch stops there and says so. */
  uint8_t out[64 + 20 * 60];
  floxlog_index_entry index[8];
  floxlog_writer_config cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
  floxlog_writer_buffers bufs = {out, sizeof out, NULL, 0, index, 8};
  floxlog_writer *w = NULL;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, NULL), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_trades(w, NULL, 3, &done, &e), FLOXLOG_NULL_POINTER);
  CHECK(done == 0);
  CHECK_RC(floxlog_writer_append_trades(w, ts, 3, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_writer_append_trades(w, ts, 0, &done, &e), FLOXLOG_OK);
  CHECK(done == 0);
  static uint8_t file[8192];
  size_t have = 0, n = 0, at = 0;
  while (at < 50) {
    floxlog_result rc = floxlog_writer_append_trades(w, ts + at, 50 - at, &done, &e);
    at += done;
    if (rc == FLOXLOG_BUFFER_TOO_SMALL) {
      CHECK(done > 0); /* progress every round */
      floxlog_writer_drain(w, file + have, sizeof file - have, &n);
      have += n;
    } else {
      CHECK(rc == FLOXLOG_OK && at == 50);
      if (rc != FLOXLOG_OK) break;
    }
  }
  uint8_t header[64];
  floxlog_writer_drain(w, file + have, sizeof file - have, &n);
  have += n;
  CHECK_RC(floxlog_writer_finish(w, header, 64, &e), FLOXLOG_OK);
  floxlog_writer_drain(w, file + have, sizeof file - have, &n);
  have += n;
  memcpy(file, header, 64);
  floxlog_writer_free(w);
  CHECK(have == 64 + 50 * 60 + 32 + 5 * 16);

  /* Generic events in a batch, including a bad one at index 2. */
  floxlog_event evs[4];
  memset(evs, 0, sizeof evs);
  for (int i = 0; i < 4; i++) {
    evs[i].kind = FLOXLOG_EVENT_TRADE;
    evs[i].data.trade = ts[i];
  }
  evs[2].kind = 42;
  uint8_t out2[1024];
  floxlog_writer_buffers b2 = {out2, sizeof out2, NULL, 0, index, 8};
  CHECK_RC(floxlog_writer_new(&cfg, &b2, &w, NULL), FLOXLOG_OK);
  CHECK_RC(floxlog_writer_append_events(w, evs, 4, &done, &e), FLOXLOG_INVALID_INPUT);
  CHECK(done == 2);
  floxlog_writer_stats st;
  floxlog_writer_get_stats(w, &st);
  CHECK(st.events == 2);
  floxlog_writer_free(w);

  /* Reading in batches of 7 gives every event once, in order. */
  floxlog_reader *r = NULL;
  CHECK_RC(floxlog_reader_new(file, have, NULL, NULL, 0, &r, &e), FLOXLOG_OK);
  floxlog_event got[7];
  size_t count = 99;
  CHECK_RC(floxlog_reader_next_batch(r, got, 0, NULL, 0, &count, &e), FLOXLOG_INVALID_INPUT);
  CHECK(count == 0);
  CHECK_RC(floxlog_reader_next_batch(r, got, 7, NULL, 0, NULL, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_reader_next_batch(r, NULL, 7, NULL, 0, &count, &e), FLOXLOG_NULL_POINTER);
  int total = 0, wrong = 0;
  floxlog_result rc;
  while ((rc = floxlog_reader_next_batch(r, got, 7, NULL, 0, &count, &e)) == FLOXLOG_OK) {
    for (size_t i = 0; i < count; i++) {
      floxlog_trade want = make_trade(total++);
      wrong += !same_trade(&got[i].data.trade, &want);
    }
  }
  CHECK(rc == FLOXLOG_END && count == 0 && total == 50 && wrong == 0);
  floxlog_reader_free(r);

  /* Damage at frame 20: the first batch stops before it with OK, the next
   * call returns the error (with its offset), then END. */
  file[64 + 20 * 60 + 12 + 3] ^= 0x40;
  CHECK_RC(floxlog_reader_new(file, have, NULL, NULL, 0, &r, &e), FLOXLOG_OK);
  floxlog_event big[32];
  CHECK_RC(floxlog_reader_next_batch(r, big, 32, NULL, 0, &count, &e), FLOXLOG_OK);
  CHECK(count == 20);
  CHECK_RC(floxlog_reader_next_batch(r, big, 32, NULL, 0, &count, &e), FLOXLOG_CRC_MISMATCH);
  CHECK(count == 0 && e.offset == 64 + 20 * 60);
  CHECK_RC(floxlog_reader_next_batch(r, big, 32, NULL, 0, &count, &e), FLOXLOG_END);
  floxlog_reader_free(r);
  file[64 + 20 * 60 + 12 + 3] ^= 0x40;

  /* Books share the level buffer; one that does not fit ends the batch. */
  uint8_t out3[4096];
  floxlog_writer_buffers b3 = {out3, sizeof out3, NULL, 0, index, 8};
  CHECK_RC(floxlog_writer_new(&cfg, &b3, &w, NULL), FLOXLOG_OK);
  floxlog_level lv[3] = {{1, 1}, {2, 2}, {3, 3}};
  floxlog_book book;
  memset(&book, 0, sizeof book);
  book.bids = lv;
  book.bid_count = 3;
  for (int i = 0; i < 3; i++) {
    book.seq = i;
    CHECK_RC(floxlog_writer_append_book_snapshot(w, &book, &e), FLOXLOG_OK);
  }
  CHECK_RC(floxlog_writer_finish(w, header, 64, &e), FLOXLOG_OK);
  const uint8_t *p;
  size_t len;
  floxlog_writer_pending(w, &p, &len);
  uint8_t *seg = malloc(len);
  memcpy(seg, p, len);
  memcpy(seg, header, 64);
  floxlog_writer_free(w);
  floxlog_level levels[7];
  CHECK_RC(floxlog_reader_new(seg, len, NULL, NULL, 0, &r, &e), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next_batch(r, big, 32, levels, 2, &count, &e), FLOXLOG_BUFFER_TOO_SMALL);
  CHECK(count == 0 && e.needed == 3);
  CHECK_RC(floxlog_reader_next_batch(r, big, 32, levels, 7, &count, &e), FLOXLOG_OK);
  CHECK(count == 2 && big[0].data.book.seq == 0 && big[1].data.book.seq == 1);
  CHECK(big[0].data.book.bids == levels && big[1].data.book.bids == levels + 3);
  CHECK(memcmp(big[1].data.book.bids, lv, sizeof lv) == 0);
  CHECK_RC(floxlog_reader_next_batch(r, big, 32, levels, 7, &count, &e), FLOXLOG_OK);
  CHECK(count == 1 && big[0].data.book.seq == 2);
  CHECK_RC(floxlog_reader_next_batch(r, big, 32, levels, 7, &count, &e), FLOXLOG_END);
  floxlog_reader_free(r);
  free(seg);
}

/* ------------------------------------------------------------------ */

static void test_frames(void) {
  floxlog_error e;
  floxlog_level lv[3] = {{1, 2}, {3, 4}, {5, 6}};
  uint8_t payload[7] = {9, 8, 7, 6, 5, 4, 3};
  floxlog_event evs[4];
  memset(evs, 0, sizeof evs);
  evs[0].kind = FLOXLOG_EVENT_TRADE;
  evs[0].data.trade = make_trade(3);
  evs[1].kind = FLOXLOG_EVENT_BOOK_DELTA;
  evs[1].data.book.header_type = 1;
  evs[1].data.book.bids = lv;
  evs[1].data.book.bid_count = 1;
  evs[1].data.book.asks = lv + 1;
  evs[1].data.book.ask_count = 2;
  evs[2].kind = FLOXLOG_EVENT_OPTION_QUOTE;
  evs[2].data.option_quote.iv_raw = 123;
  evs[2].data.option_quote.symbol_id = 77;
  evs[3].kind = FLOXLOG_EVENT_POOL_STATE;
  evs[3].data.pool_state.sub_type = 4;
  evs[3].data.pool_state.payload = payload;
  evs[3].data.pool_state.payload_len = sizeof payload;
  const size_t lens[4] = {60, 12 + 40 + 48, 124, 12 + 32 + 7};

  for (int k = 0; k < 4; k++) {
    size_t need = 0;
    CHECK_RC(floxlog_event_frame_len(&evs[k], &need, &e), FLOXLOG_OK);
    CHECK(need == lens[k]);
    uint8_t buf[256];
    memset(buf, 0xEE, sizeof buf);
    size_t n = 999;
    /* One byte too small: nothing written. */
    CHECK_RC(floxlog_frame_encode(&evs[k], 0, buf, need - 1, &n, &e), FLOXLOG_BUFFER_TOO_SMALL);
    CHECK(e.needed == need && n == 999 && buf[0] == 0xEE && buf[need - 2] == 0xEE);
    CHECK_RC(floxlog_frame_encode(&evs[k], 0, buf, need, &n, &e), FLOXLOG_OK);
    CHECK(n == need);
    CHECK_RC(floxlog_frame_encode(&evs[k], 0, NULL, need, &n, &e), FLOXLOG_NULL_POINTER);

    floxlog_event out;
    floxlog_level levels[3];
    size_t used = 0;
    CHECK_RC(floxlog_frame_decode(buf, n, NULL, &out, levels, 3, &used, &e), FLOXLOG_OK);
    CHECK(used == n && out.kind == evs[k].kind);
    /* Every shorter prefix is truncated at offset 0. */
    int bad = 0;
    for (size_t cut = 0; cut < n; cut++) {
      bad += floxlog_frame_decode(buf, cut, NULL, &out, levels, 3, &used, &e) != FLOXLOG_TRUNCATED;
      bad += e.offset != 0;
    }
    CHECK(bad == 0);
    if (k == 1) {
      CHECK_RC(floxlog_frame_decode(buf, n, NULL, &out, levels, 2, &used, &e),
               FLOXLOG_BUFFER_TOO_SMALL);
      CHECK(e.needed == 3);
      CHECK_RC(floxlog_frame_decode(buf, n, NULL, &out, levels, 3, &used, &e), FLOXLOG_OK);
      CHECK(out.data.book.bid_count == 1 && out.data.book.ask_count == 2);
      CHECK(memcmp(out.data.book.bids, lv, sizeof lv) == 0);
    }
    if (k == 3) {
      CHECK(out.data.pool_state.payload == buf + 12 + 32);
      CHECK(out.data.pool_state.payload_len == 7 && out.data.pool_state.sub_type == 4);
    }
    /* Damage: CRC, rec_version, flags, type. */
    buf[n - 1] ^= 1;
    CHECK_RC(floxlog_frame_decode(buf, n, NULL, &out, levels, 3, &used, &e), FLOXLOG_CRC_MISMATCH);
    buf[n - 1] ^= 1;
    buf[9] = 2;
    CHECK_RC(floxlog_frame_decode(buf, n, NULL, &out, levels, 3, &used, &e),
             FLOXLOG_UNSUPPORTED_RECORD_VERSION);
    buf[9] = 1;
    buf[10] = 1;
    CHECK_RC(floxlog_frame_decode(buf, n, NULL, &out, levels, 3, &used, &e),
             FLOXLOG_FRAME_FLAGS_NONZERO);
    buf[10] = 0;
    buf[8] = 9;
    CHECK_RC(floxlog_frame_decode(buf, n, NULL, &out, levels, 3, &used, &e),
             FLOXLOG_UNKNOWN_RECORD_TYPE);
    floxlog_reader_options skip = {1, 1};
    CHECK_RC(floxlog_frame_decode(buf, n, &skip, &out, levels, 3, &used, &e), FLOXLOG_OK);
    CHECK(out.kind == FLOXLOG_EVENT_NONE && used == n);
  }
  floxlog_event out;
  size_t used;
  uint8_t b[16] = {0};
  CHECK_RC(floxlog_frame_decode(NULL, 10, NULL, &out, NULL, 0, &used, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_frame_decode(b, 16, NULL, NULL, NULL, 0, &used, &e), FLOXLOG_NULL_POINTER);
  CHECK_RC(floxlog_frame_encode(NULL, 0, b, 16, &used, &e), FLOXLOG_NULL_POINTER);

  floxlog_block_header bh;
  CHECK_RC(floxlog_block_header_parse(b, 15, &bh, &e), FLOXLOG_TRUNCATED);
  CHECK_RC(floxlog_block_header_parse(b, 16, &bh, &e), FLOXLOG_BAD_BLOCK_MAGIC);
  memcpy(b, "FBLK", 4);
  b[4] = 10;
  b[8] = 20;
  b[12] = 3;
  CHECK_RC(floxlog_block_header_parse(b, 16, &bh, &e), FLOXLOG_OK);
  CHECK(bh.magic == FLOXLOG_MAGIC_BLOCK && bh.compressed_size == 10 &&
        bh.original_size == 20 && bh.event_count == 3);

  /* Segment header checks, each at offset 0. */
  size_t size;
  uint8_t *seg = write_trades(1, FLOXLOG_COMPRESSION_NONE, 1, &size);
  if (seg != NULL) {
    floxlog_segment_header sh;
    CHECK_RC(floxlog_segment_header_parse(seg, 63, &sh, &e), FLOXLOG_TRUNCATED);
    seg[0] = 'X';
    CHECK_RC(floxlog_segment_header_parse(seg, 64, &sh, &e), FLOXLOG_BAD_MAGIC);
    seg[0] = 'F';
    seg[4] = 2;
    CHECK_RC(floxlog_segment_header_parse(seg, 64, &sh, &e), FLOXLOG_UNSUPPORTED_VERSION);
    seg[4] = 1;
    seg[6] |= 0x10;
    CHECK_RC(floxlog_segment_header_parse(seg, 64, &sh, &e), FLOXLOG_UNKNOWN_FLAGS);
    seg[6] ^= 0x10 | FLOXLOG_FLAG_ENCRYPTED;
    CHECK_RC(floxlog_segment_header_parse(seg, 64, &sh, &e), FLOXLOG_ENCRYPTED);
    seg[6] ^= FLOXLOG_FLAG_ENCRYPTED;
    seg[60] = 1;
    CHECK_RC(floxlog_segment_header_parse(seg, 64, &sh, &e), FLOXLOG_RESERVED_NONZERO);
    seg[60] = 0;
    seg[48] = 7;
    CHECK_RC(floxlog_segment_header_parse(seg, 64, &sh, &e), FLOXLOG_UNKNOWN_COMPRESSION);
    seg[48] = 0;
    CHECK_RC(floxlog_segment_header_parse(seg, 64, &sh, &e), FLOXLOG_OK);
    free(seg);
  }
}

int main(void) {
  test_messages();
  test_writer_new_bad_input();
  test_writer_buffers_full();
  test_writer_events_bad_input();
  test_reader();
  test_reader_truncated();
  test_reader_corrupted();
  test_reader_lz4_scratch();
  test_reader_level_scratch();
  test_batches();
  test_frames();
  return check_report("test_c_api");
}
