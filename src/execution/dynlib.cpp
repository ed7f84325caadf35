#include "convtune/execution/dynlib.h"

#include <dlfcn.h>

#include "convtune/core/error.h"

namespace convtune {

DynLib::DynLib(const std::string& path) : path_(path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw Error("cannot load " + path + ": " + dlerror());
}

DynLib::~DynLib() {
  if (handle_) dlclose(handle_);
}

void* DynLib::symbol(const std::string& name) const {
  void* p = dlsym(handle_, name.c_str());
  if (!p) throw Error("symbol '" + name + "' is missing from " + path_);
  return p;
}

}  // namespace convtune
