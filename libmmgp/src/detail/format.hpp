// Internal: numbers as text in messages.
#pragma once

#include <string>

namespace mmgp::detail {

/// Shortest text that reads back as the same double.
std::string format_double(double v);

}  // namespace mmgp::detail
