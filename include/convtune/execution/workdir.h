#pragma once
// A scratch directory for generated sources and executables: temporary
// (under $TMPDIR) and removed at the end, or a kept directory the user names.
// A temporary one records its owner (pid, start time, pid namespace); a new WorkDir
// removes the convtune-* directories of this user whose owner is gone (a
// convtune killed with SIGKILL cannot clean up after itself).
#include <string>

namespace convtune {

class WorkDir {
 public:
  /// keep_dir empty: a fresh temporary directory named after `purpose`.
  WorkDir(const std::string& purpose, const std::string& keep_dir = "");
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool remove_ = true;
};

/// The name of the owner file in a temporary WorkDir: "<pid> <start time> <pid namespace>".
extern const char* const kWorkDirOwnerFile;

/// Removes the stale work dirs in `base`: named <prefix>* (convtune-* by
/// default; export's staging directories beside its --out have their own),
/// a directory (not a link) of this user, holding an owner file whose
/// process is gone. Returns how many it removed; never throws.
int remove_stale_workdirs(const std::string& base, const std::string& prefix = "convtune-");

/// This process's owner text, as written to the owner file.
std::string workdir_owner_text();

}  // namespace convtune
