// Machine description from /proc/cpuinfo, CPUID and sysfs. Only what decides
// microkernel speed goes into the fingerprint: the CPU model and its vector ISA.
#include "convtune/core/machine.h"

#include <sched.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/text.h"

namespace convtune {

namespace {

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return trim(line);
}

// Flags that change which vector code runs; the rest (virtualisation, power
// management, ...) would make equivalent machines look different.
bool vector_isa_flag(const std::string& f) {
  static const std::set<std::string> exact = {
      // x86
      "sse", "sse2", "pni", "ssse3", "sse4_1", "sse4_2", "sse4a", "avx", "avx2", "fma", "fma4",
      "f16c", "avx_vnni", "avx_vnni_int8", "avx_ifma", "avx_ne_convert",
      // AArch64
      "fp", "asimd", "fphp", "asimdhp", "asimddp", "asimdfhm", "asimdrdm", "bf16", "i8mm"};
  static const char* const prefixes[] = {"avx512", "amx", "sve", "sme"};
  if (exact.count(f)) return true;
  if (f == "smep") return false;  // x86 security feature, not AArch64 SME
  for (const char* p : prefixes)
    if (f.rfind(p, 0) == 0) return true;
  return false;
}

// "32K", "1024K", "1M", "512" -> bytes; 0 when unparsable.
int64_t parse_cache_size(const std::string& text) {
  size_t pos = 0;
  int64_t n = 0;
  try {
    n = std::stoll(text, &pos);
  } catch (const std::exception&) {
    return 0;
  }
  std::string unit = trim(text.substr(pos));
  if (unit.empty()) return n;
  switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
    case 'K': return n << 10;
    case 'M': return n << 20;
    case 'G': return n << 30;
    default: return 0;
  }
}

// Deterministic cache parameters from the cpuid instruction: Intel leaf 4,
// AMD leaf 0x8000001D (same layout). L3 is the slice this core's complex
// shares, which is what one measuring core can use. False when not x86 or the
// leaf is absent (some hypervisors hide it).
bool read_cpuid_leaf_caches(MachineInfo* m) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amd = ebx == 0x68747541 || ebx == 0x6f677948;  // "Auth"enticAMD, "Hygo"nGenuine
  unsigned leaf = 4;
  if (amd) {
    unsigned max_ext = __get_cpuid_max(0x80000000, nullptr);
    if (max_ext < 0x8000001D || !__get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) ||
        !(ecx & (1u << 22)))  // topology extensions: leaf 0x8000001D is valid
      return false;
    leaf = 0x8000001D;
  } else if (eax < 4) {
    return false;
  }
  for (unsigned sub = 0; sub < 16; ++sub) {
    __cpuid_count(leaf, sub, eax, ebx, ecx, edx);
    const unsigned type = eax & 0x1f, level = (eax >> 5) & 0x7;
    if (type == 0) break;  // no more caches
    const int64_t size = int64_t((ebx >> 22) + 1) * (((ebx >> 12) & 0x3ff) + 1) *
                         ((ebx & 0xfff) + 1) * (int64_t(ecx) + 1);
    if (level == 1 && type == 1) m->l1d_bytes = size;
    if (level == 2 && type != 2) m->l2_bytes = size;
    if (level == 3 && type != 2) m->l3_bytes = size;
  }
  return m->l1d_bytes > 0 && m->l2_bytes > 0;  // a CPU without L3 is fine
#else
  (void)m;
  return false;
#endif
}

// What the C library says (glibc asks CPUID on x86, with its own fallbacks);
// 0 when it does not know.
bool read_sysconf_caches(MachineInfo* m) {
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
  auto get = [](int name) {
    long v = sysconf(name);
    return v > 0 ? int64_t(v) : int64_t(0);
  };
  m->l1d_bytes = get(_SC_LEVEL1_DCACHE_SIZE);
  m->l2_bytes = get(_SC_LEVEL2_CACHE_SIZE);
  m->l3_bytes = get(_SC_LEVEL3_CACHE_SIZE);
  return m->l1d_bytes > 0 && m->l2_bytes > 0;
#else
  (void)m;
  return false;
#endif
}

// The caches of one CPU from sysfs; false when sysfs lists none.
bool read_sysfs_caches(MachineInfo* m, int cpu) {
  const std::string base = fmt::format("/sys/devices/system/cpu/cpu{}/cache/index", cpu);
  bool any = false;
  for (int i = 0; i < 16; ++i) {
    std::string dir = base + std::to_string(i) + "/";
    std::string level = read_line(dir + "level");
    if (level.empty()) break;
    std::string type = read_line(dir + "type");
    int64_t size = parse_cache_size(read_line(dir + "size"));
    if (level == "1" && type == "Data") m->l1d_bytes = size;
    if (level == "2" && type != "Instruction") m->l2_bytes = size;
    if (level == "3" && type != "Instruction") m->l3_bytes = size;
    any = any || size > 0;
  }
  return any;
}

void read_caches(MachineInfo* m, int cpu) {
  MachineInfo probe;
  if (read_cpuid_leaf_caches(&probe)) {
    m->cache_source = "cpuid";
  } else if (probe = MachineInfo(), read_sysconf_caches(&probe)) {
    m->cache_source = "sysconf";
  } else if (probe = MachineInfo(), read_sysfs_caches(&probe, cpu)) {
    m->cache_source = fmt::format("sysfs cpu{}", cpu);
  } else {
    m->cache_source = "unknown";
    return;
  }
  m->l1d_bytes = probe.l1d_bytes;
  m->l2_bytes = probe.l2_bytes;
  m->l3_bytes = probe.l3_bytes;
}

// The online CPU list as the kernel prints it ("0-3,6"); "" if unavailable.
std::string online_cpus() { return read_line("/sys/devices/system/cpu/online"); }

}  // namespace

std::string MachineInfo::fingerprint() const {
  std::vector<std::string> flags = isa_flags;
  std::sort(flags.begin(), flags.end());
  std::string s = cpu_model + " | ";
  for (size_t i = 0; i < flags.size(); ++i) s += (i ? "," : "") + flags[i];
  return s;
}

MachineInfo detect_machine(int cpu) {
  MachineInfo m;
  m.cpu_model = "unknown";
  std::ifstream f("/proc/cpuinfo");
  std::string line, implementer, part;
  std::set<std::string> flags;
  bool have_model = false, have_flags = false;
  while (std::getline(f, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name" && !have_model && !value.empty()) {
      m.cpu_model = value;
      have_model = true;
    } else if ((key == "flags" || key == "Features") && !have_flags) {
      std::istringstream ss(value);
      std::string w;
      while (ss >> w)
        if (vector_isa_flag(w) && !cpu_flag_hidden(w)) flags.insert(w);  // CONVTUNE_MAX_CPU_ISA (isa.h)
      have_flags = true;
    } else if (key == "CPU implementer" && implementer.empty()) {
      implementer = value;
    } else if (key == "CPU part" && part.empty()) {
      part = value;
    }
  }
  // AArch64 kernels print no model name; the implementer/part ids identify the core.
  if (!have_model && !implementer.empty())
    m.cpu_model = fmt::format("ARM implementer {} part {}", implementer, part);
  m.isa_flags.assign(flags.begin(), flags.end());
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = n >= 1 ? int(n) : 1;
  read_caches(&m, cpu >= 0 ? cpu : 0);
  return m;
}

namespace {

// The CPUs the calling thread may run on, ascending (empty when unreadable).
std::vector<int> thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> v;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) v.push_back(c);
  return v;
}

}  // namespace

int default_cpu() {
  // The last CPU this process may run on: respects taskset and cgroups, so
  // `taskset -c 0 convtune ...` measures on CPU 0.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = CPU_SETSIZE - 1; c >= 0; --c)
      if (CPU_ISSET(c, &set)) return c;
  std::string list = online_cpus();
  // The last number of "0-3,6" or "0-7" is the highest online CPU.
  size_t p = list.find_last_of(",-");
  std::string last = p == std::string::npos ? list : list.substr(p + 1);
  try {
    if (!last.empty()) return std::stoi(last);
  } catch (const std::exception&) {
  }
  return detect_machine().cores - 1;
}

void check_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  bool ok = cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_ISSET(cpu, &set);
  if (!ok) {
    std::string cpus = online_cpus();
    if (cpus.empty()) cpus = fmt::format("0-{}", detect_machine().cores - 1);
    throw Error(fmt::format("cannot pin to CPU {}: this machine has CPUs {}; use --cpu with one of them", cpu, cpus));
  }
}

void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  bool ok = cpu >= 0 && cpu < CPU_SETSIZE;
  if (ok) {
    CPU_SET(cpu, &set);
    ok = sched_setaffinity(0, sizeof(set), &set) == 0;
  }
  if (!ok) {
    std::string cpus = online_cpus();
    if (cpus.empty()) cpus = fmt::format("0-{}", detect_machine().cores - 1);
    throw Error(fmt::format(
        "cannot pin to CPU {}: this machine has CPUs {}; use --cpu with one of them", cpu, cpus));
  }
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, detect_machine().cores);
}

std::vector<int> measuring_cpus(int cpu, int threads) {
  if (cpu < 0) cpu = default_cpu();
  check_cpu(cpu);
  if (threads <= 1) return {cpu};
  const std::vector<int> all = thread_cpus();
  const auto above = std::upper_bound(all.begin(), all.end(), cpu);
  std::vector<int> v(std::make_reverse_iterator(above), all.rend());  // --cpu and those below it first
  v.insert(v.end(), above, all.end());
  if (int(v.size()) > threads) v.resize(size_t(threads));
  if (int(v.size()) < threads)
    throw Error(fmt::format("--threads {} needs {} CPUs, but this process may use only {}; give --threads {} or "
                            "fewer",
                            threads, threads, v.size(), v.size()));
  std::sort(v.begin(), v.end());
  return v;
}

void pin_to_cpus(const std::vector<int>& cpus) {
  if (cpus.size() == 1) return pin_to_cpu(cpus[0]);
  cpu_set_t set;
  CPU_ZERO(&set);
  bool ok = !cpus.empty();
  for (int c : cpus) {
    ok = ok && c >= 0 && c < CPU_SETSIZE;
    if (ok) CPU_SET(c, &set);
  }
  if (!ok || sched_setaffinity(0, sizeof(set), &set) != 0)
    throw Error(fmt::format("cannot pin to CPUs {}: this machine has CPUs {}; use --cpu and --threads within them",
                            cpu_list(cpus), online_cpus()));
}

void bind_openmp_threads(const std::vector<int>& cpus) {
  pin_to_cpus(cpus);  // the set first: each CPU below is one of it
#ifdef _OPENMP
  // Left to the scheduler, the two threads of a team can share one CPU for a
  // whole process, and a microseconds-long call then takes milliseconds (two
  // scheduler ticks); binding only the workers does not prevent it, binding
  // every thread of the team does. libgomp reads OMP_PROC_BIND only when it
  // loads, so the pool is bound here; later teams of this size reuse it.
  if (cpus.size() < 2) return;
#pragma omp parallel num_threads(int(cpus.size()))
  {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[size_t(omp_get_thread_num())], &one);
    (void)sched_setaffinity(0, sizeof(one), &one);
  }
#endif
}

std::vector<std::vector<int>> openmp_thread_cpus(int threads) {
  std::vector<std::vector<int>> v;
#ifdef _OPENMP
  v.resize(size_t(std::max(threads, 1)));
#pragma omp parallel num_threads(std::max(threads, 1))
  v[size_t(omp_get_thread_num())] = thread_cpus();
#else
  (void)threads;
#endif
  return v;
}

std::string cpu_list(const std::vector<int>& cpus) { return fmt::format("{}", fmt::join(cpus, ",")); }

}  // namespace convtune
