/**
 * @file floxlog.hpp
 * @brief Header-only C++17 wrapper over the floxlog C ABI (floxlog.h).
 *
 * The tape level first: floxlog::TapeWriter records a tape directory,
 * floxlog::TapeReader replays one (merged by time or in file order,
 * filtered), and floxlog::verify, floxlog::recover and floxlog::inspect
 * check, repair and summarise one, on the same library code as the
 * `floxlog` CLI.
 *
 * Conventions:
 * - Failures throw floxlog::Error (a std::runtime_error) carrying the C
 *   result code, its stable name (`"crc_mismatch"`, `"tape_locked"`...),
 *   the file concerned and the byte offset in it.
 * - Handles are RAII and move-only. A moved-from (or default-constructed)
 *   handle is empty: `valid()` is false, and every call on it throws
 *   floxlog::Error with code FLOXLOG_NULL_POINTER.
 * - Destructors never throw: they release the C handle, and a tape writer
 *   that was not closed is closed then with its errors ignored. Call
 *   TapeWriter::close() to see them.
 * - Events read are views: what they point at (book levels, pool state
 *   payloads) belongs to the reader and stays valid until its next call.
 * - A handle is used from one thread at a time (it may move between
 *   threads), as in the C API; several threads append to one tape through
 *   an Appender each (TapeWriter::appender()).
 * - Link with the floxlog library (CMake target floxlog::floxlog or
 *   floxlog::floxlog_shared, or `pkg-config --libs floxlog`).
 *
 * @code
 *   floxlog::TapeWriterConfig cfg;
 *   cfg.compression(FLOXLOG_COMPRESSION_LZ4);
 *   auto w = floxlog::TapeWriter::open("demo-tape", cfg);
 *   floxlog_trade t{};
 *   t.exchange_ts_ns = 1700000000000000000;
 *   w.append(t);
 *   w.close();
 *
 *   for (const floxlog::Event& ev : floxlog::TapeReader::open("demo-tape"))
 *     if (ev.kind() == floxlog::EventKind::Trade) use(ev.trade().price_raw);
 * @endcode
 */
#ifndef FLOXLOG_HPP
#define FLOXLOG_HPP

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "floxlog.h"

/** @brief The floxlog C++ API. */
namespace floxlog {

// ---------------------------------------------------------------------------
// Span

/** @cond detail */
template <typename T>
class Span;

namespace detail {

template <typename T>
struct is_span : std::false_type {};
template <typename T>
struct is_span<Span<T>> : std::true_type {};

template <typename T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename C, typename = void>
struct container_element {};
template <typename C>
struct container_element<C, std::void_t<decltype(std::declval<C&>().data()),
                                        decltype(std::declval<C&>().size())>> {
  using type = std::remove_pointer_t<decltype(std::declval<C&>().data())>;
};

// A contiguous container (data() + size()) a Span<T> may view: its
// elements convert to T like arrays do, and a temporary container is only
// accepted for a Span of const elements.
template <typename C, typename T, typename = void>
struct spannable : std::false_type {};
template <typename C, typename T>
struct spannable<C, T, std::void_t<typename container_element<std::remove_reference_t<C>>::type>>
    : std::bool_constant<
          !is_span<remove_cvref_t<C>>::value && !std::is_array<remove_cvref_t<C>>::value &&
          (std::is_lvalue_reference<C>::value || std::is_const<T>::value) &&
          std::is_convertible<typename container_element<std::remove_reference_t<C>>::type (*)[],
                              T (*)[]>::value> {};

}  // namespace detail
/** @endcond */

/**
 * @brief A view of `size()` contiguous `T` (std::span is C++20).
 *
 * Does not own what it points at. Built from a pointer and a count, a C
 * array, or any contiguous container with `data()` and `size()`
 * (std::vector, std::array, std::string...; a temporary container only
 * for a `Span<const T>`, and only for the duration of the call it is
 * passed to).
 */
template <typename T>
class Span {
 public:
  using element_type = T;                       ///< The element type.
  using value_type = std::remove_cv_t<T>;       ///< The element type, unqualified.
  using size_type = std::size_t;                ///< Sizes.
  using pointer = T*;                           ///< Pointer to an element.
  using reference = T&;                         ///< Reference to an element.
  using iterator = T*;                          ///< Iterator (a pointer).

  /** @brief An empty span. */
  constexpr Span() noexcept = default;
  /** @brief `size` elements at `data` (`data` may be NULL when `size` is 0). */
  constexpr Span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
  /** @brief The elements of a C array. */
  template <std::size_t N>
  constexpr Span(T (&array)[N]) noexcept : data_(array), size_(N) {}  // NOLINT: implicit by design
  /** @brief From a span of convertible elements (e.g. `Span<T>` to `Span<const T>`). */
  template <typename U, typename = std::enable_if_t<std::is_convertible<U (*)[], T (*)[]>::value>>
  constexpr Span(const Span<U>& other) noexcept  // NOLINT: implicit by design
      : data_(other.data()), size_(other.size()) {}
  /** @brief The elements of a contiguous container (`data()` and `size()`). */
  template <typename C, typename = std::enable_if_t<detail::spannable<C&&, T>::value>>
  constexpr Span(C&& container) noexcept(noexcept(container.data()) && noexcept(container.size()))  // NOLINT
      : data_(container.data()), size_(static_cast<std::size_t>(container.size())) {}

  /** @brief First element (NULL or dangling when empty). */
  constexpr T* data() const noexcept { return data_; }
  /** @brief Number of elements. */
  constexpr std::size_t size() const noexcept { return size_; }
  /** @brief Whether there is no element. */
  constexpr bool empty() const noexcept { return size_ == 0; }
  /** @brief Element `i` (unchecked: `i < size()`). */
  constexpr T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /** @brief First element (the span must not be empty). */
  constexpr T& front() const noexcept { return data_[0]; }
  /** @brief Last element (the span must not be empty). */
  constexpr T& back() const noexcept { return data_[size_ - 1]; }
  /** @brief Iterator to the first element. */
  constexpr T* begin() const noexcept { return data_; }
  /** @brief Iterator past the last element. */
  constexpr T* end() const noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// ---------------------------------------------------------------------------
// Library facts

/** @brief The library version, e.g. `"0.2.0"`. */
inline const char* version() noexcept { return floxlog_version(); }

/** @brief The `.floxlog` format version the library reads and writes (1). */
inline std::uint16_t format_version() noexcept { return floxlog_format_version(); }

/** @brief Whether the library reads and writes LZ4 segments. */
inline bool lz4_supported() noexcept { return floxlog_lz4_supported(); }

/**
 * @brief The stable short name of a result code: `"ok"`, `"end"`, the
 * conformance corpus's spelling for data errors (`"crc_mismatch"`...),
 * `"tape_locked"`...; `"unknown"` for a number that is no code.
 */
inline const char* result_name(std::uint32_t code) noexcept { return floxlog_result_name(code); }

// ---------------------------------------------------------------------------
// Errors

/**
 * @brief A failed floxlog operation.
 *
 * `what()` is `"<code_name>: <message>"`. Copying never throws (the
 * details are shared).
 */
class Error : public std::runtime_error {
 public:
  /** @brief From a filled C tape error. */
  explicit Error(const floxlog_tape_error& e)
      : Error(static_cast<floxlog_result>(e.code), bounded(e.message, sizeof e.message),
              e.has_file ? bounded(e.file, sizeof e.file) : std::string(), e.has_offset != 0, e.offset,
              e.truncated != 0) {}

  /**
   * @brief From its parts.
   * @param code the result code.
   * @param message what failed (the C library's text when it gave one).
   * @param file the file concerned, empty if none.
   * @param has_offset whether `offset` is meaningful.
   * @param offset byte offset in `file` of what failed.
   * @param truncated whether the C library cut `file` or `message` to fit.
   */
  Error(floxlog_result code, std::string message, std::string file = std::string(), bool has_offset = false,
        std::uint64_t offset = 0, bool truncated = false)
      : std::runtime_error(std::string(result_name(static_cast<std::uint32_t>(code))) + ": " + message),
        code_(code),
        has_offset_(has_offset),
        truncated_(truncated),
        offset_(offset),
        text_(std::make_shared<const Text>(Text{std::move(file), std::move(message)})) {}

  /** @brief The result code (a `FLOXLOG_*` value). */
  floxlog_result code() const noexcept { return code_; }
  /** @brief The code's stable name: the corpus's error kind for data errors. */
  const char* code_name() const noexcept { return result_name(static_cast<std::uint32_t>(code_)); }
  /** @brief The file concerned (a segment, lock file, manifest, directory); empty if none. */
  const std::string& file() const noexcept { return text_->file; }
  /** @brief Whether a file is named. */
  bool has_file() const noexcept { return !text_->file.empty(); }
  /** @brief Whether offset() is meaningful. */
  bool has_offset() const noexcept { return has_offset_; }
  /** @brief Byte offset in file() of what failed (0 for a segment header; see has_offset()). */
  std::uint64_t offset() const noexcept { return offset_; }
  /**
   * @brief The library's text: for tape errors `<file> at byte <offset>:
   * <what failed>`, then `  hint: ...` on a second line when there is one.
   */
  const std::string& message() const noexcept { return text_->message; }
  /** @brief Whether the C library cut file() or message() to fit its buffers. */
  bool truncated() const noexcept { return truncated_; }

 private:
  struct Text {
    std::string file;
    std::string message;
  };

  static std::string bounded(const char* s, std::size_t cap) {
    return std::string(s, static_cast<std::size_t>(std::find(s, s + cap, '\0') - s));
  }

  floxlog_result code_;
  bool has_offset_;
  bool truncated_;
  std::uint64_t offset_;
  std::shared_ptr<const Text> text_;
};

/**
 * @brief A batch append that stopped at a failing event: the Error of that
 * event, plus how many events before it were appended.
 */
class AppendError : public Error {
 public:
  /** @brief `error` of the event at index `appended` of the batch. */
  AppendError(const Error& error, std::size_t appended) : Error(error), appended_(appended) {}
  /** @brief Events of the batch written before the failing one. */
  std::size_t appended() const noexcept { return appended_; }

 private:
  std::size_t appended_;
};

/** @cond detail */
namespace detail {

// The message of a bare code (for the functions that take no error out).
inline std::string code_text(floxlog_result code) {
  char buf[FLOXLOG_MESSAGE_MAX];
  std::size_t n = 0;
  if (floxlog_strerror(static_cast<std::uint32_t>(code), buf, sizeof buf, &n) != FLOXLOG_OK) return std::string();
  return std::string(buf, n);
}

[[noreturn]] inline void throw_code(floxlog_result code) { throw Error(code, code_text(code)); }

inline void check_code(floxlog_result rc) {
  if (rc != FLOXLOG_OK) throw_code(rc);
}

// The error of a failed tape call. `err.code` was set to 0 before the call;
// the library fills the whole struct when it fails.
inline Error error_of(floxlog_result rc, const floxlog_tape_error& err) {
  if (err.code == static_cast<std::uint32_t>(rc)) return Error(err);
  return Error(rc, code_text(rc));
}

[[noreturn]] inline void throw_tape(floxlog_result rc, const floxlog_tape_error& err) { throw error_of(rc, err); }

inline void check_tape(floxlog_result rc, const floxlog_tape_error& err) {
  if (rc != FLOXLOG_OK) throw_tape(rc, err);
}

// Calls a tape-level function with a fresh error struct as its last
// argument and throws what it reports.
template <class F, class... A>
inline void tape_call(F f, A... args) {
  floxlog_tape_error err;
  err.code = 0;
  check_tape(f(args..., &err), err);
}

// A batch call `f(h, data, size, &n, &err)` (appends: events, trades,
// frames): how many went in, or AppendError with that count.
template <class F, class H, class T>
inline std::size_t batch_call(F f, H* h, const T* data, std::size_t size) {
  floxlog_tape_error err;
  err.code = 0;
  std::size_t n = 0;
  const floxlog_result rc = f(h, data, size, &n, &err);
  if (rc != FLOXLOG_OK) throw AppendError(error_of(rc, err), n);
  return n;
}

// A string view of a C string the library may leave NULL.
inline std::string_view view_of(const char* s) noexcept { return s ? std::string_view(s) : std::string_view(); }

}  // namespace detail
/** @endcond */

// ---------------------------------------------------------------------------
// Events

/** @brief Event types (`floxlog_event.kind`, the frame type). */
enum class EventKind : std::uint32_t {
  None = FLOXLOG_EVENT_NONE,                   ///< No event.
  Trade = FLOXLOG_EVENT_TRADE,                 ///< A trade (frame type 1).
  BookSnapshot = FLOXLOG_EVENT_BOOK_SNAPSHOT,  ///< A book snapshot (2).
  BookDelta = FLOXLOG_EVENT_BOOK_DELTA,        ///< A book delta (3).
  OptionQuote = FLOXLOG_EVENT_OPTION_QUOTE,    ///< An option quote (4).
  PoolState = FLOXLOG_EVENT_POOL_STATE,        ///< A pool state (5).
};

/** @brief The corpus's name of an event type: `"trade"`, `"book_snapshot"`...; `"none"` otherwise. */
inline const char* kind_name(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::Trade: return "trade";
    case EventKind::BookSnapshot: return "book_snapshot";
    case EventKind::BookDelta: return "book_delta";
    case EventKind::OptionQuote: return "option_quote";
    case EventKind::PoolState: return "pool_state";
    case EventKind::None: break;
  }
  return "none";
}

/** @brief The filter bit of an event type (`1u << kind`, for ReadOptions::types). */
constexpr std::uint32_t type_bit(EventKind kind) noexcept { return 1u << static_cast<std::uint32_t>(kind); }

/** @cond internal */
namespace detail {
// The accessors Book and PoolState share: a copy of the C struct `C`
// whose header fields (timestamps, symbol, exchange) they expose.
template <class C>
class RecordView {
 public:
  /** @brief Exchange-side timestamp, ns. */
  std::int64_t exchange_ts_ns() const noexcept { return c_.exchange_ts_ns; }
  /** @brief Receiver-side timestamp, ns. */
  std::int64_t recv_ts_ns() const noexcept { return c_.recv_ts_ns; }
  /** @brief Symbol tag. */
  std::uint32_t symbol_id() const noexcept { return c_.symbol_id; }
  /** @brief Exchange tag. */
  std::uint16_t exchange_id() const noexcept { return c_.exchange_id; }
  /** @brief The C struct. */
  const C& raw() const noexcept { return c_; }
  /** @brief The C struct (so the view can be passed where a `C` is taken). */
  operator const C&() const noexcept { return c_; }  // NOLINT: implicit by design

 protected:
  RecordView() noexcept : c_() {}
  explicit RecordView(const C& c) noexcept : c_(c) {}
  C c_;
};
}  // namespace detail
/** @endcond */

/**
 * @brief A book snapshot or delta: a copy of a `floxlog_book` whose levels
 * are viewed, not owned.
 */
class Book : public detail::RecordView<floxlog_book> {
 public:
  /** @brief An empty book (no levels). */
  Book() noexcept {}
  /** @brief A view of `b` (its level pointers are copied, not the levels). */
  explicit Book(const floxlog_book& b) noexcept : RecordView(b) {}
  /**
   * @brief A book to append: the header fields of `header` (its level
   * pointers and counts are ignored) with `bids` and `asks`, which must
   * outlive the Book.
   */
  Book(const floxlog_book& header, Span<const floxlog_level> bids, Span<const floxlog_level> asks) noexcept
      : RecordView(header) {
    c_.bids = bids.data();
    c_.bid_count = bids.size();
    c_.asks = asks.data();
    c_.ask_count = asks.size();
  }

  /** @brief Source sequence number. */
  std::int64_t seq() const noexcept { return c_.seq; }
  /** @brief The stored record type byte (flox: 0 snapshot, 1 delta; spec: 2, 3). */
  std::uint8_t header_type() const noexcept { return c_.header_type; }
  /** @brief Instrument code. */
  std::uint8_t instrument() const noexcept { return c_.instrument; }
  /** @brief Bid levels. */
  Span<const floxlog_level> bids() const noexcept { return Span<const floxlog_level>(c_.bids, c_.bid_count); }
  /** @brief Ask levels. */
  Span<const floxlog_level> asks() const noexcept { return Span<const floxlog_level>(c_.asks, c_.ask_count); }
};

/** @brief A pool state: a copy of a `floxlog_pool_state` whose payload is viewed, not owned. */
class PoolState : public detail::RecordView<floxlog_pool_state> {
 public:
  /** @brief An empty pool state. */
  PoolState() noexcept {}
  /** @brief A view of `p`. */
  explicit PoolState(const floxlog_pool_state& p) noexcept : RecordView(p) {}
  /** @brief A pool state to append: the fields of `header` with `payload`, which must outlive it. */
  PoolState(const floxlog_pool_state& header, Span<const std::uint8_t> payload) noexcept : RecordView(header) {
    c_.payload = payload.data();
    c_.payload_len = payload.size();
  }

  /** @brief 1 Descriptor, 2 Checkpoint, 3 SwapDelta, 4 LiquidityDelta. */
  std::uint8_t sub_type() const noexcept { return c_.sub_type; }
  /** @brief Venue tag. */
  std::uint8_t venue() const noexcept { return c_.venue; }
  /** @brief The opaque payload bytes. */
  Span<const std::uint8_t> payload() const noexcept {
    return Span<const std::uint8_t>(c_.payload, c_.payload_len);
  }
  /** @brief The payload bytes as characters. */
  std::string_view payload_view() const noexcept {
    return c_.payload_len ? std::string_view(reinterpret_cast<const char*>(c_.payload), c_.payload_len)
                          : std::string_view();
  }
};

/**
 * @brief One event of any type: a copy of a `floxlog_event` (book levels
 * and pool payloads are viewed, not owned: an event read from a
 * TapeReader is valid until the reader's next call).
 */
class Event {
 public:
  /** @brief No event (kind None). */
  Event() noexcept : e_() {}
  /** @brief A copy of `e`. */
  explicit Event(const floxlog_event& e) noexcept : e_(e) {}

  /** @brief A trade event. */
  static Event of(const floxlog_trade& t) noexcept {
    floxlog_event e{};
    e.kind = FLOXLOG_EVENT_TRADE;
    e.data.trade = t;
    return Event(e);
  }
  /** @brief A book snapshot event (levels viewed). */
  static Event snapshot(const floxlog_book& b) noexcept { return book_event(FLOXLOG_EVENT_BOOK_SNAPSHOT, b); }
  /** @brief A book delta event (levels viewed). */
  static Event delta(const floxlog_book& b) noexcept { return book_event(FLOXLOG_EVENT_BOOK_DELTA, b); }
  /** @brief An option quote event. */
  static Event of(const floxlog_option_quote& q) noexcept {
    floxlog_event e{};
    e.kind = FLOXLOG_EVENT_OPTION_QUOTE;
    e.data.option_quote = q;
    return Event(e);
  }
  /** @brief A pool state event (payload viewed). */
  static Event of(const floxlog_pool_state& p) noexcept {
    floxlog_event e{};
    e.kind = FLOXLOG_EVENT_POOL_STATE;
    e.data.pool_state = p;
    return Event(e);
  }

  /** @brief The event type. */
  EventKind kind() const noexcept { return static_cast<EventKind>(e_.kind); }
  /** @brief The corpus's name of the event type (`"trade"`...). */
  const char* kind_name() const noexcept { return floxlog::kind_name(kind()); }
  /** @brief Whether it is a trade. */
  bool is_trade() const noexcept { return e_.kind == FLOXLOG_EVENT_TRADE; }
  /** @brief Whether it is a book snapshot or delta. */
  bool is_book() const noexcept {
    return e_.kind == FLOXLOG_EVENT_BOOK_SNAPSHOT || e_.kind == FLOXLOG_EVENT_BOOK_DELTA;
  }
  /** @brief Whether it is an option quote. */
  bool is_option_quote() const noexcept { return e_.kind == FLOXLOG_EVENT_OPTION_QUOTE; }
  /** @brief Whether it is a pool state. */
  bool is_pool_state() const noexcept { return e_.kind == FLOXLOG_EVENT_POOL_STATE; }

  /** @brief Exchange-side timestamp, ns (0 for kind None). */
  std::int64_t exchange_ts_ns() const noexcept {
    switch (e_.kind) {
      case FLOXLOG_EVENT_TRADE: return e_.data.trade.exchange_ts_ns;
      case FLOXLOG_EVENT_BOOK_SNAPSHOT:
      case FLOXLOG_EVENT_BOOK_DELTA: return e_.data.book.exchange_ts_ns;
      case FLOXLOG_EVENT_OPTION_QUOTE: return e_.data.option_quote.exchange_ts_ns;
      case FLOXLOG_EVENT_POOL_STATE: return e_.data.pool_state.exchange_ts_ns;
      default: return 0;
    }
  }
  /** @brief Receiver-side timestamp, ns (0 for kind None). */
  std::int64_t recv_ts_ns() const noexcept {
    switch (e_.kind) {
      case FLOXLOG_EVENT_TRADE: return e_.data.trade.recv_ts_ns;
      case FLOXLOG_EVENT_BOOK_SNAPSHOT:
      case FLOXLOG_EVENT_BOOK_DELTA: return e_.data.book.recv_ts_ns;
      case FLOXLOG_EVENT_OPTION_QUOTE: return e_.data.option_quote.recv_ts_ns;
      case FLOXLOG_EVENT_POOL_STATE: return e_.data.pool_state.recv_ts_ns;
      default: return 0;
    }
  }
  /** @brief Symbol tag (0 for kind None). */
  std::uint32_t symbol_id() const noexcept {
    switch (e_.kind) {
      case FLOXLOG_EVENT_TRADE: return e_.data.trade.symbol_id;
      case FLOXLOG_EVENT_BOOK_SNAPSHOT:
      case FLOXLOG_EVENT_BOOK_DELTA: return e_.data.book.symbol_id;
      case FLOXLOG_EVENT_OPTION_QUOTE: return e_.data.option_quote.symbol_id;
      case FLOXLOG_EVENT_POOL_STATE: return e_.data.pool_state.symbol_id;
      default: return 0;
    }
  }
  /** @brief Exchange tag (0 for kind None). */
  std::uint16_t exchange_id() const noexcept {
    switch (e_.kind) {
      case FLOXLOG_EVENT_TRADE: return e_.data.trade.exchange_id;
      case FLOXLOG_EVENT_BOOK_SNAPSHOT:
      case FLOXLOG_EVENT_BOOK_DELTA: return e_.data.book.exchange_id;
      case FLOXLOG_EVENT_OPTION_QUOTE: return e_.data.option_quote.exchange_id;
      case FLOXLOG_EVENT_POOL_STATE: return e_.data.pool_state.exchange_id;
      default: return 0;
    }
  }

  /** @brief The trade. @throws Error (FLOXLOG_INVALID_INPUT) if it is not one. */
  const floxlog_trade& trade() const {
    expect(is_trade(), "a trade");
    return e_.data.trade;
  }
  /** @brief The book (snapshot or delta). @throws Error (FLOXLOG_INVALID_INPUT) if it is not one. */
  Book book() const {
    expect(is_book(), "a book");
    return Book(e_.data.book);
  }
  /** @brief The option quote. @throws Error (FLOXLOG_INVALID_INPUT) if it is not one. */
  const floxlog_option_quote& option_quote() const {
    expect(is_option_quote(), "an option quote");
    return e_.data.option_quote;
  }
  /** @brief The pool state. @throws Error (FLOXLOG_INVALID_INPUT) if it is not one. */
  PoolState pool_state() const {
    expect(is_pool_state(), "a pool state");
    return PoolState(e_.data.pool_state);
  }

  /** @brief The C struct. */
  const floxlog_event& raw() const noexcept { return e_; }
  /** @brief The C struct, writable (e.g. for floxlog_tape_reader_next). */
  floxlog_event& raw() noexcept { return e_; }

 private:
  static Event book_event(std::uint32_t kind, const floxlog_book& b) noexcept {
    floxlog_event e{};
    e.kind = kind;
    e.data.book = b;
    return Event(e);
  }

  void expect(bool ok, const char* what) const {
    if (!ok)
      throw Error(FLOXLOG_INVALID_INPUT, std::string("the event is a ") + kind_name() + ", not " + what);
  }

  floxlog_event e_;
};

// ---------------------------------------------------------------------------
// Writing

/**
 * @brief Settings of a TapeWriter.
 *
 * Starts from `floxlog_tape_writer_config_default` (flox layout,
 * uncompressed, index every 1000 events, reference profile, 256 MiB
 * segments, fsync at segment close, manifest on, wall clock). Change `c`
 * directly or through the chainable setters.
 */
struct TapeWriterConfig {
  /**
   * @brief The C settings. Its `clock_ns`/`clock_ctx` are ignored: set
   * `clock` instead.
   */
  floxlog_tape_writer_config c;
  /**
   * @brief Source of each segment's `created_ns` (which also names
   * flox-layout segments), called exactly once per segment the writer
   * opens, on the thread of the append that opens it (the library makes
   * the values strictly increasing across the tape's segments). Empty
   * (default): the wall clock. It is kept on the heap, so it survives
   * moves of the TapeWriter. It must not throw (an exception escaping it
   * calls std::terminate, as it cannot cross the C library).
   */
  std::function<std::int64_t()> clock;

  /** @brief The library's defaults. */
  TapeWriterConfig() : c() { detail::check_code(floxlog_tape_writer_config_default(&c)); }

  /** @brief `FLOXLOG_COMPRESSION_NONE` or `FLOXLOG_COMPRESSION_LZ4`. */
  TapeWriterConfig& compression(std::uint8_t v) noexcept { c.segment.compression = v; return *this; }
  /** @brief Events between index entries (uncompressed) or per LZ4 block (at least 1). */
  TapeWriterConfig& index_interval(std::uint16_t v) noexcept { c.segment.index_interval = v; return *this; }
  /** @brief Whether to write the sparse index trailer. */
  TapeWriterConfig& create_index(bool v) noexcept { c.segment.create_index = v ? 1 : 0; return *this; }
  /** @brief Exchange tag of the segment headers. */
  TapeWriterConfig& exchange_id(std::uint8_t v) noexcept { c.segment.exchange_id = v; return *this; }
  /** @brief `FLOXLOG_PROFILE_REFERENCE` or `FLOXLOG_PROFILE_SPEC`. */
  TapeWriterConfig& profile(std::uint8_t v) noexcept { c.segment.profile = v; return *this; }
  /** @brief `FLOXLOG_LAYOUT_FLOX` or `FLOXLOG_LAYOUT_SPEC`. */
  TapeWriterConfig& layout(std::uint8_t v) noexcept { c.layout = v; return *this; }
  /** @brief A `FLOXLOG_DURABILITY_*` policy. */
  TapeWriterConfig& durability(std::uint8_t v) noexcept { c.durability = v; return *this; }
  /** @brief Events between fsyncs for `FLOXLOG_DURABILITY_SYNC_EVERY_N`. */
  TapeWriterConfig& sync_every_n(std::uint32_t v) noexcept { c.sync_every_n = v; return *this; }
  /** @brief Whether to keep `manifest.json` up to date. */
  TapeWriterConfig& write_manifest(bool v) noexcept { c.write_manifest = v ? 1 : 0; return *this; }
  /**
   * @brief Journal mode (uncompressed only; see `floxlog_tape_writer_config::journal`):
   * segments pre-allocated and mapped shared, each append published in the
   * mapping with no system call, rotation done by a background thread.
   */
  TapeWriterConfig& journal(bool v) noexcept { c.journal = v ? 1 : 0; return *this; }
  /** @brief Rotate before a segment would grow past this many bytes. */
  TapeWriterConfig& max_segment_bytes(std::uint64_t v) noexcept { c.max_segment_bytes = v; return *this; }
  /** @brief Also rotate when an event enters a new epoch-aligned span of this many ns (0: never). */
  TapeWriterConfig& rotate_every_ns(std::int64_t v) noexcept { c.rotate_every_ns = v; return *this; }
  /**
   * @brief Continue the tape already in the directory (recovering the
   * segments a killed writer left open first) instead of refusing it: a
   * recorder restarted after a crash keeps one tape. See
   * `floxlog_tape_writer_config.resume`.
   */
  TapeWriterConfig& resume(bool v) noexcept { c.resume = v ? 1 : 0; return *this; }
  /** @brief Sets `clock` (see there). */
  TapeWriterConfig& with_clock(std::function<std::int64_t()> f) {
    clock = std::move(f);
    return *this;
  }
};

/**
 * @brief One more thread appending to a TapeWriter's tape, at the same time
 * as the writer's other appenders (floxlog_tape_appender): make one per
 * feed thread with TapeWriter::appender(), use it from that thread (it
 * may move between threads; two threads calling one appender at once get
 * FLOXLOG_BUSY). Each append is atomic and each appender's events keep
 * their order in the file. Move-only; the destructor frees it. The writer
 * refuses close() (FLOXLOG_BUSY) while one lives; a writer destroyed first
 * leaves the tape open until the last appender is destroyed.
 */
class Appender {
 public:
  /** @brief An empty appender (valid() is false). */
  Appender() noexcept = default;
  /** @brief Takes ownership of a C appender handle. */
  explicit Appender(floxlog_tape_appender* a) noexcept : a_(a) {}
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;
  /** @brief Takes over `other`'s handle; `other` is left empty. */
  Appender(Appender&& other) noexcept : a_(std::exchange(other.a_, nullptr)) {}
  /** @brief Frees this appender, then takes over `other`'s. */
  Appender& operator=(Appender&& other) noexcept {
    if (this != &other) {
      floxlog_tape_appender_free(a_);
      a_ = std::exchange(other.a_, nullptr);
    }
    return *this;
  }
  /** @brief Frees the handle (the last appender of a destroyed writer closes the tape). */
  ~Appender() { floxlog_tape_appender_free(a_); }

  /** @brief Whether this object holds an appender. */
  bool valid() const noexcept { return a_ != nullptr; }
  /** @brief As valid(). */
  explicit operator bool() const noexcept { return valid(); }
  /** @brief The C handle (still owned by this object). */
  floxlog_tape_appender* get() const noexcept { return a_; }

  /** @brief Appends a trade. @throws Error; the event was then not written. */
  void append(const floxlog_trade& trade) {
    detail::tape_call(floxlog_tape_appender_append_trade, a_, &trade);
  }
  /** @brief Appends an event of any kind. @throws Error */
  void append(const floxlog_event& event) {
    detail::tape_call(floxlog_tape_appender_append, a_, &event);
  }
  /** @brief Appends an event of any kind. @throws Error */
  void append(const Event& event) { append(event.raw()); }
  /**
   * @brief Appends trades in order, together, in one library call.
   * @return the number appended. @throws AppendError with appended().
   */
  std::size_t append(Span<const floxlog_trade> trades) {
    return detail::batch_call(floxlog_tape_appender_append_trades, a_, trades.data(), trades.size());
  }
  /**
   * @brief Appends already-encoded 1.0 frames as they are (each checked
   * first). @return the number of frames appended.
   * @throws AppendError at the first bad frame (offset() is its byte offset
   * in `frames`), with appended() frames before it written.
   */
  std::size_t append_frames(Span<const std::uint8_t> frames) {
    return detail::batch_call(floxlog_tape_appender_append_frames, a_, frames.data(), frames.size());
  }

 private:
  floxlog_tape_appender* a_ = nullptr;
};

/**
 * @brief Records a tape directory (`floxlog_tape_writer`): segment files,
 * rotation, durability, the tape lock, and the final headers, index and
 * manifest at close().
 *
 * Move-only. The destructor closes a writer that was not closed, ignoring
 * its errors: call close() to see them.
 */
class TapeWriter {
 public:
  /** @brief An empty writer (valid() is false). */
  TapeWriter() noexcept = default;

  /**
   * @brief Starts a tape in directory `dir` (created if missing; it must
   * not hold a tape already, unless `config.resume(true)`: the tape there
   * is then continued) and takes its lock.
   * @throws Error e.g. FLOXLOG_TAPE_LOCKED (file() names the lock file)
   * while another writer holds the directory, FLOXLOG_IO_ERROR,
   * FLOXLOG_INVALID_INPUT for a bad setting; resuming, the code of a
   * segment that cannot be recovered (file() and offset() name it).
   */
  explicit TapeWriter(const std::string& dir, TapeWriterConfig config = TapeWriterConfig()) {
    floxlog_tape_writer_config c = config.c;
    c.clock_ns = nullptr;
    c.clock_ctx = nullptr;
    if (config.clock) {
      // On the heap, so that the context the library holds survives moves
      // of this object.
      clock_.reset(new std::function<std::int64_t()>(std::move(config.clock)));
      c.clock_ns = &TapeWriter::clock_trampoline;
      c.clock_ctx = clock_.get();
    }
    floxlog_tape_error err;
    err.code = 0;
    const floxlog_result rc = floxlog_tape_writer_open(dir.c_str(), &c, &w_, &err);
    if (rc != FLOXLOG_OK) {
      w_ = nullptr;
      clock_.reset();
      detail::throw_tape(rc, err);
    }
  }

  /** @brief As the constructor. */
  static TapeWriter open(const std::string& dir, TapeWriterConfig config = TapeWriterConfig()) {
    return TapeWriter(dir, std::move(config));
  }

  TapeWriter(const TapeWriter&) = delete;
  TapeWriter& operator=(const TapeWriter&) = delete;

  /** @brief Takes over `other`'s tape; `other` is left empty. */
  TapeWriter(TapeWriter&& other) noexcept
      : w_(std::exchange(other.w_, nullptr)), clock_(std::move(other.clock_)) {}

  /** @brief Closes (ignoring errors) and frees this writer's tape, then takes over `other`'s. */
  TapeWriter& operator=(TapeWriter&& other) noexcept {
    if (this != &other) {
      reset();
      w_ = std::exchange(other.w_, nullptr);
      clock_ = std::move(other.clock_);
    }
    return *this;
  }

  /** @brief Frees the handle; a writer not yet closed is closed first, its errors ignored. */
  ~TapeWriter() { reset(); }

  /** @brief Whether this object holds a writer. */
  bool valid() const noexcept { return w_ != nullptr; }
  /** @brief As valid(). */
  explicit operator bool() const noexcept { return valid(); }
  /** @brief The C handle (still owned by this object). */
  floxlog_tape_writer* get() const noexcept { return w_; }

  /** @brief Appends a trade. @throws Error; the event was then not written, and all before it is intact. */
  void append(const floxlog_trade& trade) {
    detail::tape_call(floxlog_tape_writer_append_trade, w_, &trade);
  }
  /** @brief Appends a book snapshot (levels read during the call). @throws Error */
  void append_snapshot(const floxlog_book& book) {
    detail::tape_call(floxlog_tape_writer_append_book_snapshot, w_, &book);
  }
  /** @brief Appends a book delta (levels read during the call). @throws Error */
  void append_delta(const floxlog_book& book) {
    detail::tape_call(floxlog_tape_writer_append_book_delta, w_, &book);
  }
  /** @brief Appends an option quote. @throws Error */
  void append(const floxlog_option_quote& quote) {
    detail::tape_call(floxlog_tape_writer_append_option_quote, w_, &quote);
  }
  /** @brief Appends a pool state (payload copied during the call). @throws Error */
  void append(const floxlog_pool_state& pool) {
    detail::tape_call(floxlog_tape_writer_append_pool_state, w_, &pool);
  }
  /** @brief Appends an event of any kind. @throws Error (FLOXLOG_INVALID_INPUT for kind None) */
  void append(const floxlog_event& event) {
    switch (event.kind) {
      case FLOXLOG_EVENT_TRADE: append(event.data.trade); return;
      case FLOXLOG_EVENT_BOOK_SNAPSHOT: append_snapshot(event.data.book); return;
      case FLOXLOG_EVENT_BOOK_DELTA: append_delta(event.data.book); return;
      case FLOXLOG_EVENT_OPTION_QUOTE: append(event.data.option_quote); return;
      case FLOXLOG_EVENT_POOL_STATE: append(event.data.pool_state); return;
      default: append(Span<const floxlog_event>(&event, 1)); return;  // the library's error
    }
  }
  /** @brief Appends an event of any kind. @throws Error */
  void append(const Event& event) { append(event.raw()); }

  /**
   * @brief Appends events of any kind in order, in one library call.
   * @return the number appended (all of them).
   * @throws AppendError at the first event that fails, with appended()
   * events before it written.
   */
  std::size_t append(Span<const floxlog_event> events) {
    return detail::batch_call(floxlog_tape_writer_append_events, w_, events.data(), events.size());
  }
  /** @brief Appends trades in order, in one library call. @return the number appended. @throws AppendError */
  std::size_t append(Span<const floxlog_trade> trades) {
    return detail::batch_call(floxlog_tape_writer_append_trades, w_, trades.data(), trades.size());
  }

  /**
   * @brief Appends already-encoded 1.0 frames as they are (each checked
   * first). @return the number of frames appended.
   * @throws AppendError at the first bad frame (offset() is its byte offset
   * in `frames`), with appended() frames before it written.
   */
  std::size_t append_frames(Span<const std::uint8_t> frames) {
    return detail::batch_call(floxlog_tape_writer_append_frames, w_, frames.data(), frames.size());
  }

  /**
   * @brief A new appender of this tape, for another thread (see Appender).
   * @throws Error (FLOXLOG_FINISHED once closed)
   */
  Appender appender() {
    floxlog_tape_appender* a = nullptr;
    detail::tape_call(floxlog_tape_appender_open, w_, &a);
    return Appender(a);
  }

  /**
   * @brief Sets the flox-style `metadata.json` (a JSON object, e.g.
   * `{"symbols":[{"symbol_id":1,"name":"BTCUSDT"}]}`); readers then accept
   * symbol names in filters. Written now and at each call, crash-atomically
   * (a killed writer's names survive; monitors see them live); a failure
   * to write it is thrown by the next flush, sync or close.
   * @throws Error (FLOXLOG_INVALID_INPUT when it is not a JSON object)
   */
  void set_metadata(std::string_view json) {
    const std::string text(json);
    detail::tape_call(floxlog_tape_writer_set_metadata, w_, text.c_str());
  }

  /**
   * @brief Hands every encoded byte to the OS: afterwards written_events()
   * counts every event appended (except LZ4 events of a block not full yet).
   * @throws Error
   */
  void flush() {
    detail::tape_call(floxlog_tape_writer_flush, w_);
  }
  /** @brief flush(), then fsyncs the open segments and directory entries. @throws Error */
  void sync() {
    detail::tape_call(floxlog_tape_writer_sync, w_);
  }

  /** @brief Events whose bytes the OS has (they survive the process being killed). @throws Error */
  std::uint64_t written_events() const {
    std::uint64_t n = 0;
    detail::check_code(floxlog_tape_writer_written_events(w_, &n));
    return n;
  }
  /** @brief Events fsynced with their directory entries (they survive a power loss). @throws Error */
  std::uint64_t durable_events() const {
    std::uint64_t n = 0;
    detail::check_code(floxlog_tape_writer_durable_events(w_, &n));
    return n;
  }
  /**
   * @brief The writer's health: event counts, segments, bytes reserved and
   * used, the background thread's queue, lag and wake-ups, the last
   * rotation, the last background error, the low-space state and the last
   * failed reservation (floxlog_tape_writer_get_stats).
   * Safe from any thread while others append. @throws Error
   */
  floxlog_tape_writer_stats stats() const {
    floxlog_tape_writer_stats s{};
    detail::tape_call(floxlog_tape_writer_get_stats, w_, &s);
    return s;
  }

  /**
   * @brief Finishes the tape: index trailers, final headers, manifest and
   * metadata, fsyncs per the durability policy, lock released. The object
   * stays valid for the counters; appends then throw FLOXLOG_FINISHED, and
   * so does a second close(). While an Appender of it lives, close() throws
   * FLOXLOG_BUSY and changes nothing.
   * @throws Error (the tape is then left as a killed writer would leave
   * it: recoverable).
   */
  void close() {
    detail::tape_call(floxlog_tape_writer_close, w_);
  }

 private:
  static std::int64_t clock_trampoline(void* ctx) noexcept {
    return (*static_cast<std::function<std::int64_t()>*>(ctx))();
  }

  void reset() noexcept {
    // The handle goes first: it may still hold the clock context.
    floxlog_tape_writer_free(w_);
    w_ = nullptr;
    clock_.reset();
  }

  floxlog_tape_writer* w_ = nullptr;
  std::unique_ptr<std::function<std::int64_t()>> clock_;
};

// ---------------------------------------------------------------------------
// Reading

/**
 * @brief How a TapeReader reads: starts from
 * `floxlog_tape_reader_options_default` (time order, every event, CRCs
 * checked, unknown types rejected, torn tails tolerated, manifest
 * trusted). Change `c` directly or through the chainable setters.
 */
struct ReadOptions {
  /**
   * @brief The C options. Its `filter.symbol_ids` and
   * `filter.symbol_names` are ignored: use symbol_ids and symbol_names.
   */
  floxlog_tape_reader_options c;
  /** @brief Symbol ids to keep (with symbol_names: the union); none: every symbol. */
  std::vector<std::uint32_t> symbol_ids;
  /** @brief Symbol names to keep, resolved through the tape's `metadata.json`. */
  std::vector<std::string> symbol_names;

  /** @brief The library's defaults. */
  ReadOptions() : c() { detail::check_code(floxlog_tape_reader_options_default(&c)); }

  /** @brief Merged by exchange timestamp across segments (stable; the default). */
  ReadOptions& time_order() noexcept { c.order = FLOXLOG_ORDER_TIME; return *this; }
  /** @brief Segment by segment, each in file order. */
  ReadOptions& file_order() noexcept { c.order = FLOXLOG_ORDER_FILE; return *this; }
  /** @brief Keep `exchange_ts_ns >= ts`. */
  ReadOptions& from(std::int64_t ts) noexcept { c.filter.from_ns = ts; c.filter.has_from = 1; return *this; }
  /** @brief Keep `exchange_ts_ns < ts`. */
  ReadOptions& to(std::int64_t ts) noexcept { c.filter.to_ns = ts; c.filter.has_to = 1; return *this; }
  /** @brief Keep events of this type too (no type added: every type). */
  ReadOptions& type(EventKind kind) noexcept { c.filter.types |= type_bit(kind); return *this; }
  /** @brief Keep the types of this mask of type_bit() values (0: every type). */
  ReadOptions& types(std::uint32_t mask) noexcept { c.filter.types = mask; return *this; }
  /** @brief Keep this symbol id too. */
  ReadOptions& symbol(std::uint32_t id) { symbol_ids.push_back(id); return *this; }
  /** @brief Keep this symbol name too (an unknown name fails the open). */
  ReadOptions& symbol_name(std::string name) { symbol_names.push_back(std::move(name)); return *this; }
  /** @brief Whether a torn tail (a running or killed writer's) is an error too. */
  ReadOptions& strict(bool v = true) noexcept { c.strict = v ? 1 : 0; return *this; }
  /** @brief Whether to check every frame's CRC32. */
  ReadOptions& verify_crc(bool v) noexcept { c.verify_crc = v ? 1 : 0; return *this; }
  /** @brief Whether to skip frames of types 1.0 does not define. */
  ReadOptions& skip_unknown_types(bool v = true) noexcept { c.skip_unknown_types = v ? 1 : 0; return *this; }
  /** @brief Whether to list directories instead of trusting `manifest.json`. */
  ReadOptions& ignore_manifest(bool v = true) noexcept { c.ignore_manifest = v ? 1 : 0; return *this; }
  /** @brief Events of the reorder window of unsorted segments (time order). */
  /** @brief Most frame bytes the reorder windows may hold together (time order). */
  ReadOptions& reorder_bytes(std::uint64_t n) noexcept { c.reorder_bytes = n; return *this; }
};

/**
 * @brief What a TapeReader has done so far (`floxlog_tape_reader_stats`):
 * segments, bytes, events returned, late events, torn tails, errors.
 */
using ReaderStats = struct floxlog_tape_reader_stats;

/**
 * @brief Replays a tape (`floxlog_tape_reader`): a directory of either
 * layout, a segment file, or several, merged by time or in file order,
 * filtered, from memory-mapped files.
 *
 * Every good event comes before any error: after the last event, next()
 * (and the iterator) throws each error found, once, in order (a damaged
 * segment: file() and offset() say where), then reports the end.
 *
 * @code
 *   auto r = floxlog::TapeReader::open(dir);
 *   for (const floxlog::Event& ev : r) { ... }   // throws floxlog::Error on damage
 * @endcode
 *
 * Move-only; iterators refer to the object (moving it invalidates them).
 */
class TapeReader {
 public:
  class iterator;

  /** @brief An empty reader (valid() is false). */
  TapeReader() noexcept = default;

  /**
   * @brief Opens a tape directory or segment file.
   * @throws Error when the tape cannot be listed (FLOXLOG_IO_ERROR for a
   * missing path, FLOXLOG_BAD_MANIFEST) or an option is wrong. Damage
   * inside segments does not fail the open.
   */
  static TapeReader open(const std::string& path, const ReadOptions& options = ReadOptions()) {
    const char* p = path.c_str();
    return open_c(&p, 1, options);
  }

  /** @brief Opens several inputs (directories or segment files) read as one tape. @throws Error */
  static TapeReader open(const std::vector<std::string>& paths, const ReadOptions& options = ReadOptions()) {
    std::vector<const char*> ps;
    ps.reserve(paths.size());
    for (const auto& p : paths) ps.push_back(p.c_str());
    return open_c(ps.data(), ps.size(), options);
  }

  TapeReader(const TapeReader&) = delete;
  TapeReader& operator=(const TapeReader&) = delete;
  /** @brief Takes over `other`'s reader; `other` is left empty. */
  TapeReader(TapeReader&& other) noexcept : r_(std::exchange(other.r_, nullptr)) {}
  /** @brief Frees this reader, then takes over `other`'s. */
  TapeReader& operator=(TapeReader&& other) noexcept {
    if (this != &other) {
      floxlog_tape_reader_free(r_);
      r_ = std::exchange(other.r_, nullptr);
    }
    return *this;
  }
  /** @brief Frees the reader (and unmaps the tape). */
  ~TapeReader() { floxlog_tape_reader_free(r_); }

  /** @brief Whether this object holds a reader. */
  bool valid() const noexcept { return r_ != nullptr; }
  /** @brief As valid(). */
  explicit operator bool() const noexcept { return valid(); }
  /** @brief The C handle (still owned by this object). */
  floxlog_tape_reader* get() const noexcept { return r_; }

  /**
   * @brief Reads the next event into `out`.
   * @return true with an event, false at the end.
   * @throws Error for each error found, after the last event.
   */
  bool next(Event& out) {
    floxlog_tape_error err;
    err.code = 0;
    const floxlog_result rc = floxlog_tape_reader_next(r_, &out.raw(), &err);
    if (rc == FLOXLOG_OK) return true;
    if (rc == FLOXLOG_END) return false;
    detail::throw_tape(rc, err);
  }

  /** @brief The next event, or nothing at the end. @throws Error as next(Event&). */
  std::optional<Event> next() {
    Event e;
    if (!next(e)) return std::nullopt;
    return e;
  }

  /**
   * @brief Reads up to `out.size()` consecutive trades straight into `out`
   * (`floxlog_tape_reader_next_trades`: one call for the batch, no
   * floxlog_event in between), the fast path for trade tapes.
   * @return How many (at least 1); 0 when the next event is not a trade or
   * at the end: then next() returns that event, or false at the end.
   * @throws Error for each error found, after the last event.
   */
  std::size_t next_trades(Span<floxlog_trade> out) {
    if (out.empty()) return 0;
    floxlog_tape_error err;
    err.code = 0;
    std::size_t n = 0;
    const floxlog_result rc = floxlog_tape_reader_next_trades(r_, out.data(), out.size(), &n, &err);
    if (rc == FLOXLOG_OK) return n;
    if (rc == FLOXLOG_NOT_TRADE || rc == FLOXLOG_END) return 0;
    detail::throw_tape(rc, err);
  }

  /**
   * @brief Positions the reader at `ts`: the following events are those
   * with `exchange_ts_ns >= ts` the filter keeps, in the reader's order
   * (seeking back works too; errors are returned again). Invalidates
   * iterators' current events.
   * @throws Error
   */
  void seek(std::int64_t ts) {
    detail::tape_call(floxlog_tape_reader_seek, r_, ts);
  }

  /** @brief What the reader has done so far. @throws Error */
  ReaderStats stats() const {
    ReaderStats s{};
    detail::check_code(floxlog_tape_reader_get_stats(r_, &s));
    return s;
  }

  /**
   * @brief Where the last event returned is (segment number and byte
   * offset), or nothing before the first event and after a seek.
   * @throws Error
   */
  std::optional<floxlog_tape_position> position() const {
    floxlog_tape_position p{};
    const floxlog_result rc = floxlog_tape_reader_position(r_, &p);
    if (rc == FLOXLOG_END) return std::nullopt;
    detail::check_code(rc);
    return p;
  }

  /** @brief The path of segment number `segment` of the tape. @throws Error */
  std::string segment_path(std::uint64_t segment) const {
    const char* p = nullptr;
    detail::check_code(floxlog_tape_reader_segment_path(r_, segment, &p));
    return std::string(p);
  }

  /** @brief Reads the first (next) event. @throws Error as next(). */
  iterator begin();
  /** @brief The end. */
  iterator end() noexcept;

 private:
  static TapeReader open_c(const char* const* paths, std::size_t count, const ReadOptions& options) {
    floxlog_tape_reader_options o = options.c;
    std::vector<const char*> names;
    names.reserve(options.symbol_names.size());
    for (const auto& n : options.symbol_names) names.push_back(n.c_str());
    o.filter.symbol_ids = options.symbol_ids.empty() ? nullptr : options.symbol_ids.data();
    o.filter.symbol_id_count = options.symbol_ids.size();
    o.filter.symbol_names = names.empty() ? nullptr : names.data();
    o.filter.symbol_name_count = names.size();
    TapeReader r;
    floxlog_tape_error err;
    err.code = 0;
    const floxlog_result rc = count == 1 ? floxlog_tape_reader_open(paths[0], &o, &r.r_, &err)
                                         : floxlog_tape_reader_open_paths(paths, count, &o, &r.r_, &err);
    if (rc != FLOXLOG_OK) {
      r.r_ = nullptr;
      detail::throw_tape(rc, err);
    }
    return r;
  }

  floxlog_tape_reader* r_ = nullptr;
};

/** @cond internal */
namespace detail {
// What TapeReader::iterator and Tail::iterator share: an input iterator
// over the events `Derived::fetch(source, event)` reads (false at the end).
// It holds its source until the end, or until a fetch throws.
template <class Derived, class Source>
class EventIterator {
 public:
  using iterator_category = std::input_iterator_tag;  ///< Single pass.
  using value_type = Event;                           ///< Events.
  using difference_type = std::ptrdiff_t;             ///< Unused.
  using pointer = const Event*;                       ///< Pointer to the current event.
  using reference = const Event&;                     ///< The current event.

  /** @brief The current event. */
  reference operator*() const noexcept { return current_; }
  /** @brief The current event. */
  pointer operator->() const noexcept { return &current_; }
  /** @brief Reads the next event. @throws Error */
  Derived& operator++() {
    advance();
    return static_cast<Derived&>(*this);
  }
  /** @brief Whether both are at the end, or both iterate the same source. */
  friend bool operator==(const Derived& a, const Derived& b) noexcept { return a.src_ == b.src_; }
  /** @brief Negation of ==. */
  friend bool operator!=(const Derived& a, const Derived& b) noexcept { return a.src_ != b.src_; }

 protected:
  EventIterator() noexcept = default;
  explicit EventIterator(Source* src) noexcept : src_(src) {}

  void advance() {
    if (src_ == nullptr) return;
    Source* s = src_;
    src_ = nullptr;  // at the end if the fetch throws or finds nothing
    if (static_cast<Derived*>(this)->fetch(*s, current_)) src_ = s;
  }

  Source* src_ = nullptr;
  Event current_;
};
}  // namespace detail
/** @endcond */

/**
 * @brief Input iterator over a TapeReader's events. Each increment reads
 * the next event and throws floxlog::Error for the errors the reader
 * returns after its last event; the current event is valid until then.
 */
class TapeReader::iterator : public detail::EventIterator<TapeReader::iterator, TapeReader> {
 public:
  /** @brief The result of `it++`: the event before the increment. */
  class Proxy {
   public:
    /** @brief The event (its levels and payload died with the increment). */
    const Event& operator*() const noexcept { return e_; }

   private:
    friend class iterator;
    explicit Proxy(const Event& e) noexcept : e_(e) {}
    Event e_;
  };

  /** @brief An end iterator. */
  iterator() noexcept = default;

  using EventIterator::operator++;
  /** @brief Reads the next event. @throws Error */
  Proxy operator++(int) {
    Proxy p(current_);
    advance();
    return p;
  }

 private:
  friend class TapeReader;
  friend class detail::EventIterator<TapeReader::iterator, TapeReader>;
  explicit iterator(TapeReader* reader) : EventIterator(reader) { advance(); }
  static bool fetch(TapeReader& r, Event& out) { return r.next(out); }
};

inline TapeReader::iterator TapeReader::begin() { return iterator(this); }
inline TapeReader::iterator TapeReader::end() noexcept { return iterator(); }

// ---------------------------------------------------------------------------
// Following a live tape

/** @brief What Tail::next() found. */
enum class TailStatus {
  Event,       ///< An event.
  Timeout,     ///< Nothing arrived in time; a writer holds the tape (`FLOXLOG_TIMEOUT`).
  End,         ///< The writer closed the tape and everything was read (`FLOXLOG_END`).
  WriterGone,  ///< No writer holds the tape and it was never closed: the writer died (`FLOXLOG_WRITER_GONE`).
};

/**
 * @brief A saved place in a tape (`floxlog_tape_tail_position`): in each
 * series, after the last event handed out from it. Plain bytes: store them
 * anywhere, pass them to TailOptions::from() later.
 */
using TailPosition = std::vector<std::uint8_t>;

/**
 * @brief How a Tail starts and waits: starts from
 * `floxlog_tape_tail_options_default` (from the beginning, CRCs checked,
 * blocking wait).
 */
struct TailOptions {
  /** @brief The C options (`position`/`position_len` are set from `saved` at open). */
  floxlog_tape_tail_options c;
  /** @brief With from(): the saved position. */
  TailPosition saved;
  /** @brief The library's defaults. */
  TailOptions() : c() { detail::check_code(floxlog_tape_tail_options_default(&c)); }
  /** @brief New events only (after what the tape holds at open). */
  TailOptions& from_end() noexcept { c.start = FLOXLOG_TAIL_START_END; return *this; }
  /** @brief Resume at a position Tail::position() returned (copied). */
  TailOptions& from(const TailPosition& p) {
    c.start = FLOXLOG_TAIL_START_POSITION;
    saved = p;
    return *this;
  }
  /** @brief Whether to check every frame's CRC32. */
  TailOptions& verify_crc(bool v) noexcept { c.verify_crc = v ? 1 : 0; return *this; }
  /** @brief Whether to skip frames of types 1.0 does not define. */
  TailOptions& skip_unknown_types(bool v = true) noexcept { c.skip_unknown_types = v ? 1 : 0; return *this; }
  /** @brief Poll without pause while waiting (lowest latency; a core kept busy). */
  TailOptions& busy_spin() noexcept { c.wait = FLOXLOG_TAIL_WAIT_BUSY_SPIN; return *this; }
  /** @brief Spin a while, then yield the CPU between polls. */
  TailOptions& spin_then_yield() noexcept { c.wait = FLOXLOG_TAIL_WAIT_SPIN_YIELD; return *this; }
  /** @brief Sleep until the writer publishes (the default): a journal writer wakes the
   *  tailer; otherwise sleeps between polls, 10 us doubling up to 10 ms. */
  TailOptions& blocking() noexcept { c.wait = FLOXLOG_TAIL_WAIT_BLOCKING; return *this; }
  /** @brief How long to wait for a writer to start or come back before WriterGone
   *  (default 2 s; negative: for ever). */
  template <class Rep, class Period>
  TailOptions& writer_wait(std::chrono::duration<Rep, Period> d) noexcept {
    c.writer_wait_ns = static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    return *this;
  }
};

/**
 * @brief Follows a tape as its writer appends to it (`floxlog_tape_tail`),
 * across rotations and writer restarts, in file order (not merged by time).
 *
 * Range-for with a timeout: the loop ends when nothing arrived in time, at
 * the end, or when the writer is gone; status() says which. Damage throws
 * Error (file() and offset() say where).
 *
 * @code
 *   auto tail = floxlog::Tail::open(dir);
 *   for (;;) {
 *     for (const floxlog::Event& ev : tail.events(std::chrono::milliseconds(100))) { ... }
 *     if (tail.status() != floxlog::TailStatus::Timeout) break;  // End or WriterGone
 *   }
 * @endcode
 *
 * Move-only; iterators refer to the object (moving it invalidates them).
 */
class Tail {
 public:
  class iterator;
  class Events;

  /** @brief An empty tailer (valid() is false). */
  Tail() noexcept = default;

  /**
   * @brief Opens a tailer on a tape directory (it may hold no segment yet)
   * or a segment file.
   * @throws Error (FLOXLOG_IO_ERROR for a missing path, FLOXLOG_INVALID_INPUT
   * for a saved position whose segment is gone or bytes that are not one...).
   */
  static Tail open(const std::string& path, const TailOptions& options = TailOptions()) {
    Tail t;
    floxlog_tape_error err;
    err.code = 0;
    floxlog_tape_tail_options c = options.c;
    c.position = options.saved.data();
    c.position_len = options.saved.size();
    const floxlog_result rc = floxlog_tape_tail_open(path.c_str(), &c, &t.t_, &err);
    if (rc != FLOXLOG_OK) {
      t.t_ = nullptr;
      detail::throw_tape(rc, err);
    }
    return t;
  }

  Tail(const Tail&) = delete;
  Tail& operator=(const Tail&) = delete;
  /** @brief Takes over `other`'s tailer; `other` is left empty. */
  Tail(Tail&& other) noexcept : t_(std::exchange(other.t_, nullptr)), status_(other.status_) {}
  /** @brief Frees this tailer, then takes over `other`'s. */
  Tail& operator=(Tail&& other) noexcept {
    if (this != &other) {
      floxlog_tape_tail_free(t_);
      t_ = std::exchange(other.t_, nullptr);
      status_ = other.status_;
    }
    return *this;
  }
  /** @brief Frees the tailer. */
  ~Tail() { floxlog_tape_tail_free(t_); }

  /** @brief Whether this object holds a tailer. */
  bool valid() const noexcept { return t_ != nullptr; }
  /** @brief As valid(). */
  explicit operator bool() const noexcept { return valid(); }
  /** @brief The C handle (still owned by this object). */
  floxlog_tape_tail* get() const noexcept { return t_; }

  /**
   * @brief Reads the next event into `out`, waiting at most `timeout`
   * (zero: do not wait; negative: no limit). A tape its writer closed is
   * End at once; without a writer for TailOptions::writer_wait (default
   * 2 s), WriterGone.
   * @throws Error on damage.
   */
  TailStatus next(Event& out, std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) {
    floxlog_tape_error err;
    err.code = 0;
    const floxlog_result rc = floxlog_tape_tail_next(t_, &out.raw(), timeout.count(), &err);
    status_ = status_of(rc, err);
    return status_;
  }

  /**
   * @brief Reads up to `out.size()` trades into `out`, waiting at most
   * `timeout` for the first; `n` receives how many. TailStatus::Event with
   * n == 0 means the next event is not a trade: read it with next().
   * @throws Error on damage.
   */
  TailStatus next_trades(Span<floxlog_trade> out, std::size_t& n,
                         std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) {
    n = 0;
    if (out.empty()) return TailStatus::Event;
    floxlog_tape_error err;
    err.code = 0;
    const floxlog_result rc = floxlog_tape_tail_next_trades(t_, out.data(), out.size(), &n, timeout.count(), &err);
    if (rc == FLOXLOG_NOT_TRADE) return status_ = TailStatus::Event;
    status_ = status_of(rc, err);
    return status_;
  }

  /** @brief What the last call (or iteration) found. */
  TailStatus status() const noexcept { return status_; }

  /**
   * @brief Where the tailer stands: in each series, after the last event
   * returned from it. Resuming there (TailOptions::from) returns every
   * later event once, in its series' order.
   * @throws Error
   */
  TailPosition position() const {
    TailPosition p(FLOXLOG_TAIL_POSITION_MAX);
    for (;;) {
      floxlog_tape_error err;
      err.code = 0;
      std::size_t len = 0;
      const floxlog_result rc = floxlog_tape_tail_position(t_, p.data(), p.size(), &len, &err);
      if (rc == FLOXLOG_BUFFER_TOO_SMALL && len > p.size()) {
        p.resize(len);
        continue;
      }
      if (rc != FLOXLOG_OK) detail::throw_tape(rc, err);
      p.resize(len);
      return p;
    }
  }

  /**
   * @brief The events that arrive with at most `timeout` between them (no
   * limit by default), for a range-for; status() says what ended it.
   */
  Events events(std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) noexcept;

 private:
  static TailStatus status_of(floxlog_result rc, const floxlog_tape_error& err) {
    switch (rc) {
      case FLOXLOG_OK: return TailStatus::Event;
      case FLOXLOG_TIMEOUT: return TailStatus::Timeout;
      case FLOXLOG_END: return TailStatus::End;
      case FLOXLOG_WRITER_GONE: return TailStatus::WriterGone;
      default: detail::throw_tape(rc, err);
    }
  }

  floxlog_tape_tail* t_ = nullptr;
  TailStatus status_ = TailStatus::Event;
};

/**
 * @brief Input iterator over the events a Tail returns: each increment
 * reads the next event (waiting at most the range's timeout); the current
 * event is valid until then.
 */
class Tail::iterator : public detail::EventIterator<Tail::iterator, Tail> {
 public:
  /** @brief An end iterator. */
  iterator() noexcept = default;

 private:
  friend class Tail::Events;
  friend class detail::EventIterator<Tail::iterator, Tail>;
  iterator(Tail* tail, std::chrono::nanoseconds timeout) : EventIterator(tail), timeout_(timeout) { advance(); }
  bool fetch(Tail& t, Event& out) { return t.next(out, timeout_) == TailStatus::Event; }

  std::chrono::nanoseconds timeout_{-1};
};

/** @brief The range Tail::events() returns. */
class Tail::Events {
 public:
  /** @brief Reads the first event. @throws Error */
  iterator begin() { return iterator(tail_, timeout_); }
  /** @brief The end. */
  iterator end() noexcept { return iterator(); }

 private:
  friend class Tail;
  Events(Tail* tail, std::chrono::nanoseconds timeout) noexcept : tail_(tail), timeout_(timeout) {}
  Tail* tail_;
  std::chrono::nanoseconds timeout_;
};

inline Tail::Events Tail::events(std::chrono::nanoseconds timeout) noexcept { return Events(this, timeout); }

// ---------------------------------------------------------------------------
// Whole-tape operations

/** @brief Options of verify() (all-zero: the default). */
using VerifyOptions = floxlog_verify_options;
/** @brief Options of recover() (all-zero: rewrite in place, keep `<name>.damaged`). */
using RecoverOptions = floxlog_recover_options;
/** @brief Options of inspect() (all-zero: the default). */
using InspectOptions = floxlog_inspect_options;

/** @brief One finding of verify(): a view valid during the callback only. */
class Finding {
 public:
  /** @brief A view of `f`. */
  explicit Finding(const floxlog_finding& f) noexcept : f_(&f) {}
  /** @brief `FLOXLOG_SEVERITY_INFO`, `_WARNING` or `_ERROR`. */
  std::uint32_t severity() const noexcept { return f_->severity; }
  /** @brief A stable name: a corpus error kind or a check (`header_event_count`...). */
  std::string_view kind() const noexcept { return detail::view_of(f_->kind); }
  /** @brief Whether a file is named. */
  bool has_file() const noexcept { return f_->file != nullptr; }
  /** @brief The file concerned; empty if none. */
  std::string_view file() const noexcept { return detail::view_of(f_->file); }
  /** @brief Whether offset() is meaningful. */
  bool has_offset() const noexcept { return f_->has_offset != 0; }
  /** @brief Byte offset in file(). */
  std::uint64_t offset() const noexcept { return f_->offset; }
  /** @brief What was found. */
  std::string_view message() const noexcept { return detail::view_of(f_->message); }
  /** @brief What to do about it; empty if nothing to say. */
  std::string_view hint() const noexcept { return detail::view_of(f_->hint); }
  /** @brief The whole finding as the CLI prints it. */
  std::string_view text() const noexcept { return detail::view_of(f_->text); }
  /** @brief The C struct. */
  const floxlog_finding& raw() const noexcept { return *f_; }

 private:
  const floxlog_finding* f_;
};

/** @brief One outcome of recover(): a view valid during the callback only. */
class RecoverReport {
 public:
  /** @brief A view of `r`. */
  explicit RecoverReport(const floxlog_recover_report& r) noexcept : r_(&r) {}
  /**
   * @brief `"rewritten"`, `"would_rewrite"` (dry run), `"already_valid"`,
   * `"failed"` (see error()), `"rebuilt_manifest"` or `"removed_temp"` (a
   * hidden temporary file a killed writer left, removed).
   */
  std::string_view action() const noexcept { return detail::view_of(r_->action); }
  /** @brief The segment (or manifest). */
  std::string_view file() const noexcept { return detail::view_of(r_->file); }
  /** @brief Complete events kept. */
  std::uint64_t events_kept() const noexcept { return r_->events_kept; }
  /** @brief Events the old header claimed. */
  std::uint32_t header_claimed() const noexcept { return r_->header_claimed; }
  /** @brief Whether a tail was dropped (from dropped_at()). */
  bool has_dropped() const noexcept { return r_->has_dropped != 0; }
  /** @brief Where the dropped tail began. */
  std::uint64_t dropped_at() const noexcept { return r_->dropped_at; }
  /** @brief Bytes dropped. */
  std::uint64_t dropped_bytes() const noexcept { return r_->dropped_bytes; }
  /** @brief Byte ranges salvage skipped. */
  std::uint64_t skipped_ranges() const noexcept { return r_->skipped_ranges; }
  /** @brief Why the tail was dropped (a corpus error kind); empty if nothing was. */
  std::string_view reason() const noexcept { return detail::view_of(r_->reason); }
  /** @brief Where the original was kept; empty if not. */
  std::string_view backup() const noexcept { return detail::view_of(r_->backup); }
  /** @brief For `"failed"`: what failed. */
  std::optional<Error> error() const {
    if (r_->error == nullptr) return std::nullopt;
    return Error(*r_->error);
  }
  /** @brief The outcome as JSON (`null` for failures and rebuilt manifests). */
  std::string_view json() const noexcept { return detail::view_of(r_->json); }
  /** @brief The C struct. */
  const floxlog_recover_report& raw() const noexcept { return *r_; }

 private:
  const floxlog_recover_report* r_;
};

/** @brief What verify() found. */
struct VerifyResult {
  /** @brief Segments, events and bytes checked; errors and warnings found. */
  floxlog_verify_summary summary{};
  /** @brief When the check failed: FLOXLOG_VERIFY_FAILED, naming the first finding. */
  std::optional<Error> failure;
  /** @brief Whether the check passed (no errors; no warnings either when strict). */
  bool passed() const noexcept { return summary.passed != 0; }
};

/** @brief What recover() did. */
struct RecoverResult {
  /** @brief Totals over every segment. */
  floxlog_recover_summary summary{};
  /** @brief The first segment that could not be recovered (the others were still done). */
  std::optional<Error> failure;
  /** @brief Whether every segment is valid now (or, dry run, would be). */
  bool ok() const noexcept { return !failure.has_value(); }
};

/** @brief What inspect() found (copied out of the library). */
struct Inspection {
  /** @brief The totals `floxlog inspect` prints. */
  floxlog_tape_summary summary{};
  /** @brief The exact text `floxlog inspect --json` prints (without its final newline). */
  std::string json;
  /** @brief The distinct symbol ids, ascending (none after a quick inspection). */
  std::vector<std::uint32_t> symbols;
};

/** @cond detail */
namespace detail {

// A C++ callback behind a C one: the first exception it throws is kept
// (later calls are skipped) and rethrown once the C call has returned.
template <typename View, typename CStruct>
struct Callback {
  const std::function<void(const View&)>* fn;
  std::exception_ptr failure;

  static void call(const CStruct* c, void* ctx) noexcept {
    auto* self = static_cast<Callback*>(ctx);
    if (self->failure || c == nullptr) return;
    try {
      (*self->fn)(View(*c));
    } catch (...) {
      self->failure = std::current_exception();
    }
  }

  void rethrow() const {
    if (failure) std::rethrow_exception(failure);
  }
};

}  // namespace detail
/** @endcond */

/**
 * @brief Checks every segment of the tape at `path` (a directory or a
 * segment file) in full, as `floxlog verify` does.
 * @param on_finding called once per finding, in order (may be empty). An
 *   exception it throws is rethrown after the check (later findings are
 *   not delivered).
 * @return the summary; a failed check is a result (`passed()` false,
 *   `failure` set), not an exception.
 * @throws Error when the tape cannot be listed or an option is wrong.
 */
inline VerifyResult verify(const std::string& path, const VerifyOptions& options = VerifyOptions(),
                           const std::function<void(const Finding&)>& on_finding = {}) {
  detail::Callback<Finding, floxlog_finding> cb{&on_finding, nullptr};
  VerifyResult result;
  floxlog_tape_error err;
  err.code = 0;
  const floxlog_result rc =
      floxlog_tape_verify(path.c_str(), &options, on_finding ? &decltype(cb)::call : nullptr, &cb,
                          &result.summary, &err);
  cb.rethrow();
  if (rc == FLOXLOG_VERIFY_FAILED) {
    result.failure = detail::error_of(rc, err);
  } else if (rc != FLOXLOG_OK) {
    detail::throw_tape(rc, err);
  }
  return result;
}

/**
 * @brief Repairs the segments of the tape at `path` (a directory or a
 * segment file) whose writer died or that are damaged, as `floxlog
 * recover` does (takes the tape lock; keeps `<name>.damaged` backups
 * unless `no_backup`).
 * @param on_report called once per outcome, in order (may be empty). An
 *   exception it throws is rethrown after the recovery, which goes on
 *   (later outcomes are not delivered).
 * @return the summary; segments that could not be recovered are a result
 *   (`ok()` false, `failure` names the first), not an exception.
 * @throws Error when the tape cannot be listed or locked
 *   (FLOXLOG_TAPE_LOCKED while a writer runs).
 */
inline RecoverResult recover(const std::string& path, const RecoverOptions& options = RecoverOptions(),
                             const std::function<void(const RecoverReport&)>& on_report = {}) {
  // Counts the "failed" outcomes, which tell a per-segment failure (the
  // summary is filled) from a tape that could not be recovered at all.
  std::uint64_t failed_reports = 0;
  const std::function<void(const RecoverReport&)> counting = [&](const RecoverReport& r) {
    if (r.action() == "failed") ++failed_reports;
    if (on_report) on_report(r);
  };
  detail::Callback<RecoverReport, floxlog_recover_report> cb{&counting, nullptr};
  RecoverResult result;
  floxlog_tape_error err;
  err.code = 0;
  const floxlog_result rc =
      floxlog_tape_recover(path.c_str(), &options, &decltype(cb)::call, &cb, &result.summary, &err);
  cb.rethrow();
  if (rc != FLOXLOG_OK) {
    if (failed_reports == 0 && result.summary.failed == 0) detail::throw_tape(rc, err);
    result.failure = detail::error_of(rc, err);
  }
  return result;
}

/**
 * @brief Summarises the tape at `path` (a directory or a segment file) as
 * `floxlog inspect` does. Damage does not throw (`summary.failed` says so
 * and the JSON names it).
 * @throws Error when the tape cannot be listed.
 */
inline Inspection inspect(const std::string& path, const InspectOptions& options = InspectOptions()) {
  struct Free {
    void operator()(floxlog_inspection* i) const noexcept { floxlog_inspection_free(i); }
  };
  floxlog_inspection* raw = nullptr;
  detail::tape_call(floxlog_tape_inspect, path.c_str(), &options, &raw);
  const std::unique_ptr<floxlog_inspection, Free> handle(raw);
  Inspection out;
  detail::check_code(floxlog_inspection_summary(handle.get(), &out.summary));
  const char* json = nullptr;
  std::size_t len = 0;
  detail::check_code(floxlog_inspection_json(handle.get(), &json, &len));
  out.json.assign(json, len);
  const std::uint32_t* ids = nullptr;
  std::size_t count = 0;
  detail::check_code(floxlog_inspection_symbols(handle.get(), &ids, &count));
  out.symbols.assign(ids, ids + count);
  return out;
}


/** @brief A price level of a book: `price_raw`, `qty_raw`. */
using Level = floxlog_level;

/** @brief One symbol's book at a time (book_at()), best level first. */
struct BookAt {
  /** @brief Bids, highest price first. */
  std::vector<Level> bids;
  /** @brief Asks, lowest price first. */
  std::vector<Level> asks;
};

/**
 * @brief The book of `symbol_id` in the tape at `path` after every event
 * stamped at or before `ts` (exchange_ts_ns), at most `depth` levels a
 * side, as `floxlog book --at` prints it.
 * @throws Error on damage before `ts` (file and offset), a negative delta
 *   quantity (FLOXLOG_MALFORMED_RECORD), a side of over 65535 levels
 *   (FLOXLOG_CAPACITY_EXCEEDED) or an unreadable tape.
 */
inline BookAt book_at(const std::string& path, std::uint32_t symbol_id, std::int64_t ts, std::size_t depth = 64) {
  BookAt out;
  out.bids.resize(depth);
  out.asks.resize(depth);
  std::size_t nb = 0;
  std::size_t na = 0;
  detail::tape_call(floxlog_tape_book_at, path.c_str(), symbol_id, ts, out.bids.data(), depth, out.asks.data(),
                    depth, &nb, &na);
  out.bids.resize(nb);
  out.asks.resize(na);
  return out;
}

/** @brief Options of diff(): all-zero (the default) compares events in file order. */
using DiffOptions = floxlog_diff_options;

/** @brief What diff() found. */
struct DiffResult {
  /** @brief Where the tapes first differ, the equal prefix, counts per type. */
  floxlog_diff_result raw{};
  /** @brief When a tape is damaged: the first damage (kind, file, offset). */
  std::optional<Error> damage;
  /** @brief Whether the tapes compared equal (and neither is damaged). */
  bool identical() const noexcept { return !damage && raw.different == 0; }
  /** @brief Whether they differ (`raw.a`, `raw.b` and fields() say where). */
  bool different() const noexcept { return raw.different != 0; }
  /** @brief The differing fields, `"price_raw: 100 vs 101"` joined by `"; "`. */
  std::string fields() const {
    return std::string(raw.fields,
                       static_cast<std::size_t>(std::find(raw.fields, raw.fields + sizeof raw.fields, '\0') -
                                                raw.fields));
  }
};

/**
 * @brief Compares the tapes at `a` and `b` (directories or segment files,
 * either layout, any compression) as `floxlog diff` does.
 * @return identical, different, or damaged (`damage` set): results, not
 *   exceptions.
 * @throws Error when a tape cannot be listed or opened.
 */
inline DiffResult diff(const std::string& a, const std::string& b, const DiffOptions& options = DiffOptions()) {
  DiffResult result;
  floxlog_tape_error err;
  err.code = 0;
  const floxlog_result rc = floxlog_tape_diff(a.c_str(), b.c_str(), &options, &result.raw, &err);
  if (rc == FLOXLOG_OK || rc == FLOXLOG_DIFFERENT) return result;
  if (result.raw.damaged == 0) detail::throw_tape(rc, err);
  result.damage = detail::error_of(rc, err);
  return result;
}

}  // namespace floxlog

#endif  // FLOXLOG_HPP
