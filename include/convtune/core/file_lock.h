#pragma once
// An exclusive lock on `<path>.lock` for the whole of a long job that writes
// `path` (a tuning log, a class table), so that a second convtune on the same
// file is refused instead of both measuring with halved timings.
#include <string>

namespace convtune {

class FileLock {
 public:
  /// Takes the lock or throws Error "<what> '<path>' is in use by convtune
  /// pid N on HOST since T; wait for it to finish or use another <option>".
  FileLock(const std::string& path, const std::string& what, const std::string& option);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  const std::string& lock_path() const { return lock_path_; }

 private:
  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace convtune
