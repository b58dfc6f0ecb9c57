/* c-tests/readme_example.c: the codec alone: three trades encoded in memory, read back. */
#include <floxlog.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  /* Buffers the caller owns; the writer borrows them until it is freed. */
  static uint8_t out[4096];
  floxlog_index_entry index[4];
  floxlog_writer_config cfg;
  floxlog_writer_config_default(&cfg);
  cfg.created_ns = 1700000000000000000;
  floxlog_writer_buffers bufs = {out, sizeof out, NULL, 0, index, 4};

  floxlog_writer *w = NULL;
  floxlog_error err;
  if (floxlog_writer_new(&cfg, &bufs, &w, &err) != FLOXLOG_OK) return 1;
  for (int i = 0; i < 3; i++) {
    floxlog_trade t = {0};
    t.exchange_ts_ns = 1700000000000000000 + i;
    t.price_raw = 10125000000; /* 101.25, fixed-point 1e8 */
    t.qty_raw = 50000000;      /* 0.5 */
    t.symbol_id = 7;
    if (floxlog_writer_append_trade(w, &t, &err) != FLOXLOG_OK) return 1;
  }
  /* finish() appends the index; its header belongs at offset 0. */
  uint8_t header[64], file[4096];
  size_t len = 0;
  if (floxlog_writer_finish(w, header, sizeof header, &err) != FLOXLOG_OK) return 1;
  floxlog_writer_drain(w, file, sizeof file, &len);
  memcpy(file, header, sizeof header);
  floxlog_writer_free(w);

  floxlog_reader *r = NULL;
  if (floxlog_reader_new(file, len, NULL, NULL, 0, &r, &err) != FLOXLOG_OK) return 1;
  floxlog_event ev;
  floxlog_result rc;
  int n = 0;
  while ((rc = floxlog_reader_next(r, &ev, NULL, 0, &err)) == FLOXLOG_OK) {
    printf("trade %lld @ %lld\n", (long long)ev.data.trade.exchange_ts_ns,
           (long long)ev.data.trade.price_raw);
    n++;
  }
  if (rc != FLOXLOG_END) {
    char msg[FLOXLOG_MESSAGE_MAX];
    size_t m;
    floxlog_error_format(&err, msg, sizeof msg, &m);
    fprintf(stderr, "%s\n", msg);
  }
  floxlog_reader_free(r);
  printf("read %d trades\n", n);
  return rc == FLOXLOG_END && n == 3 ? 0 : 1;
}
