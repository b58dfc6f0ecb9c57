// tape_conformance CORPUS_ROOT
//
// Reads the conformance corpus (see its README) as tapes through the C++
// wrapper's floxlog::TapeReader:
//   cases/<name>, real/<name>: the case's segments/ directory
//     - in file order (strict): equals expected.jsonl line by line, every
//       field; the same through the multi-path open (every segment file);
//     - in time order (the default): equals expected.jsonl stably sorted by
//       exchange_ts_ns (the tape merge reorders segments not flagged Sorted
//       exactly, and breaks ties by segment, then file position);
//     - seek(ts), in both orders: the events with exchange_ts_ns >= ts, in
//       order; seeking back gives everything again;
//     - filters: a symbol id and type filter, and a time range.
//   corrupt/<name>: segment.floxlog in file order, strict: exactly the
//     first N events, then floxlog::Error with the expected kind (code
//     name), byte offset and file, then the end; index_error cases read
//     all N events cleanly (the reader does not need the index) and
//     floxlog::verify reports the index error. In the default (tolerant)
//     mode a truncated segment may instead be a killed writer's torn tail:
//     N events, no error, counted in stats().torn_tails.
// Exits non-zero on any failure, or when nothing was checked.
#include <set>

#include "corpus_util.hpp"

using namespace corpus_test;

namespace {

int64_t ts_of(const json& e) { return e.at("exchange_ts_ns").get<int64_t>(); }

std::vector<json> stable_by_time(std::vector<json> v) {
  std::stable_sort(v.begin(), v.end(), [](const json& a, const json& b) { return ts_of(a) < ts_of(b); });
  return v;
}

template <typename Pred>
std::vector<json> only(const std::vector<json>& v, Pred keep) {
  std::vector<json> out;
  for (const auto& e : v)
    if (keep(e)) out.push_back(e);
  return out;
}

uint32_t kind_bit(const std::string& type) {
  if (type == "trade") return floxlog::type_bit(floxlog::EventKind::Trade);
  if (type == "book_snapshot") return floxlog::type_bit(floxlog::EventKind::BookSnapshot);
  if (type == "book_delta") return floxlog::type_bit(floxlog::EventKind::BookDelta);
  if (type == "option_quote") return floxlog::type_bit(floxlog::EventKind::OptionQuote);
  if (type == "pool_state") return floxlog::type_bit(floxlog::EventKind::PoolState);
  fail("unknown type " + type);
}

void expect_clean(floxlog::TapeReader& r, size_t segments, const std::string& what) {
  const floxlog::ReaderStats s = r.stats();
  if (s.errors != 0 || s.torn_tails != 0)
    fail(what + ": stats report " + std::to_string(s.errors) + " errors, " + std::to_string(s.torn_tails) +
         " torn tails");
  if (s.segments != segments)
    fail(what + ": " + std::to_string(s.segments) + " segments, expected " + std::to_string(segments));
}

void check_case(const fs::path& dir, const json& c, size_t* events_checked) {
  const fs::path segdir = dir / "segments";
  const std::vector<json> expected = read_jsonl(dir / "expected.jsonl");
  // A case may hold no events (a header-only segment), if case.json says so.
  if (expected.empty() && !(c.contains("event_count") && c.at("event_count").get<size_t>() == 0))
    fail("expected.jsonl is empty");
  if (c.contains("event_count") && c.at("event_count").get<size_t>() != expected.size())
    fail("expected.jsonl holds " + std::to_string(expected.size()) + " events, case.json says " +
         c.at("event_count").dump());
  const auto files = segment_files(segdir);
  if (files.size() != c.at("segments").size()) fail("segments/ holds another number of files than case.json lists");
  const std::vector<json> by_time = stable_by_time(expected);

  // File order, strict, over the directory.
  {
    auto r = floxlog::TapeReader::open(segdir.string(), floxlog::ReadOptions().file_order().strict());
    compare_events(read_all(r), expected, "file order");
    expect_clean(r, files.size(), "file order");
    if (r.stats().events != expected.size()) fail("file order: stats().events disagrees");
    if (r.next()) fail("file order: an event after the end");
  }
  // File order over the segment files given one by one.
  {
    std::vector<std::string> paths;
    for (const auto& f : files) paths.push_back(f.string());
    auto r = floxlog::TapeReader::open(paths, floxlog::ReadOptions().file_order());
    compare_events(read_all(r), expected, "file order, multi-path open");
  }
  // Time order (the default).
  auto r = floxlog::TapeReader::open(segdir.string());
  compare_events(read_all(r), by_time, "time order");
  expect_clean(r, files.size(), "time order");
  // A case with no events has nothing to seek to (the reads above proved
  // it reads as empty, cleanly).
  if (expected.empty()) return;

  // seek: a timestamp in the middle, past the end, then back to the start.
  const int64_t mid = by_time[by_time.size() / 2].at("exchange_ts_ns").get<int64_t>();
  r.seek(mid);
  compare_events(read_all(r), only(by_time, [&](const json& e) { return ts_of(e) >= mid; }), "time order seek");
  r.seek(std::numeric_limits<int64_t>::max());
  compare_events(read_all(r), only(by_time, [&](const json& e) { return ts_of(e) >= INT64_MAX; }),
                 "time order seek past the end");
  r.seek(std::numeric_limits<int64_t>::min());
  compare_events(read_all(r), by_time, "time order seek back");
  {
    auto f = floxlog::TapeReader::open(segdir.string(), floxlog::ReadOptions().file_order());
    const int64_t target = ts_of(expected[expected.size() / 3]);
    // One event, then the seek restarts the reader.
    if (!f.next()) fail("file order: no first event");
    f.seek(target);
    compare_events(read_all(f), only(expected, [&](const json& e) { return ts_of(e) >= target; }),
                   "file order seek");
  }

  // Filters: the first event's symbol and the types present with it.
  {
    const uint32_t sym = expected.front().at("symbol_id").get<uint32_t>();
    const std::string type = expected.front().at("type").get<std::string>();
    uint32_t mask = kind_bit(type);
    if (type != "trade") mask |= floxlog::type_bit(floxlog::EventKind::Trade);
    auto f = floxlog::TapeReader::open(segdir.string(),
                                       floxlog::ReadOptions().file_order().symbol(sym).types(mask));
    const auto want = only(expected, [&](const json& e) {
      return e.at("symbol_id").get<uint32_t>() == sym && (kind_bit(e.at("type").get<std::string>()) & mask);
    });
    compare_events(read_all(f), want, "symbol " + std::to_string(sym) + " + type filter");
    if (want.empty()) fail("the filter kept nothing: a useless check");
  }
  {
    // The symbol given by a decimal string (no metadata.json needed), and
    // a type added through type().
    const json& last = expected.back();
    const uint32_t sym = last.at("symbol_id").get<uint32_t>();
    const std::string type = last.at("type").get<std::string>();
    floxlog::ReadOptions o;
    o.symbol_name(std::to_string(sym)).types(kind_bit(type));
    auto f = floxlog::TapeReader::open(segdir.string(), o);
    compare_events(read_all(f), only(by_time, [&](const json& e) {
                     return e.at("symbol_id").get<uint32_t>() == sym && e.at("type").get<std::string>() == type;
                   }),
                   "symbol name + type filter");
  }
  {
    const int64_t from = ts_of(by_time[by_time.size() / 4]);
    const int64_t to = ts_of(by_time[by_time.size() * 3 / 4]);
    auto f = floxlog::TapeReader::open(segdir.string(), floxlog::ReadOptions().from(from).to(to));
    compare_events(read_all(f), only(by_time, [&](const json& e) { return ts_of(e) >= from && ts_of(e) < to; }),
                   "time range filter");
  }
  *events_checked += expected.size();
}

// Reads a damaged segment: returns the events before the error, and the
// error (if any) the reader threw after them.
struct Outcome {
  size_t events = 0;
  std::optional<floxlog::Error> error;
  floxlog::ReaderStats stats{};
  bool end_after_error = false;
};

Outcome read_damaged(const fs::path& seg, const floxlog::ReadOptions& o) {
  Outcome out;
  auto r = floxlog::TapeReader::open(seg.string(), o);
  try {
    for (const floxlog::Event& ev : r) {
      (void)event_to_json(ev);
      ++out.events;
    }
  } catch (const floxlog::Error& e) {
    out.error = e;
    // One error per damaged segment, then the end for good.
    out.end_after_error = !r.next().has_value();
  }
  out.stats = r.stats();
  return out;
}

bool names_segment(const floxlog::Error& e, const fs::path& seg) {
  std::error_code ec;
  return e.has_file() && (fs::equivalent(fs::path(e.file()), seg, ec) || fs::path(e.file()).filename() == seg.filename());
}

void check_corrupt(const fs::path& dir, std::set<std::string>* kinds) {
  const CorruptCase cc = corrupt_case(dir);
  const fs::path& seg = cc.segment;
  const uint64_t n = cc.events;
  const std::string& kind = cc.kind;

  if (cc.index_error) {
    // The frames are intact: reading does not use the index.
    const Outcome o = read_damaged(seg, floxlog::ReadOptions().file_order().strict());
    if (o.error) fail("read failed after " + std::to_string(o.events) + " events: " + o.error->what());
    if (o.events != n) fail("read " + std::to_string(o.events) + " events, expected " + std::to_string(n));
    // verify reads the index and says what is wrong with it.
    bool found = false;
    const floxlog::VerifyResult v = floxlog::verify(seg.string(), floxlog::VerifyOptions(), [&](const floxlog::Finding& f) {
      if (f.kind() == kind && f.severity() == FLOXLOG_SEVERITY_ERROR) found = true;
    });
    if (v.passed() || !v.failure || v.failure->code() != FLOXLOG_VERIFY_FAILED)
      fail("verify passed a segment whose index is damaged");
    if (!found) fail("verify reported no " + kind + " error");
    kinds->insert(kind);
    return;
  }

  const uint64_t offset = cc.offset;
  auto check_error = [&](const Outcome& o, const char* mode) {
    const std::string m = std::string(mode) + ": ";
    if (o.events != n) fail(m + "read " + std::to_string(o.events) + " events, expected " + std::to_string(n));
    if (!o.error) fail(m + "no error after " + std::to_string(n) + " events, expected " + kind);
    const floxlog::Error& e = *o.error;
    if (e.code_name() != kind) fail(m + "error " + e.code_name() + ", expected " + kind + ": " + e.what());
    if (floxlog_result_name(e.code()) != kind) fail(m + "code_name() disagrees with the code");
    if (!e.has_offset() || e.offset() != offset)
      fail(m + "error at offset " + (e.has_offset() ? std::to_string(e.offset()) : std::string("(none)")) +
           ", expected " + std::to_string(offset));
    if (!names_segment(e, seg)) fail(m + "error names file '" + e.file() + "', not the segment");
    if (!o.end_after_error) fail(m + "the reader did not end after the error");
    if (o.stats.errors != 1) fail(m + "stats().errors is " + std::to_string(o.stats.errors));
  };
  // Strict: the corpus's outcome.
  check_error(read_damaged(seg, floxlog::ReadOptions().file_order().strict()), "strict");
  // Default (tolerant): a killed writer's torn tail is not an error.
  const Outcome tolerant = read_damaged(seg, floxlog::ReadOptions().file_order());
  if (kind == "truncated" && !tolerant.error) {
    if (tolerant.events != n || tolerant.stats.torn_tails != 1)
      fail("tolerant: " + std::to_string(tolerant.events) + " events, " + std::to_string(tolerant.stats.torn_tails) +
           " torn tails; expected " + std::to_string(n) + " events and one torn tail");
    std::printf("      (%s: a torn tail in the default mode)\n", dir.filename().c_str());
  } else {
    check_error(tolerant, "tolerant");
  }
  // verify reports the same damage, where it is.
  bool found = false, zero_tail = false;
  const floxlog::VerifyResult v = floxlog::verify(seg.string(), floxlog::VerifyOptions(), [&](const floxlog::Finding& f) {
    if (f.kind() == kind && f.severity() == FLOXLOG_SEVERITY_ERROR && f.has_offset() && f.offset() == offset)
      found = true;
    if (f.kind() == "zero_tail" && f.severity() == FLOXLOG_SEVERITY_WARNING) zero_tail = true;
  });
  if (v.passed()) {
    // An unfinished segment whose frames end in zeros is what a crashed
    // journal writer leaves: the tape tools read its events and warn
    // (zero_tail), where a strict segment reader says truncated.
    if (!zero_tail || kind != "truncated" || tolerant.error) fail("verify passed a damaged segment");
    std::printf("      (%s: verify warns of a crash-ended zero tail)\n", dir.filename().c_str());
    return;
  }
  if (!found) fail("verify reported no " + kind + " error at " + std::to_string(offset));
  kinds->insert(kind);
}

}  // namespace

int main(int argc, char** argv) {
  const auto opt_root = corpus_root(argc, argv);
  if (!opt_root) return 2;
  const fs::path& root = *opt_root;
  Runner run;
  size_t cases = 0, events = 0;
  for (const char* group : {"cases", "real"}) {
    for (const auto& dir : subdirs(root / group)) {
      const std::string name = std::string(group) + "/" + dir.filename().string();
      // A writer-only case (empty input) has no segments to read.
      if (!fs::is_directory(dir / "segments")) continue;
      run.run("tape/" + name, [&] {
        const json c = read_json(dir / "case.json");
        check_case(dir, c, &events);
      });
      ++cases;
    }
  }
  std::set<std::string> kinds;
  size_t corrupt = 0;
  for (const auto& dir : subdirs(root / "corrupt")) {
    run.run("tape/corrupt/" + dir.filename().string(), [&] { check_corrupt(dir, &kinds); });
    ++corrupt;
  }
  std::printf("%zu cases (%zu events), %zu damaged segments (%zu error kinds)\n", cases, events, corrupt,
              kinds.size());
  if (cases == 0 || corrupt == 0) {
    std::printf("FAIL  found no case or no damaged segment under %s\n", root.c_str());
    return 1;
  }
  return run.report("tape_conformance");
}
