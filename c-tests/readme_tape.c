/* c-tests/readme_tape.c: record a tape to disk, replay it merged. */
#include <floxlog.h>
#include <stdio.h>

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "demo-tape";
  floxlog_tape_error err;

  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg); /* flox layout, fsync at close */
  cfg.segment.compression = FLOXLOG_COMPRESSION_LZ4;
  floxlog_tape_writer *w = NULL;
  if (floxlog_tape_writer_open(dir, &cfg, &w, &err) != FLOXLOG_OK) goto fail;
  for (int i = 0; i < 1000; i++) {
    floxlog_trade t = {0};
    t.exchange_ts_ns = 1700000000000000000 + i * 1000;
    t.price_raw = 10125000000; /* 101.25, fixed-point 1e8 */
    t.qty_raw = 50000000;      /* 0.5 */
    t.symbol_id = 1 + i % 3;
    if (floxlog_tape_writer_append_trade(w, &t, &err) != FLOXLOG_OK) goto fail;
  }
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) goto fail;
  floxlog_tape_writer_free(w);

  floxlog_tape_reader *r = NULL; /* NULL options: merged by time, no filter */
  if (floxlog_tape_reader_open(dir, NULL, &r, &err) != FLOXLOG_OK) goto fail;
  floxlog_event ev;
  floxlog_result rc;
  long n = 0;
  while ((rc = floxlog_tape_reader_next(r, &ev, &err)) == FLOXLOG_OK) n++;
  floxlog_tape_reader_free(r);
  if (rc != FLOXLOG_END) goto fail;
  printf("replayed %ld events\n", n);
  return n == 1000 ? 0 : 1;

fail: /* err.message names the file and byte offset */
  fprintf(stderr, "floxlog: %s\n", err.message);
  return 1;
}
