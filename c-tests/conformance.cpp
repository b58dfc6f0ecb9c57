// floxlog_conformance CORPUS_ROOT
//
// Replays a conformance corpus (laid out like conformance/: cases/,
// real/, corrupt/; see its README) through the C ABI only (floxlog.hpp's
// inline floxlog::Event view only turns what the reader returns into corpus
// JSON, in corpus_util.hpp):
//   write/<case>   the writer's segments against the reference files:
//                  byte-identical when byte_exact, else the corpus's LZ4
//                  rule (blocks decoded with the system liblz4);
//   read/<case>    the reader's events against expected.jsonl;
//   corrupt/<case> each damaged segment's events, error kind and offset.
// Prints one line per check and `N passed, M failed`; exits non-zero on any
// failure (or when nothing was checked).
#include <algorithm>
#include <cstring>

#include "corpus_util.hpp"
#include "segment_compare.hpp"

using namespace corpus_test;

namespace {

// ---------------------------------------------------------------------------
// Handles.

struct WriterDeleter {
  void operator()(floxlog_writer* w) const { floxlog_writer_free(w); }
};
using WriterPtr = std::unique_ptr<floxlog_writer, WriterDeleter>;

// Reads every event; returns the count and the final code (FLOXLOG_END
// when clean), with the error in `err`.
floxlog_result read_segment(const std::vector<uint8_t>& data, std::vector<json>* out, uint64_t* count,
                            floxlog_error* err) {
  SegmentReader rd(data);
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
    if (out) out->push_back(event_to_json(floxlog::Event(ev)));
  }
  return rc;
}

// ---------------------------------------------------------------------------
// Writing.

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
  std::vector<uint8_t> block(s.compression == FLOXLOG_COMPRESSION_LZ4 ? floxlog_block_scratch_len(max_block, s.interval) : 0);
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
    cfg.profile = s.profile;
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
  // No event, no segment (as the tape writer, which removes a segment no
  // event reached).
  if (events.empty()) return segments;
  finish();
  return segments;
}

// ---------------------------------------------------------------------------
// Checks.

void check_write(const fs::path& dir, const json& c) {
  const WriterSettings s = writer_settings(c.at("writer"));
  const std::vector<OwnedEvent> events = read_events(dir / "events.jsonl");
  const auto files = segments_of(dir, c);
  std::vector<int64_t> created;
  for (const auto& f : files) created.push_back(f.created_ns.value_or(0));
  const auto ours = encode_segments(s, events, created);
  if (ours.size() != files.size())
    fail("wrote " + std::to_string(ours.size()) + " segments, the reference " + std::to_string(files.size()));
  const bool exact = c.value("byte_exact", false);
  for (size_t i = 0; i < ours.size(); i++) compare_segment(i, ours[i], files[i].path, exact);
}

void check_read(const fs::path& dir, const json& c) {
  std::vector<json> got;
  for (const auto& f : segments_of(dir, c)) {
    uint64_t n = 0;
    floxlog_error err{};
    const floxlog_result rc = read_segment(read_file(f.path), &got, &n, &err);
    if (rc != FLOXLOG_END) fail(f.path.filename().string() + ": after " + std::to_string(n) + " events: " + describe(err));
  }
  compare_events(got, read_jsonl(dir / "expected.jsonl"), "read");
}

void check_corrupt(const fs::path& dir) {
  const CorruptCase cc = corrupt_case(dir);
  const auto data = read_file(cc.segment);
  uint64_t n = 0;
  floxlog_error err{};
  const floxlog_result rc = read_segment(data, nullptr, &n, &err);
  if (cc.index_error) {
    if (rc != FLOXLOG_END) fail("sequential read failed after " + std::to_string(n) + " events: " + describe(err));
    if (n != cc.events) fail("expected " + std::to_string(cc.events) + " events, read " + std::to_string(n));
    const SegmentReader rd(data);
    rd.require_open("segment");
    floxlog_index_header ih{};
    size_t entries = 0;
    const floxlog_result irc = floxlog_reader_index(rd.r.get(), &ih, &entries, &err);
    if (cc.kind != floxlog_result_name(irc))
      fail("expected index error " + cc.kind + ", got " + floxlog_result_name(irc));
    return;
  }
  if (rc == FLOXLOG_END) fail("expected " + cc.kind + ", read " + std::to_string(n) + " events without error");
  if (n != cc.events || cc.kind != floxlog_result_name(rc) || err.offset != cc.offset)
    fail("expected " + std::to_string(cc.events) + " events then " + cc.kind + " at " + std::to_string(cc.offset) +
         "; got " + std::to_string(n) + " events then " + describe(err));
}

}  // namespace

int main(int argc, char** argv) {
  const auto root = corpus_root(argc, argv);
  if (!root) return 2;
  Runner run;
  for (const char* group : {"cases", "real"}) {
    for (const auto& dir : subdirs(*root / group)) {
      const std::string name = (std::string(group) == "real" ? "real/" : "") + dir.filename().string();
      const std::optional<json> c = load_case(run, "load/" + name, dir);
      if (!c) continue;
      if (c->contains("writer") && fs::exists(dir / "events.jsonl")) {
        run.run("write/" + name, [&] { check_write(dir, *c); });
      }
      // A writer-only case (empty input) has no segments to read.
      if (fs::is_directory(dir / "segments")) run.run("read/" + name, [&] { check_read(dir, *c); });
    }
  }
  for (const auto& dir : subdirs(*root / "corrupt")) {
    run.run("corrupt/" + dir.filename().string(), [&] { check_corrupt(dir); });
  }
  return run.report("conformance");
}
