// Builds generated code with the driver and runs it (runner.h).
#include "convtune/execution/runner.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/embedded_data.h"
#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/core/machine.h"
#include "convtune/execution/driver_cache.h"
#include "convtune/execution/workdir.h"
#include "convtune/ukernel/peak.h"
#include "reference.h"

#ifndef CT_PAPI_CFLAGS
#define CT_PAPI_CFLAGS ""
#endif
#ifndef CT_PAPI_LIBS
#define CT_PAPI_LIBS "-lpapi"
#endif

namespace convtune {

ProblemData ProblemData::make(const Shape& s, size_t points, uint64_t seed, Epilogue epilogue) {
  ProblemData p;
  p.shape = s;
  p.epilogue = epilogue;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  p.input.resize(size_t(s.N * s.H * s.W * s.C));
  for (auto& x : p.input) x = dist(rng);
  p.weights.resize(size_t(s.K * s.Cg() * s.R * s.S));
  for (auto& x : p.weights) x = dist(rng);
  const size_t total = p.output_size();
  if (points == 0 || points >= total) {
    p.check_index.resize(total);
    std::iota(p.check_index.begin(), p.check_index.end(), 0);
  } else {
    std::uniform_int_distribution<int64_t> pick(0, int64_t(total) - 1);
    for (size_t i = 0; i < points; ++i) p.check_index.push_back(pick(rng));
    // The corners, where padding and strides go wrong first.
    p.check_index.push_back(0);
    p.check_index.push_back(int64_t(total) - 1);
  }
  // After the picks, so that a problem without an epilogue checks the same points as before.
  if (has_bias(epilogue)) {
    std::uniform_real_distribution<float> wide(-8.f, 8.f);
    p.bias.resize(size_t(s.K));
    for (auto& x : p.bias) x = wide(rng);
  }
  if (has_residual(epilogue)) {
    std::uniform_real_distribution<float> mid(-4.f, 4.f);
    p.residual.resize(total);
    for (auto& x : p.residual) x = mid(rng);
  }
  p.check_value.reserve(p.check_index.size());
  for (int64_t idx : p.check_index) p.check_value.push_back(reference_point(p, idx));
  // Each term is a product of two values in [-1, 1]; float accumulation error
  // grows with the reduction length.
  p.tolerance = 1e-5 + 2e-6 * double(s.Cg() * s.R * s.S);
  return p;
}

double reference_point(const ProblemData& p, int64_t index) {
  const Shape& s = p.shape;
  const int64_t Wo = s.Wo(), Ho = s.Ho();
  int64_t k = index % s.K, rest = index / s.K;
  int64_t ow = rest % Wo;
  rest /= Wo;
  int64_t oh = rest % Ho, n = rest / Ho;
  double sum = 0;
  for (int64_t r = 0; r < s.R; ++r)
    for (int64_t q = 0; q < s.S; ++q) {
      const int64_t y = oh * s.stride_h + r * s.dil_h - s.pad_t, x = ow * s.stride_w + q * s.dil_w - s.pad_l;
      if (y < 0 || y >= s.H || x < 0 || x >= s.W) continue;  // zero padding
      // Group k / Kg reads its Cg channels; weights [K][C/groups][R][S] (ONNX).
      const int64_t Cg = s.Cg(), g = k / s.Kg();
      const float* in = &p.input[size_t(((n * s.H + y) * s.W + x) * s.C + g * Cg)];
      const float* w = &p.weights[size_t((k * Cg * s.R + r) * s.S + q)];
      for (int64_t c = 0; c < Cg; ++c) sum += double(in[c]) * double(w[c * s.R * s.S]);
    }
  return ct_ref_epilogue(int(p.epilogue), sum, p.bias.empty() ? 0.0 : double(p.bias[size_t(k)]),
                         p.residual.empty() ? 0.0 : double(p.residual[size_t(index)]));
}

namespace {

const char* const kDriverFiles[] = {"microkernels/driver.c", "microkernels/timing.c", "microkernels/timing.h",
                                    "microkernels/check.c", "microkernels/check.h",
                                    "microkernels/reference.c", "microkernels/reference.h"};

std::vector<std::string> words(const std::string& text) {
  std::istringstream ss(text);
  std::vector<std::string> v;
  for (std::string w; ss >> w;) v.push_back(w);
  return v;
}

std::string joined(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, " ")); }

Compiler cross_compiler(const Isa& isa) {
  Compiler c;
  const char* env = std::getenv("CROSS_CC");
  c.command = words(env && *env ? env : isa.emulation.cross_cc);
  return c;
}

std::string clipped(const std::string& s) { return s.size() > 300 ? s.substr(0, 300) + " [...]" : s; }

// The line as a JSON object, or null when it is something else (a message of
// the C library, qemu or the kernel, or a torn line).
nlohmann::json object_of(const std::string& line) {
  if (line.empty() || line[0] != '{') return nullptr;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  return j.is_object() ? j : nlohmann::json(nullptr);
}

// How a driver ended without a result: how it stopped and the last thing it said.
std::string failure(const ProcResult& p, const std::string& last, double timeout_s) {
  std::string why = failure_text(p, timeout_s);
  if (why.empty()) why = "exited with code 0";
  if (!p.timed_out) why += " before reporting";
  return last.empty() ? why : why + ": " + clipped(last);
}

// A compiler that ran out of room says so in its log: the temporary
// directory's fault, not the code's, so one clear error rather than a
// compile error for every candidate.
void check_room(const CompileResult& r, const std::vector<std::string>& cc) {
  if (r.ok) return;
  for (const char* why : {"No space left on device", "Disk quota exceeded", "File too large"})
    if (r.log.find(why) != std::string::npos)
      throw Error(fmt::format("the C compiler '{}' cannot write its output: {}; free space in the temporary "
                              "directory or set TMPDIR",
                              joined(cc), why));
}

// The driver's problem file (microkernels/driver.c run_conv): counts, the
// tolerance, then input, weights, bias, residual, check points and values.
void write_problem(const ProblemData& p, const std::string& path) {
  const int64_t n[6] = {int64_t(p.input.size()), int64_t(p.weights.size()), int64_t(p.output_size()),
                        int64_t(p.check_index.size()), int64_t(p.bias.size()), int64_t(p.residual.size())};
  std::string f("CTPROB3", 8);
  auto put = [&](const void* data, size_t bytes) { f.append(static_cast<const char*>(data), bytes); };
  put(n, sizeof n);
  put(&p.tolerance, 8);
  put(p.input.data(), 4 * p.input.size());
  put(p.weights.data(), 4 * p.weights.size());
  put(p.bias.data(), 4 * p.bias.size());
  put(p.residual.data(), 4 * p.residual.size());
  put(p.check_index.data(), 8 * p.check_index.size());
  put(p.check_value.data(), 8 * p.check_value.size());
  write_work_file(path, f);
}

}  // namespace

RunResult conv_result(const ProcResult& p, double timeout_s) {
  RunResult r;
  std::string last;
  for (const auto& line : p.lines) {
    nlohmann::json j = object_of(line);
    if (j.is_null() || !j.contains("status")) {
      if (j.is_null()) last = line;
      continue;
    }
    try {
      const std::string status = j.at("status").get<std::string>();
      if (status == "ok") {
        r.status = Status::ok;
        r.seconds = j.at("median_s").get<double>();
        r.samples = j.at("samples").get<std::vector<double>>();
        if (j.contains("probe_s")) r.probe_s = j.at("probe_s").get<std::vector<double>>();
        r.counters = j.at("counters").get<std::vector<long long>>();
        r.counter_names = j.at("counter_names").get<std::string>();
        if (!(r.seconds > 0)) throw std::runtime_error("no time");
        if (!r.probe_s.empty() && r.probe_s.size() != r.samples.size())
          throw std::runtime_error("a probe time per sample");
        r.wall_seconds = r.seconds;
      } else if (status == "wrong_result" || status == "error") {
        // A driver that could not start its work ("error") did not load the code.
        r.status = status == "error" ? Status::load_error : Status::wrong_result;
        r.detail = j.at("detail").get<std::string>();
      } else {
        throw std::runtime_error("unknown status");
      }
      return r;
    } catch (const std::exception&) {
      r = RunResult{};
      r.status = Status::crash;
      r.detail = "the driver reported an unreadable result: " + clipped(line);
      return r;
    }
  }
  r.status = p.timed_out ? Status::timeout : p.exit_code == 127 && !p.signal ? Status::load_error : Status::crash;
  r.detail = p.exit_code == 127 && !p.signal && !p.timed_out ? clipped(last) : failure(p, last, timeout_s);
  if (p.timed_out) r.detail += " (--timeout)";
  return r;
}

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
  write_work_file(wd.path() + "/hello.c", "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n");
  cc.output_flags = {"-static"};
  if (!compile_one(cc, {wd.path() + "/hello.c", wd.path() + "/hello"}).ok)
    return fmt::format("'{}' cannot link a static C program (its C library is missing)", joined(cc.command));
  ProcResult r = run_command({isa.emulation.qemu, wd.path() + "/hello"}, 30);
  if (!r.ok() || r.output != "hello\n") return fmt::format("'{}' cannot run", isa.emulation.qemu);
  return "";
}

Runner::Runner(const Isa& isa, bool emulated, int cpu, const std::string& dir, int threads)
    : isa_(isa), emulated_(emulated), dir_(dir) {
  if (cpu >= 0) cpus_ = threads > 1 ? measuring_cpus(cpu, threads) : std::vector<int>{cpu};
  if (emulated_) {
    std::string missing = emulation_missing(isa);
    if (!missing.empty())
      throw Error(fmt::format("cannot emulate {}: {}; install {} (apt-get install) or set CROSS_CC", isa.name,
                              missing, joined(isa.emulation.packages)));
    cc_ = cross_compiler(isa);
    cc_.flags = isa.cflags;
  } else {
    cc_ = Compiler::from_env(isa.cflags);
  }
  // The driver is compiled once; every executable links its objects. They
  // come from the driver cache when it has them for this compiler, these
  // flags and these sources (driver_cache.h): the key takes all of them but
  // the work directory's name.
  Compiler obj = cc_;
  obj.output_flags = {"-c", "-I" + dir_};
  if (emulated_) {
    obj.output_flags.push_back("-DCT_EMULATED");
  } else {
    obj.output_flags.push_back("-DCT_PAPI");
    for (const auto& w : words(CT_PAPI_CFLAGS)) obj.output_flags.push_back(w);
  }
  std::vector<std::string> inputs(obj.output_flags.begin() + 2, obj.output_flags.end());  // not -c -I<dir>
  for (const char* f : kDriverFiles) {
    const char* text = embedded_file(f);
    if (!text) throw Error(std::string(f) + " is not embedded in this convtune; rebuild it");
    const std::string path = dir_ + std::strrchr(f, '/');
    write_work_file(path, text);
    inputs.insert(inputs.end(), {f, text});
  }
  cc_.output_flags = emulated_ ? std::vector<std::string>{"-static"} : std::vector<std::string>{};
  cc_.link_flags.clear();
  // The peak loop too: the peak executable's work and every candidate's clock probe.
  const std::string peak_source = emit_peak_source(isa_);
  write_work_file(dir_ + "/peak.c", peak_source);
  inputs.push_back(peak_source);
  const std::vector<std::string> names = {"driver", "timing", "check", "reference", "peak"};
  std::vector<std::string> objects;
  for (const std::string& name : names) objects.push_back(name + ".o");
  const std::string cache_key = compiled_key(cc_, inputs);  // a missing compiler is an error now, not 20 failed candidates
  const bool cached = fetch_compiled(cache_key, objects, dir_);
  for (const std::string& name : names) {
    if (!cached) {
      CompileResult r = compile_one(obj, {fmt::format("{}/{}.c", dir_, name), fmt::format("{}/{}.o", dir_, name)});
      check_room(r, cc_.command);
      if (r.no_output)
        throw Error(fmt::format("the C compiler '{}' produced no output file {}/{}.o; set {} to a working C compiler",
                                joined(cc_.command), dir_, name, emulated_ ? "CROSS_CC" : "CC"));
      if (!r.ok)
        throw Error(fmt::format("the C compiler '{}' cannot compile convtune's driver ({}); set {} to a working C "
                                "compiler",
                                joined(cc_.command), r.log.substr(0, r.log.find('\n')), emulated_ ? "CROSS_CC" : "CC"));
    }
    cc_.link_flags.push_back(fmt::format("{}/{}.o", dir_, name));
  }
  if (!cached) store_compiled(cache_key, objects, dir_);
  if (!emulated_)
    for (const auto& w : words(CT_PAPI_LIBS)) cc_.link_flags.push_back(w);
  cc_.link_flags.push_back("-lm");
}

std::vector<std::string> Runner::command(const std::string& exe, bool one_cpu) const {
  std::vector<std::string> argv;
  if (emulated_) argv.push_back(emulator());
  argv.push_back(exe);
  if (cpus_.empty()) argv.push_back("-1");
  else argv.push_back(one_cpu ? std::to_string(cpus_.back()) : cpu_list(cpus_));
  return argv;
}

std::vector<CompileResult> Runner::build(const std::vector<CompileJob>& jobs, int parallel,
                                         const std::string& conv_symbol,
                                         const std::function<void(size_t)>& on_done, Epilogue epilogue) const {
  // GCC's precompiled intrinsics header, made once this runner has a second
  // file to build (a one-shot run builds one; compiler.h), with that job's
  // flags: -fopenmp, which defines _REENTRANT, when the kernels have a P
  // loop, as a tune's all have with threads. Kept out of cc_.flags, which the
  // logs record, and out of the driver's, whose _GNU_SOURCE must come before
  // any system header.
  files_built_ += jobs.size();
  if (!pch_tried_ && !emulated_ && files_built_ >= 2 && !jobs.empty()) {
    pch_tried_ = true;
    pch_flags_ = precompiled_header_flags(cc_, isa_.header, dir_, jobs[0].flags);
  }
  Compiler c = cc_;
  c.flags.insert(c.flags.end(), pch_flags_.begin(), pch_flags_.end());
  // The driver calls ct_conv_entry, or ct_conv_entry_epilogue with bias and
  // residual (microkernels/driver.c); renaming the candidate's function lets
  // one compiled driver serve every symbol.
  if (!conv_symbol.empty())
    for (const char* part : {epilogue == Epilogue::none ? "=ct_conv_entry" : "=ct_conv_entry_epilogue",
                             "_pack=ct_conv_pack", "_packed_floats=ct_conv_packed_floats"})
      c.flags.push_back("-D" + conv_symbol + part);
  std::vector<CompileResult> built = compile_all(c, jobs, parallel, on_done);
  for (const CompileResult& r : built) check_room(r, c.command);
  return built;
}

void Runner::set_problem(const ProblemData& p) {
  data_file_ = dir_ + "/problem.bin";
  write_problem(p, data_file_);
}

RunResult Runner::run_conv(const std::string& exe, const TimingProtocol& protocol, double timeout_s) const {
  if (data_file_.empty()) throw Error("Runner::run_conv before set_problem");
  std::vector<std::string> argv = command(exe);
  const long probes = !emulated_ && reference_gflops_ > 0 ? probe_iters(isa_, reference_gflops_) : 0;
  for (const std::string& a : {std::string("conv"), data_file_, fmt::format("{}", protocol.min_ms),
                               std::to_string(protocol.repeat), std::to_string(protocol.discard),
                               std::to_string(probes)})
    argv.push_back(a);
  // Natively one line after verifying, one after timing, each within the
  // limit; emulated, every timed call gets the limit.
  const double idle =
      emulated_ ? (protocol.discard + protocol.repeat + 3) * (timeout_s + protocol.min_ms * 1e-3) : timeout_s;
  RunResult r = conv_result(run_lines(argv, idle), idle);
  if (r.status == Status::ok && !r.probe_s.empty()) {
    r.probe_gflops = probe_gflops(isa_, probes, r.probe_s);
    r.samples = at_reference(r.samples, r.probe_gflops, reference_gflops_);
    r.seconds = median(r.samples);
  }
  if (emulated_ && (r.status == Status::ok || r.counter_names.empty()))
    r.counter_names = fmt::format("none: emulated under {} (timings not meaningful)", emulator());
  return r;
}

void Runner::measure_unit(const std::string& exe, const std::vector<UkCase>& cases, size_t base,
                          const std::vector<size_t>& todo, int64_t nc_verify, int64_t nc_time,
                          const TimingProtocol& protocol,
                          const std::function<void(size_t, const UkMeasured&)>& done) const {
  const double idle = emulated_ ? 60 : 30;
  size_t from = 0;
  while (from < todo.size()) {
    std::vector<std::string> argv = command(exe);
    for (const std::string& a :
         {std::string("ukernels"), std::to_string(nc_verify), std::to_string(nc_time),
          fmt::format("{}", protocol.min_ms), std::to_string(protocol.repeat), std::to_string(protocol.discard),
          std::to_string(isa_.lanes)})
      argv.push_back(a);
    for (size_t pos = from; pos < todo.size(); ++pos) {
      const UkSizes& u = cases[todo[pos]].u;
      const UkLayout& l = cases[todo[pos]].l;
      for (int64_t v : {int64_t(pos), int64_t(todo[pos] - base), int64_t(u.k), int64_t(u.c), int64_t(u.w),
                        int64_t(u.h), int64_t(u.r), int64_t(u.s), l.in_row, l.in_pix, l.stride, l.w_r, l.w_s,
                        l.w_c, l.w_it, l.out_row, l.out_pix, l.stride_w, l.dil_h, l.dil_w, int64_t(u.dw)})
        argv.push_back(std::to_string(v));
    }
    size_t got = from;
    ProcResult pr = run_lines(argv, idle, [&](const std::string& line) {
      nlohmann::json j = object_of(line);
      if (j.is_null() || !j.contains("pos")) return;
      UkMeasured m;
      try {
        const size_t pos = j.at("pos").get<size_t>();
        if (pos < got || pos >= todo.size()) return;
        const std::string status = j.at("status").get<std::string>();  // the driver's: ok | wrong_result
        if (status != "ok" && status != "wrong_result") throw std::runtime_error("unknown status");
        m.status = status == "ok" ? Status::ok : Status::wrong_result;
        if (m.status == Status::ok) {
          const UkSizes& u = cases[todo[pos]].u;
          const double flops = 2.0 * double(u.fmas()) * isa_.lanes * double(nc_time);
          const double median = j.at("median_s").get<double>();
          m.gflops = median > 0 ? flops / median * 1e-9 : 0;
          if (!emulated_) m.counters = j.at("counters").get<std::vector<long long>>();
        }
        done(todo[pos], m);
        got = pos + 1;
      } catch (const std::exception&) {
        // An unreadable line counts as no answer: the microkernel in flight is lost below.
      }
    });
    if (got >= todo.size()) break;
    UkMeasured failed;
    // Silent until the limit, or dead: the microkernel in flight takes the blame.
    failed.status = pr.timed_out ? Status::timeout : Status::crash;
    done(todo[got], failed);
    from = got + 1;
  }
}

double Runner::peak_gflops(double min_ms) {
  if (peak_exe_.empty()) {
    // ct_peak is in the driver's objects already (the constructor).
    const std::string src = dir_ + "/peak_main.c", exe = dir_ + "/peak_" + isa_.name;
    write_work_file(src, "double ct_peak(long iters, const float *seed); /* linked from peak.o */\n");
    CompileResult r = compile_one(cc_, {src, exe});
    check_room(r, cc_.command);
    if (!r.ok) throw Error("the peak loop does not compile: " + r.log.substr(0, r.log.find('\n')));
    peak_exe_ = exe;
  }
  // Emulated: short, the emulator's speed means nothing.
  const long iters = emulated_ ? 20000 : 200000;
  const TimingProtocol p = emulated_ ? TimingProtocol{std::min(50.0, min_ms), 3, 1} : TimingProtocol{min_ms, 5, 1};
  const double limit = emulated_ ? 120 : 60;
  std::vector<std::string> argv = command(peak_exe_, true);  // one core: tune scales it by the threads
  for (const std::string& a : {std::string("peak"), std::to_string(iters), fmt::format("{}", p.min_ms),
                               std::to_string(p.repeat), std::to_string(p.discard)})
    argv.push_back(a);
  ProcResult pr = run_lines(argv, limit);
  std::string last;
  for (const auto& line : pr.lines) {
    nlohmann::json j = object_of(line);
    if (j.is_null()) {
      last = line;
      continue;
    }
    const double median = j.value("median_s", 0.0);
    if (j.value("status", "") == "ok" && median > 0) {
      const double g = peak_flops(isa_, iters) / median * 1e-9;
      if (reference_gflops_ <= 0) reference_gflops_ = g;
      return g;
    }
    last = j.value("detail", line);
  }
  throw Error(fmt::format("the peak loop failed on CPU {}{} ({}); check that {} runs on this CPU",
                          cpus_.empty() ? -1 : cpus_.back(),
                          emulated_ ? " under " + emulator() : "", failure(pr, last, limit), isa_.name));
}

RunResult build_and_run_conv(const Isa& isa, bool emulated, const ProblemData& p, const std::string& c_file,
                             const std::string& symbol, int cpu, const TimingProtocol& protocol, double timeout_s,
                             const std::vector<std::string>& cflags, int threads) {
  WorkDir wd("run");
  Runner runner(isa, emulated, cpu, wd.path(), threads);
  const std::string exe = wd.path() + "/candidate";
  CompileResult built = runner.build({{c_file, exe, cflags}}, 1, symbol, {}, p.epilogue)[0];
  if (!built.ok) {
    RunResult r;
    r.status = Status::compile_error;
    r.detail = built.log;
    return r;
  }
  runner.set_problem(p);
  return runner.run_conv(exe, protocol, timeout_s);
}

}  // namespace convtune
