#pragma once
// What machine this is: CPU model, ISA flags, cores and cache sizes (from
// /proc/cpuinfo, CPUID and sysfs). Tables carry it so a table from another CPU is noticed.
#include <cstdint>
#include <string>
#include <vector>

namespace convtune {

struct MachineInfo {
  std::string cpu_model;               // "AMD EPYC ..." or "unknown"
  std::vector<std::string> isa_flags;  // the vector-ISA subset of the CPU flags
  int cores = 1;                       // online logical CPUs
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // per core for L1/L2; 0 = unknown
  /// Where the cache sizes came from, first that answers: "cpuid" (the cpuid
  /// instruction, leaf 4 or 0x8000001D; L3 is this core's slice), "sysconf"
  /// (the C library), "sysfs cpuN" (that CPU's /sys/.../cache), or "unknown"
  /// (all sizes 0; users such as csa then assume documented defaults).
  /// Not serialised in class tables.
  std::string cache_source = "unknown";

  /// Model string plus flags: what must match for a table to transfer.
  std::string fingerprint() const;
};

/// Caches are those of `cpu` (the measuring CPU) where they can differ per
/// CPU: CPUID first, then `cpu`'s sysfs entries (cpu0's when cpu < 0).
MachineInfo detect_machine(int cpu = -1);
/// Default measuring core: the last CPU this process may run on.
int default_cpu();
/// Throws Error (as pin_to_cpu would) when `cpu` is not available to this
/// process; pins nothing, so the caller's compiler children keep every core.
void check_cpu(int cpu);
/// Pins the calling thread to a CPU; throws Error if the CPU does not exist.
void pin_to_cpu(int cpu);

/// How many CPUs this process may run on (sched_getaffinity; taskset and
/// cgroups count): the default of --threads.
int available_cpus();
/// The CPUs a measurement with `threads` threads runs on, ascending: `cpu`
/// (default_cpu() when cpu < 0) and the CPUs this process may use nearest
/// below it, then above it; {cpu} for one thread. Throws Error naming
/// --threads when this process may use fewer CPUs.
std::vector<int> measuring_cpus(int cpu, int threads);
/// Pins the calling thread to a set of CPUs (as pin_to_cpu for one).
void pin_to_cpus(const std::vector<int>& cpus);
/// pin_to_cpus, then binds an OpenMP team of cpus.size() threads one per CPU,
/// thread i on the i-th, the calling thread (thread 0) included: what the
/// driver's OMP_PROC_BIND=close gives generated kernels (microkernels/driver.c),
/// for a process that runs oneDNN or loaded kernels and no other thread pool
/// (the calling thread stays on one CPU, and pools started later inherit it).
void bind_openmp_threads(const std::vector<int>& cpus);
/// The CPUs each thread of an OpenMP team of `threads` may run on, by thread
/// number; empty when this build has no OpenMP.
std::vector<std::vector<int>> openmp_thread_cpus(int threads);
/// "2,3": the CPU list as the driver and messages take it.
std::string cpu_list(const std::vector<int>& cpus);

}  // namespace convtune
