/* c-tests/readme_tail.c: follow a tape while another process records it. */
#include <floxlog.h>
#include <stdio.h>

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "demo-tape";
  floxlog_tape_error err;
  floxlog_tape_tail *t = NULL; /* NULL options: from the beginning, CRCs on, blocking */
  if (floxlog_tape_tail_open(dir, NULL, &t, &err) != FLOXLOG_OK) goto fail;
  floxlog_event ev;
  floxlog_result rc;
  long n = 0;
  /* -1: no time limit; a writer gone for 2 s still ends the wait (FLOXLOG_WRITER_GONE). */
  while ((rc = floxlog_tape_tail_next(t, &ev, -1, &err)) == FLOXLOG_OK) n++;
  floxlog_tape_tail_free(t);
  if (rc == FLOXLOG_WRITER_GONE) {
    fprintf(stderr, "%s: the writer died after %ld events\n", dir, n);
    return 1;
  }
  if (rc != FLOXLOG_END) goto fail;
  printf("followed %ld events until the writer closed the tape\n", n);
  return 0;
fail:
  fprintf(stderr, "%s\n", err.message);
  return 1;
}
