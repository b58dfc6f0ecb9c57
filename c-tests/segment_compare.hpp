// Our segments against the corpus's reference segments, for the tests that
// write (conformance through the C ABI, tape_recorder through
// floxlog::TapeWriter): byte-identical for byte_exact cases, else the
// corpus's LZ4 rule, i.e. everything but the compressed bytes: header
// fields other than index_offset, the blocks (count, original_size,
// event_count, flags, decompressed bytes, decoded with the system liblz4,
// independently of the library under test), the index header (but its CRC)
// and every entry's timestamp, each entry pointing at a block header.
// Needs liblz4 (PkgConfig::LZ4).
#ifndef FLOXLOG_SEGMENT_COMPARE_HPP
#define FLOXLOG_SEGMENT_COMPARE_HPP

#include <lz4.h>

#include <cstring>

#include "corpus_util.hpp"

namespace corpus_test {

inline void compare_exact(const std::vector<uint8_t>& mine, const std::vector<uint8_t>& theirs) {
  if (mine == theirs) return;
  size_t at = 0;
  while (at < mine.size() && at < theirs.size() && mine[at] == theirs[at]) at++;
  fail("bytes differ at offset " + std::to_string(at) + " (ours " + std::to_string(mine.size()) +
       " bytes, reference " + std::to_string(theirs.size()) + ")");
}

inline floxlog_segment_header header_of(const std::vector<uint8_t>& data, const std::string& who) {
  floxlog_segment_header h{};
  floxlog_error err{};
  if (floxlog_segment_header_parse(data.data(), data.size(), &h, &err) != FLOXLOG_OK)
    fail(who + " header: " + describe(err));
  return h;
}

struct Block {
  uint64_t offset;
  floxlog_block_header header;
  std::vector<uint8_t> bytes;
};

// The blocks of a compressed segment, each decoded with the system liblz4.
inline std::vector<Block> blocks_of(const std::vector<uint8_t>& data, const floxlog_segment_header& h,
                                    const std::string& who) {
  const size_t end = (h.flags & FLOXLOG_FLAG_HAS_INDEX) ? static_cast<size_t>(h.index_offset) : data.size();
  if (end > data.size()) fail(who + ": index_offset past the end");
  std::vector<Block> v;
  size_t pos = FLOXLOG_SEGMENT_HEADER_LEN;
  while (pos < end) {
    Block b{pos, {}, {}};
    floxlog_error err{};
    if (floxlog_block_header_parse(data.data() + pos, end - pos, &b.header, &err) != FLOXLOG_OK)
      fail(who + ": block at " + std::to_string(pos) + ": " + describe(err));
    const size_t body = pos + FLOXLOG_BLOCK_HEADER_LEN;
    if (b.header.compressed_size > end - body) fail(who + ": block at " + std::to_string(pos) + " runs past the end");
    b.bytes.resize(b.header.original_size);
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(data.data() + body),
                                      reinterpret_cast<char*>(b.bytes.data()),
                                      static_cast<int>(b.header.compressed_size),
                                      static_cast<int>(b.header.original_size));
    if (n != static_cast<int>(b.header.original_size))
      fail(who + ": liblz4 decodes block at " + std::to_string(pos) + " to " + std::to_string(n) + " bytes");
    pos = body + b.header.compressed_size;
    v.push_back(std::move(b));
  }
  return v;
}

// The corpus README's rule for byte_exact: false segments.
inline void compare_lz4(const std::vector<uint8_t>& mine, const std::vector<uint8_t>& theirs) {
  const floxlog_segment_header hm = header_of(mine, "ours"), ht = header_of(theirs, "reference");
  floxlog_segment_header sm = hm, st = ht;
  sm.index_offset = st.index_offset = 0;
  if (std::memcmp(&sm, &st, sizeof sm) != 0) fail("segment headers differ beyond index_offset");
  const auto bm = blocks_of(mine, hm, "ours"), bt = blocks_of(theirs, ht, "reference");
  if (bm.size() != bt.size()) fail(std::to_string(bm.size()) + " blocks, reference " + std::to_string(bt.size()));
  for (size_t i = 0; i < bm.size(); i++) {
    const auto &x = bm[i].header, &y = bt[i].header;
    if (x.original_size != y.original_size || x.event_count != y.event_count || x.flags != y.flags)
      fail("block " + std::to_string(i) + " header differs (original_size/event_count/flags)");
    if (bm[i].bytes != bt[i].bytes) fail("block " + std::to_string(i) + " decompressed bytes differ");
  }
  const SegmentReader rm(mine), rt(theirs);
  rm.require_open("ours");
  rt.require_open("reference");
  floxlog_index_header im{}, it{};
  size_t nm = 0, nt = 0;
  floxlog_error err{};
  const floxlog_result cm = floxlog_reader_index(rm.r.get(), &im, &nm, &err);
  const floxlog_result ct = floxlog_reader_index(rt.r.get(), &it, &nt, &err);
  if (cm != ct) fail(std::string("index: ours ") + floxlog_result_name(cm) + ", reference " + floxlog_result_name(ct));
  if (cm == FLOXLOG_NO_INDEX) return;
  if (cm != FLOXLOG_OK) fail(std::string("index: ") + floxlog_result_name(cm));
  im.crc32 = it.crc32 = 0;
  if (std::memcmp(&im, &it, sizeof im) != 0 || nm != nt) fail("index headers differ (beyond the CRC)");
  for (size_t i = 0; i < nm; i++) {
    floxlog_index_entry a{}, b{};
    if (floxlog_reader_index_entry(rm.r.get(), i, &a, &err) != FLOXLOG_OK ||
        floxlog_reader_index_entry(rt.r.get(), i, &b, &err) != FLOXLOG_OK)
      fail("index entry " + std::to_string(i) + ": " + describe(err));
    if (a.timestamp_ns != b.timestamp_ns) fail("index entry " + std::to_string(i) + " timestamp differs");
    if (std::none_of(bm.begin(), bm.end(), [&](const Block& blk) { return blk.offset == a.file_offset; }))
      fail("index entry " + std::to_string(i) + " does not point at a block header");
  }
}

// Our segment `i` against the reference file: byte-identical when `exact`,
// else the LZ4 rule. A difference names the segment.
inline void compare_segment(size_t i, const std::vector<uint8_t>& mine, const fs::path& reference, bool exact) {
  try {
    const auto theirs = read_file(reference);
    if (exact) {
      compare_exact(mine, theirs);
    } else {
      compare_lz4(mine, theirs);
    }
  } catch (const Failure& f) {
    fail("segment " + std::to_string(i) + " (" + reference.filename().string() + "): " + f.what());
  }
}

}  // namespace corpus_test

#endif
