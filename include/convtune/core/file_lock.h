#pragma once
// An exclusive lock on `<path>.lock` for the whole of a long job that writes
// `path` (a tuning log, a class table), so that a second convtune on the same
// file is refused instead of both measuring with halved timings.
#include <string>
#include <vector>

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

/// Whether another process holds the lock file `lock_path` (a FileLock's
/// `<path>.lock`); false for this process's own locks and a missing file.
bool lock_held(const std::string& lock_path);

/// Removes `lock_path` when nobody holds it, taking it first as ~FileLock
/// does (so a process opening it meanwhile starts again on a new file);
/// true when it was removed. Never throws.
bool remove_stale_lock(const std::string& lock_path);

/// Whether `name` is a temporary file of write_file_atomic: `<file>.tmp-XXXXXX`.
bool is_atomic_temp_name(const std::string& name);

/// The leftovers of killed writers in `dir` and its subdirectories (issue
/// 60): in each directory where no process holds a `*.lock` file, the
/// temporary files of write_file_atomic and the lock files nobody holds
/// are removed. `own` are this process's lock files (FileLock::lock_path):
/// never opened here, since closing any descriptor of a file drops the
/// process's record locks on it. Returns how many files it removed; never throws.
int remove_stale_files(const std::string& dir, const std::vector<std::string>& own);

}  // namespace convtune
