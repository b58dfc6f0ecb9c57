/* Minimal check macros for the C and C++ tests: count, report, go on. */
#ifndef FLOXLOG_TEST_CHECK_H
#define FLOXLOG_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "floxlog.h"

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    ++check_count;                                                         \
    if (!(cond)) {                                                         \
      ++check_failures;                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,     \
              #cond);                                                      \
    }                                                                      \
  } while (0)

/* Checks a call's result code, naming both codes when they differ. */
#define CHECK_RC(call, want)                                               \
  do {                                                                     \
    floxlog_result rc_ = (call);                                           \
    ++check_count;                                                         \
    if (rc_ != (floxlog_result)(want)) {                                   \
      ++check_failures;                                                    \
      fprintf(stderr, "%s:%d: %s returned %s, want %s\n", __FILE__,        \
              __LINE__, #call, floxlog_result_name(rc_),                   \
              floxlog_result_name(want));                                  \
    }                                                                      \
  } while (0)

/* Prints the closing line ctest shows and returns the exit status. */
static int check_report(const char *name) {
  printf("%s: %d passed, %d failed\n", name, check_count - check_failures,
         check_failures);
  return check_failures == 0 && check_count > 0 ? 0 : 1;
}

#endif
