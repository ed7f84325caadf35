// A POSIX record lock (fcntl F_SETLK) rather than flock: record locks belong
// to the process, so the measuring children forked by the tuner do not
// inherit it, and it is released when the holder dies, even by kill -9
// (a hung orphaned child would otherwise keep an flock forever).
#include "convtune/core/file_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/core/timestamp.h"

namespace convtune {

namespace {

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "an unknown host";
  return buf;
}

// "pid N on HOST since T" from the holder's lock file; the pid from the
// kernel when the file says nothing yet (the holder is between lock and write).
std::string holder_of(int fd, pid_t kernel_pid) {
  std::string text(512, '\0');
  ssize_t n = pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? size_t(n) : 0);
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_object() && j.value("pid", 0) > 0)
    return fmt::format("pid {} on {} since {}", j.value("pid", 0), j.value("host", "?"), j.value("since", "?"));
  return kernel_pid > 0 ? fmt::format("pid {}", kernel_pid) : std::string("another process");
}

// A write lock on the whole file, for F_SETLK and F_GETLK.
struct flock whole_file_write_lock() {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  return fl;
}

// Whether fd is still the file at `path`: not unlinked (or replaced) since it
// was opened, so a lock on it is a lock on that path.
bool fd_is_file_at(int fd, const std::string& path) {
  struct stat mine {}, now {};
  return fstat(fd, &mine) == 0 && stat(path.c_str(), &now) == 0 && mine.st_ino == now.st_ino &&
         mine.st_dev == now.st_dev;
}

}  // namespace

FileLock::FileLock(const std::string& path, const std::string& what, const std::string& option)
    : lock_path_(path + ".lock") {
  auto fail = [&](int err) {
    throw Error(fmt::format("cannot lock {} '{}' ({}: {}); choose another {}", what, path, lock_path_,
                            std::strerror(err), option));
  };
  for (;;) {
    fd_ = open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(errno);
    struct flock fl = whole_file_write_lock();
    if (fcntl(fd_, F_SETLK, &fl) != 0) {
      int err = errno;
      if (err != EACCES && err != EAGAIN) {
        close(fd_);
        fail(err);
      }
      struct flock who = whole_file_write_lock();
      pid_t pid = fcntl(fd_, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? who.l_pid : 0;
      std::string holder = holder_of(fd_, pid);
      close(fd_);
      fd_ = -1;
      throw Error(fmt::format("{} '{}' is in use by convtune {}; wait for it to finish or use another {}", what, path,
                              holder, option));
    }
    // The holder before us may have unlinked the file after we opened it:
    // then our lock is on a dead inode; start again on the new file.
    if (fd_is_file_at(fd_, lock_path_)) break;
    close(fd_);
  }
  nlohmann::json j{{"pid", int(getpid())}, {"host", hostname()}, {"since", utc_timestamp()}};
  std::string text = j.dump() + "\n";
  int err = ftruncate(fd_, 0) != 0 ? errno : write_all(fd_, text.data(), text.size());
  if (err) {
    unlink(lock_path_.c_str());
    close(fd_);
    fail(err);
  }
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  unlink(lock_path_.c_str());  // while still locked, so nobody locks the file being removed
  close(fd_);
}

bool lock_held(const std::string& lock_path) {
  int fd = open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock who = whole_file_write_lock();
  const bool held = fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK;
  close(fd);
  return held;
}

bool remove_stale_lock(const std::string& lock_path) {
  int fd = open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock fl = whole_file_write_lock();
  bool removed = false;
  if (fcntl(fd, F_SETLK, &fl) == 0 && fd_is_file_at(fd, lock_path))
    removed = unlink(lock_path.c_str()) == 0;  // while locked, as ~FileLock
  close(fd);
  return removed;
}

bool is_atomic_temp_name(const std::string& name) {
  const size_t at = name.rfind(".tmp-");
  return at != std::string::npos && at > 0 && name.size() == at + 5 + 6;  // mkstemp's six characters
}

int remove_stale_files(const std::string& dir, const std::vector<std::string>& own) {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs{dir};
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec)) dirs.push_back(it->path());
  int removed = 0;
  for (const fs::path& d : dirs) {
    std::vector<std::string> locks, temps;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
      const std::string name = it->path().filename().string();
      const bool mine = std::any_of(own.begin(), own.end(), [&](const std::string& o) {
        std::error_code e;
        return fs::equivalent(o, it->path(), e);
      });
      if (mine) {
        continue;  // ours: we write no temporary file while cleaning
      } else if (name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0) {
        locks.push_back(it->path().string());
      } else if (is_atomic_temp_name(name)) {
        temps.push_back(it->path().string());
      }
    }
    ec.clear();
    bool busy = false;  // a writer at work in this directory: its temporary files are its own
    for (const auto& l : locks) busy = busy || lock_held(l);
    if (busy) continue;
    for (const auto& t : temps) removed += unlink(t.c_str()) == 0;
    for (const auto& l : locks) removed += remove_stale_lock(l);
  }
  return removed;
}

}  // namespace convtune
