// Runs the system compiler; parallel compilation happens while nothing is
// being measured (the profiler and the tuner alternate the two phases).
#include "convtune/execution/compiler.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/execution/subprocess.h"

namespace convtune {

Compiler Compiler::from_env(const std::vector<std::string>& flags) {
  Compiler c;
  const char* env = std::getenv("CC");
  std::istringstream ss(env && *env ? env : "cc");
  std::string word;
  while (ss >> word) c.command.push_back(word);
  c.flags = flags;
  return c;
}

CompilerInfo Compiler::info() const {
  std::vector<std::string> argv = command;
  argv.push_back("--version");
  ProcResult r = run_command(argv, 30);
  std::string joined;
  for (const auto& w : command) joined += (joined.empty() ? "" : " ") + w;
  if (!r.ok())
    throw Error(fmt::format(
        "cannot run the C compiler '{}'; install one (apt-get install gcc) or set CC", joined));
  CompilerInfo ci;
  ci.command = joined;
  ci.version = r.output.substr(0, r.output.find('\n'));
  ci.flags = flags;
  return ci;
}

CompileResult compile_one(const Compiler& cc, const CompileJob& job) {
  std::vector<std::string> argv = cc.command;
  argv.insert(argv.end(), cc.flags.begin(), cc.flags.end());
  argv.insert(argv.end(), job.flags.begin(), job.flags.end());
  argv.push_back("-std=c99");
  argv.insert(argv.end(), cc.output_flags.begin(), cc.output_flags.end());
  argv.push_back("-o");
  argv.push_back(job.output);
  argv.push_back(job.source);
  argv.insert(argv.end(), cc.link_flags.begin(), cc.link_flags.end());
  ::unlink(job.output.c_str());  // so that a compiler writing nothing shows
  ProcResult p = run_command(argv, cc.timeout_s);
  CompileResult r;
  r.ok = p.ok();
  r.timed_out = p.timed_out;
  r.seconds = p.seconds;
  r.log = p.output.size() > 4000 ? p.output.substr(0, 4000) + "\n[...]" : p.output;
  // How it ended goes first: records keep only the start of the log.
  auto lead = [&](const std::string& why) { r.log = r.log.empty() ? why : why + "\n" + r.log; };
  if (p.timed_out) lead(fmt::format("the compiler timed out after {:.0f} s", cc.timeout_s));
  if (p.signal) lead(fmt::format("the compiler was killed by signal {} ({})", p.signal, strsignal(p.signal)));
  struct stat st;
  if (r.ok && ::stat(job.output.c_str(), &st) != 0) {
    r.ok = false;
    r.no_output = true;
    lead(fmt::format("the C compiler '{}' produced no output file {}", fmt::join(cc.command, " "), job.output));
  }
  return r;
}

std::vector<CompileResult> compile_all(const Compiler& cc, const std::vector<CompileJob>& jobs,
                                       int parallel, const std::function<void(size_t)>& on_done) {
  std::vector<CompileResult> results(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      results[i] = compile_one(cc, jobs[i]);
      std::lock_guard<std::mutex> lock(mu);
      if (on_done) on_done(i);
    }
  };
  std::vector<std::thread> threads;
  int n = std::max(1, std::min<int>(parallel, int(jobs.size())));
  for (int t = 0; t < n; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return results;
}

int default_jobs() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 1 ? int(n - 1) : 1;
}

}  // namespace convtune
