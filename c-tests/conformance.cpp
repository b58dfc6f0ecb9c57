// floxlog_conformance CORPUS_ROOT
//
// Replays a conformance corpus (laid out like shared/conformance: cases/,
// real/, corrupt/; see its README) through the C ABI only:
//   write/<case>   the writer's segments against the reference files:
//                  byte-identical when byte_exact, else the corpus's LZ4
//                  rule (blocks decoded with the system liblz4);
//   read/<case>    the reader's events against expected.jsonl;
//   corrupt/<case> each damaged segment's events, error kind and offset.
// Prints one line per check and `N passed, M failed`; exits non-zero on any
// failure (or when nothing was checked).
#include <lz4.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "floxlog.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& why) { throw Failure(why); }

std::string describe(const floxlog_error& e) {
  char buf[FLOXLOG_MESSAGE_MAX];
  size_t n = 0;
  if (floxlog_error_format(&e, buf, sizeof buf, &n) != FLOXLOG_OK) return "(unformattable error)";
  return std::string(buf, n);
}

std::vector<uint8_t> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) fail("cannot open " + p.string());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  if (!f) fail("cannot open " + p.string());
  return json::parse(f);
}

std::vector<json> read_jsonl(const fs::path& p) {
  std::ifstream f(p);
  if (!f) fail("cannot open " + p.string());
  std::vector<json> v;
  std::string line;
  while (std::getline(f, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    v.push_back(json::parse(line));
  }
  return v;
}

// ---------------------------------------------------------------------------
// Events: corpus JSON <-> C structs.

template <typename T>
T uint_field(const json& o, const char* k) {
  uint64_t v = o.at(k).get<uint64_t>();
  if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) fail(std::string(k) + " out of range");
  return static_cast<T>(v);
}

int64_t i64(const json& o, const char* k) { return o.at(k).get<int64_t>(); }

std::vector<floxlog_level> levels_of(const json& a) {
  std::vector<floxlog_level> v;
  for (const auto& l : a) v.push_back(floxlog_level{l.at(0).get<int64_t>(), l.at(1).get<int64_t>()});
  return v;
}

std::vector<uint8_t> unhex(const std::string& s) {
  if (s.size() % 2) fail("odd payload_hex");
  std::vector<uint8_t> v;
  for (size_t i = 0; i < s.size(); i += 2) v.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; i++) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

// An input event with the storage its pointers refer to.
struct OwnedEvent {
  floxlog_event ev{};
  std::vector<floxlog_level> bids, asks;
  std::vector<uint8_t> payload;

  // The C view; pointers into this object's vectors.
  floxlog_event view() const {
    floxlog_event e = ev;
    if (e.kind == FLOXLOG_EVENT_BOOK_SNAPSHOT || e.kind == FLOXLOG_EVENT_BOOK_DELTA) {
      e.data.book.bids = bids.data();
      e.data.book.bid_count = bids.size();
      e.data.book.asks = asks.data();
      e.data.book.ask_count = asks.size();
    } else if (e.kind == FLOXLOG_EVENT_POOL_STATE) {
      e.data.pool_state.payload = payload.data();
      e.data.pool_state.payload_len = payload.size();
    }
    return e;
  }
};

OwnedEvent event_from_json(const json& o) {
  OwnedEvent x;
  const std::string type = o.at("type").get<std::string>();
  if (type == "trade") {
    x.ev.kind = FLOXLOG_EVENT_TRADE;
    floxlog_trade& t = x.ev.data.trade;
    t.exchange_ts_ns = i64(o, "exchange_ts_ns");
    t.recv_ts_ns = i64(o, "recv_ts_ns");
    t.price_raw = i64(o, "price_raw");
    t.qty_raw = i64(o, "qty_raw");
    t.trade_id = o.at("trade_id").get<uint64_t>();
    t.symbol_id = uint_field<uint32_t>(o, "symbol_id");
    t.side = uint_field<uint8_t>(o, "side");
    t.instrument = uint_field<uint8_t>(o, "instrument");
    t.exchange_id = uint_field<uint16_t>(o, "exchange_id");
  } else if (type == "book_snapshot" || type == "book_delta") {
    const bool snap = type == "book_snapshot";
    x.ev.kind = snap ? FLOXLOG_EVENT_BOOK_SNAPSHOT : FLOXLOG_EVENT_BOOK_DELTA;
    floxlog_book& b = x.ev.data.book;
    b.exchange_ts_ns = i64(o, "exchange_ts_ns");
    b.recv_ts_ns = i64(o, "recv_ts_ns");
    b.seq = i64(o, "seq");
    b.symbol_id = uint_field<uint32_t>(o, "symbol_id");
    b.header_type = o.contains("header_type") ? uint_field<uint8_t>(o, "header_type") : (snap ? 0 : 1);
    b.instrument = uint_field<uint8_t>(o, "instrument");
    b.exchange_id = uint_field<uint16_t>(o, "exchange_id");
    x.bids = levels_of(o.at("bids"));
    x.asks = levels_of(o.at("asks"));
  } else if (type == "option_quote") {
    x.ev.kind = FLOXLOG_EVENT_OPTION_QUOTE;
    floxlog_option_quote& q = x.ev.data.option_quote;
    q.exchange_ts_ns = i64(o, "exchange_ts_ns");
    q.recv_ts_ns = i64(o, "recv_ts_ns");
    q.mark_price_raw = i64(o, "mark_price_raw");
    q.index_price_raw = i64(o, "index_price_raw");
    q.underlying_price_raw = i64(o, "underlying_price_raw");
    q.iv_raw = i64(o, "iv_raw");
    q.bid_price_raw = i64(o, "bid_price_raw");
    q.ask_price_raw = i64(o, "ask_price_raw");
    q.bid_size_raw = i64(o, "bid_size_raw");
    q.ask_size_raw = i64(o, "ask_size_raw");
    q.bid_iv_raw = i64(o, "bid_iv_raw");
    q.ask_iv_raw = i64(o, "ask_iv_raw");
    q.open_interest_raw = i64(o, "open_interest_raw");
    q.symbol_id = uint_field<uint32_t>(o, "symbol_id");
    q.instrument = uint_field<uint8_t>(o, "instrument");
    q.exchange_id = uint_field<uint16_t>(o, "exchange_id");
  } else if (type == "pool_state") {
    x.ev.kind = FLOXLOG_EVENT_POOL_STATE;
    floxlog_pool_state& p = x.ev.data.pool_state;
    p.exchange_ts_ns = i64(o, "exchange_ts_ns");
    p.recv_ts_ns = i64(o, "recv_ts_ns");
    p.symbol_id = uint_field<uint32_t>(o, "symbol_id");
    p.sub_type = uint_field<uint8_t>(o, "sub_type");
    p.venue = uint_field<uint8_t>(o, "venue");
    p.exchange_id = uint_field<uint16_t>(o, "exchange_id");
    x.payload = unhex(o.at("payload_hex").get<std::string>());
  } else {
    fail("unknown event type " + type);
  }
  return x;
}

json levels_json(const floxlog_level* l, size_t n) {
  json a = json::array();
  for (size_t i = 0; i < n; i++) a.push_back(json::array({l[i].price_raw, l[i].qty_raw}));
  return a;
}

json event_to_json(const floxlog_event& e) {
  json o;
  switch (e.kind) {
    case FLOXLOG_EVENT_TRADE: {
      const floxlog_trade& t = e.data.trade;
      o = {{"type", "trade"}, {"exchange_ts_ns", t.exchange_ts_ns}, {"recv_ts_ns", t.recv_ts_ns},
           {"price_raw", t.price_raw}, {"qty_raw", t.qty_raw}, {"trade_id", t.trade_id},
           {"symbol_id", t.symbol_id}, {"side", t.side}, {"instrument", t.instrument},
           {"exchange_id", t.exchange_id}};
      break;
    }
    case FLOXLOG_EVENT_BOOK_SNAPSHOT:
    case FLOXLOG_EVENT_BOOK_DELTA: {
      const floxlog_book& b = e.data.book;
      o = {{"type", e.kind == FLOXLOG_EVENT_BOOK_SNAPSHOT ? "book_snapshot" : "book_delta"},
           {"exchange_ts_ns", b.exchange_ts_ns}, {"recv_ts_ns", b.recv_ts_ns}, {"seq", b.seq},
           {"symbol_id", b.symbol_id}, {"header_type", b.header_type},
           {"instrument", b.instrument}, {"exchange_id", b.exchange_id},
           {"bids", levels_json(b.bids, b.bid_count)}, {"asks", levels_json(b.asks, b.ask_count)}};
      break;
    }
    case FLOXLOG_EVENT_OPTION_QUOTE: {
      const floxlog_option_quote& q = e.data.option_quote;
      o = {{"type", "option_quote"}, {"exchange_ts_ns", q.exchange_ts_ns},
           {"recv_ts_ns", q.recv_ts_ns}, {"mark_price_raw", q.mark_price_raw},
           {"index_price_raw", q.index_price_raw}, {"underlying_price_raw", q.underlying_price_raw},
           {"iv_raw", q.iv_raw}, {"bid_price_raw", q.bid_price_raw},
           {"ask_price_raw", q.ask_price_raw}, {"bid_size_raw", q.bid_size_raw},
           {"ask_size_raw", q.ask_size_raw}, {"bid_iv_raw", q.bid_iv_raw},
           {"ask_iv_raw", q.ask_iv_raw}, {"open_interest_raw", q.open_interest_raw},
           {"symbol_id", q.symbol_id}, {"instrument", q.instrument},
           {"exchange_id", q.exchange_id}};
      break;
    }
    case FLOXLOG_EVENT_POOL_STATE: {
      const floxlog_pool_state& p = e.data.pool_state;
      o = {{"type", "pool_state"}, {"exchange_ts_ns", p.exchange_ts_ns},
           {"recv_ts_ns", p.recv_ts_ns}, {"symbol_id", p.symbol_id}, {"sub_type", p.sub_type},
           {"venue", p.venue}, {"exchange_id", p.exchange_id},
           {"payload_hex", hex(p.payload, p.payload_len)}};
      break;
    }
    default:
      fail("reader returned event kind " + std::to_string(e.kind));
  }
  return o;
}

// ---------------------------------------------------------------------------
// Handles.

struct ReaderDeleter {
  void operator()(floxlog_reader* r) const { floxlog_reader_free(r); }
};
struct WriterDeleter {
  void operator()(floxlog_writer* w) const { floxlog_writer_free(w); }
};
using ReaderPtr = std::unique_ptr<floxlog_reader, ReaderDeleter>;
using WriterPtr = std::unique_ptr<floxlog_writer, WriterDeleter>;

// A reader over `data` with the scratch it needs (both owned here).
struct Reader {
  std::vector<uint8_t> scratch;
  ReaderPtr r;
  floxlog_result open_rc = FLOXLOG_OK;
  floxlog_error err{};

  explicit Reader(const std::vector<uint8_t>& data) {
    size_t need = 0;
    if (floxlog_segment_scratch_len(data.data(), data.size(), &need, &err) == FLOXLOG_OK) scratch.resize(need);
    floxlog_reader* raw = nullptr;
    open_rc = floxlog_reader_new(data.data(), data.size(), nullptr, scratch.data(), scratch.size(), &raw, &err);
    r.reset(raw);
  }
};

// Reads every event; returns the count and the final code (FLOXLOG_END
// when clean), with the error in `err`.
floxlog_result read_all(const std::vector<uint8_t>& data, std::vector<json>* out, uint64_t* count,
                        floxlog_error* err) {
  Reader rd(data);
  *count = 0;
  if (rd.open_rc != FLOXLOG_OK) {
    *err = rd.err;
    return rd.open_rc;
  }
  static std::vector<floxlog_level> levels(2 * FLOXLOG_MAX_LEVELS_PER_SIDE);
  floxlog_event ev;
  floxlog_result rc;
  while ((rc = floxlog_reader_next(rd.r.get(), &ev, levels.data(), levels.size(), err)) == FLOXLOG_OK) {
    ++*count;
    if (out) out->push_back(event_to_json(ev));
  }
  return rc;
}

// ---------------------------------------------------------------------------
// Writing.

struct WriterSettings {
  uint8_t compression;
  uint8_t create_index;
  uint16_t interval;
  uint8_t exchange_id;
  uint64_t max_segment_bytes;
};

size_t frame_len(const floxlog_event& e) {
  size_t n = 0;
  floxlog_error err{};
  if (floxlog_event_frame_len(&e, &n, &err) != FLOXLOG_OK) fail("event_frame_len: " + describe(err));
  return n;
}

// Encodes the events as the reference does, rotating uncompressed
// segments when the next frame would pass max_segment_bytes.
std::vector<std::vector<uint8_t>> encode_segments(const WriterSettings& s, const std::vector<OwnedEvent>& events,
                                                  const std::vector<int64_t>& created) {
  // Buffer sizes from the events: the largest block's frame bytes.
  size_t max_block = 0, max_frame = 0, run = 0;
  for (size_t i = 0; i < events.size(); i++) {
    size_t n = frame_len(events[i].view());
    max_frame = std::max(max_frame, n);
    run += n;
    if ((i + 1) % s.interval == 0 || i + 1 == events.size()) {
      max_block = std::max(max_block, run);
      run = 0;
    }
  }
  const size_t entries = static_cast<size_t>(floxlog_index_entries_needed(events.size(), s.interval)) + 1;
  const size_t out_len = 64 + max_frame + floxlog_lz4_block_len_max(max_block) + floxlog_index_trailer_len(entries);
  std::vector<uint8_t> out(out_len);
  std::vector<uint8_t> block(s.compression == FLOXLOG_COMPRESSION_LZ4 ? floxlog_block_scratch_len(max_block) : 0);
  std::vector<floxlog_index_entry> index(s.create_index ? entries : 0);

  std::vector<std::vector<uint8_t>> segments;
  WriterPtr w;
  std::vector<uint8_t> cur;
  floxlog_error err{};

  auto drain = [&]() {
    const uint8_t* p = nullptr;
    size_t n = 0;
    if (floxlog_writer_pending(w.get(), &p, &n) != FLOXLOG_OK) fail("pending failed");
    cur.insert(cur.end(), p, p + n);
    if (floxlog_writer_consume(w.get(), n) != FLOXLOG_OK) fail("consume failed");
  };
  auto start = [&]() {
    floxlog_writer_config cfg;
    floxlog_writer_config_default(&cfg);
    cfg.compression = s.compression;
    cfg.create_index = s.create_index;
    cfg.index_interval = s.interval;
    cfg.exchange_id = s.exchange_id;
    cfg.created_ns = segments.size() < created.size() ? created[segments.size()] : 0;
    floxlog_writer_buffers b{out.data(), out.size(), block.data(), block.size(), index.data(), index.size()};
    floxlog_writer* raw = nullptr;
    if (floxlog_writer_new(&cfg, &b, &raw, &err) != FLOXLOG_OK) fail("writer_new: " + describe(err));
    w.reset(raw);
    cur.clear();
  };
  auto finish = [&]() {
    uint8_t header[64];
    if (floxlog_writer_finish(w.get(), header, sizeof header, &err) != FLOXLOG_OK) fail("finish: " + describe(err));
    drain();
    std::memcpy(cur.data(), header, 64);
    segments.push_back(cur);
    w.reset();
  };

  start();
  for (const auto& oe : events) {
    floxlog_event e = oe.view();
    bool exceeds = false;
    if (floxlog_writer_would_exceed(w.get(), &e, s.max_segment_bytes, &exceeds, &err) != FLOXLOG_OK)
      fail("would_exceed: " + describe(err));
    if (exceeds) {
      finish();
      start();
    }
    if (floxlog_writer_append(w.get(), &e, &err) != FLOXLOG_OK) fail("append: " + describe(err));
    drain();
  }
  finish();
  return segments;
}

void compare_exact(const std::vector<uint8_t>& mine, const std::vector<uint8_t>& theirs) {
  if (mine == theirs) return;
  size_t at = 0;
  while (at < mine.size() && at < theirs.size() && mine[at] == theirs[at]) at++;
  fail("bytes differ at offset " + std::to_string(at) + " (ours " + std::to_string(mine.size()) +
       " bytes, reference " + std::to_string(theirs.size()) + ")");
}

struct Block {
  uint64_t offset;
  floxlog_block_header header;
  std::vector<uint8_t> bytes;
};

// Walks the blocks of a compressed segment; each is decoded with the
// system liblz4, independently of the library under test.
std::vector<Block> blocks_of(const std::vector<uint8_t>& data, const floxlog_segment_header& h) {
  const size_t end = (h.flags & FLOXLOG_FLAG_HAS_INDEX) ? h.index_offset : data.size();
  if (end > data.size()) fail("index_offset past the end");
  std::vector<Block> v;
  size_t pos = 64;
  while (pos < end) {
    Block b{pos, {}, {}};
    floxlog_error err{};
    if (floxlog_block_header_parse(data.data() + pos, end - pos, &b.header, &err) != FLOXLOG_OK)
      fail("block at " + std::to_string(pos) + ": " + describe(err));
    const size_t body = pos + FLOXLOG_BLOCK_HEADER_LEN;
    if (b.header.compressed_size > end - body) fail("block at " + std::to_string(pos) + " runs past the end");
    b.bytes.resize(b.header.original_size);
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(data.data() + body),
                                      reinterpret_cast<char*>(b.bytes.data()),
                                      static_cast<int>(b.header.compressed_size),
                                      static_cast<int>(b.header.original_size));
    if (n != static_cast<int>(b.header.original_size))
      fail("liblz4 decodes block at " + std::to_string(pos) + " to " + std::to_string(n) + " bytes");
    pos = body + b.header.compressed_size;
    v.push_back(std::move(b));
  }
  return v;
}

floxlog_segment_header header_of(const std::vector<uint8_t>& data, const char* who) {
  floxlog_segment_header h{};
  floxlog_error err{};
  if (floxlog_segment_header_parse(data.data(), data.size(), &h, &err) != FLOXLOG_OK)
    fail(std::string(who) + ": " + describe(err));
  return h;
}

// The corpus's rule for LZ4 segments: everything but the compressed bytes
// (and the offsets that follow from them) must match.
void compare_lz4(const std::vector<uint8_t>& mine, const std::vector<uint8_t>& theirs) {
  floxlog_segment_header hm = header_of(mine, "ours"), ht = header_of(theirs, "reference");
  floxlog_segment_header sm = hm, st = ht;
  sm.index_offset = st.index_offset = 0;
  if (std::memcmp(&sm, &st, sizeof sm) != 0) fail("segment headers differ (beyond index_offset)");
  const auto bm = blocks_of(mine, hm), bt = blocks_of(theirs, ht);
  if (bm.size() != bt.size()) fail(std::to_string(bm.size()) + " blocks, reference " + std::to_string(bt.size()));
  for (size_t i = 0; i < bm.size(); i++) {
    const auto &x = bm[i].header, &y = bt[i].header;
    if (x.original_size != y.original_size || x.event_count != y.event_count || x.flags != y.flags)
      fail("block " + std::to_string(i) + " header differs");
    if (bm[i].bytes != bt[i].bytes) fail("block " + std::to_string(i) + " decompressed bytes differ");
  }
  Reader rm(mine), rt(theirs);
  if (rm.open_rc != FLOXLOG_OK || rt.open_rc != FLOXLOG_OK) fail("cannot open a segment for its index");
  floxlog_index_header im{}, it{};
  size_t nm = 0, nt = 0;
  floxlog_error err{};
  const floxlog_result cm = floxlog_reader_index(rm.r.get(), &im, &nm, &err);
  const floxlog_result ct = floxlog_reader_index(rt.r.get(), &it, &nt, &err);
  if (cm != ct) fail(std::string("index: ours ") + floxlog_result_name(cm) + ", reference " + floxlog_result_name(ct));
  if (cm == FLOXLOG_NO_INDEX) return;
  if (cm != FLOXLOG_OK) fail(std::string("index: ") + floxlog_result_name(cm));
  im.crc32 = it.crc32 = 0;
  if (std::memcmp(&im, &it, sizeof im) != 0 || nm != nt) fail("index headers differ");
  for (size_t i = 0; i < nm; i++) {
    floxlog_index_entry a{}, b{};
    floxlog_reader_index_entry(rm.r.get(), i, &a, &err);
    floxlog_reader_index_entry(rt.r.get(), i, &b, &err);
    if (a.timestamp_ns != b.timestamp_ns) fail("index entry " + std::to_string(i) + " timestamp differs");
    if (std::none_of(bm.begin(), bm.end(), [&](const Block& blk) { return blk.offset == a.file_offset; }))
      fail("index entry " + std::to_string(i) + " does not point at a block header");
  }
}

// ---------------------------------------------------------------------------
// Checks.

struct SegmentFile {
  fs::path path;
  int64_t created_ns;
};

std::vector<SegmentFile> segments_of(const fs::path& dir, const json& c) {
  std::vector<SegmentFile> v;
  for (const auto& s : c.at("segments")) {
    v.push_back({dir / "segments" / s.at("file").get<std::string>(),
                 s.contains("created_ns") ? s.at("created_ns").get<int64_t>() : 0});
  }
  return v;
}

void check_write(const fs::path& dir, const json& c) {
  const json& w = c.at("writer");
  const std::string comp = w.at("compression").get<std::string>();
  if (comp != "none" && comp != "lz4") fail("unknown compression " + comp);
  WriterSettings s{comp == "lz4" ? uint8_t(FLOXLOG_COMPRESSION_LZ4) : uint8_t(FLOXLOG_COMPRESSION_NONE),
                   uint8_t(w.at("create_index").get<bool>() ? 1 : 0), uint_field<uint16_t>(w, "index_interval"),
                   uint_field<uint8_t>(w, "exchange_id"),
                   w.contains("max_segment_bytes") ? w.at("max_segment_bytes").get<uint64_t>() : (256ull << 20)};
  std::vector<OwnedEvent> events;
  for (const auto& j : read_jsonl(dir / "events.jsonl")) events.push_back(event_from_json(j));
  const auto files = segments_of(dir, c);
  std::vector<int64_t> created;
  for (const auto& f : files) created.push_back(f.created_ns);
  const auto ours = encode_segments(s, events, created);
  if (ours.size() != files.size())
    fail("wrote " + std::to_string(ours.size()) + " segments, the reference " + std::to_string(files.size()));
  const bool exact = c.value("byte_exact", false);
  for (size_t i = 0; i < ours.size(); i++) {
    const auto theirs = read_file(files[i].path);
    try {
      if (exact) {
        compare_exact(ours[i], theirs);
      } else {
        compare_lz4(ours[i], theirs);
      }
    } catch (const Failure& f) {
      fail("segment " + std::to_string(i) + ": " + f.what());
    }
  }
}

void check_read(const fs::path& dir, const json& c) {
  const auto expected = read_jsonl(dir / "expected.jsonl");
  std::vector<json> got;
  for (const auto& f : segments_of(dir, c)) {
    uint64_t n = 0;
    floxlog_error err{};
    const floxlog_result rc = read_all(read_file(f.path), &got, &n, &err);
    if (rc != FLOXLOG_END) fail(f.path.filename().string() + ": after " + std::to_string(n) + " events: " + describe(err));
  }
  for (size_t i = 0; i < got.size() && i < expected.size(); i++) {
    if (got[i] != expected[i])
      fail("event " + std::to_string(i) + " differs:\n  ours     " + got[i].dump() + "\n  expected " + expected[i].dump());
  }
  if (got.size() != expected.size())
    fail("read " + std::to_string(got.size()) + " events, expected " + std::to_string(expected.size()));
}

void check_corrupt(const fs::path& dir) {
  const json expect = read_json(dir / "case.json").at("expect");
  const auto data = read_file(dir / "segment.floxlog");
  const uint64_t events = expect.at("events").get<uint64_t>();
  uint64_t n = 0;
  floxlog_error err{};
  const floxlog_result rc = read_all(data, nullptr, &n, &err);
  if (expect.contains("index_error")) {
    const std::string kind = expect.at("index_error").get<std::string>();
    if (rc != FLOXLOG_END) fail("sequential read failed after " + std::to_string(n) + " events: " + describe(err));
    if (n != events) fail("expected " + std::to_string(events) + " events, read " + std::to_string(n));
    Reader rd(data);
    floxlog_index_header ih{};
    size_t entries = 0;
    const floxlog_result irc = floxlog_reader_index(rd.r.get(), &ih, &entries, &err);
    if (kind != floxlog_result_name(irc))
      fail("expected index error " + kind + ", got " + floxlog_result_name(irc));
    return;
  }
  const std::string kind = expect.at("error").get<std::string>();
  const uint64_t offset = expect.at("error_offset").get<uint64_t>();
  if (rc == FLOXLOG_END) fail("expected " + kind + ", read " + std::to_string(n) + " events without error");
  if (n != events || kind != floxlog_result_name(rc) || err.offset != offset)
    fail("expected " + std::to_string(events) + " events then " + kind + " at " + std::to_string(offset) + "; got " +
         std::to_string(n) + " events then " + describe(err));
}

std::vector<fs::path> subdirs(const fs::path& p) {
  std::vector<fs::path> v;
  if (!fs::is_directory(p)) return v;
  for (const auto& e : fs::directory_iterator(p))
    if (e.is_directory()) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  if (!fs::is_directory(root)) {
    std::fprintf(stderr, "corpus root %s is not a directory\n", root.c_str());
    return 2;
  }
  int passed = 0, failed = 0;
  auto run = [&](const std::string& name, auto&& fn) {
    try {
      fn();
      ++passed;
      std::printf("ok    %s\n", name.c_str());
    } catch (const std::exception& e) {
      ++failed;
      std::printf("FAIL  %s: %s\n", name.c_str(), e.what());
    }
  };
  for (const char* group : {"cases", "real"}) {
    for (const auto& dir : subdirs(root / group)) {
      const std::string name = (std::string(group) == "real" ? "real/" : "") + dir.filename().string();
      json c;
      try {
        c = read_json(dir / "case.json");
      } catch (const std::exception& e) {
        ++failed;
        std::printf("FAIL  load/%s: %s\n", name.c_str(), e.what());
        continue;
      }
      if (c.contains("writer") && fs::exists(dir / "events.jsonl")) {
        run("write/" + name, [&] { check_write(dir, c); });
      }
      run("read/" + name, [&] { check_read(dir, c); });
    }
  }
  for (const auto& dir : subdirs(root / "corrupt")) {
    run("corrupt/" + dir.filename().string(), [&] { check_corrupt(dir); });
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
