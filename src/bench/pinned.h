#pragma once
// Pins the calling thread for a scope and restores its mask afterwards, so
// a later tune (--network) compiles on every core again. Thread pools started
// meanwhile (XNNPACK's, OpenBLAS's) inherit the set. Shared by bench and
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
    cpus_ = cpus;
  }
  // Once the other pools have started: the OpenMP pool one thread per CPU of
  // the set, the calling thread on the first, as the tune's driver binds it
  // (machine.h bind_openmp_threads). A team left to the scheduler can share
  // one CPU, and a kernel of two threads then runs at half speed for the
  // whole process.
  void bind_openmp() const { bind_openmp_threads(cpus_); }
  ~Pinned() {
    if (restore_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;

 private:
  cpu_set_t saved_;
  bool restore_ = false;
  std::vector<int> cpus_;
};

}  // namespace convtune
