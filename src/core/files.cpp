#include "convtune/core/files.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "convtune/core/error.h"

namespace convtune {

void ensure_writable(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec)
    throw Error(fmt::format("cannot write {} '{}': cannot create its directory ({}); choose another {}",
                            option, path, ec.message(), option));
  if (fs::is_directory(p, ec))
    throw Error(fmt::format("cannot write {} '{}': it is a directory; give a file name", option, path));
  bool existed = fs::exists(p, ec);
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f)
    throw Error(fmt::format("cannot write {} '{}': {}; choose another {}", option, path,
                            std::strerror(errno), option));
  std::fclose(f);
  if (!existed) fs::remove(p, ec);
}

}  // namespace convtune
