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
//   - byte_exact false (LZ4 blocks from an encoder we do not reproduce;
//     none in conformance/): the corpus's rule, i.e. everything but
//     the compressed bytes: header fields other than index_offset, the
//     blocks (count, original_size, event_count, flags, decompressed bytes,
//     decoded with the system liblz4), the index header (but its CRC) and
//     every entry's timestamp, each entry pointing at a block header;
//   - every case: the tape read back in file order equals expected.jsonl.
// Half of each case's events go through the per-type appends, the rest
// through batch appends. Exits non-zero on any failure, or when it found no
// case to check.
#include "corpus_util.hpp"
#include "segment_compare.hpp"

using namespace corpus_test;

namespace {

// Writes `events` as a tape in `dir` with the case's settings; returns how
// often the clock was called.
size_t record(const fs::path& dir, const WriterSettings& s, const std::vector<OwnedEvent>& events,
              const std::vector<int64_t>& created) {
  size_t calls = 0;
  floxlog::TapeWriterConfig cfg;
  cfg.compression(s.compression)
      .create_index(s.create_index != 0)
      .index_interval(s.interval)
      .exchange_id(s.exchange_id)
      .max_segment_bytes(s.max_segment_bytes)
      .layout(FLOXLOG_LAYOUT_FLOX)
      .profile(s.profile)
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
  const std::vector<OwnedEvent> events = read_events(dir / "events.jsonl");
  if (c.contains("event_count") && c.at("event_count").get<size_t>() != events.size())
    fail("events.jsonl holds " + std::to_string(events.size()) + " events, case.json says " +
         c.at("event_count").dump());
  const std::vector<SegmentFile> reference = segments_of(dir, c);
  std::vector<int64_t> created;
  for (const auto& f : reference) {
    if (!f.created_ns) fail("case.json gives no created_ns for " + f.path.filename().string());
    created.push_back(*f.created_ns);
  }
  if (created.empty() && !events.empty()) fail("case.json lists no segment");

  TempDir tmp;
  const fs::path tape = tmp.path() / "tape";
  const size_t calls = record(tape, writer_settings(c.at("writer")), events, created);
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
    compare_segment(i, read_file(ours[i]), reference[i].path, exact);
  }

  // Empty input: no segment written (checked above), nothing to read.
  if (reference.empty()) return;
  // What a reader meets in the files is the case's expected.jsonl.
  floxlog::TapeReader r = floxlog::TapeReader::open(tape.string(), floxlog::ReadOptions().file_order().strict());
  compare_events(read_all(r), read_jsonl(dir / "expected.jsonl"), "read back");
  if (r.stats().segments != reference.size()) fail("the reader lists another number of segments");
}

}  // namespace

int main(int argc, char** argv) {
  const auto root = corpus_root(argc, argv, "cases");
  if (!root) return 2;
  Runner run;
  size_t segments = 0;
  for (const auto& dir : subdirs(*root / "cases")) {
    const std::string name = "record/" + dir.filename().string();
    const std::optional<json> c = load_case(run, name, dir);
    if (!c || !c->contains("writer") || !fs::exists(dir / "events.jsonl")) continue;
    run.run(name + (c->value("byte_exact", false) ? " (byte-exact, " : " (lz4 rule, ") +
                std::to_string(c->at("segments").size()) + " segments)",
            [&] { check_case(dir, *c); });
    segments += c->at("segments").size();
  }
  std::printf("%zu reference segments\n", segments);
  return run.report("tape_recorder");
}
