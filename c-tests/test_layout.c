/*
 * Layout: the compile-time offset checks (layout_checks.h), and at run time
 * proof that on this little-endian host the wire-layout structs are byte
 * for byte what the library encodes.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "layout_checks.h"

static int little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

int main(void) {
  if (!little_endian()) {
    /* The byte comparisons below only hold on little-endian hosts; the
     * compile-time checks above already ran. */
    printf("test_layout: big-endian host, byte comparisons not applicable\n");
    return 0;
  }

  /* A trade frame's payload is the struct's bytes. */
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = 0x0102030405060708;
  t.recv_ts_ns = -2;
  t.price_raw = INT64_MIN;
  t.qty_raw = INT64_MAX;
  t.trade_id = UINT64_MAX - 1;
  t.symbol_id = 0xA1B2C3D4u;
  t.side = 1;
  t.instrument = 3;
  t.exchange_id = 0xBEEF;
  floxlog_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = FLOXLOG_EVENT_TRADE;
  ev.data.trade = t;
  uint8_t frame[FLOXLOG_FRAME_HEADER_LEN + FLOXLOG_TRADE_LEN];
  size_t n = 0;
  CHECK_RC(floxlog_frame_encode(&ev, FLOXLOG_PROFILE_REFERENCE, frame, sizeof frame, &n, NULL),
           FLOXLOG_OK);
  CHECK(n == sizeof frame);
  CHECK(memcmp(frame + FLOXLOG_FRAME_HEADER_LEN, &t, sizeof t) == 0);

  /* The frame header struct is the header's bytes. */
  floxlog_frame_header fh;
  CHECK_RC(floxlog_frame_header_parse(frame, n, &fh, NULL), FLOXLOG_OK);
  CHECK(memcmp(frame, &fh, sizeof fh) == 0);
  CHECK(fh.size == 48 && fh.frame_type == 1 && fh.rec_version == 1 && fh.flags == 0);

  /* An option quote's payload is the struct's bytes (pad 0). */
  floxlog_option_quote q;
  memset(&q, 0, sizeof q);
  q.exchange_ts_ns = 1;
  q.iv_raw = 77;
  q.open_interest_raw = -5;
  q.symbol_id = 9;
  q.instrument = 3;
  q.exchange_id = 0x1234;
  ev.kind = FLOXLOG_EVENT_OPTION_QUOTE;
  ev.data.option_quote = q;
  uint8_t qframe[FLOXLOG_FRAME_HEADER_LEN + FLOXLOG_OPTION_QUOTE_LEN];
  CHECK_RC(floxlog_frame_encode(&ev, FLOXLOG_PROFILE_REFERENCE, qframe, sizeof qframe, &n, NULL),
           FLOXLOG_OK);
  CHECK(n == sizeof qframe);
  CHECK(memcmp(qframe + FLOXLOG_FRAME_HEADER_LEN, &q, sizeof q) == 0);

  /* A segment header parsed into the struct is the file's 64 bytes. */
  uint8_t out[4096];
  floxlog_index_entry index[4];
  floxlog_writer_config cfg;
  CHECK_RC(floxlog_writer_config_default(&cfg), FLOXLOG_OK);
  cfg.created_ns = 1700000000000000000;
  cfg.exchange_id = 7;
  floxlog_writer_buffers bufs = {out, sizeof out, NULL, 0, index, 4};
  floxlog_writer *w = NULL;
  CHECK_RC(floxlog_writer_new(&cfg, &bufs, &w, NULL), FLOXLOG_OK);
  ev.kind = FLOXLOG_EVENT_TRADE;
  ev.data.trade = t;
  CHECK_RC(floxlog_writer_append(w, &ev, NULL), FLOXLOG_OK);
  uint8_t header[64];
  CHECK_RC(floxlog_writer_finish(w, header, sizeof header, NULL), FLOXLOG_OK);
  floxlog_segment_header sh;
  CHECK_RC(floxlog_segment_header_parse(header, sizeof header, &sh, NULL), FLOXLOG_OK);
  CHECK(memcmp(header, &sh, sizeof sh) == 0);
  CHECK(sh.magic == FLOXLOG_MAGIC_SEGMENT && sh.version == 1 && sh.event_count == 1);
  CHECK(sh.exchange_id == 7 && sh.created_ns == 1700000000000000000);
  CHECK((sh.flags & FLOXLOG_FLAG_HAS_INDEX) != 0 && sh.index_offset == 64 + 60);

  /* The index trailer after the frame: header and entry structs are its
   * bytes. */
  const uint8_t *p = NULL;
  size_t len = 0;
  CHECK_RC(floxlog_writer_pending(w, &p, &len), FLOXLOG_OK);
  CHECK(len == 64 + 60 + 32 + 16);
  if (len == 64 + 60 + 32 + 16) {
    floxlog_index_header ih;
    memcpy(&ih, p + sh.index_offset, sizeof ih);
    CHECK(ih.magic == FLOXLOG_MAGIC_INDEX && ih.version == 1 && ih.entry_count == 1);
    CHECK(ih.first_ts_ns == t.exchange_ts_ns && ih.last_ts_ns == t.exchange_ts_ns);
    floxlog_index_entry ie;
    memcpy(&ie, p + sh.index_offset + 32, sizeof ie);
    CHECK(ie.timestamp_ns == t.exchange_ts_ns && ie.file_offset == 64);
  }
  floxlog_writer_free(w);
  return check_report("test_layout");
}
