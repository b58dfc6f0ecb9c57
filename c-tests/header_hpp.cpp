// floxlog.hpp on its own, compile-only: built with the project's C++
// compiler (in floxlog_header_check) and, by the hpp_clang test, with
// clang++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -pedantic. Every
// template and overload of the wrapper is instantiated here, so that a
// warning anywhere in it fails the build.
#include "floxlog.hpp"

#include <array>
#include <string>
#include <type_traits>
#include <vector>

static_assert(std::is_nothrow_move_constructible<floxlog::TapeWriter>::value, "TapeWriter moves");
static_assert(std::is_nothrow_move_constructible<floxlog::TapeReader>::value, "TapeReader moves");
static_assert(!std::is_copy_constructible<floxlog::TapeWriter>::value, "TapeWriter is move-only");
static_assert(!std::is_copy_constructible<floxlog::TapeReader>::value, "TapeReader is move-only");
static_assert(std::is_convertible<floxlog::Span<int>, floxlog::Span<const int>>::value, "Span<T> -> Span<const T>");
static_assert(!std::is_convertible<floxlog::Span<const int>, floxlog::Span<int>>::value, "no const removal");
static_assert(std::is_convertible<std::vector<int>&, floxlog::Span<int>>::value, "vector -> Span");
static_assert(std::is_convertible<std::vector<int>, floxlog::Span<const int>>::value, "temporary -> const Span");
static_assert(!std::is_convertible<std::vector<int>, floxlog::Span<int>>::value, "no Span<T> of a temporary");
static_assert(!std::is_convertible<const std::vector<int>&, floxlog::Span<int>>::value, "no const removal");
static_assert(!std::is_convertible<std::vector<long>&, floxlog::Span<int>>::value, "no element conversion");

int floxlog_header_hpp_probe(bool run);

// Never run with `run` true: it only has to compile.
int floxlog_header_hpp_probe(bool run) {
  if (!run) return 0;
  floxlog::TapeWriterConfig cfg;
  cfg.compression(FLOXLOG_COMPRESSION_LZ4)
      .index_interval(100)
      .create_index(true)
      .exchange_id(1)
      .profile(FLOXLOG_PROFILE_REFERENCE)
      .layout(FLOXLOG_LAYOUT_FLOX)
      .durability(FLOXLOG_DURABILITY_SYNC_EVERY_N)
      .sync_every_n(10)
      .write_manifest(true)
      .max_segment_bytes(1 << 20)
      .rotate_every_ns(0)
      .resume(false)
      .with_clock([] { return std::int64_t{1}; });
  floxlog::TapeWriter w = floxlog::TapeWriter::open("t", cfg);
  floxlog::TapeWriter w2(std::move(w));
  w = std::move(w2);

  floxlog_trade t{};
  floxlog_book b{};
  floxlog_option_quote q{};
  floxlog_pool_state p{};
  const std::array<floxlog_level, 2> levels{};
  const std::string payload = "abc";
  w.append(t);
  w.append_snapshot(b);
  w.append_delta(floxlog::Book(b, levels, floxlog::Span<const floxlog_level>()));
  w.append(q);
  w.append(p);
  w.append(floxlog::PoolState(p, floxlog::Span<const std::uint8_t>(
                                     reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size())));
  w.append(floxlog::Event::of(t));
  w.append(floxlog::Event::snapshot(b).raw());
  const floxlog_event events[2] = {floxlog::Event::delta(b).raw(), floxlog::Event::of(q).raw()};
  std::size_t n = w.append(events);
  n += w.append(std::vector<floxlog_trade>(3));
  std::vector<floxlog_event> ev(2);
  n += w.append(ev);
  w.set_metadata("{}");
  w.flush();
  w.sync();
  n += static_cast<std::size_t>(w.written_events() + w.durable_events());
  w.close();

  floxlog::ReadOptions o;
  o.time_order().file_order().from(0).to(10).type(floxlog::EventKind::Trade).types(0).symbol(1).symbol_name("X");
  o.strict().verify_crc(true).skip_unknown_types().ignore_manifest().reorder_bytes(1 << 20);
  floxlog::TapeReader r = floxlog::TapeReader::open("t", o);
  floxlog::TapeReader r2 = floxlog::TapeReader::open(std::vector<std::string>{"a", "b"});
  r2 = std::move(r);
  for (const floxlog::Event& e : r2) {
    n += static_cast<std::size_t>(e.exchange_ts_ns() + e.recv_ts_ns()) + e.symbol_id() + e.exchange_id();
    n += std::string(e.kind_name()).size() + (e.is_trade() ? e.trade().side : 0u);
    if (e.is_book()) {
      const floxlog::Book bk = e.book();
      for (const floxlog_level& l : bk.bids()) n += static_cast<std::size_t>(l.qty_raw);
      n += bk.asks().size() + static_cast<std::size_t>(bk.seq()) + bk.header_type();
    }
    if (e.is_pool_state()) n += e.pool_state().payload_view().size() + e.pool_state().payload().size();
    if (e.is_option_quote()) n += static_cast<std::size_t>(e.option_quote().iv_raw);
  }
  auto it = r2.begin();
  const floxlog::Event first = *it++;
  n += static_cast<std::size_t>(it->exchange_ts_ns() + first.exchange_ts_ns());
  std::optional<floxlog::Event> next = r2.next();
  floxlog::Event e;
  if (r2.next(e) && next) n += 1;
  r2.seek(5);
  const floxlog::ReaderStats s = r2.stats();
  n += static_cast<std::size_t>(s.events);

  const floxlog::VerifyResult v = floxlog::verify("t", floxlog::VerifyOptions(), [&](const floxlog::Finding& f) {
    n += f.kind().size() + f.file().size() + f.message().size() + f.hint().size() + f.text().size() +
         f.severity() + static_cast<std::size_t>(f.offset()) + (f.has_offset() ? 1u : 0u) + (f.has_file() ? 1u : 0u);
  });
  n += v.passed() ? 1u : 0u;
  const floxlog::RecoverResult rr = floxlog::recover("t", floxlog::RecoverOptions(), [&](const floxlog::RecoverReport& x) {
    n += x.action().size() + x.file().size() + x.reason().size() + x.backup().size() + x.json().size() +
         static_cast<std::size_t>(x.events_kept() + x.dropped_at() + x.dropped_bytes() + x.skipped_ranges()) +
         x.header_claimed() + (x.has_dropped() ? 1u : 0u) + (x.error() ? 1u : 0u);
  });
  n += rr.ok() ? 1u : 0u;
  const floxlog::Inspection i = floxlog::inspect("t");
  n += i.json.size() + i.symbols.size() + static_cast<std::size_t>(i.summary.events);

  try {
    w.close();
  } catch (const floxlog::AppendError& ae) {
    n += ae.appended();
  } catch (const floxlog::Error& err) {
    n += err.file().size() + err.message().size() + static_cast<std::size_t>(err.offset()) + err.code() +
         std::string(err.code_name()).size() + (err.has_offset() ? 1u : 0u) + (err.has_file() ? 1u : 0u) +
         (err.truncated() ? 1u : 0u);
  }
  n += std::string(floxlog::version()).size() + floxlog::format_version() + (floxlog::lz4_supported() ? 1u : 0u) +
       std::string(floxlog::result_name(FLOXLOG_END)).size() + floxlog::type_bit(floxlog::EventKind::PoolState);
  return static_cast<int>(n);
}
