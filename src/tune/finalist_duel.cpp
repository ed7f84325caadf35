// The finalists' duel (finalist_duel.h).
#include "convtune/tune/finalist_duel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/execution/output_check.h"
#include "convtune/core/files.h"
#include "convtune/core/json_lines.h"
#include "convtune/core/machine.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/loaded_kernel.h"
#include "convtune/execution/measure.h"
#include "convtune/execution/subprocess.h"
#include "convtune/execution/workdir.h"
#include "convtune/codegen/conv.h"
#include "convtune/space/config.h"

namespace convtune {

namespace {

std::string file_stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// What one child run told: figures, wrong kernels, or who was running when it died.
struct ChildReport {
  bool finished = false;
  std::string error;                          // {"status":"error"}: nothing to blame a kernel for
  std::vector<std::vector<double>> samples;   // per kernel given
  std::vector<std::pair<size_t, std::string>> wrong;
  int running = -1;                           // the last {"running":i}
};

// A line it cannot read counts as no line: the child is ours, but a kernel
// may scribble on its stdout before it dies.
ChildReport read_child(const ProcResult& pr, size_t kernels) {
  ChildReport c;
  for (const std::string& line : pr.lines) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    try {
      if (j.contains("running")) {
        c.running = j["running"].get<int>();
      } else if (j.contains("index")) {
        c.wrong.emplace_back(j["index"].get<size_t>(), j.value("detail", ""));
      } else if (j.value("status", "") == "ok") {
        c.samples = j["samples"].get<std::vector<std::vector<double>>>();
        c.finished = c.samples.size() == kernels;
      } else if (j.value("status", "") == "error") {
        c.error = j.value("detail", line);
      }
    } catch (const nlohmann::json::exception&) {
    }
  }
  c.wrong.erase(std::remove_if(c.wrong.begin(), c.wrong.end(), [&](const auto& w) { return w.first >= kernels; }),
                c.wrong.end());
  return c;
}

}  // namespace

int duel_child(const Shape& shape, Epilogue epilogue, int cpu, int threads, double min_ms, int rounds,
               size_t check_points, const std::vector<std::string>& sos) {
  try {
    bind_openmp_threads(measuring_cpus(cpu, threads));  // the kernels' OpenMP threads one per CPU, as the driver's
    const ProblemData data = ProblemData::make(shape, check_points, 20221101, epilogue);
    std::vector<std::unique_ptr<LoadedKernel>> kernels;
    for (const std::string& so : sos) kernels.push_back(std::make_unique<LoadedKernel>(so, file_stem(so), data));
    AlignedFloats out(data.output_size());
    std::vector<size_t> correct;
    for (size_t i = 0; i < kernels.size(); ++i) {
      print_json_line({{"running", i}});
      std::fill(out.begin(), out.end(), std::nanf(""));
      kernels[i]->run(out.data());
      double max_error = 0;
      const std::string err = check_output(data, out.data(), file_stem(sos[i]), "it is dropped", &max_error);
      if (err.empty())
        correct.push_back(i);
      else
        print_json_line({{"index", i}, {"status", "wrong_result"}, {"detail", err}});
    }
    std::vector<std::vector<double>> samples(kernels.size());
    std::vector<int64_t> calls(kernels.size(), 0);  // each kernel calibrated at its first sample only
    for (int round = 0; round < rounds; ++round)
      for (size_t j : round_order(correct.size(), size_t(round))) {
        const size_t i = correct[j];
        print_json_line({{"running", i}});
        TimingProtocol one{min_ms, 1, calls[i] > 0 ? 0 : 1};
        one.calls = calls[i];
        const Timing t = time_calls([&] { kernels[i]->run(out.data()); }, one);
        calls[i] = t.calls_per_sample;
        samples[i].push_back(t.median_s);
      }
    print_json_line({{"status", "ok"}, {"samples", samples}});
  } catch (const std::exception& e) {
    print_json_line({{"status", "error"}, {"detail", e.what()}});
  }
  return 0;
}

namespace {

// One child's run of the finalists still `in`: samples[i] gets finalist i's. One that computes wrong values, crashes or hangs the child is
// dropped (from `in` and `sos`) with that status, and the rest run again in a
// new child. Returns a note when no child could run at all.
std::string duel_one_child(const DuelSetup& s, int rounds, std::vector<Finalist>& f, std::vector<size_t>& in,
                           std::vector<std::string>& sos, std::vector<std::vector<double>>& samples,
                           const std::function<bool()>& stop) {
  while (in.size() >= 2) {
    if (stop()) return "";
    std::vector<std::string> argv{"/proc/self/exe", "internal-duel", "--shape", s.shape.to_string(),
                                  "--epilogue", to_string(s.epilogue), "--cpu", std::to_string(s.cpu),
                                  "--threads", std::to_string(s.threads),
                                  "--min-repeat-ms", fmt::format("{}", s.min_ms), "--rounds",
                                  std::to_string(rounds), "--check-points", std::to_string(s.check_points)};
    argv.insert(argv.end(), sos.begin(), sos.end());
    const ProcResult pr = run_lines(argv, s.timeout_s);
    const ChildReport c = read_child(pr, in.size());
    std::vector<bool> drop(in.size(), false);
    for (const auto& [i, detail] : c.wrong) {
      f[in[i]].status = Status::wrong_result;
      f[in[i]].detail = "duel: " + detail;
      drop[i] = true;
    }
    if (c.finished) {
      for (size_t i = 0; i < in.size(); ++i) samples[in[i]] = c.samples[i];
    } else if (!c.error.empty() || c.running < 0 || size_t(c.running) >= in.size()) {
      return "the finalists' duel did not run (" +
             (c.error.empty() ? "its child: " + failure_text(pr, s.timeout_s) : c.error) +
             "): the re-measure ranks them";
    } else {
      Finalist& x = f[in[size_t(c.running)]];
      x.status = pr.timed_out ? Status::timeout : Status::crash;
      x.detail = "duel: " + failure_text(pr, s.timeout_s) + " in the duel's child, while it ran this kernel";
      drop[size_t(c.running)] = true;
    }
    std::vector<size_t> kept;
    std::vector<std::string> kept_sos;
    for (size_t i = 0; i < in.size(); ++i)
      if (!drop[i]) {
        kept.push_back(in[i]);
        kept_sos.push_back(sos[i]);
      }
    in = kept;
    sos = kept_sos;
    if (c.finished) return "";
  }
  return "";
}

}  // namespace

double duel_seconds(const std::vector<std::vector<double>>& per_child) {
  std::vector<double> medians;
  for (const std::vector<double>& x : per_child)
    if (!x.empty()) medians.push_back(median(x));
  return medians.empty() ? 0 : median(medians);
}

std::string duel(const DuelSetup& s, std::vector<Finalist>& f, const std::function<bool()>& stop) {
  std::vector<size_t> ok;
  for (size_t i = 0; i < f.size(); ++i)
    if (f[i].status == Status::ok) ok.push_back(i);
  if (ok.size() < 2) return "";

  // Shared objects whose function is named as the file (duel_child).
  std::vector<CompileJob> jobs;
  for (size_t i : ok) {
    const std::string name = fmt::format("duel{:02}", i);
    const GeneratedKernel k = generate_conv(s.isa, {s.shape, parse_config(f[i].config), name, s.origin, s.epilogue});
    write_work_file(s.dir + "/" + name + ".c", k.c_source);
    jobs.push_back({s.dir + "/" + name + ".c", s.dir + "/" + name + ".so", k.cflags});  // -fopenmp for a P loop
  }
  Compiler cc = Compiler::from_env(s.isa.cflags);
  cc.flags.insert(cc.flags.end(), s.pch_flags.begin(), s.pch_flags.end());
  const std::vector<CompileResult> built = compile_all(cc, jobs, s.jobs);
  std::vector<size_t> in;  // finalists in the duel
  std::vector<std::string> sos;
  for (size_t j = 0; j < ok.size(); ++j) {
    if (built[j].ok) {
      in.push_back(ok[j]);
      sos.push_back(jobs[j].output);
    } else {
      f[ok[j]].status = Status::compile_error;
      f[ok[j]].detail = "duel: " + built[j].log.substr(0, 600);
    }
  }

  // Each child has its own buffers and load addresses, and a kernel's speed
  // can hang on them (a strided Flat(hw) gather, say, at 0.75 to 1.0 of
  // oneDNN's from one process to the next, as bench --processes shows): a
  // finalist's figure is the median of its children's medians.
  const int children = std::max(1, std::min(s.processes, s.rounds));
  const int rounds = (s.rounds + children - 1) / children;
  std::vector<std::vector<std::vector<double>>> by_child(f.size());  // finalist, child, sample
  for (int child = 0; child < children && in.size() >= 2; ++child) {
    std::vector<std::vector<double>> samples(f.size());
    const std::string note = duel_one_child(s, rounds, f, in, sos, samples, stop);
    if (!note.empty() && child == 0) return note;
    if (!note.empty() || in.size() < 2) break;  // the children that ran rank them; one survivor has no duel
    for (size_t j = 0; j < in.size(); ++j) {
      if (!samples[in[j]].empty()) by_child[in[j]].push_back(samples[in[j]]);
    }
  }
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i].status != Status::ok || by_child[i].empty() || in.size() < 2) continue;
    std::vector<double> pooled;
    for (const std::vector<double>& x : by_child[i]) pooled.insert(pooled.end(), x.begin(), x.end());
    f[i].duel_gflops = s.shape.flops() / duel_seconds(by_child[i]) * 1e-9;
    f[i].duel_iqr = 100 * (quantile(pooled, 0.75) - quantile(pooled, 0.25)) / median(pooled);
  }
  return "";
}

}  // namespace convtune
