// C++17 tests of the C ABI through the shared library: RAII handles,
// round trips of every event type under both codecs and profiles,
// rotation, seek, index inspection, and damage handling.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "check.h"

namespace {

struct WriterDeleter {
  void operator()(floxlog_writer* w) const { floxlog_writer_free(w); }
};
struct ReaderDeleter {
  void operator()(floxlog_reader* r) const { floxlog_reader_free(r); }
};
using WriterPtr = std::unique_ptr<floxlog_writer, WriterDeleter>;
using ReaderPtr = std::unique_ptr<floxlog_reader, ReaderDeleter>;

// An event with the storage its pointers use.
struct Owned {
  floxlog_event ev{};
  std::vector<floxlog_level> levels;  // bids then asks
  size_t bid_count = 0;
  std::vector<uint8_t> payload;

  floxlog_event view() const {
    floxlog_event e = ev;
    if (e.kind == FLOXLOG_EVENT_BOOK_SNAPSHOT || e.kind == FLOXLOG_EVENT_BOOK_DELTA) {
      e.data.book.bids = levels.data();
      e.data.book.bid_count = bid_count;
      e.data.book.asks = levels.data() + bid_count;
      e.data.book.ask_count = levels.size() - bid_count;
    } else if (e.kind == FLOXLOG_EVENT_POOL_STATE) {
      e.data.pool_state.payload = payload.data();
      e.data.pool_state.payload_len = payload.size();
    }
    return e;
  }
  int64_t ts() const { return ev.data.trade.exchange_ts_ns; }  // first field of every member
};

std::vector<Owned> random_events(size_t n, uint32_t seed, bool sorted) {
  std::mt19937_64 rng(seed);
  std::vector<Owned> v(n);
  int64_t ts = 1700000000000000000;
  for (size_t i = 0; i < n; i++) {
    Owned& o = v[i];
    ts += sorted ? static_cast<int64_t>(rng() % 1000) : static_cast<int64_t>(rng() % 2000) - 900;
    const unsigned pick = static_cast<unsigned>(rng() % 10);
    if (pick < 5) {
      o.ev.kind = FLOXLOG_EVENT_TRADE;
      floxlog_trade& t = o.ev.data.trade;
      t.exchange_ts_ns = ts;
      t.recv_ts_ns = ts + 1;
      t.price_raw = static_cast<int64_t>(rng());
      t.qty_raw = static_cast<int64_t>(rng());
      t.trade_id = rng();
      t.symbol_id = static_cast<uint32_t>(rng() % 5);
      t.side = static_cast<uint8_t>(rng() % 2);
      t.instrument = static_cast<uint8_t>(rng() % 4);
      t.exchange_id = static_cast<uint16_t>(rng());
    } else if (pick < 8) {
      const bool snap = pick == 5;
      o.ev.kind = snap ? FLOXLOG_EVENT_BOOK_SNAPSHOT : FLOXLOG_EVENT_BOOK_DELTA;
      floxlog_book& b = o.ev.data.book;
      b.exchange_ts_ns = ts;
      b.recv_ts_ns = ts + 2;
      b.seq = static_cast<int64_t>(i);
      b.symbol_id = static_cast<uint32_t>(rng() % 5);
      b.header_type = snap ? 0 : 1;
      b.instrument = 1;
      o.bid_count = rng() % 12;
      o.levels.resize(o.bid_count + rng() % 12);
      for (auto& l : o.levels) l = {static_cast<int64_t>(rng()), static_cast<int64_t>(rng() % 1000)};
    } else if (pick == 8) {
      o.ev.kind = FLOXLOG_EVENT_OPTION_QUOTE;
      floxlog_option_quote& q = o.ev.data.option_quote;
      q.exchange_ts_ns = ts;
      q.mark_price_raw = static_cast<int64_t>(rng());
      q.iv_raw = static_cast<int64_t>(rng());
      q.open_interest_raw = static_cast<int64_t>(rng());
      q.symbol_id = static_cast<uint32_t>(rng() % 5);
      q.instrument = 3;
    } else {
      o.ev.kind = FLOXLOG_EVENT_POOL_STATE;
      floxlog_pool_state& p = o.ev.data.pool_state;
      p.exchange_ts_ns = ts;
      p.sub_type = static_cast<uint8_t>(1 + rng() % 4);
      p.venue = 2;
      o.payload.resize(rng() % 100);
      for (auto& b : o.payload) b = static_cast<uint8_t>(rng());
    }
  }
  return v;
}

// Encoded frame of an event: equal frames mean equal events.
std::vector<uint8_t> frame_of(const floxlog_event& e) {
  size_t n = 0;
  floxlog_event_frame_len(&e, &n, nullptr);
  std::vector<uint8_t> f(n);
  size_t w = 0;
  if (floxlog_frame_encode(&e, FLOXLOG_PROFILE_REFERENCE, f.data(), f.size(), &w, nullptr) != FLOXLOG_OK) f.clear();
  return f;
}

struct Config {
  uint8_t compression = FLOXLOG_COMPRESSION_NONE;
  uint16_t interval = 1000;
  uint8_t profile = FLOXLOG_PROFILE_REFERENCE;
  uint8_t create_index = 1;
  uint64_t max_segment_bytes = UINT64_MAX;
};

// Writes events with a small output buffer that is drained whenever it
// fills, rotating on would_exceed. Returns the segments.
std::vector<std::vector<uint8_t>> write(const std::vector<Owned>& events, const Config& c) {
  // Big enough for the largest LZ4 block (250 books of up to 22 levels).
  std::vector<uint8_t> out(1 << 20), block(1 << 20);
  std::vector<floxlog_index_entry> index(events.size() + 1);
  std::vector<std::vector<uint8_t>> segs;
  WriterPtr w;
  std::vector<uint8_t> cur;
  floxlog_error err{};
  auto drain = [&] {
    uint8_t tmp[1000];
    size_t n = 0;
    do {
      floxlog_writer_drain(w.get(), tmp, sizeof tmp, &n);
      cur.insert(cur.end(), tmp, tmp + n);
    } while (n > 0);
  };
  auto start = [&] {
    floxlog_writer_config cfg;
    floxlog_writer_config_default(&cfg);
    cfg.compression = c.compression;
    cfg.index_interval = c.interval;
    cfg.profile = c.profile;
    cfg.create_index = c.create_index;
    cfg.created_ns = 42;
    floxlog_writer_buffers b{out.data(), out.size(), block.data(), block.size(), index.data(), index.size()};
    floxlog_writer* raw = nullptr;
    CHECK_RC(floxlog_writer_new(&cfg, &b, &raw, &err), FLOXLOG_OK);
    w.reset(raw);
    cur.clear();
  };
  auto finish = [&] {
    uint8_t h[64];
    floxlog_result rc = floxlog_writer_finish(w.get(), h, 64, &err);
    if (rc == FLOXLOG_BUFFER_TOO_SMALL) {
      drain();
      rc = floxlog_writer_finish(w.get(), h, 64, &err);
    }
    CHECK(rc == FLOXLOG_OK);
    drain();
    if (cur.size() >= 64) std::memcpy(cur.data(), h, 64);
    segs.push_back(cur);
  };
  start();
  for (const auto& o : events) {
    floxlog_event e = o.view();
    bool exceeds = false;
    floxlog_writer_would_exceed(w.get(), &e, c.max_segment_bytes, &exceeds, &err);
    if (exceeds) {
      finish();
      start();
    }
    floxlog_result rc = floxlog_writer_append(w.get(), &e, &err);
    if (rc == FLOXLOG_BUFFER_TOO_SMALL) {  // drain and retry: nothing was lost
      drain();
      rc = floxlog_writer_append(w.get(), &e, &err);
    }
    CHECK(rc == FLOXLOG_OK);
  }
  finish();
  return segs;
}

struct Read {
  std::vector<std::vector<uint8_t>> frames;
  std::vector<int64_t> ts;
  floxlog_result end = FLOXLOG_OK;
  floxlog_error err{};
};

Read read(const std::vector<uint8_t>& seg) {
  Read r;
  size_t need = 0;
  floxlog_segment_scratch_len(seg.data(), seg.size(), &need, &r.err);
  std::vector<uint8_t> scratch(need);
  floxlog_reader* raw = nullptr;
  r.end = floxlog_reader_new(seg.data(), seg.size(), nullptr, scratch.data(), scratch.size(), &raw, &r.err);
  if (r.end != FLOXLOG_OK) return r;
  ReaderPtr rd(raw);
  std::vector<floxlog_level> levels(64);
  floxlog_event ev;
  while ((r.end = floxlog_reader_next(rd.get(), &ev, levels.data(), levels.size(), &r.err)) == FLOXLOG_OK) {
    r.frames.push_back(frame_of(ev));
    r.ts.push_back(ev.data.trade.exchange_ts_ns);
  }
  return r;
}

// Expected reader order: LZ4 blocks are stably sorted by timestamp.
std::vector<std::vector<uint8_t>> expected(const std::vector<Owned>& events, const Config& c) {
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  if (c.compression == FLOXLOG_COMPRESSION_LZ4) {
    for (size_t s = 0; s < order.size(); s += c.interval) {
      auto end = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), s + c.interval));
      std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(s), end,
                       [&](size_t a, size_t b) { return events[a].ts() < events[b].ts(); });
    }
  }
  std::vector<std::vector<uint8_t>> v;
  for (size_t i : order) v.push_back(frame_of(events[i].view()));
  return v;
}

void test_round_trips() {
  for (uint8_t comp : {uint8_t(FLOXLOG_COMPRESSION_NONE), uint8_t(FLOXLOG_COMPRESSION_LZ4)}) {
    for (uint16_t interval : {uint16_t(1), uint16_t(7), uint16_t(250)}) {
      for (bool sorted : {true, false}) {
        const auto events = random_events(1200, interval * 31u + comp, sorted);
        Config c;
        c.compression = comp;
        c.interval = interval;
        const auto segs = write(events, c);
        CHECK(segs.size() == 1);
        const Read r = read(segs.at(0));
        CHECK(r.end == FLOXLOG_END);
        CHECK(r.frames == expected(events, c));
        floxlog_segment_header h{};
        floxlog_segment_header_parse(segs[0].data(), segs[0].size(), &h, nullptr);
        CHECK(h.event_count == events.size());
        // The reference sets Sorted only on compressed segments.
        if (comp == FLOXLOG_COMPRESSION_NONE) CHECK((h.flags & FLOXLOG_FLAG_SORTED) == 0);
        if (comp == FLOXLOG_COMPRESSION_LZ4 && sorted) CHECK((h.flags & FLOXLOG_FLAG_SORTED) != 0);
      }
    }
  }
}

void test_spec_profile() {
  const auto events = random_events(300, 5, true);
  Config c;
  c.profile = FLOXLOG_PROFILE_SPEC;
  const auto segs = write(events, c);
  floxlog_segment_header h{};
  CHECK_RC(floxlog_segment_header_parse(segs.at(0).data(), segs[0].size(), &h, nullptr), FLOXLOG_OK);
  CHECK((h.flags & FLOXLOG_FLAG_SORTED) != 0);
  CHECK(h.symbol_count == 5);
  // Books carry 2/3 in their header type byte under the spec profile.
  std::vector<floxlog_level> levels(64);
  floxlog_reader* raw = nullptr;
  CHECK_RC(floxlog_reader_new(segs[0].data(), segs[0].size(), nullptr, nullptr, 0, &raw, nullptr), FLOXLOG_OK);
  ReaderPtr r(raw);
  floxlog_event ev;
  int books = 0, wrong = 0;
  while (floxlog_reader_next(r.get(), &ev, levels.data(), levels.size(), nullptr) == FLOXLOG_OK) {
    if (ev.kind == FLOXLOG_EVENT_BOOK_SNAPSHOT || ev.kind == FLOXLOG_EVENT_BOOK_DELTA) {
      books++;
      wrong += ev.data.book.header_type != ev.kind;
    }
  }
  CHECK(books > 0 && wrong == 0);
}

void test_rotation() {
  const auto events = random_events(500, 9, true);
  Config c;
  c.interval = 10;
  c.max_segment_bytes = 4096;
  const auto segs = write(events, c);
  CHECK(segs.size() > 5);
  std::vector<std::vector<uint8_t>> all;
  for (const auto& s : segs) {
    const Read r = read(s);
    CHECK(r.end == FLOXLOG_END);
    all.insert(all.end(), r.frames.begin(), r.frames.end());
    floxlog_segment_header h{};
    floxlog_segment_header_parse(s.data(), s.size(), &h, nullptr);
    // Frames stay under the limit (the trailer comes on top).
    CHECK(h.index_offset <= 4096);
  }
  CHECK(all == expected(events, c));
}

void test_seek() {
  for (uint8_t comp : {uint8_t(FLOXLOG_COMPRESSION_NONE), uint8_t(FLOXLOG_COMPRESSION_LZ4)}) {
    const auto events = random_events(2000, 77, true);
    Config c;
    c.compression = comp;
    c.interval = 64;
    const auto seg = write(events, c).at(0);
    std::vector<uint8_t> scratch(1 << 20);
    floxlog_reader* raw = nullptr;
    CHECK_RC(floxlog_reader_new(seg.data(), seg.size(), nullptr, scratch.data(), scratch.size(), &raw, nullptr),
             FLOXLOG_OK);
    ReaderPtr r(raw);
    std::vector<floxlog_level> levels(64);
    std::mt19937_64 rng(3);
    int bad = 0;
    const int64_t lo = events.front().ts() - 10, hi = events.back().ts() + 10;
    for (int k = 0; k < 200; k++) {
      const int64_t t = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo));
      auto it = std::find_if(events.begin(), events.end(), [&](const Owned& o) { return o.ts() >= t; });
      floxlog_reader_seek(r.get(), t);
      floxlog_event ev;
      floxlog_result rc = floxlog_reader_next(r.get(), &ev, levels.data(), levels.size(), nullptr);
      if (it == events.end()) {
        bad += rc != FLOXLOG_END;
      } else {
        bad += rc != FLOXLOG_OK || frame_of(ev) != frame_of(it->view());
      }
    }
    CHECK(bad == 0);
    // The index entry a seek starts from is at or before the target.
    floxlog_index_entry e{};
    CHECK_RC(floxlog_reader_index_seek(r.get(), events[1000].ts(), &e, nullptr), FLOXLOG_OK);
    CHECK(e.timestamp_ns <= events[1000].ts() && e.file_offset >= 64);
  }
}

void test_index_inspection_and_damage() {
  const auto events = random_events(100, 11, true);
  Config c;
  c.interval = 10;
  c.create_index = 0;
  auto seg = write(events, c).at(0);
  floxlog_reader* raw = nullptr;
  CHECK_RC(floxlog_reader_new(seg.data(), seg.size(), nullptr, nullptr, 0, &raw, nullptr), FLOXLOG_OK);
  ReaderPtr r(raw);
  floxlog_index_header ih{};
  size_t n = 0;
  floxlog_index_entry e{};
  CHECK_RC(floxlog_reader_index(r.get(), &ih, &n, nullptr), FLOXLOG_NO_INDEX);
  CHECK_RC(floxlog_reader_index_entry(r.get(), 0, &e, nullptr), FLOXLOG_NO_INDEX);
  CHECK_RC(floxlog_reader_index_seek(r.get(), 0, &e, nullptr), FLOXLOG_NO_INDEX);
  r.reset();

  // A damaged index CRC: reading is unaffected, the index reports it, and
  // seek falls back to a scan.
  c.create_index = 1;
  seg = write(events, c).at(0);
  seg[seg.size() - 1] ^= 0xFF;  // last index entry byte
  CHECK_RC(floxlog_reader_new(seg.data(), seg.size(), nullptr, nullptr, 0, &raw, nullptr), FLOXLOG_OK);
  r.reset(raw);
  floxlog_error err{};
  CHECK_RC(floxlog_reader_index(r.get(), &ih, &n, &err), FLOXLOG_INDEX_CRC_MISMATCH);
  floxlog_segment_header h{};
  floxlog_reader_header(r.get(), &h);
  CHECK(err.offset == h.index_offset);
  CHECK_RC(floxlog_reader_index_entry(r.get(), 0, &e, &err), FLOXLOG_INDEX_CRC_MISMATCH);
  std::vector<floxlog_level> levels(64);
  floxlog_event ev;
  CHECK_RC(floxlog_reader_seek(r.get(), events[50].ts()), FLOXLOG_OK);
  CHECK_RC(floxlog_reader_next(r.get(), &ev, levels.data(), levels.size(), &err), FLOXLOG_OK);
  CHECK(frame_of(ev) == frame_of(events[50].view()));
  const Read all = read(seg);
  CHECK(all.end == FLOXLOG_END && all.frames.size() == 100);

  // A CRC error ends the read; seek clears it and reading resumes.
  seg = write(events, c).at(0);
  floxlog_position pos{};
  CHECK_RC(floxlog_reader_new(seg.data(), seg.size(), nullptr, nullptr, 0, &raw, nullptr), FLOXLOG_OK);
  r.reset(raw);
  for (int i = 0; i < 30; i++) floxlog_reader_next(r.get(), &ev, levels.data(), levels.size(), nullptr);
  floxlog_reader_position(r.get(), &pos);
  r.reset();
  seg[pos.offset + FLOXLOG_FRAME_HEADER_LEN] ^= 1;  // payload of event 29
  CHECK_RC(floxlog_reader_new(seg.data(), seg.size(), nullptr, nullptr, 0, &raw, nullptr), FLOXLOG_OK);
  r.reset(raw);
  int good = 0;
  floxlog_result rc;
  while ((rc = floxlog_reader_next(r.get(), &ev, levels.data(), levels.size(), &err)) == FLOXLOG_OK) good++;
  CHECK(rc == FLOXLOG_CRC_MISMATCH && good == 29 && err.offset == pos.offset);
  uint64_t next = 0;
  floxlog_reader_next_offset(r.get(), &next);
  CHECK(next == pos.offset);
  CHECK_RC(floxlog_reader_next(r.get(), &ev, levels.data(), levels.size(), &err), FLOXLOG_END);
  CHECK_RC(floxlog_reader_seek(r.get(), INT64_MIN), FLOXLOG_OK);
  good = 0;
  while ((rc = floxlog_reader_next(r.get(), &ev, levels.data(), levels.size(), &err)) == FLOXLOG_OK) good++;
  CHECK(rc == FLOXLOG_CRC_MISMATCH && good == 29);
  // Without CRC checks the flipped bit goes through.
  floxlog_reader_options opts{0, 0};
  CHECK_RC(floxlog_reader_new(seg.data(), seg.size(), &opts, nullptr, 0, &raw, nullptr), FLOXLOG_OK);
  r.reset(raw);
  good = 0;
  while (floxlog_reader_next(r.get(), &ev, levels.data(), levels.size(), &err) == FLOXLOG_OK) good++;
  CHECK(good == 100);
}

void test_lz4_writer_controls() {
  const auto events = random_events(30, 21, true);
  std::vector<uint8_t> out(1 << 16), block(1 << 16);
  floxlog_index_entry index[8];
  floxlog_writer_config cfg;
  floxlog_writer_config_default(&cfg);
  cfg.compression = FLOXLOG_COMPRESSION_LZ4;
  cfg.index_interval = 10;
  floxlog_writer_buffers b{out.data(), out.size(), block.data(), block.size(), index, 8};
  floxlog_writer* raw = nullptr;
  CHECK_RC(floxlog_writer_new(&cfg, &b, &raw, nullptr), FLOXLOG_OK);
  WriterPtr w(raw);
  floxlog_writer_stats st{};
  for (int i = 0; i < 15; i++) {
    floxlog_event e = events[static_cast<size_t>(i)].view();
    CHECK_RC(floxlog_writer_append(w.get(), &e, nullptr), FLOXLOG_OK);
  }
  floxlog_writer_get_stats(w.get(), &st);
  CHECK(st.events == 15 && st.events_emitted == 10 && st.index_entries == 1 && st.staged_bytes > 0);
  // The header as the reference leaves it after one block.
  uint8_t h[64];
  floxlog_segment_header sh{};
  CHECK_RC(floxlog_writer_current_header(w.get(), h, sizeof h), FLOXLOG_OK);
  CHECK_RC(floxlog_segment_header_parse(h, sizeof h, &sh, nullptr), FLOXLOG_OK);
  CHECK(sh.event_count == 10 && sh.first_event_ns == events[0].ts() && sh.last_event_ns == events[9].ts());
  CHECK_RC(floxlog_writer_flush_block(w.get(), nullptr), FLOXLOG_OK);
  floxlog_writer_get_stats(w.get(), &st);
  CHECK(st.events_emitted == 15 && st.staged_bytes == 0 && st.index_entries == 2);
  CHECK_RC(floxlog_writer_flush_block(w.get(), nullptr), FLOXLOG_OK);  // nothing staged: no-op
  floxlog_writer_get_stats(w.get(), &st);
  CHECK(st.index_entries == 2);

  // Too little block scratch: the event is refused with the size needed.
  // (A second writer needs buffers of its own.) The block buffer holds
  // the 10 block slots first, then 100 bytes of staging.
  const size_t slots = floxlog_block_scratch_len(0, 10);
  std::vector<uint8_t> out2(1 << 12), small(slots + 100);
  floxlog_index_entry index2[8];
  floxlog_writer_buffers b2{out2.data(), out2.size(), small.data(), small.size(), index2, 8};
  WriterPtr w2;
  CHECK_RC(floxlog_writer_new(&cfg, &b2, &raw, nullptr), FLOXLOG_OK);
  w2.reset(raw);
  floxlog_event big = events[0].view();
  size_t flen = 0;
  floxlog_event_frame_len(&big, &flen, nullptr);
  floxlog_error err{};
  floxlog_result rc = floxlog_writer_append(w2.get(), &big, &err);
  if (2 * flen > 100) {
    CHECK(rc == FLOXLOG_BUFFER_TOO_SMALL && err.needed == 2 * flen);
  } else {
    CHECK(rc == FLOXLOG_OK);
  }
}

}  // namespace

int main() {
  test_round_trips();
  test_spec_profile();
  test_rotation();
  test_seek();
  test_index_inspection_and_damage();
  test_lz4_writer_controls();
  return check_report("test_cxx_api");
}
