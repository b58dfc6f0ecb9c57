/* floxlog_tape_writer_config.resume: a recorder killed with SIGKILL and
 * restarted with resume = 1 keeps one tape (the events of both runs, in
 * order, verify passing); resuming a closed tape continues it; a tape whose
 * segment cannot be recovered is refused, naming the file and offset.
 *
 * Usage: test_tape_resume <scratch-dir> (POSIX: fork, kill). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static floxlog_tape_writer_config config(uint8_t resume) {
  floxlog_tape_writer_config c;
  floxlog_tape_writer_config_default(&c);
  c.durability = FLOXLOG_DURABILITY_NONE;
  c.max_segment_bytes = 32 << 10;
  c.resume = resume;
  return c;
}

static floxlog_trade trade(uint64_t i) {
  floxlog_trade t;
  memset(&t, 0, sizeof t);
  t.exchange_ts_ns = 1700000000000000000LL + (int64_t)i * 1000;
  t.recv_ts_ns = t.exchange_ts_ns + 7;
  t.price_raw = 6500000000000LL + (int64_t)(i % 977);
  t.qty_raw = 1 + (int64_t)(i % 13);
  t.trade_id = i;
  t.symbol_id = (uint32_t)(i % 5);
  return t;
}

/* Appends trades [from, to) and closes (or, with `kill_after`, flushes,
 * says so on `fd` and waits to be killed). Returns 0 on success. */
static int record(const char *dir, uint8_t resume, uint64_t from, uint64_t to, int fd) {
  floxlog_tape_writer_config c = config(resume);
  floxlog_tape_writer *w = NULL;
  floxlog_tape_error err;
  if (floxlog_tape_writer_open(dir, &c, &w, &err) != FLOXLOG_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  for (uint64_t i = from; i < to; i++) {
    floxlog_trade t = trade(i);
    if (floxlog_tape_writer_append_trade(w, &t, &err) != FLOXLOG_OK) {
      fprintf(stderr, "append: %s\n", err.message);
      return 1;
    }
  }
  if (fd >= 0) {
    uint64_t written = 0;
    if (floxlog_tape_writer_flush(w, &err) != FLOXLOG_OK ||
        floxlog_tape_writer_written_events(w, &written) != FLOXLOG_OK)
      return 1;
    if (write(fd, &written, sizeof written) != (ssize_t)sizeof written) return 1;
    for (;;) pause(); /* killed here, the writer open */
  }
  int rc = floxlog_tape_writer_close(w, &err) == FLOXLOG_OK ? 0 : 1;
  floxlog_tape_writer_free(w);
  return rc;
}

/* A child records [0, n) and is killed with SIGKILL, its writer open;
 * returns what it reported written. */
static uint64_t record_and_kill(const char *dir, uint64_t n) {
  int p[2];
  if (pipe(p) != 0) return 0;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    _exit(record(dir, 0, 0, n, p[1]));
  }
  close(p[1]);
  uint64_t written = 0;
  ssize_t got = read(p[0], &written, sizeof written);
  close(p[0]);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(got == (ssize_t)sizeof written);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  return written;
}

/* Checks that the tape in `dir` holds trades 0..n in file order, and
 * passes verify. */
static void check_tape(const char *dir, uint64_t n) {
  floxlog_tape_reader_options o;
  floxlog_tape_reader_options_default(&o);
  o.order = FLOXLOG_ORDER_FILE;
  floxlog_tape_reader *r = NULL;
  floxlog_tape_error err;
  CHECK_RC(floxlog_tape_reader_open(dir, &o, &r, &err), FLOXLOG_OK);
  floxlog_event ev;
  uint64_t i = 0, out_of_order = 0;
  floxlog_result rc;
  while ((rc = floxlog_tape_reader_next(r, &ev, &err)) == FLOXLOG_OK) {
    if (ev.kind != FLOXLOG_EVENT_TRADE || ev.data.trade.trade_id != i) out_of_order++;
    i++;
  }
  CHECK_RC(rc, FLOXLOG_END);
  CHECK(i == n);
  CHECK(out_of_order == 0);
  if (i != n || out_of_order) fprintf(stderr, "%s: read %llu of %llu, %llu out of order\n", dir,
                                      (unsigned long long)i, (unsigned long long)n,
                                      (unsigned long long)out_of_order);
  floxlog_tape_reader_free(r);
  CHECK_RC(floxlog_tape_verify(dir, NULL, NULL, NULL, NULL, &err), FLOXLOG_OK);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <scratch-dir>\n", argv[0]);
    return 2;
  }
  char dir[1024], path[1200];
  floxlog_tape_error err;

  /* Killed, then resumed: one tape with both runs' events. */
  snprintf(dir, sizeof dir, "%s/killed", argv[1]);
  uint64_t written = record_and_kill(dir, 20000);
  CHECK(written == 20000);
  {
    /* Without resume the directory is refused. */
    floxlog_tape_writer_config c = config(0);
    floxlog_tape_writer *w = NULL;
    CHECK_RC(floxlog_tape_writer_open(dir, &c, &w, &err), FLOXLOG_INVALID_INPUT);
    CHECK(strstr(err.message, "already holds a tape") != NULL);
  }
  CHECK(record(dir, 1, 20000, 30000, -1) == 0);
  check_tape(dir, 30000);

  /* A closed tape resumed twice. */
  snprintf(dir, sizeof dir, "%s/closed", argv[1]);
  CHECK(record(dir, 1, 0, 5000, -1) == 0); /* resume on a missing directory */
  CHECK(record(dir, 1, 5000, 10000, -1) == 0);
  CHECK(record(dir, 1, 10000, 15000, -1) == 0);
  check_tape(dir, 15000);

  /* A segment that cannot be recovered: refused with file and offset. */
  snprintf(dir, sizeof dir, "%s/broken", argv[1]);
  record_and_kill(dir, 3000);
  {
    floxlog_tape_reader_options o;
    floxlog_tape_reader_options_default(&o);
    o.order = FLOXLOG_ORDER_FILE;
    floxlog_tape_reader *r = NULL;
    floxlog_event ev;
    CHECK_RC(floxlog_tape_reader_open(dir, &o, &r, &err), FLOXLOG_OK);
    /* The last segment's path: the one the last event came from. */
    path[0] = 0;
    floxlog_tape_position pos;
    memset(&pos, 0, sizeof pos);
    while (floxlog_tape_reader_next(r, &ev, &err) == FLOXLOG_OK) {
      floxlog_tape_reader_position(r, &pos);
    }
    const char *p = NULL;
    CHECK_RC(floxlog_tape_reader_segment_path(r, pos.segment, &p), FLOXLOG_OK);
    if (p) snprintf(path, sizeof path, "%s", p);
    floxlog_tape_reader_free(r);
  }
  CHECK(path[0] != 0);
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (f) {
    fwrite("JUNK", 1, 4, f);
    fclose(f);
  }
  {
    floxlog_tape_writer_config c = config(1);
    floxlog_tape_writer *w = NULL;
    floxlog_result rc = floxlog_tape_writer_open(dir, &c, &w, &err);
    CHECK(rc != FLOXLOG_OK);
    CHECK(w == NULL);
    CHECK(err.has_file && strcmp(err.file, path) == 0);
    CHECK(err.has_offset && err.offset == 0);
    CHECK(strstr(err.message, "cannot resume the tape") != NULL);
    if (rc != FLOXLOG_OK) printf("refused as expected: %s\n", err.message);
  }
  return check_report("tape_resume");
}
