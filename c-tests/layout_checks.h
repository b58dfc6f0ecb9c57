/*
 * Compile-time checks that the header's structs have the sizes and field
 * offsets of the .floxlog 1.0 spec (and of docs/format-notes.md for option
 * quotes). Included by a C11 and a C++17 translation unit.
 */
#ifndef FLOXLOG_LAYOUT_CHECKS_H
#define FLOXLOG_LAYOUT_CHECKS_H

#include <stddef.h>

#include "floxlog.h"

#ifdef __cplusplus
#define FLOXLOG_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define FLOXLOG_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

#define AT(type, field, off) \
  FLOXLOG_STATIC_ASSERT(offsetof(type, field) == (off), #type "." #field " at " #off)
#define SIZE(type, n) FLOXLOG_STATIC_ASSERT(sizeof(type) == (n), "sizeof " #type " == " #n)

/* SegmentHeader, 64 bytes. */
SIZE(floxlog_segment_header, 64);
AT(floxlog_segment_header, magic, 0);
AT(floxlog_segment_header, version, 4);
AT(floxlog_segment_header, flags, 6);
AT(floxlog_segment_header, exchange_id, 7);
AT(floxlog_segment_header, created_ns, 8);
AT(floxlog_segment_header, first_event_ns, 16);
AT(floxlog_segment_header, last_event_ns, 24);
AT(floxlog_segment_header, event_count, 32);
AT(floxlog_segment_header, symbol_count, 36);
AT(floxlog_segment_header, index_offset, 40);
AT(floxlog_segment_header, compression, 48);
AT(floxlog_segment_header, reserved, 49);

/* FrameHeader, 12 bytes. */
SIZE(floxlog_frame_header, 12);
AT(floxlog_frame_header, size, 0);
AT(floxlog_frame_header, crc32, 4);
AT(floxlog_frame_header, frame_type, 8);
AT(floxlog_frame_header, rec_version, 9);
AT(floxlog_frame_header, flags, 10);

/* TradeRecord, 48 bytes. */
SIZE(floxlog_trade, 48);
AT(floxlog_trade, exchange_ts_ns, 0);
AT(floxlog_trade, recv_ts_ns, 8);
AT(floxlog_trade, price_raw, 16);
AT(floxlog_trade, qty_raw, 24);
AT(floxlog_trade, trade_id, 32);
AT(floxlog_trade, symbol_id, 40);
AT(floxlog_trade, side, 44);
AT(floxlog_trade, instrument, 45);
AT(floxlog_trade, exchange_id, 46);

/* BookLevel, 16 bytes. */
SIZE(floxlog_level, 16);
AT(floxlog_level, price_raw, 0);
AT(floxlog_level, qty_raw, 8);

/* OptionQuoteRecord, 112 bytes (docs/format-notes.md). */
SIZE(floxlog_option_quote, 112);
AT(floxlog_option_quote, exchange_ts_ns, 0);
AT(floxlog_option_quote, recv_ts_ns, 8);
AT(floxlog_option_quote, mark_price_raw, 16);
AT(floxlog_option_quote, index_price_raw, 24);
AT(floxlog_option_quote, underlying_price_raw, 32);
AT(floxlog_option_quote, iv_raw, 40);
AT(floxlog_option_quote, bid_price_raw, 48);
AT(floxlog_option_quote, ask_price_raw, 56);
AT(floxlog_option_quote, bid_size_raw, 64);
AT(floxlog_option_quote, ask_size_raw, 72);
AT(floxlog_option_quote, bid_iv_raw, 80);
AT(floxlog_option_quote, ask_iv_raw, 88);
AT(floxlog_option_quote, open_interest_raw, 96);
AT(floxlog_option_quote, symbol_id, 104);
AT(floxlog_option_quote, instrument, 108);
AT(floxlog_option_quote, pad, 109);
AT(floxlog_option_quote, exchange_id, 110);

/* Compressed block header, 16 bytes. */
SIZE(floxlog_block_header, 16);
AT(floxlog_block_header, magic, 0);
AT(floxlog_block_header, compressed_size, 4);
AT(floxlog_block_header, original_size, 8);
AT(floxlog_block_header, event_count, 12);
AT(floxlog_block_header, flags, 14);

/* Sparse index header, 32 bytes, and IndexEntry, 16 bytes. */
SIZE(floxlog_index_header, 32);
AT(floxlog_index_header, magic, 0);
AT(floxlog_index_header, version, 4);
AT(floxlog_index_header, interval, 6);
AT(floxlog_index_header, entry_count, 8);
AT(floxlog_index_header, crc32, 12);
AT(floxlog_index_header, first_ts_ns, 16);
AT(floxlog_index_header, last_ts_ns, 24);
SIZE(floxlog_index_entry, 16);
AT(floxlog_index_entry, timestamp_ns, 0);
AT(floxlog_index_entry, file_offset, 8);

/* The header's length constants agree with the structs. */
FLOXLOG_STATIC_ASSERT(FLOXLOG_SEGMENT_HEADER_LEN == sizeof(floxlog_segment_header), "segment header len");
FLOXLOG_STATIC_ASSERT(FLOXLOG_FRAME_HEADER_LEN == sizeof(floxlog_frame_header), "frame header len");
FLOXLOG_STATIC_ASSERT(FLOXLOG_BLOCK_HEADER_LEN == sizeof(floxlog_block_header), "block header len");
FLOXLOG_STATIC_ASSERT(FLOXLOG_INDEX_HEADER_LEN == sizeof(floxlog_index_header), "index header len");
FLOXLOG_STATIC_ASSERT(FLOXLOG_INDEX_ENTRY_LEN == sizeof(floxlog_index_entry), "index entry len");
FLOXLOG_STATIC_ASSERT(FLOXLOG_TRADE_LEN == sizeof(floxlog_trade), "trade len");
FLOXLOG_STATIC_ASSERT(FLOXLOG_OPTION_QUOTE_LEN == sizeof(floxlog_option_quote), "option quote len");
FLOXLOG_STATIC_ASSERT(FLOXLOG_LEVEL_LEN == sizeof(floxlog_level), "level len");

/* The result type is a 32-bit code on both sides of the ABI. */
FLOXLOG_STATIC_ASSERT(sizeof(floxlog_result) == 4, "floxlog_result is 32 bits");
/* The magic numbers spell FLOX, FBLK, INDX in little-endian bytes. */
FLOXLOG_STATIC_ASSERT(FLOXLOG_MAGIC_SEGMENT == 0x584F4C46, "FLOX");
FLOXLOG_STATIC_ASSERT(FLOXLOG_MAGIC_BLOCK == 0x4B4C4246, "FBLK");
FLOXLOG_STATIC_ASSERT(FLOXLOG_MAGIC_INDEX == 0x58444E49, "INDX");

#undef AT
#undef SIZE

#endif
