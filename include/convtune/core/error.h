#pragma once
// One exception type for every user-facing failure. Its message is a single
// line that names the problem and, where there is one, the fix; the CLI
// prints it as "convtune: error: <message>" and exits non-zero.
#include <stdexcept>
#include <string>

namespace convtune {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

}  // namespace convtune
