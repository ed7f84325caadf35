#pragma once
// A loaded shared object (dlopen), closed at destruction.
#include <string>

namespace convtune {

class DynLib {
 public:
  /// Throws Error with dlerror()'s text when the file cannot be loaded.
  explicit DynLib(const std::string& path);
  ~DynLib();
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;
  /// The symbol's address; throws Error when it is missing.
  void* symbol(const std::string& name) const;

 private:
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace convtune
