#pragma once
// A scratch directory for generated sources and shared objects: temporary
// (under $TMPDIR) and removed at the end, or a kept directory the user names.
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

}  // namespace convtune
