/* The codec part of include/floxlog.h on its own, as the codec-only
 * library's users include it: compiled with -std=c99 and -std=c11, -Wall
 * -Wextra -Werror -pedantic, by arm-none-eabi-gcc and the host's cc
 * (scripts/test-embedded-c.sh). */
#define FLOXLOG_CODEC_ONLY
#include "floxlog.h"

#if defined(FLOXLOG_HAS_STD) || defined(FLOXLOG_HAS_TAPE)
#error "FLOXLOG_CODEC_ONLY must hide the full library's part"
#endif

/* The storage functions and the firmware's hook are declared. */
typedef char storage_is_aligned[FLOXLOG_STORAGE_ALIGN == 8 ? 1 : -1];
int floxlog_header_check(void);
int floxlog_header_check(void) {
  uint64_t w[FLOXLOG_WRITER_STORAGE_BYTES / 8];
  floxlog_writer *wr = 0;
  void (*hook)(const uint8_t *, size_t, uint32_t) = floxlog_panic_hook;
  (void)hook;
  return floxlog_writer_init(w, sizeof w, 0, 0, &wr, 0) == FLOXLOG_OK &&
         floxlog_reader_init(w, sizeof w, 0, 0, 0, 0, 0, 0, 0) == FLOXLOG_OK;
}
