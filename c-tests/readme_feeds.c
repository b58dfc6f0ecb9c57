/* c-tests/readme_feeds.c: one tape, several feed threads (an appender each). */
#include <floxlog.h>
#include <pthread.h>
#include <stdio.h>

typedef struct {
  floxlog_tape_appender *a; /* this thread's own */
  uint32_t symbol_id;
  floxlog_result rc;
} feed_t;

static void *feed(void *arg) { /* one feed handler's thread */
  feed_t *f = arg;
  for (int i = 0; i < 1000 && f->rc == FLOXLOG_OK; i++) {
    floxlog_trade t = {0};
    t.exchange_ts_ns = 1700000000000000000 + i * 1000;
    t.price_raw = 10125000000;
    t.qty_raw = 50000000;
    t.symbol_id = f->symbol_id;
    f->rc = floxlog_tape_appender_append_trade(f->a, &t, NULL);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "feeds-tape";
  floxlog_tape_error err;
  floxlog_tape_writer_config cfg;
  floxlog_tape_writer_config_default(&cfg);
  cfg.journal = 1; /* or the default writer: appenders work with both */
  floxlog_tape_writer *w = NULL;
  if (floxlog_tape_writer_open(dir, &cfg, &w, &err) != FLOXLOG_OK) goto fail;
  feed_t feeds[3];
  pthread_t threads[3];
  for (int i = 0; i < 3; i++) {
    feeds[i] = (feed_t){NULL, (uint32_t)i + 1, FLOXLOG_OK};
    if (floxlog_tape_appender_open(w, &feeds[i].a, &err) != FLOXLOG_OK) goto fail;
    pthread_create(&threads[i], NULL, feed, &feeds[i]);
  }
  int failed = 0;
  for (int i = 0; i < 3; i++) {
    pthread_join(threads[i], NULL);
    failed |= feeds[i].rc != FLOXLOG_OK;
    floxlog_tape_appender_free(feeds[i].a); /* close waits for every appender */
  }
  if (floxlog_tape_writer_close(w, &err) != FLOXLOG_OK) goto fail;
  uint64_t written = 0, durable = 0;
  floxlog_tape_writer_progress(w, &written, &durable);
  floxlog_tape_writer_free(w);
  printf("recorded %llu events from 3 feed threads\n", (unsigned long long)written);
  return failed || written != 3000;

fail: /* err.message names the file and byte offset */
  fprintf(stderr, "floxlog: %s\n", err.message);
  return 1;
}
