// test_hpp: the C++ wrapper (include/floxlog.hpp) on its own tapes:
//   - move semantics of TapeWriter and TapeReader (moved-from objects are
//     empty and throw FLOXLOG_NULL_POINTER; the clock survives moves; no
//     double free, which ASan would report);
//   - errors: a second writer on a directory (FLOXLOG_TAPE_LOCKED naming
//     the lock file), a missing path (FLOXLOG_IO_ERROR), appends after
//     close, a batch stopping at a bad event (AppendError::appended), bad
//     metadata, an unknown symbol name, an event accessor of the wrong kind;
//   - every event type through the typed appends and back through the
//     Event view (Book bids()/asks(), PoolState payload()), flush/sync
//     counters, the clock once per segment, iterator forms, seek, stats;
//   - verify, recover (a segment copied while its writer was still open,
//     and one truncated by a few bytes: "rewritten"; the live tape:
//     FLOXLOG_TAPE_LOCKED), inspect (its JSON parsed with nlohmann);
//   - book_at (levels, depth, no book yet) and diff (twin, one field,
//     bytes, damage as a result, a missing tape as an exception);
//   - Appender: feed threads appending at once, close() refused
//     (FLOXLOG_BUSY) while one lives, a writer destroyed before its
//     appender, encoded frames (a bad one: AppendError with its offset).
#include <set>
#include <thread>
#include <type_traits>

#include "corpus_util.hpp"

using namespace corpus_test;

namespace {

static_assert(!std::is_copy_constructible<floxlog::TapeWriter>::value, "TapeWriter is move-only");
static_assert(!std::is_copy_assignable<floxlog::TapeWriter>::value, "TapeWriter is move-only");
static_assert(std::is_nothrow_move_constructible<floxlog::TapeWriter>::value, "noexcept move");
static_assert(std::is_nothrow_move_assignable<floxlog::TapeWriter>::value, "noexcept move");
static_assert(!std::is_copy_constructible<floxlog::Appender>::value, "Appender is move-only");
static_assert(std::is_nothrow_move_constructible<floxlog::Appender>::value, "noexcept move");
static_assert(!std::is_copy_constructible<floxlog::TapeReader>::value, "TapeReader is move-only");
static_assert(!std::is_copy_assignable<floxlog::TapeReader>::value, "TapeReader is move-only");
static_assert(std::is_nothrow_move_constructible<floxlog::TapeReader>::value, "noexcept move");
static_assert(std::is_nothrow_move_assignable<floxlog::TapeReader>::value, "noexcept move");
static_assert(std::is_nothrow_destructible<floxlog::TapeWriter>::value, "no throwing destructor");
static_assert(std::is_nothrow_copy_constructible<floxlog::Error>::value, "exceptions copy without throwing");
static_assert(std::is_base_of<std::runtime_error, floxlog::Error>::value, "Error is a runtime_error");
static_assert(std::is_same<std::iterator_traits<floxlog::TapeReader::iterator>::iterator_category,
                           std::input_iterator_tag>::value,
              "an input iterator");

void expect(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// Runs `fn`, which must throw floxlog::Error with `code`; returns it.
template <typename F>
floxlog::Error expect_error(floxlog_result code, F&& fn, const std::string& what) {
  try {
    fn();
  } catch (const floxlog::Error& e) {
    if (e.code() != code)
      fail(what + ": threw " + e.code_name() + ", expected " + floxlog_result_name(code) + ": " + e.what());
    if (std::string(e.code_name()) != floxlog_result_name(code)) fail(what + ": code_name() disagrees");
    return e;
  }
  fail(what + ": did not throw " + floxlog_result_name(code));
}

floxlog_trade trade(int64_t ts, uint32_t sym) {
  floxlog_trade t{};
  t.exchange_ts_ns = ts;
  t.recv_ts_ns = ts + 5;
  t.price_raw = 10125000000 + ts % 100;
  t.qty_raw = 50000000;
  t.trade_id = static_cast<uint64_t>(ts);
  t.symbol_id = sym;
  t.side = static_cast<uint8_t>(ts % 2);
  t.exchange_id = 3;
  return t;
}

// A config with a deterministic clock: 1000, 2000, ... counted in *calls.
floxlog::TapeWriterConfig counted_clock(std::shared_ptr<int> calls) {
  floxlog::TapeWriterConfig cfg;
  cfg.durability(FLOXLOG_DURABILITY_NONE).with_clock([calls]() -> int64_t {
    ++*calls;
    return 1700000000000000000 + int64_t{1000} * *calls;
  });
  return cfg;
}

size_t count_events(const fs::path& p, floxlog::ReadOptions o = floxlog::ReadOptions()) {
  auto r = floxlog::TapeReader::open(p.string(), o);
  size_t n = 0;
  for (auto it = r.begin(); it != r.end(); ++it) ++n;
  return n;
}

void test_writer_moves() {
  TempDir tmp;
  auto calls = std::make_shared<int>(0);
  // On the heap, destroyed after the move: the clock's context must not
  // live in the object it was opened from.
  auto first = std::make_unique<floxlog::TapeWriter>(floxlog::TapeWriter::open((tmp.path() / "t").string(),
                                                                             counted_clock(calls)));
  expect(first->valid(), "open writer is valid");
  floxlog::TapeWriter second(std::move(*first));
  expect(!first->valid() && !*first && first->get() == nullptr, "moved-from writer is empty");
  first.reset();
  floxlog::TapeWriter third;
  expect(!third.valid(), "default writer is empty");
  third = std::move(second);
  expect(!second.valid() && third.valid(), "move assignment transfers the handle");
  expect(*calls == 0, "no segment before the first event");
  for (int i = 0; i < 10; i++) third.append(trade(100 + i, 1));
  expect(*calls == 1, "the clock (moved twice) was called once for the first segment");
  expect_error(FLOXLOG_NULL_POINTER, [&] { second.append(trade(1, 1)); }, "append on a moved-from writer");
  expect_error(FLOXLOG_NULL_POINTER, [&] { second.close(); }, "close on a moved-from writer");
  expect_error(FLOXLOG_NULL_POINTER, [&] { (void)second.written_events(); }, "counters of a moved-from writer");

  // Move-assigning over a live writer closes that tape first.
  TempDir tmp2;
  floxlog::TapeWriter other = floxlog::TapeWriter::open((tmp2.path() / "u").string());
  other.append(trade(5, 2));
  other = std::move(third);  // closes u/, takes over t/
  expect(count_events(tmp2.path() / "u", floxlog::ReadOptions().strict()) == 1, "overwritten writer was closed");
  other.append(trade(200, 1));
  other.close();
  expect(other.written_events() == 11, "counters after close");
  const auto segs = segment_files(tmp.path() / "t");
  expect(segs.size() == 1 && segs[0].filename() == "1700000000000001000.floxlog",
         "the segment is named after the clock's value");

  // A writer destroyed without close() is closed by its destructor.
  TempDir tmp3;
  {
    auto w = floxlog::TapeWriter::open((tmp3.path() / "d").string());
    for (int i = 0; i < 7; i++) w.append(trade(i, 1));
  }
  expect(count_events(tmp3.path() / "d", floxlog::ReadOptions().strict()) == 7, "destructor closes the tape");
  expect(floxlog::verify((tmp3.path() / "d").string()).passed(), "destructor-closed tape verifies");
}

void test_reader_moves() {
  TempDir tmp;
  const fs::path dir = tmp.path() / "t";
  {
    auto w = floxlog::TapeWriter::open(dir.string());
    for (int i = 0; i < 20; i++) w.append(trade(1000 + i, 1 + i % 2));
    w.close();
  }
  auto r = floxlog::TapeReader::open(dir.string());
  std::optional<floxlog::Event> e = r.next();
  expect(e && e->is_trade() && e->exchange_ts_ns() == 1000, "first event");
  floxlog::TapeReader r2(std::move(r));
  expect(!r.valid() && r2.valid(), "moved-from reader is empty");
  expect_error(FLOXLOG_NULL_POINTER, [&] { (void)r.next(); }, "next on a moved-from reader");
  expect_error(FLOXLOG_NULL_POINTER, [&] { (void)r.stats(); }, "stats of a moved-from reader");
  expect_error(FLOXLOG_NULL_POINTER, [&] { (void)r.begin(); }, "iterating a moved-from reader");
  floxlog::TapeReader r3;
  r3 = std::move(r2);
  size_t n = 0;
  int64_t last = 0;
  // Postfix increment: *it++ is the event before the increment.
  for (auto it = r3.begin(); it != r3.end();) {
    const int64_t ts = (*it++).exchange_ts_ns();
    expect(ts == 1001 + static_cast<int64_t>(n), "events continue where the moved reader stopped");
    last = ts;
    ++n;
  }
  expect(n == 19 && last == 1019, "19 more events");
  expect(r3.stats().events == 20, "stats count every event returned");
  const auto pos = r3.position();
  expect(pos.has_value() && pos->segment == 0 && pos->offset > 64, "position of the last event");
  expect(fs::path(r3.segment_path(pos->segment)).parent_path() == dir, "its segment is in the tape");
  // Move-assigning over a live reader frees it.
  auto r4 = floxlog::TapeReader::open(dir.string());
  expect(!r4.position().has_value(), "no position before the first event");
  r4 = std::move(r3);
  expect(!r4.next().has_value(), "the taken-over reader is at its end");
}

void test_errors() {
  TempDir tmp;
  const fs::path dir = tmp.path() / "t";
  auto w = floxlog::TapeWriter::open(dir.string());
  const floxlog::Error locked = expect_error(
      FLOXLOG_TAPE_LOCKED, [&] { floxlog::TapeWriter::open(dir.string()); }, "second writer on the directory");
  expect(locked.has_file() && fs::path(locked.file()).filename() == ".floxlog.lock",
         "the lock error names the lock file (got '" + locked.file() + "')");
  expect(std::string(locked.what()).find(locked.code_name()) == 0, "what() starts with the code name");
  expect(!locked.message().empty(), "a message");
  // recover refuses a tape its writer holds (once it has a segment).
  w.append(trade(1, 1));
  w.flush();
  expect_error(FLOXLOG_TAPE_LOCKED, [&] { floxlog::recover(dir.string()); }, "recover of a live tape");

  // The batch stops at the bad event; what came before is written.
  std::vector<floxlog_event> batch;
  for (int i = 0; i < 4; i++) batch.push_back(floxlog::Event::of(trade(10 + i, 1)).raw());
  batch[2].kind = 42;
  try {
    w.append(batch);
    fail("a batch with a bad event was accepted");
  } catch (const floxlog::AppendError& e) {
    expect(e.code() == FLOXLOG_INVALID_INPUT, std::string("bad event: ") + e.what());
    expect(e.appended() == 2, "appended() counts the events before the bad one");
  }
  expect_error(FLOXLOG_INVALID_INPUT, [&] { w.append(floxlog::Event()); }, "appending an event of kind None");
  expect_error(FLOXLOG_INVALID_INPUT, [&] { w.set_metadata("{not json"); }, "metadata that is not JSON");
  expect_error(FLOXLOG_INVALID_INPUT, [&] { w.set_metadata("[1,2]"); }, "metadata that is not an object");
  w.close();
  expect(w.written_events() == 3, "three events written");
  expect(w.stats().events_appended == 3 && w.stats().events_durable == 3, "stats() after close");
  expect_error(FLOXLOG_FINISHED, [&] { w.append(trade(20, 1)); }, "append after close");
  expect_error(FLOXLOG_FINISHED, [&] { w.close(); }, "second close");
  // The directory holds a tape now.
  expect_error(FLOXLOG_INVALID_INPUT, [&] { floxlog::TapeWriter::open(dir.string()); }, "a writer over a tape");

  // Missing input: FLOXLOG_IO_ERROR naming it.
  const fs::path missing = tmp.path() / "no-such-tape";
  const floxlog::Error io =
      expect_error(FLOXLOG_IO_ERROR, [&] { floxlog::TapeReader::open(missing.string()); }, "missing path");
  expect(io.has_file() && io.file().find("no-such-tape") != std::string::npos, "the error names the path");
  expect_error(FLOXLOG_IO_ERROR, [&] { floxlog::inspect(missing.string()); }, "inspect of a missing path");
  expect_error(FLOXLOG_IO_ERROR, [&] { floxlog::verify(missing.string()); }, "verify of a missing path");
  expect_error(FLOXLOG_INVALID_INPUT,
               [&] { floxlog::TapeReader::open(dir.string(), floxlog::ReadOptions().symbol_name("NOPE")); },
               "an unknown symbol name");
  expect_error(FLOXLOG_INVALID_INPUT, [&] { floxlog::TapeReader::open(dir.string(), floxlog::ReadOptions().types(1)); },
               "a type mask with no type's bit");
  floxlog::TapeWriterConfig bad;
  bad.index_interval(0);
  expect_error(FLOXLOG_INVALID_INPUT, [&] { floxlog::TapeWriter::open((tmp.path() / "bad").string(), bad); },
               "index_interval 0");

  // Accessors of the wrong kind.
  const floxlog::Event t = floxlog::Event::of(trade(1, 1));
  expect_error(FLOXLOG_INVALID_INPUT, [&] { (void)t.book(); }, "book() of a trade");
  expect_error(FLOXLOG_INVALID_INPUT, [&] { (void)t.pool_state(); }, "pool_state() of a trade");
  expect_error(FLOXLOG_INVALID_INPUT, [&] { (void)floxlog::Event().trade(); }, "trade() of no event");
  expect(std::string(floxlog::result_name(FLOXLOG_CRC_MISMATCH)) == "crc_mismatch", "result_name");
}

void test_round_trip() {
  TempDir tmp;
  const fs::path dir = tmp.path() / "t";
  auto calls = std::make_shared<int>(0);
  floxlog::TapeWriterConfig cfg = counted_clock(calls);
  cfg.compression(FLOXLOG_COMPRESSION_LZ4).index_interval(10).durability(FLOXLOG_DURABILITY_FLUSH);
  auto w = floxlog::TapeWriter::open(dir.string(), cfg);
  w.set_metadata(R"({"exchange":"test","symbols":[{"symbol_id":1,"name":"BTCUSDT"},{"symbol_id":2,"name":"ETHUSDT"}]})");

  const std::vector<floxlog_level> bids = {{100, 1}, {99, 2}, {98, 3}};
  const std::vector<floxlog_level> asks = {{101, 4}};
  const std::vector<uint8_t> payload = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x41};
  floxlog_book bh{};
  bh.exchange_ts_ns = 2;
  bh.seq = 77;
  bh.symbol_id = 2;
  bh.header_type = 0;
  bh.instrument = 1;
  floxlog_option_quote q{};
  q.exchange_ts_ns = 4;
  q.iv_raw = -5;
  q.symbol_id = 1;
  floxlog_pool_state ph{};
  ph.exchange_ts_ns = 5;
  ph.symbol_id = 2;
  ph.sub_type = 3;
  ph.venue = 9;

  w.append(trade(1, 1));
  w.append_snapshot(floxlog::Book(bh, bids, asks));
  floxlog_book dh = bh;
  dh.exchange_ts_ns = 3;
  dh.header_type = 1;
  w.append_delta(floxlog::Book(dh, floxlog::Span<const floxlog_level>(), asks));
  w.append(q);
  w.append(floxlog::PoolState(ph, payload));
  std::vector<floxlog_trade> trades;
  for (int i = 0; i < 20; i++) trades.push_back(trade(6 + i, 1 + i % 2));
  expect(w.append(trades) == 20, "trade batch");
  // 25 events in LZ4 blocks of 10: flush writes the two full blocks only.
  w.flush();
  expect(w.written_events() == 20, "flush: events of full blocks written (" + std::to_string(w.written_events()) + ")");
  w.sync();
  expect(w.durable_events() == w.written_events(), "sync: durable = written");
  w.close();
  expect(w.written_events() == 25, "close writes the partial block");
  expect(w.durable_events() == 20, "durability flush: close fsyncs nothing, sync() made 20 durable (" +
                                       std::to_string(w.durable_events()) + ")");
  expect(*calls == 1, "clock called once for the one segment");

  auto r = floxlog::TapeReader::open(dir.string(), floxlog::ReadOptions().strict());
  std::vector<floxlog::EventKind> kinds;
  bool book_ok = false, delta_ok = false, quote_ok = false, pool_ok = false;
  for (const floxlog::Event& ev : r) {
    kinds.push_back(ev.kind());
    if (ev.kind() == floxlog::EventKind::BookSnapshot) {
      const floxlog::Book b = ev.book();
      book_ok = b.seq() == 77 && b.symbol_id() == 2 && b.bids().size() == 3 && b.asks().size() == 1 &&
                b.bids()[1].price_raw == 99 && b.bids().back().qty_raw == 3 && b.asks().front().price_raw == 101 &&
                b.header_type() == 0 && b.instrument() == 1;
      size_t n = 0;
      for (const floxlog_level& l : b.bids()) n += static_cast<size_t>(l.qty_raw);
      book_ok = book_ok && n == 6;
    } else if (ev.kind() == floxlog::EventKind::BookDelta) {
      delta_ok = ev.book().bids().empty() && ev.book().asks().size() == 1 && ev.book().header_type() == 1;
    } else if (ev.is_option_quote()) {
      quote_ok = ev.option_quote().iv_raw == -5 && ev.symbol_id() == 1;
    } else if (ev.is_pool_state()) {
      const floxlog::PoolState p = ev.pool_state();
      pool_ok = p.sub_type() == 3 && p.venue() == 9 && p.payload().size() == payload.size() &&
                std::equal(p.payload().begin(), p.payload().end(), payload.begin()) &&
                p.payload_view() == std::string_view("\xde\xad\xbe\xef\0A", 6);
    }
  }
  expect(kinds.size() == 25, "25 events back");
  expect(kinds[0] == floxlog::EventKind::Trade && kinds[1] == floxlog::EventKind::BookSnapshot &&
             kinds[2] == floxlog::EventKind::BookDelta && kinds[3] == floxlog::EventKind::OptionQuote &&
             kinds[4] == floxlog::EventKind::PoolState,
         "kinds in order");
  expect(book_ok, "snapshot fields and levels");
  expect(delta_ok, "delta levels");
  expect(quote_ok, "option quote fields");
  expect(pool_ok, "pool state payload");

  // Trades in batches, the other events through next(): the same 25.
  {
    auto b = floxlog::TapeReader::open(dir.string(), floxlog::ReadOptions().strict());
    std::vector<floxlog_trade> buf(8);
    size_t trades_read = 0, others = 0;
    int64_t last_ts = -1;
    bool in_order = true;
    for (;;) {
      const size_t n = b.next_trades(floxlog::Span<floxlog_trade>(buf.data(), buf.size()));
      for (size_t i = 0; i < n; i++) {
        in_order = in_order && buf[i].exchange_ts_ns > last_ts;
        last_ts = buf[i].exchange_ts_ns;
      }
      trades_read += n;
      if (n > 0) continue;
      floxlog::Event ev;
      if (!b.next(ev)) break;
      expect(ev.kind() != floxlog::EventKind::Trade, "next() after an empty trade batch is not a trade");
      in_order = in_order && ev.exchange_ts_ns() > last_ts;
      last_ts = ev.exchange_ts_ns();
      ++others;
    }
    expect(trades_read == 21 && others == 4 && in_order,
           "next_trades + next: 21 trades and 4 others in order (" + std::to_string(trades_read) + ", " +
               std::to_string(others) + ")");
  }

  // Names from metadata.json select symbols; with an id too, the union.
  expect(count_events(dir, floxlog::ReadOptions().symbol_name("btcusdt")) == 12, "symbol name filter (case-insensitive)");
  expect(count_events(dir, floxlog::ReadOptions().symbol_name("BTCUSDT").symbol(2)) == 25, "name + id union");
  expect(count_events(dir, floxlog::ReadOptions().type(floxlog::EventKind::BookSnapshot).type(
                               floxlog::EventKind::BookDelta)) == 2,
         "type filter");
  // seek and next() by value.
  auto s = floxlog::TapeReader::open(dir.string());
  s.seek(20);
  std::optional<floxlog::Event> e = s.next();
  expect(e && e->exchange_ts_ns() == 20, "seek(20) starts at ts 20");
  floxlog::Event out;
  size_t rest = 0;
  while (s.next(out)) ++rest;
  expect(rest == 5, "seek(20): 6 events in all");

  // Rotation: the clock is called once per segment.
  TempDir tmp2;
  auto calls2 = std::make_shared<int>(0);
  floxlog::TapeWriterConfig small = counted_clock(calls2);
  small.max_segment_bytes(64 + 60 * 10);  // ten trade frames per segment
  auto w2 = floxlog::TapeWriter::open((tmp2.path() / "r").string(), small);
  for (int i = 0; i < 35; i++) w2.append(trade(i, 1));
  w2.close();
  const auto segs = segment_files(tmp2.path() / "r");
  expect(segs.size() == 4, "35 trades in segments of 10: 4 segments (" + std::to_string(segs.size()) + ")");
  expect(*calls2 == 4, "clock called once per segment (" + std::to_string(*calls2) + ")");
  expect(count_events(tmp2.path() / "r", floxlog::ReadOptions().strict()) == 35, "rotated tape reads back");
}

void copy_segment(const fs::path& from, const fs::path& to, uintmax_t cut = 0) {
  fs::copy_file(from, to);
  if (cut) fs::resize_file(to, fs::file_size(to) - cut);
}

void test_ops() {
  TempDir tmp;
  const fs::path live = tmp.path() / "live";
  const fs::path copied = tmp.path() / "copied";
  const fs::path cut = tmp.path() / "cut";
  fs::create_directories(copied);
  fs::create_directories(cut);
  floxlog::TapeWriterConfig cfg;
  cfg.durability(FLOXLOG_DURABILITY_FLUSH);
  auto w = floxlog::TapeWriter::open(live.string(), cfg);
  for (int i = 0; i < 50; i++) w.append(trade(1000 + i, 1 + i % 3));
  w.flush();
  expect(w.written_events() == 50, "flush hands every event to the OS");
  // The segment as a killed writer leaves it: a placeholder header and the
  // frames written so far; and once more, cut inside the last frame.
  const auto segs = segment_files(live);
  expect(segs.size() == 1, "one live segment");
  copy_segment(segs[0], copied / segs[0].filename());
  copy_segment(segs[0], cut / segs[0].filename(), 7);

  // The live copy: readable by default (a writer may still be running),
  // but its header does not say what it holds.
  expect(count_events(copied) == 50, "a live segment's events are readable");
  // The cut copy: a torn tail, tolerated by default, an error when strict.
  {
    auto r = floxlog::TapeReader::open(cut.string());
    expect(read_all(r).size() == 49 && r.stats().torn_tails == 1, "torn tail tolerated by default");
    auto s = floxlog::TapeReader::open(cut.string(), floxlog::ReadOptions().strict());
    size_t n = 0;
    try {
      for (const floxlog::Event& ev : s) {
        (void)ev;
        ++n;
      }
      fail("strict reader accepted a torn tail");
    } catch (const floxlog::Error& e) {
      expect(e.code() == FLOXLOG_TRUNCATED && n == 49, std::string("strict: 49 events then truncated; got ") +
                                                            std::to_string(n) + " then " + e.what());
      expect(e.has_file() && fs::path(e.file()).filename() == segs[0].filename(), "the error names the segment");
      expect(e.has_offset() && e.offset() == 64 + 49 * 60, "at the torn frame");
    }
  }
  std::vector<std::string> finding_kinds;
  const floxlog::VerifyResult before = floxlog::verify(cut.string(), floxlog::VerifyOptions(),
                                                       [&](const floxlog::Finding& f) {
                                                         finding_kinds.emplace_back(f.kind());
                                                         expect(!f.text().empty(), "finding text");
                                                       });
  expect(!before.passed() && before.failure && before.failure->code() == FLOXLOG_VERIFY_FAILED,
         "verify fails on a torn segment");
  expect(!finding_kinds.empty() && before.summary.errors + before.summary.warnings > 0, "verify reports findings");

  // A callback's exception comes out of verify, after the call.
  try {
    floxlog::verify(cut.string(), floxlog::VerifyOptions(), [](const floxlog::Finding&) {
      throw std::logic_error("from the callback");
    });
    fail("the callback's exception was lost");
  } catch (const std::logic_error& e) {
    expect(std::string(e.what()) == "from the callback", "the callback's exception");
  }

  // Dry run, then the repair.
  std::vector<std::string> actions;
  floxlog::RecoverOptions dry{};
  dry.dry_run = 1;
  const floxlog::RecoverResult d = floxlog::recover(copied.string(), dry, [&](const floxlog::RecoverReport& r) {
    actions.emplace_back(r.action());
  });
  expect(d.ok() && d.summary.would_rewrite == 1 && actions == std::vector<std::string>{"would_rewrite"},
         "dry run: would_rewrite");
  for (const fs::path& dir : {copied, cut}) {
    const bool is_cut = dir == cut;
    actions.clear();
    uint64_t kept = 0;
    bool dropped = false;
    std::string reason, backup, report_json;
    const floxlog::RecoverResult rr = floxlog::recover(dir.string(), floxlog::RecoverOptions(),
                                                       [&](const floxlog::RecoverReport& r) {
                                                         actions.emplace_back(r.action());
                                                         if (r.action() != "rewritten") return;
                                                         kept = r.events_kept();
                                                         dropped = r.has_dropped();
                                                         reason = std::string(r.reason());
                                                         backup = std::string(r.backup());
                                                         report_json = std::string(r.json());
                                                         expect(!r.error().has_value(), "no error");
                                                       });
    const std::string what = dir.filename().string() + ": ";
    expect(rr.ok(), what + "recover succeeded");
    expect(std::find(actions.begin(), actions.end(), "rewritten") != actions.end(), what + "reported rewritten");
    expect(rr.summary.rewritten == 1 && rr.summary.events_kept == (is_cut ? 49u : 50u), what + "summary");
    expect(kept == (is_cut ? 49u : 50u), what + "events kept " + std::to_string(kept));
    // The reason starts with the corpus kind (the C header says it is
    // only the kind; the library adds ": <what failed>").
    if (is_cut)
      expect(dropped && reason.rfind("truncated", 0) == 0, what + "torn tail dropped (reason '" + reason + "')");
    // A backup only when bytes past the header changed: the torn tail was
    // dropped; the copied live segment only had its header rewritten.
    if (is_cut)
      expect(!backup.empty() && fs::exists(backup), what + "the original is kept");
    else
      expect(backup.empty(), what + "no backup of an unchanged body");
    const json rj = json::parse(report_json);
    expect(rj.is_object() && rj.at("events_kept").get<uint64_t>() == kept, what + "report JSON");
    expect(floxlog::verify(dir.string()).passed(), what + "verifies after recover");
    expect(count_events(dir, floxlog::ReadOptions().strict()) == kept, what + "reads back strictly");
    actions.clear();
    const floxlog::RecoverResult again = floxlog::recover(dir.string(), floxlog::RecoverOptions(),
                                                          [&](const floxlog::RecoverReport& r) {
                                                            actions.emplace_back(r.action());
                                                          });
    expect(again.ok() && again.summary.already_valid == 1 && again.summary.rewritten == 0,
           what + "a second recover finds it valid");
  }

  w.close();
  const floxlog::VerifyResult ok = floxlog::verify(live.string());
  expect(ok.passed() && !ok.failure && ok.summary.events == 50 && ok.summary.errors == 0, "closed tape verifies");

  // inspect: totals, JSON, symbols.
  const floxlog::Inspection insp = floxlog::inspect(live.string());
  expect(insp.summary.events == 50 && insp.summary.segments == 1 && !insp.summary.failed, "inspect totals");
  expect(insp.summary.events_by_type[FLOXLOG_EVENT_TRADE] == 50, "inspect: 50 trades");
  expect(insp.summary.has_time_range && insp.summary.min_ts_ns == 1000 && insp.summary.max_ts_ns == 1049,
         "inspect time range");
  expect(insp.symbols == std::vector<uint32_t>({1, 2, 3}), "inspect symbols");
  const json j = json::parse(insp.json);
  expect(j.at("total").at("events").get<uint64_t>() == insp.summary.events, "inspect JSON total.events");
  expect(j.at("segments").size() == 1, "inspect JSON segments");
  floxlog::InspectOptions quick{};
  quick.quick = 1;
  const floxlog::Inspection q = floxlog::inspect(live.string(), quick);
  expect(q.summary.quick && q.symbols.empty() && json::parse(q.json).at("total").at("events").is_null(),
         "quick inspection");
}


floxlog_book book(int64_t ts, uint32_t sym, const floxlog_level* bids, size_t nb, const floxlog_level* asks,
                  size_t na, uint8_t header_type) {
  floxlog_book b{};
  b.exchange_ts_ns = ts;
  b.recv_ts_ns = ts;
  b.symbol_id = sym;
  b.header_type = header_type;
  b.bids = bids;
  b.bid_count = nb;
  b.asks = asks;
  b.ask_count = na;
  return b;
}

bool levels(const std::vector<floxlog::Level>& got, std::initializer_list<std::pair<int64_t, int64_t>> want) {
  if (got.size() != want.size()) return false;
  size_t i = 0;
  for (const auto& w : want) {
    if (got[i].price_raw != w.first || got[i].qty_raw != w.second) return false;
    ++i;
  }
  return true;
}

// book_at() and diff(): a small tape of two symbols' books and trades, a
// copy with one quantity changed, a copy cut short, a damaged copy.
void test_replay_tools() {
  TempDir tmp;
  const auto write = [&](const fs::path& dir, int64_t odd_qty) {
    auto w = floxlog::TapeWriter::open(dir.string(), counted_clock(std::make_shared<int>(0)));
    const floxlog_level sb[] = {{100, 1}, {98, 2}}, sa[] = {{101, 3}, {103, 4}};
    w.append_snapshot(book(100, 7, sb, 2, sa, 2, 0));
    w.append_snapshot(book(110, 8, sa, 2, sb, 0, 0));
    w.append(trade(150, 7));
    const floxlog_level db[] = {{99, odd_qty}, {100, 5}}, da[] = {{101, 0}};
    w.append_delta(book(200, 7, db, 2, da, 1, 1));
    w.close();
  };
  const fs::path a = tmp.path() / "a", same = tmp.path() / "same", other = tmp.path() / "other";
  write(a, 7);
  write(same, 7);
  write(other, 8);

  floxlog::BookAt b = floxlog::book_at(a.string(), 7, 150);
  expect(levels(b.bids, {{100, 1}, {98, 2}}) && levels(b.asks, {{101, 3}, {103, 4}}), "book at 150");
  b = floxlog::book_at(a.string(), 7, 200, 2);
  expect(levels(b.bids, {{100, 5}, {99, 7}}) && levels(b.asks, {{103, 4}}), "book at 200, depth 2");
  b = floxlog::book_at(a.string(), 8, 99);
  expect(b.bids.empty() && b.asks.empty(), "no book before the symbol's first event");
  expect_error(FLOXLOG_IO_ERROR, [&] { (void)floxlog::book_at((tmp.path() / "none").string(), 7, 0); },
               "book_at on a missing tape");

  floxlog::DiffResult d = floxlog::diff(a.string(), same.string());
  expect(d.identical() && !d.different() && d.raw.equal == 4 && d.raw.counts_a.by_type[1] == 1,
         "a tape and its twin are identical");
  d = floxlog::diff(a.string(), other.string());
  expect(d.different() && !d.identical() && d.raw.equal == 3 && d.fields().find("qty_raw") != std::string::npos,
         "the changed delta is the first difference: " + d.fields());
  floxlog::DiffOptions bytes{};
  bytes.bytes = 1;
  d = floxlog::diff(a.string(), same.string(), bytes);
  expect(d.identical(), "the twins are byte-identical too");

  // A byte changed in the first frame's payload: damage, not a difference.
  const fs::path bad = tmp.path() / "bad";
  fs::create_directories(bad);
  const auto segs = segment_files(a);
  copy_segment(segs[0], bad / segs[0].filename());
  {
    std::fstream f(bad / segs[0].filename(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(64 + 20);
    const int byte = f.get();
    f.seekp(64 + 20);
    f.put(static_cast<char>(byte ^ 0x5a));
  }
  d = floxlog::diff(a.string(), bad.string());
  expect(d.damage.has_value() && !d.identical() && d.raw.damaged == 1, "damage is reported");
  expect(d.damage && d.damage->has_offset() && d.damage->has_file(), "damage names file and offset");
  expect_error(FLOXLOG_IO_ERROR, [&] { (void)floxlog::diff(a.string(), (tmp.path() / "none").string()); },
               "diff against a missing tape");
}
}  // namespace

// TapeWriterConfig::resume: a second and third writer continue the tape
// after its last segment; without resume the directory is refused.
void test_resume() {
  TempDir tmp;
  const fs::path dir = tmp.path() / "resumed";
  for (int run = 0; run < 3; run++) {
    floxlog::TapeWriterConfig cfg;
    cfg.durability(FLOXLOG_DURABILITY_NONE).max_segment_bytes(16 << 10).resume(true);
    floxlog::TapeWriter w(dir.string(), cfg);
    for (int i = 0; i < 1000; i++) w.append(trade(1000 * run + i, 1));
    w.close();
  }
  expect(count_events(dir) == 3000, "three runs, one tape");
  floxlog::TapeWriterConfig plain;
  expect_error(FLOXLOG_INVALID_INPUT, [&] { floxlog::TapeWriter w(dir.string(), plain); },
               "a tape is refused without resume");
}

// Appenders: three feed threads and the writer's own appends; close()
// refused while an appender lives; encoded frames.
void test_appenders() {
  TempDir tmp;
  for (int journal = 0; journal < 2; journal++) {
    const fs::path dir = tmp.path() / ("feeds-" + std::to_string(journal));
    floxlog::TapeWriterConfig cfg;
    cfg.durability(FLOXLOG_DURABILITY_NONE).max_segment_bytes(32 << 10);
    cfg.c.journal = static_cast<uint8_t>(journal);
    floxlog::TapeWriter w(dir.string(), cfg);
    std::vector<std::thread> feeds;
    for (uint32_t sym = 1; sym <= 3; sym++) {
      feeds.emplace_back([a = w.appender(), sym]() mutable {
        for (int i = 0; i < 2000; i++) a.append(trade(i, sym));
      });
    }
    for (int i = 0; i < 2000; i++) w.append(trade(i, 4));
    for (auto& t : feeds) t.join();
    w.close();
    std::map<uint32_t, int64_t> next;
    auto r = floxlog::TapeReader::open(dir.string(), floxlog::ReadOptions().file_order());
    for (const auto& ev : r) {
      const floxlog_trade& t = ev.trade();
      expect(t.exchange_ts_ns == next[t.symbol_id]++, "each feed's trades in its order");
    }
    expect(next.size() == 4 && next[1] == 2000 && next[4] == 2000, "every feed's trades");

    const fs::path held = tmp.path() / ("held-" + std::to_string(journal));
    auto w2 = std::make_unique<floxlog::TapeWriter>(held.string(), cfg);
    floxlog::Appender a = w2->appender();
    expect_error(FLOXLOG_BUSY, [&] { w2->close(); }, "close with an appender open");
    a.append(trade(0, 1));
    w2.reset();  // the appender keeps the tape open
    a.append(trade(1, 1));
    std::vector<uint8_t> frames(60 * 3);
    for (int i = 0; i < 3; i++) {
      floxlog_event ev{};
      ev.kind = FLOXLOG_EVENT_TRADE;
      ev.data.trade = trade(2 + i, 1);
      size_t n = 0;
      floxlog_error e;
      expect(floxlog_frame_encode(&ev, FLOXLOG_PROFILE_REFERENCE, frames.data() + 60 * i, 60, &n, &e) ==
                 FLOXLOG_OK,
             "frame encoded");
    }
    frames[60 * 2 + 20] ^= 1;
    try {
      a.append_frames(floxlog::Span<const uint8_t>(frames.data(), frames.size()));
      fail("a bad frame appended");
    } catch (const floxlog::AppendError& e) {
      expect(e.code() == FLOXLOG_CRC_MISMATCH && e.appended() == 2 && e.offset() == 120,
             std::string("the bad frame's offset: ") + e.what());
    }
    a = floxlog::Appender();  // the last one: the tape is closed
    expect(count_events(held) == 4, "two appends and two frames");
  }
}

int main() {
  Runner run;
  run.run("appenders", test_appenders);
  run.run("resume", test_resume);
  run.run("writer moves", test_writer_moves);
  run.run("reader moves", test_reader_moves);
  run.run("errors", test_errors);
  run.run("round trip", test_round_trip);
  run.run("verify/recover/inspect", test_ops);
  run.run("book_at/diff", test_replay_tools);
  return run.report("test_hpp");
}
