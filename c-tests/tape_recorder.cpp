// tape_recorder CORPUS_ROOT
//
// Records every case of the corpus's cases/ (see its README) through the
// C++ wrapper's floxlog::TapeWriter into a fresh temporary directory, with
// the case's writer settings (compression, create_index, index_interval,
// exchange_id, max_segment_bytes; flox layout, reference profile) and a
// clock that hands out the case's segments[i].created_ns in order, then
// checks what it wrote:
//   - the clock was called exactly once per segment, and as many segment
//     files exist as the reference wrote, named <created_ns>.floxlog;
//   - byte_exact cases: every segment byte-identical to the reference's;
//   - LZ4 cases (byte_exact false): the corpus's rule, i.e. everything but
//     the compressed bytes: header fields other than index_offset, the
//     blocks (count, original_size, event_count, flags, decompressed bytes,
//     decoded with the system liblz4), the index header (but its CRC) and
//     every entry's timestamp, each entry pointing at a block header;
//   - every case: the tape read back in file order equals expected.jsonl.
// Half of each case's events go through the per-type appends, the rest
// through batch appends. Exits non-zero on any failure, or when it found no
// case to check.
#include <lz4.h>

#include <cstring>

#include "tape_test_util.hpp"

using namespace tape_test;

namespace {

std::string describe(const floxlog_error& e) {
  char buf[FLOXLOG_MESSAGE_MAX];
  size_t n = 0;
  if (floxlog_error_format(&e, buf, sizeof buf, &n) != FLOXLOG_OK) return "(unformattable error)";
  return std::string(buf, n);
}

void compare_exact(const std::vector<uint8_t>& mine, const std::vector<uint8_t>& theirs) {
  if (mine == theirs) return;
  size_t at = 0;
  while (at < mine.size() && at < theirs.size() && mine[at] == theirs[at]) at++;
  fail("bytes differ at offset " + std::to_string(at) + " (ours " + std::to_string(mine.size()) +
       " bytes, reference " + std::to_string(theirs.size()) + ")");
}

floxlog_segment_header header_of(const std::vector<uint8_t>& data, const char* who) {
  floxlog_segment_header h{};
  floxlog_error err{};
  if (floxlog_segment_header_parse(data.data(), data.size(), &h, &err) != FLOXLOG_OK)
    fail(std::string(who) + " header: " + describe(err));
  return h;
}

struct Block {
  uint64_t offset;
  floxlog_block_header header;
  std::vector<uint8_t> bytes;
};

// The blocks of a compressed segment, each decoded with the system liblz4
// (independently of the library under test).
std::vector<Block> blocks_of(const std::vector<uint8_t>& data, const floxlog_segment_header& h, const char* who) {
  const size_t end = (h.flags & FLOXLOG_FLAG_HAS_INDEX) ? static_cast<size_t>(h.index_offset) : data.size();
  if (end > data.size()) fail(std::string(who) + ": index_offset past the end");
  std::vector<Block> v;
  size_t pos = FLOXLOG_SEGMENT_HEADER_LEN;
  while (pos < end) {
    Block b{pos, {}, {}};
    floxlog_error err{};
    if (floxlog_block_header_parse(data.data() + pos, end - pos, &b.header, &err) != FLOXLOG_OK)
      fail(std::string(who) + ": block at " + std::to_string(pos) + ": " + describe(err));
    const size_t body = pos + FLOXLOG_BLOCK_HEADER_LEN;
    if (b.header.compressed_size > end - body)
      fail(std::string(who) + ": block at " + std::to_string(pos) + " runs past the end");
    b.bytes.resize(b.header.original_size);
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(data.data() + body),
                                      reinterpret_cast<char*>(b.bytes.data()),
                                      static_cast<int>(b.header.compressed_size),
                                      static_cast<int>(b.header.original_size));
    if (n != static_cast<int>(b.header.original_size))
      fail(std::string(who) + ": liblz4 decodes block at " + std::to_string(pos) + " to " + std::to_string(n) +
           " bytes");
    pos = body + b.header.compressed_size;
    v.push_back(std::move(b));
  }
  return v;
}

struct ReaderDeleter {
  void operator()(floxlog_reader* r) const { floxlog_reader_free(r); }
};

// A codec reader over `data` (for its index), with its scratch.
struct IndexReader {
  std::vector<uint8_t> scratch;
  std::unique_ptr<floxlog_reader, ReaderDeleter> r;

  IndexReader(const std::vector<uint8_t>& data, const char* who) {
    floxlog_error err{};
    size_t need = 0;
    if (floxlog_segment_scratch_len(data.data(), data.size(), &need, &err) != FLOXLOG_OK)
      fail(std::string(who) + ": scratch_len: " + describe(err));
    scratch.resize(need);
    floxlog_reader* raw = nullptr;
    if (floxlog_reader_new(data.data(), data.size(), nullptr, scratch.data(), scratch.size(), &raw, &err) !=
        FLOXLOG_OK)
      fail(std::string(who) + ": reader_new: " + describe(err));
    r.reset(raw);
  }
};

// The corpus README's rule for byte_exact: false segments.
void compare_lz4(const std::vector<uint8_t>& mine, const std::vector<uint8_t>& theirs) {
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
  IndexReader rm(mine, "ours"), rt(theirs, "reference");
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

// Writes `events` as a tape in `dir` with the case's settings; returns how
// often the clock was called.
size_t record(const fs::path& dir, const json& writer, const std::vector<OwnedEvent>& events,
              const std::vector<int64_t>& created) {
  const std::string comp = writer.at("compression").get<std::string>();
  if (comp != "none" && comp != "lz4") fail("unknown compression " + comp);
  size_t calls = 0;
  floxlog::TapeWriterConfig cfg;
  cfg.compression(comp == "lz4" ? FLOXLOG_COMPRESSION_LZ4 : FLOXLOG_COMPRESSION_NONE)
      .create_index(writer.at("create_index").get<bool>())
      .index_interval(uint_field<uint16_t>(writer, "index_interval"))
      .exchange_id(uint_field<uint8_t>(writer, "exchange_id"))
      .max_segment_bytes(writer.contains("max_segment_bytes") ? writer.at("max_segment_bytes").get<uint64_t>()
                                                              : (uint64_t{256} << 20))
      .layout(FLOXLOG_LAYOUT_FLOX)
      .profile(FLOXLOG_PROFILE_REFERENCE)
      .durability(FLOXLOG_DURABILITY_NONE)
      .with_clock([&calls, &created]() -> int64_t {
        // Past the reference's segments: still increasing, and counted.
        const int64_t v = calls < created.size() ? created[calls]
                                                 : created.back() + static_cast<int64_t>(calls) * 1000;
        ++calls;
        return v;
      });
  floxlog::TapeWriter w = floxlog::TapeWriter::open(dir.string(), cfg);

  // First half: one call per event, through the typed appends.
  const size_t half = events.size() / 2;
  for (size_t i = 0; i < half; i++) {
    const floxlog_event e = events[i].view();
    switch (e.kind) {
      case FLOXLOG_EVENT_TRADE: w.append(e.data.trade); break;
      case FLOXLOG_EVENT_BOOK_SNAPSHOT: w.append_snapshot(floxlog::Book(e.data.book)); break;
      case FLOXLOG_EVENT_BOOK_DELTA: w.append_delta(e.data.book); break;
      case FLOXLOG_EVENT_OPTION_QUOTE: w.append(e.data.option_quote); break;
      case FLOXLOG_EVENT_POOL_STATE: w.append(floxlog::Event::of(e.data.pool_state)); break;
      default: fail("bad kind");
    }
  }
  // The rest: batches of up to 97 events of any kind.
  std::vector<floxlog_event> batch;
  for (size_t i = half; i < events.size(); i += batch.size()) {
    batch.clear();
    for (size_t j = i; j < events.size() && batch.size() < 97; j++) batch.push_back(events[j].view());
    const size_t n = w.append(batch);
    if (n != batch.size()) fail("batch appended " + std::to_string(n) + " of " + std::to_string(batch.size()));
  }
  w.close();
  if (w.written_events() != events.size())
    fail("written_events() " + std::to_string(w.written_events()) + " after close, appended " +
         std::to_string(events.size()));
  return calls;
}

void check_case(const fs::path& dir, const json& c) {
  std::vector<OwnedEvent> events;
  for (const auto& j : read_jsonl(dir / "events.jsonl")) events.push_back(event_from_json(j));
  if (c.contains("event_count") && c.at("event_count").get<size_t>() != events.size())
    fail("events.jsonl holds " + std::to_string(events.size()) + " events, case.json says " +
         c.at("event_count").dump());
  std::vector<fs::path> reference;
  std::vector<int64_t> created;
  for (const auto& s : c.at("segments")) {
    reference.push_back(dir / "segments" / s.at("file").get<std::string>());
    created.push_back(s.at("created_ns").get<int64_t>());
  }
  if (created.empty()) fail("case.json lists no segment");

  TempDir tmp;
  const fs::path tape = tmp.path() / "tape";
  const size_t calls = record(tape, c.at("writer"), events, created);
  if (calls != reference.size())
    fail("clock called " + std::to_string(calls) + " times for " + std::to_string(reference.size()) +
         " reference segments");

  const auto ours = segment_files(tape);
  if (ours.size() != reference.size())
    fail("wrote " + std::to_string(ours.size()) + " segments, the reference " + std::to_string(reference.size()));
  const bool exact = c.value("byte_exact", false);
  for (size_t i = 0; i < ours.size(); i++) {
    const std::string want_name = std::to_string(created[i]) + ".floxlog";
    if (ours[i].filename() != want_name)
      fail("segment " + std::to_string(i) + " is named " + ours[i].filename().string() + ", expected " + want_name);
    try {
      const auto mine = read_file(ours[i]);
      const auto theirs = read_file(reference[i]);
      if (exact) {
        compare_exact(mine, theirs);
      } else {
        compare_lz4(mine, theirs);
      }
    } catch (const Failure& f) {
      fail("segment " + std::to_string(i) + " (" + reference[i].filename().string() + "): " + f.what());
    }
  }

  // What a reader meets in the files is the case's expected.jsonl.
  floxlog::TapeReader r = floxlog::TapeReader::open(tape.string(), floxlog::ReadOptions().file_order().strict());
  compare_events(read_all(r), read_jsonl(dir / "expected.jsonl"), "read back");
  if (r.stats().segments != reference.size()) fail("the reader lists another number of segments");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  if (!fs::is_directory(root / "cases")) {
    std::fprintf(stderr, "%s has no cases/ directory\n", root.c_str());
    return 2;
  }
  Runner run;
  size_t segments = 0;
  for (const auto& dir : subdirs(root / "cases")) {
    const std::string name = "record/" + dir.filename().string();
    json c;
    try {
      c = read_json(dir / "case.json");
    } catch (const std::exception& e) {
      run.run(name, [&] { fail(std::string("case.json: ") + e.what()); });
      continue;
    }
    if (!c.contains("writer") || !fs::exists(dir / "events.jsonl")) continue;
    run.run(name + (c.value("byte_exact", false) ? " (byte-exact, " : " (lz4 rule, ") +
                std::to_string(c.at("segments").size()) + " segments)",
            [&] { check_case(dir, c); });
    segments += c.at("segments").size();
  }
  std::printf("%zu reference segments\n", segments);
  return run.report("tape_recorder");
}
