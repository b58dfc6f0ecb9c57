// test_hpp_tail: floxlog::Tail (include/floxlog.hpp) on a tape written by
// floxlog::TapeWriter in the same process (FLOXLOG_DURABILITY_FLUSH, small
// segments so that it rotates):
//   - range-for with a timeout: the events so far, then status() Timeout
//     while the writer runs; more after more appends; End after close;
//   - next_trades, and a tailer resumed from position();
//   - a writer whose process exits without closing (a forked child):
//     WriterGone once the writer wait (set to 100 ms) is over, with no
//     time limit;
//   - a missing tape throws floxlog::Error (FLOXLOG_IO_ERROR).
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corpus_util.hpp"

using namespace corpus_test;
using std::chrono::nanoseconds;

namespace {

void expect(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

floxlog_trade trade(uint64_t i) {
  floxlog_trade t{};
  t.exchange_ts_ns = 1700000000000000000 + static_cast<int64_t>(i) * 1000;
  t.recv_ts_ns = t.exchange_ts_ns + 5;
  t.price_raw = 10125000000 + static_cast<int64_t>(i % 100);
  t.qty_raw = 50000000;
  t.trade_id = i;
  t.exchange_id = 3;
  return t;
}

floxlog::TapeWriterConfig live_config() {
  floxlog::TapeWriterConfig cfg;
  cfg.durability(FLOXLOG_DURABILITY_FLUSH).max_segment_bytes(4096);
  return cfg;
}

// Reads with a range-for until it stops; checks ids continue from `next`.
uint64_t drain(floxlog::Tail& t, uint64_t next) {
  for (const floxlog::Event& ev : t.events(nanoseconds(0))) {
    expect(ev.is_trade() && ev.trade().trade_id == next, "event " + std::to_string(next) + " in order");
    ++next;
  }
  return next;
}

void test_follow() {
  TempDir d;
  const std::string dir = (d.path() / "tape").string();
  auto w = floxlog::TapeWriter::open(dir, live_config());
  for (uint64_t i = 0; i < 500; ++i) w.append(trade(i));
  auto t = floxlog::Tail::open(dir);
  uint64_t next = drain(t, 0);
  expect(next == 500, "the 500 events so far, got " + std::to_string(next));
  expect(t.status() == floxlog::TailStatus::Timeout, "Timeout while the writer runs");
  for (uint64_t i = 500; i < 800; ++i) w.append(trade(i));
  next = drain(t, next);
  expect(next == 800, "then the next 300");
  w.close();
  next = drain(t, next);
  expect(next == 800 && t.status() == floxlog::TailStatus::End, "End after close");

  // Batches, and a resumed tailer.
  auto b = floxlog::Tail::open(dir);
  std::vector<floxlog_trade> buf(64);
  std::size_t n = 0;
  expect(b.next_trades(floxlog::Span<floxlog_trade>(buf.data(), buf.size()), n, nanoseconds(0)) ==
             floxlog::TailStatus::Event,
         "a batch");
  expect(n == 64 && buf[63].trade_id == 63, "64 trades in order");
  auto p = b.position();
  expect(p.size() > 12 && p.size() <= FLOXLOG_TAIL_POSITION_MAX, "a position naming a segment");
  auto r = floxlog::Tail::open(dir, floxlog::TailOptions().from(p).busy_spin());
  floxlog::Event ev;
  expect(r.next(ev, nanoseconds(0)) == floxlog::TailStatus::Event && ev.trade().trade_id == 64,
         "resumed after the 64th");
  auto e = floxlog::Tail::open(dir, floxlog::TailOptions().from_end());
  expect(e.next(ev) == floxlog::TailStatus::End, "from the end of a closed tape: End at once");
}

void test_writer_gone() {
  TempDir d;
  const std::string dir = (d.path() / "tape").string();
  pid_t pid = fork();
  if (pid == 0) {
    // A writer whose process ends without closing its tape.
    auto w = floxlog::TapeWriter::open(dir, live_config());
    for (uint64_t i = 0; i < 100; ++i) w.append(trade(i));
    _exit(0);
  }
  int status = 0;
  expect(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer ran");
  auto t = floxlog::Tail::open(dir, floxlog::TailOptions().writer_wait(std::chrono::milliseconds(100)));
  uint64_t next = 0;
  for (const floxlog::Event& ev : t.events()) {
    expect(ev.trade().trade_id == next, "in order");
    ++next;
  }
  expect(next == 100, "every event written");
  expect(t.status() == floxlog::TailStatus::WriterGone, "WriterGone, not a hang");
  bool threw = false;
  try {
    floxlog::Tail::open((d.path() / "missing").string());
  } catch (const floxlog::Error& e) {
    threw = e.code() == FLOXLOG_IO_ERROR;
  }
  expect(threw, "a missing tape throws FLOXLOG_IO_ERROR");
}

}  // namespace

int main() {
  alarm(120);  // a hang fails
  Runner run;
  run.run("follow", test_follow);
  run.run("writer gone", test_writer_gone);
  return run.report("test_hpp_tail");
}
