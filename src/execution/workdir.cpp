#include "convtune/execution/workdir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "convtune/core/error.h"

namespace convtune {

WorkDir::WorkDir(const std::string& purpose, const std::string& keep_dir) {
  if (!keep_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(keep_dir, ec);
    if (ec) throw Error("cannot create directory '" + keep_dir + "': " + ec.message());
    path_ = keep_dir;
    remove_ = false;
    return;
  }
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/convtune-" + purpose + "-XXXXXX";
  if (!mkdtemp(tmpl.data()))
    throw Error("cannot create a temporary directory (" + std::string(std::strerror(errno)) +
                "); set TMPDIR to a writable directory");
  path_ = tmpl;
}

WorkDir::~WorkDir() {
  if (!remove_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace convtune
