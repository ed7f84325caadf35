// Generated code of another architecture: cross-compiled static executables
// with microkernels/emulated_driver.c as main(), run under qemu-user. The
// driver prints the lines the native children print (runner.cpp, profile.cpp).
#include "convtune/execution/emulated_runner.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "convtune/core/embedded_data.h"
#include "convtune/core/error.h"
#include "convtune/offline/peak.h"
#include "convtune/execution/subprocess.h"

namespace convtune {

namespace {

const char* const kDriver = "microkernels/emulated_driver.c";

Compiler cross_compiler(const Isa& isa) {
  Compiler c;
  const char* env = std::getenv("CROSS_CC");
  std::istringstream ss(env && *env ? env : isa.emulation.cross_cc);
  std::string word;
  while (ss >> word) c.command.push_back(word);
  return c;
}

std::string joined(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, " ")); }

// Runs `qemu args...` in a forked child whose stdout and stderr are the lines.
ForkResult run_emulated(const std::string& qemu, const std::vector<std::string>& args, double idle_s,
                        const std::function<void(const std::string&)>& on_line = {}) {
  std::vector<std::string> argv{qemu};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  return run_forked(
      [&](int fd) {
        rlimit none{0, 0};
        setrlimit(RLIMIT_CORE, &none);  // a crashing candidate leaves no qemu core file
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2) close(fd);
        execvp(cargv[0], cargv.data());
        write_line(1, "exec_error cannot run " + qemu + ": " + std::strerror(errno));
        return 127;
      },
      idle_s, on_line);
}

std::string failure(const ForkResult& fr, const std::string& last, double timeout_s) {
  std::string why = fr.timed_out ? fmt::format("no result within {:.0f} s", timeout_s)
                    : fr.signal  ? fmt::format("killed by signal {} ({})", fr.signal, strsignal(fr.signal))
                                 : fmt::format("exited with code {} before reporting", fr.exit_code);
  return last.empty() ? why : why + ": " + last;
}

void write_problem(const ProblemData& p, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  const int64_t n[4] = {int64_t(p.input.size()), int64_t(p.weights.size()), int64_t(p.output_size()),
                        int64_t(p.check_index.size())};
  f.write("CTPROB1", 8);
  f.write(reinterpret_cast<const char*>(n), sizeof n);
  f.write(reinterpret_cast<const char*>(&p.tolerance), 8);
  f.write(reinterpret_cast<const char*>(p.input.data()), std::streamsize(4 * p.input.size()));
  f.write(reinterpret_cast<const char*>(p.weights.data()), std::streamsize(4 * p.weights.size()));
  f.write(reinterpret_cast<const char*>(p.check_index.data()), std::streamsize(8 * p.check_index.size()));
  f.write(reinterpret_cast<const char*>(p.check_value.data()), std::streamsize(8 * p.check_value.size()));
  if (!f) throw Error("cannot write " + path + "; check free space in the temporary directory");
}

}  // namespace

bool use_emulation(const Isa& isa, bool emulate) {
  if (cpu_supports(isa)) return false;  // e.g. NEON on an AArch64 host: the normal path
  if (isa.arch == host_arch() || isa.emulation.qemu.empty())
    throw Error(fmt::format("this CPU cannot run {} code (needs CPU flags: {}); choose another --arch", isa.name,
                            joined(isa.cpu_flags)));
  if (!emulate)
    throw Error(fmt::format("this CPU cannot run {} code; pass --emulate to run it under {} (timings are not "
                            "meaningful)",
                            isa.name, isa.emulation.qemu));
  return true;
}

std::string emulation_missing(const Isa& isa) {
  if (isa.emulation.qemu.empty()) return fmt::format("the {} description names no emulator", isa.name);
  Compiler cc = cross_compiler(isa);
  if (cc.command.empty() || !run_command({cc.command[0], "--version"}, 30).ok())
    return fmt::format("the cross compiler '{}' cannot run", joined(cc.command));
  WorkDir wd("emucheck");
  std::ofstream(wd.path() + "/hello.c") << "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n";
  cc.output_flags = {"-static"};
  if (!compile_one(cc, {wd.path() + "/hello.c", wd.path() + "/hello"}).ok)
    return fmt::format("'{}' cannot link a static C program (its C library is missing)", joined(cc.command));
  ProcResult r = run_command({isa.emulation.qemu, wd.path() + "/hello"}, 30);
  if (!r.ok() || r.output != "hello\n") return fmt::format("'{}' cannot run", isa.emulation.qemu);
  return "";
}

EmulatedRunner::EmulatedRunner(const Isa& isa) : isa_(isa), cc_(cross_compiler(isa)) {
  std::string missing = emulation_missing(isa);
  if (!missing.empty())
    throw Error(fmt::format("cannot emulate {}: {}; install {} (apt-get install) or set CROSS_CC", isa.name,
                            missing, joined(isa.emulation.packages)));
  const std::string driver = wd_.path() + "/emulated_driver.c";
  const char* text = embedded_file(kDriver);
  if (!text) throw Error(std::string(kDriver) + " is not embedded in this convtune; rebuild it");
  std::ofstream(driver) << text;
  cc_.flags = isa.cflags;
  cc_.output_flags = {"-static", driver};
}

std::string EmulatedRunner::counter_names() const {
  return fmt::format("none: emulated under {} (timings not meaningful)", emulator());
}

std::vector<CompileResult> EmulatedRunner::build_convs(const std::vector<CompileJob>& jobs,
                                                       const std::string& symbol, int parallel) const {
  Compiler c = cc_;
  c.flags.push_back("-DCT_CONV=" + symbol);
  return compile_all(c, jobs, parallel);
}

std::vector<CompileResult> EmulatedRunner::build_units(const std::vector<CompileJob>& jobs, int parallel,
                                                       const std::function<void(size_t)>& on_done) const {
  return compile_all(cc_, jobs, parallel, on_done);
}

void EmulatedRunner::set_problem(const ProblemData& p) {
  data_file_ = wd_.path() + "/problem.bin";
  write_problem(p, data_file_);
}

RunResult EmulatedRunner::run_conv(const std::string& exe, const TimingProtocol& protocol, double timeout_s) const {
  if (data_file_.empty()) throw Error("EmulatedRunner::run_conv before set_problem");
  // One line after verifying, one after timing: allow every timed call its limit.
  const double idle = (protocol.discard + protocol.repeat + 3) * (timeout_s + protocol.min_ms * 1e-3);
  ForkResult fr = run_emulated(emulator(),
                               {exe, "conv", data_file_, fmt::format("{}", protocol.min_ms),
                                std::to_string(protocol.repeat), std::to_string(protocol.discard)},
                               idle);
  RunResult r;
  r.counter_names = counter_names();
  std::string last;
  for (const auto& line : fr.lines) {
    if (parse_result_line(line, &r)) return r;
    if (line != "verified") last = line;
  }
  r.status = fr.timed_out ? "timeout" : "crash";
  r.detail = failure(fr, last, idle);
  return r;
}

void EmulatedRunner::measure_unit(const std::string& exe, const std::vector<UkCase>& cases, size_t base,
                                  const std::vector<size_t>& todo, int64_t nc_verify, int64_t nc_time,
                                  const TimingProtocol& protocol,
                                  const std::function<void(size_t, const std::string&, double)>& done) const {
  size_t from = 0;
  while (from < todo.size()) {
    std::vector<std::string> args{exe,
                                  "ukernels",
                                  std::to_string(nc_verify),
                                  std::to_string(nc_time),
                                  fmt::format("{}", protocol.min_ms),
                                  std::to_string(protocol.repeat),
                                  std::to_string(protocol.discard),
                                  std::to_string(isa_.lanes)};
    for (size_t pos = from; pos < todo.size(); ++pos) {
      const UkSizes& u = cases[todo[pos]].u;
      const UkLayout& l = cases[todo[pos]].l;
      for (int64_t v : {int64_t(pos), int64_t(todo[pos] - base), int64_t(u.k), int64_t(u.c), int64_t(u.w),
                        int64_t(u.h), int64_t(u.r), int64_t(u.s), l.in_row, l.in_pix, l.stride, l.w_r, l.w_s,
                        l.w_c, l.out_row, l.out_pix})
        args.push_back(std::to_string(v));
    }
    size_t got = from;
    ForkResult fr = run_emulated(emulator(), args, 60, [&](const std::string& line) {
      std::istringstream ss(line);
      size_t pos;
      std::string status;
      double median = 0;
      if (ss >> pos >> status >> median && pos >= got && pos < todo.size()) {
        const UkSizes& u = cases[todo[pos]].u;
        const double flops = 2.0 * double(u.fmas()) * isa_.lanes * double(nc_time);
        done(todo[pos], status, status == "ok" && median > 0 ? flops / median * 1e-9 : 0);
        got = pos + 1;
      }
    });
    if (got >= todo.size()) break;
    done(todo[got], fr.timed_out ? "timeout" : "crash", 0);
    from = got + 1;
  }
}

double EmulatedRunner::peak_gflops() {
  if (peak_exe_.empty()) {
    const std::string src = wd_.path() + "/peak.c", exe = wd_.path() + "/peak";
    std::ofstream(src) << emit_peak_source(isa_);
    CompileResult r = compile_one(cc_, {src, exe});
    if (!r.ok) throw Error("the peak loop does not compile: " + r.log.substr(0, r.log.find('\n')));
    peak_exe_ = exe;
  }
  const long iters = 20000;  // short: the emulator's speed means nothing
  ForkResult fr = run_emulated(emulator(), {peak_exe_, "peak", std::to_string(iters), "50", "3", "1"}, 120);
  for (const auto& line : fr.lines) {
    std::istringstream ss(line);
    std::string word;
    double median = 0;
    if (ss >> word >> median && word == "ok" && median > 0) return peak_flops(isa_, iters) / median * 1e-9;
  }
  throw Error(fmt::format("the peak loop failed under {} ({}); check that it runs",
                          emulator(), failure(fr, fr.lines.empty() ? "" : fr.lines.back(), 120)));
}

}  // namespace convtune
