/* Writes and reads one trade through an installed floxlog. */
#include <floxlog.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  static uint8_t out[256];
  floxlog_writer_config cfg;
  floxlog_writer_config_default(&cfg);
  cfg.create_index = 0;
  floxlog_writer_buffers bufs = {out, sizeof out, NULL, 0, NULL, 0};
  floxlog_writer *w = NULL;
  floxlog_trade t = {0};
  t.exchange_ts_ns = 5;
  t.price_raw = 42;
  uint8_t header[64], file[256];
  size_t len = 0;
  if (floxlog_writer_new(&cfg, &bufs, &w, NULL) != FLOXLOG_OK ||
      floxlog_writer_append_trade(w, &t, NULL) != FLOXLOG_OK ||
      floxlog_writer_finish(w, header, 64, NULL) != FLOXLOG_OK ||
      floxlog_writer_drain(w, file, sizeof file, &len) != FLOXLOG_OK)
    return 1;
  floxlog_writer_free(w);
  memcpy(file, header, 64);
  floxlog_reader *r = NULL;
  floxlog_event ev;
  if (floxlog_reader_new(file, len, NULL, NULL, 0, &r, NULL) != FLOXLOG_OK ||
      floxlog_reader_next(r, &ev, NULL, 0, NULL) != FLOXLOG_OK || ev.data.trade.price_raw != 42)
    return 1;
  floxlog_reader_free(r);
  printf("consumer ok (floxlog %s)\n", floxlog_version());
  return 0;
}
