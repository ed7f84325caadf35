#pragma once
// Pins the calling thread for a scope and restores its mask afterwards, so
// a later tune (--network) compiles on every core again. OpenMP threads that
// oneDNN or the kernels start meanwhile inherit the set. Shared by bench and
// bench --library.
#include <sched.h>

#include <vector>

#include "convtune/core/machine.h"

namespace convtune {

class Pinned {
 public:
  explicit Pinned(const std::vector<int>& cpus) {
    CPU_ZERO(&saved_);
    restore_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0;
    pin_to_cpus(cpus);
  }
  ~Pinned() {
    if (restore_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;

 private:
  cpu_set_t saved_;
  bool restore_ = false;
};

}  // namespace convtune
