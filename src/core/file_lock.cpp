// A POSIX record lock (fcntl F_SETLK) rather than flock: record locks belong
// to the process, so the measuring children forked by the tuner do not
// inherit it, and it is released when the holder dies, even by kill -9
// (a hung orphaned child would otherwise keep an flock forever).
#include "convtune/core/file_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/execution/timer.h"

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
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd_, F_SETLK, &fl) != 0) {
      int err = errno;
      if (err != EACCES && err != EAGAIN) {
        close(fd_);
        fail(err);
      }
      struct flock who {};
      who.l_type = F_WRLCK;
      who.l_whence = SEEK_SET;
      pid_t pid = fcntl(fd_, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? who.l_pid : 0;
      std::string holder = holder_of(fd_, pid);
      close(fd_);
      fd_ = -1;
      throw Error(fmt::format("{} '{}' is in use by convtune {}; wait for it to finish or use another {}", what, path,
                              holder, option));
    }
    // The holder before us may have unlinked the file after we opened it:
    // then our lock is on a dead inode; start again on the new file.
    struct stat mine {}, now {};
    if (fstat(fd_, &mine) == 0 && stat(lock_path_.c_str(), &now) == 0 && mine.st_ino == now.st_ino &&
        mine.st_dev == now.st_dev)
      break;
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

}  // namespace convtune
