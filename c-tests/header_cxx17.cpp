// The header compiles on its own as strict C++17 (-Wall -Wextra -Werror
// -pedantic), and its structs pass the layout checks there too; so does
// the C++ wrapper over it (header_hpp.cpp instantiates all of it).
#include "floxlog.h"
#include "floxlog.hpp"
#include "layout_checks.h"

#include <type_traits>

// Plain C data on the C++ side as well.
static_assert(std::is_trivially_copyable<floxlog_event>::value, "event is POD");
static_assert(std::is_standard_layout<floxlog_error>::value, "error is POD");

int floxlog_header_cxx17_probe();
int floxlog_header_cxx17_probe() { return FLOXLOG_OK; }
