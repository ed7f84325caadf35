#pragma once
#include <string>

namespace convtune {

/// Creates the parent directory and checks that `path` can be written,
/// without leaving a file behind; throws Error naming `option` otherwise.
void ensure_writable(const std::string& path, const std::string& option);

}  // namespace convtune
