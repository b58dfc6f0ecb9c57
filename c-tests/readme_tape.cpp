// c-tests/readme_tape.cpp: the same from C++17, with RAII and exceptions.
#include <floxlog.hpp>
#include <iostream>

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "demo-tape-cpp";
  try {
    auto writer = floxlog::TapeWriter::open(
        dir, floxlog::TapeWriterConfig().compression(FLOXLOG_COMPRESSION_LZ4));
    for (int i = 0; i < 1000; i++) {
      floxlog_trade t{};
      t.exchange_ts_ns = 1700000000000000000 + i * 1000;
      t.price_raw = 10125000000;  // 101.25, fixed-point 1e8
      t.qty_raw = 50000000;       // 0.5
      t.symbol_id = 1 + i % 3;
      writer.append(t);
    }
    writer.close();  // final headers, index, manifest

    long trades = 0;
    for (const floxlog::Event& ev : floxlog::TapeReader::open(dir)) {  // merged by time
      if (ev.kind() == floxlog::EventKind::Trade && ev.trade().symbol_id == 2) trades++;
    }
    std::cout << "replayed " << trades << " trades of symbol 2\n";
    return trades == 333 ? 0 : 1;
  } catch (const floxlog::Error& e) {  // code, file, byte offset, message
    std::cerr << "floxlog: " << e.what() << "\n";
    return 1;
  }
}
