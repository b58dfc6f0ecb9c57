// Shared by the C++ tests of the corpus and of tapes (conformance,
// tape_recorder, tape_conformance, test_hpp): corpus files and cases,
// events between corpus JSON and the C structs, the codec reader over a
// segment's bytes, temporary directories and a tiny runner that prints one
// line per check. (The corpus's LZ4 rule, which needs liblz4, is in
// segment_compare.hpp.)
#ifndef FLOXLOG_CORPUS_UTIL_HPP
#define FLOXLOG_CORPUS_UTIL_HPP

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "floxlog.hpp"

namespace corpus_test {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& why) { throw Failure(why); }

// A C ABI error as floxlog_error_format writes it.
inline std::string describe(const floxlog_error& e) {
  char buf[FLOXLOG_MESSAGE_MAX];
  size_t n = 0;
  if (floxlog_error_format(&e, buf, sizeof buf, &n) != FLOXLOG_OK) return "(unformattable error)";
  return std::string(buf, n);
}

inline std::vector<uint8_t> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) fail("cannot open " + p.string());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline json read_json(const fs::path& p) {
  std::ifstream f(p);
  if (!f) fail("cannot open " + p.string());
  return json::parse(f);
}

// nlohmann parses integers as int64 (negative) or uint64 (non-negative)
// exactly: no value passes through a double.
inline std::vector<json> read_jsonl(const fs::path& p) {
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

inline std::vector<fs::path> subdirs(const fs::path& p) {
  std::vector<fs::path> v;
  if (!fs::is_directory(p)) return v;
  for (const auto& e : fs::directory_iterator(p))
    if (e.is_directory()) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

// The segment files of a tape directory (`*.floxlog`, not hidden), by name.
inline std::vector<fs::path> segment_files(const fs::path& dir) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name[0] != '.' && e.path().extension() == ".floxlog") v.push_back(e.path());
  }
  std::sort(v.begin(), v.end());
  return v;
}

// ---------------------------------------------------------------------------
// Events.

template <typename T>
T uint_field(const json& o, const char* k) {
  const uint64_t v = o.at(k).get<uint64_t>();
  if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) fail(std::string(k) + " out of range");
  return static_cast<T>(v);
}

inline int64_t i64(const json& o, const char* k) { return o.at(k).get<int64_t>(); }

inline std::vector<floxlog_level> levels_of(const json& a) {
  std::vector<floxlog_level> v;
  for (const auto& l : a) v.push_back(floxlog_level{l.at(0).get<int64_t>(), l.at(1).get<int64_t>()});
  return v;
}

inline std::vector<uint8_t> unhex(const std::string& s) {
  if (s.size() % 2) fail("odd payload_hex");
  std::vector<uint8_t> v;
  for (size_t i = 0; i < s.size(); i += 2)
    v.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

inline std::string hex(floxlog::Span<const uint8_t> bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

// An input event with the storage its pointers refer to.
struct OwnedEvent {
  floxlog_event ev{};
  std::vector<floxlog_level> bids, asks;
  std::vector<uint8_t> payload;

  // The C view: pointers into this object's vectors.
  floxlog_event view() const {
    floxlog_event e = ev;
    if (e.kind == FLOXLOG_EVENT_BOOK_SNAPSHOT || e.kind == FLOXLOG_EVENT_BOOK_DELTA) {
      e.data.book = floxlog::Book(e.data.book, bids, asks).raw();
    } else if (e.kind == FLOXLOG_EVENT_POOL_STATE) {
      e.data.pool_state = floxlog::PoolState(e.data.pool_state, payload).raw();
    }
    return e;
  }
};

inline OwnedEvent event_from_json(const json& o) {
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

inline json levels_json(floxlog::Span<const floxlog_level> levels) {
  json a = json::array();
  for (const floxlog_level& l : levels) a.push_back(json::array({l.price_raw, l.qty_raw}));
  return a;
}

// The corpus's JSON of an event, through the C++ wrapper's accessors.
inline json event_to_json(const floxlog::Event& e) {
  json o;
  switch (e.kind()) {
    case floxlog::EventKind::Trade: {
      const floxlog_trade& t = e.trade();
      o = {{"type", e.kind_name()}, {"exchange_ts_ns", t.exchange_ts_ns}, {"recv_ts_ns", t.recv_ts_ns},
           {"price_raw", t.price_raw}, {"qty_raw", t.qty_raw}, {"trade_id", t.trade_id},
           {"symbol_id", t.symbol_id}, {"side", t.side}, {"instrument", t.instrument},
           {"exchange_id", t.exchange_id}};
      break;
    }
    case floxlog::EventKind::BookSnapshot:
    case floxlog::EventKind::BookDelta: {
      const floxlog::Book b = e.book();
      o = {{"type", e.kind_name()}, {"exchange_ts_ns", b.exchange_ts_ns()}, {"recv_ts_ns", b.recv_ts_ns()},
           {"seq", b.seq()}, {"symbol_id", b.symbol_id()}, {"header_type", b.header_type()},
           {"instrument", b.instrument()}, {"exchange_id", b.exchange_id()},
           {"bids", levels_json(b.bids())}, {"asks", levels_json(b.asks())}};
      break;
    }
    case floxlog::EventKind::OptionQuote: {
      const floxlog_option_quote& q = e.option_quote();
      o = {{"type", e.kind_name()}, {"exchange_ts_ns", q.exchange_ts_ns},
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
    case floxlog::EventKind::PoolState: {
      const floxlog::PoolState p = e.pool_state();
      o = {{"type", e.kind_name()}, {"exchange_ts_ns", p.exchange_ts_ns()},
           {"recv_ts_ns", p.recv_ts_ns()}, {"symbol_id", p.symbol_id()}, {"sub_type", p.sub_type()},
           {"venue", p.venue()}, {"exchange_id", p.exchange_id()},
           {"payload_hex", hex(p.payload())}};
      break;
    }
    default:
      fail("reader returned event kind " + std::to_string(static_cast<uint32_t>(e.kind())));
  }
  if (e.exchange_ts_ns() != o.at("exchange_ts_ns").get<int64_t>() ||
      e.symbol_id() != o.at("symbol_id").get<uint32_t>())
    fail("Event::exchange_ts_ns()/symbol_id() disagree with the member");
  return o;
}

// Compares event lists line by line, naming the first difference.
inline void compare_events(const std::vector<json>& got, const std::vector<json>& want, const std::string& what) {
  for (size_t i = 0; i < got.size() && i < want.size(); i++) {
    if (got[i] != want[i])
      fail(what + ": event " + std::to_string(i) + " differs:\n  got      " + got[i].dump() + "\n  expected " +
           want[i].dump());
  }
  if (got.size() != want.size())
    fail(what + ": " + std::to_string(got.size()) + " events, expected " + std::to_string(want.size()));
}

// Every event of a reader, as corpus JSON, through the range-for iterator.
inline std::vector<json> read_all(floxlog::TapeReader& r) {
  std::vector<json> v;
  for (const floxlog::Event& ev : r) v.push_back(event_to_json(ev));
  return v;
}

// ---------------------------------------------------------------------------
// Corpus cases (see the corpus README).

// A case's input events (events.jsonl).
inline std::vector<OwnedEvent> read_events(const fs::path& p) {
  std::vector<OwnedEvent> v;
  for (const auto& j : read_jsonl(p)) v.push_back(event_from_json(j));
  return v;
}

// A case's "writer" object.
struct WriterSettings {
  uint8_t compression;  // FLOXLOG_COMPRESSION_*
  uint8_t create_index;
  uint16_t interval;
  uint8_t exchange_id;
  uint64_t max_segment_bytes;
  uint8_t profile;  // FLOXLOG_PROFILE_*
};

inline WriterSettings writer_settings(const json& w) {
  const std::string comp = w.at("compression").get<std::string>();
  if (comp != "none" && comp != "lz4") fail("unknown compression " + comp);
  return {comp == "lz4" ? uint8_t(FLOXLOG_COMPRESSION_LZ4) : uint8_t(FLOXLOG_COMPRESSION_NONE),
          uint8_t(w.at("create_index").get<bool>() ? 1 : 0), uint_field<uint16_t>(w, "index_interval"),
          uint_field<uint8_t>(w, "exchange_id"),
          w.contains("max_segment_bytes") ? w.at("max_segment_bytes").get<uint64_t>() : (uint64_t{256} << 20),
          uint8_t(w.value("profile", std::string("reference")) == "spec" ? FLOXLOG_PROFILE_SPEC
                                                                         : FLOXLOG_PROFILE_REFERENCE)};
}

// A case's reference segments, in order: the file and its created_ns (when
// case.json gives one).
struct SegmentFile {
  fs::path path;
  std::optional<int64_t> created_ns;
};

inline std::vector<SegmentFile> segments_of(const fs::path& dir, const json& c) {
  std::vector<SegmentFile> v;
  for (const auto& s : c.at("segments")) {
    v.push_back({dir / "segments" / s.at("file").get<std::string>(),
                 s.contains("created_ns") ? std::optional<int64_t>(s.at("created_ns").get<int64_t>()) : std::nullopt});
  }
  return v;
}

// A corrupt/<name> case: segment.floxlog and what reading it must give.
struct CorruptCase {
  fs::path segment;
  uint64_t events;   // events read cleanly before the error
  bool index_error;  // the frames are intact and the index is damaged
  std::string kind;  // the error's code name ("index_error" or "error")
  uint64_t offset;   // "error_offset" (0 for an index error)
};

inline CorruptCase corrupt_case(const fs::path& dir) {
  const json expect = read_json(dir / "case.json").at("expect");
  CorruptCase c{dir / "segment.floxlog", expect.at("events").get<uint64_t>(), expect.contains("index_error"), {}, 0};
  if (c.index_error) {
    c.kind = expect.at("index_error").get<std::string>();
  } else {
    c.kind = expect.at("error").get<std::string>();
    c.offset = expect.at("error_offset").get<uint64_t>();
  }
  return c;
}

// ---------------------------------------------------------------------------
// The codec reader (floxlog_reader) over a segment's bytes.

struct ReaderDeleter {
  void operator()(floxlog_reader* r) const { floxlog_reader_free(r); }
};

// Opens a reader over `data` with the scratch it needs (both owned here).
// Does not throw: a damaged segment's open error is what a corrupt case
// checks (open_rc, err); require_open() makes any failure one.
struct SegmentReader {
  std::vector<uint8_t> scratch;
  std::unique_ptr<floxlog_reader, ReaderDeleter> r;
  floxlog_result scratch_rc = FLOXLOG_OK, open_rc = FLOXLOG_OK;
  floxlog_error scratch_err{}, err{};

  explicit SegmentReader(const std::vector<uint8_t>& data) {
    // An empty file's vector has no data(): the C API takes NULL as a
    // caller error even with length 0, so an empty segment is a real
    // pointer to no bytes (what a strict reader then calls truncated).
    static const uint8_t none = 0;
    const uint8_t* bytes = data.empty() ? &none : data.data();
    size_t need = 0;
    scratch_rc = floxlog_segment_scratch_len(bytes, data.size(), &need, &scratch_err);
    if (scratch_rc == FLOXLOG_OK) scratch.resize(need);
    floxlog_reader* raw = nullptr;
    open_rc = floxlog_reader_new(bytes, data.size(), nullptr, scratch.data(), scratch.size(), &raw, &err);
    r.reset(raw);
  }

  void require_open(const std::string& who) const {
    if (scratch_rc != FLOXLOG_OK) fail(who + ": scratch_len: " + describe(scratch_err));
    if (open_rc != FLOXLOG_OK) fail(who + ": reader_new: " + describe(err));
  }
};

// ---------------------------------------------------------------------------
// Temporary directories and the runner.

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "floxlog-hpp-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) fail("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

class Runner {
 public:
  template <typename F>
  void run(const std::string& name, F&& fn) {
    try {
      fn();
      ++passed_;
      std::printf("ok    %s\n", name.c_str());
    } catch (const floxlog::Error& e) {
      ++failed_;
      std::printf("FAIL  %s: floxlog::Error %s (file %s, offset %s): %s\n", name.c_str(), e.code_name(),
                  e.file().c_str(), e.has_offset() ? std::to_string(e.offset()).c_str() : "-", e.message().c_str());
    } catch (const std::exception& e) {
      ++failed_;
      std::printf("FAIL  %s: %s\n", name.c_str(), e.what());
    }
    std::fflush(stdout);
  }
  // Prints the totals; non-zero exit on any failure or when nothing ran.
  int report(const char* what) const {
    std::printf("%s: %d passed, %d failed\n", what, passed_, failed_);
    return failed_ == 0 && passed_ > 0 ? 0 : 1;
  }
  int passed() const { return passed_; }

 private:
  int passed_ = 0;
  int failed_ = 0;
};

// case.json of a case directory; when it does not load, a failed check
// named `name` and nothing.
inline std::optional<json> load_case(Runner& run, const std::string& name, const fs::path& dir) {
  try {
    return read_json(dir / "case.json");
  } catch (const std::exception& e) {
    const std::string why = std::string("case.json: ") + e.what();
    run.run(name, [&] { fail(why); });
    return std::nullopt;
  }
}

// main's one argument, the corpus root (which must hold `need`/, when
// given); nothing, with the reason on stderr, when it is not there.
inline std::optional<fs::path> corpus_root(int argc, char** argv, const char* need = nullptr) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT\n", argv[0]);
    return std::nullopt;
  }
  const fs::path root = argv[1];
  if (need == nullptr && !fs::is_directory(root)) {
    std::fprintf(stderr, "corpus root %s is not a directory\n", root.c_str());
    return std::nullopt;
  }
  if (need != nullptr && !fs::is_directory(root / need)) {
    std::fprintf(stderr, "%s has no %s/ directory\n", root.c_str(), need);
    return std::nullopt;
  }
  return root;
}

}  // namespace corpus_test

#endif
