// c-tests/readme_feeds.cpp: one tape, several feed threads (an Appender each).
#include <floxlog.hpp>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "feeds-tape-cpp";
  try {
    floxlog::TapeWriter w(dir, floxlog::TapeWriterConfig().journal(true));
    std::vector<std::thread> feeds;
    for (std::uint32_t symbol = 1; symbol <= 3; symbol++) {
      // Each thread owns its appender; it is freed when the thread ends.
      feeds.emplace_back([a = w.appender(), symbol]() mutable {
        for (int i = 0; i < 1000; i++) {
          floxlog_trade t{};
          t.exchange_ts_ns = 1700000000000000000 + i * 1000;
          t.price_raw = 10125000000;
          t.qty_raw = 50000000;
          t.symbol_id = symbol;
          try {
            a.append(t);
          } catch (const floxlog::Error& e) {
            std::fprintf(stderr, "feed %u: %s\n", symbol, e.what());
            return;
          }
        }
      });
    }
    for (auto& f : feeds) f.join();
    w.close();  // refused (FLOXLOG_BUSY) while an appender lives
    std::printf("recorded %llu events from 3 feed threads\n",
                static_cast<unsigned long long>(w.written_events()));
    return w.written_events() == 3000 ? 0 : 1;
  } catch (const floxlog::Error& e) {
    std::fprintf(stderr, "floxlog: %s\n", e.what());
    return 1;
  }
}
