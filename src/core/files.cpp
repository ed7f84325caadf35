#include "convtune/core/files.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

int write_all(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += size_t(n);
  }
  return 0;
}

namespace {

// Writes `text` through a temporary file renamed over `path`; durable: synced
// first. Returns 0 or the errno of the step that failed (nothing left behind).
int write_whole(const std::string& path, const std::string& text, bool durable) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) return ec.value();
  }
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return errno;
  int err = write_all(fd, text.data(), text.size());
  if (!err && fchmod(fd, 0644) != 0) err = errno;            // mkstemp makes 0600; these are user files
  if (!err && durable && fsync(fd) != 0) err = errno;        // the rename must not publish an empty file after a crash
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) unlink(tmp.c_str());
  return err;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& text, const std::string& what,
                       const std::string& fix) {
  if (int err = write_whole(path, text, true))
    throw Error(fmt::format("cannot write {} to '{}': {}; {}", what, path, std::strerror(err), fix));
}

void write_work_file(const std::string& path, const std::string& text) {
  if (int err = write_whole(path, text, false))
    throw Error(fmt::format("cannot write {}: {}; free space in the temporary directory or set TMPDIR", path,
                            std::strerror(err)));
}

std::string cache_dir() {
  std::string base;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    if (home && *home)
      base = home;
    else if (const passwd* pw = getpwuid(getuid()))
      base = pw->pw_dir;
    base += "/.cache";
  }
  return base + "/convtune";
}

}  // namespace convtune
