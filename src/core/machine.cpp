// Machine description from /proc/cpuinfo and sysfs. Only what decides
// microkernel speed goes into the fingerprint: the CPU model and its vector ISA.
#include "convtune/core/machine.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/isa.h"

namespace convtune {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

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

void read_caches(MachineInfo* m) {
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int i = 0; i < 16; ++i) {
    std::string dir = base + std::to_string(i) + "/";
    std::string level = read_line(dir + "level");
    if (level.empty()) break;
    std::string type = read_line(dir + "type");
    int64_t size = parse_cache_size(read_line(dir + "size"));
    if (level == "1" && type == "Data") m->l1d_bytes = size;
    if (level == "2" && type != "Instruction") m->l2_bytes = size;
    if (level == "3" && type != "Instruction") m->l3_bytes = size;
  }
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

MachineInfo detect_machine() {
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
  read_caches(&m);
  return m;
}

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

}  // namespace convtune
