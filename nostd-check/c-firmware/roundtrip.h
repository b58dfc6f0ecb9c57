/* The C round trip through the codec-only library's C API, shared by the
 * firmware (firmware.c, under QEMU) and the host run (host.c) that bakes
 * in the LZ4 bytes' expected CRC. */
#ifndef FLOXLOG_ROUNDTRIP_H
#define FLOXLOG_ROUNDTRIP_H

#include <stddef.h>
#include <stdint.h>

/* Each program supplies its output (a NUL-terminated line piece). */
void rt_print(const char *s);

/* Writes the segment with `compression` into the round trip's static file
 * buffer; returns its length, or 0 after printing why it failed. Never
 * inlined: the firmware measures its code and stack on their own. */
size_t rt_write_segment(uint8_t compression);

/* Reads the segment back and checks every field of every event; returns 1
 * when all came back, else 0 after printing what differed. */
int rt_read_segment(size_t len);

/* The finished segment's bytes (valid until the next write). */
const uint8_t *rt_file(void);

/* CRC-32 (IEEE, as zlib) of `len` bytes. */
uint32_t rt_crc32(const uint8_t *p, size_t len);

/* `v` in decimal into `buf` (at least 21 bytes); returns `buf`. */
char *rt_u64(uint64_t v, char *buf);

#endif
