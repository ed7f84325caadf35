#pragma once
// Files compiled into the binary (see cmake/embed.cmake), so that convtune
// runs from any directory on a fresh checkout.
#include <string>

namespace convtune {

/// The text of a file embedded at build time, by its path relative to the
/// source root (e.g. "configs/layers.json"); nullptr when not embedded.
const char* embedded_file(const std::string& path);

}  // namespace convtune
