#include "convtune/execution/runner.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "convtune/execution/dynlib.h"
#include "convtune/core/machine.h"
#include "convtune/execution/subprocess.h"
#include "convtune/execution/timer.h"

namespace convtune {

ProblemData ProblemData::make(const Shape& s, int64_t lanes, size_t points, uint64_t seed) {
  ProblemData p;
  p.shape = s;
  p.Kp = s.padded_K(lanes);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const int64_t Hp = s.Hp(), Wp = s.Wp();
  p.input.assign(size_t(s.N * Hp * Wp * s.C), 0.f);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t y = s.pad; y < s.pad + s.H; ++y)
      for (int64_t x = s.pad; x < s.pad + s.W; ++x)
        for (int64_t c = 0; c < s.C; ++c) p.input[size_t(((n * Hp + y) * Wp + x) * s.C + c)] = dist(rng);
  p.weights.assign(size_t(s.R * s.S * s.C * p.Kp), 0.f);
  for (int64_t i = 0; i < s.R * s.S * s.C; ++i)
    for (int64_t k = 0; k < s.K; ++k) p.weights[size_t(i * p.Kp + k)] = dist(rng);
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
  p.check_value.reserve(p.check_index.size());
  for (int64_t idx : p.check_index) p.check_value.push_back(reference_point(p, idx));
  // Each term is a product of two values in [-1, 1]; float accumulation error
  // grows with the reduction length.
  p.tolerance = 1e-5 + 2e-6 * double(s.C * s.R * s.S);
  return p;
}

double reference_point(const ProblemData& p, int64_t index) {
  const Shape& s = p.shape;
  const int64_t Wo = s.Wo(), Ho = s.Ho(), Hp = s.Hp(), Wp = s.Wp();
  int64_t k = index % p.Kp, rest = index / p.Kp;
  int64_t ow = rest % Wo;
  rest /= Wo;
  int64_t oh = rest % Ho, n = rest / Ho;
  double sum = 0;
  for (int64_t r = 0; r < s.R; ++r)
    for (int64_t q = 0; q < s.S; ++q) {
      const float* in = &p.input[size_t(((n * Hp + oh * s.stride + r) * Wp + ow * s.stride + q) * s.C)];
      const float* w = &p.weights[size_t(((r * s.S + q) * s.C) * p.Kp + k)];
      for (int64_t c = 0; c < s.C; ++c) sum += double(in[c]) * double(w[c * p.Kp]);
    }
  return sum;
}

namespace {

int child_main(int fd, const ProblemData& p, const std::string& so, const std::string& symbol, int cpu,
               const TimingProtocol& protocol) {
  pin_to_cpu(cpu);
  std::unique_ptr<DynLib> lib;
  using Fn = void (*)(const float*, const float*, float*);
  Fn fn = nullptr;
  try {
    lib = std::make_unique<DynLib>(so);
    fn = reinterpret_cast<Fn>(lib->symbol(symbol));
  } catch (const std::exception& e) {
    write_line(fd, std::string("load_error ") + e.what());
    return 0;
  }
  // The kernel overwrites its output: start from NaN so a skipped element shows.
  std::vector<float> out(p.output_size(), std::nanf(""));
  fn(p.input.data(), p.weights.data(), out.data());
  double worst = 0;
  int64_t worst_at = -1;
  for (size_t i = 0; i < p.check_index.size(); ++i) {
    double err = std::fabs(double(out[size_t(p.check_index[i])]) - p.check_value[i]);
    if (!(err <= p.tolerance) && (worst_at < 0 || !(err <= worst))) {
      worst = err;
      worst_at = p.check_index[i];
    }
  }
  if (worst_at >= 0) {
    write_line(fd, fmt::format("wrong_result output element {} differs from the reference by {:.3g} "
                               "(tolerance {:.3g})",
                               worst_at, worst, p.tolerance));
    return 0;
  }
  write_line(fd, "verified");
  Counters counters;
  Timing t = time_calls([&] { fn(p.input.data(), p.weights.data(), out.data()); }, protocol, &counters);
  std::string line = fmt::format("ok {:.9g}", t.median_s);
  line += " samples";
  for (double x : t.samples_s) line += fmt::format(" {:.9g}", x);
  line += " counters " + std::to_string(t.counters.size());
  for (long long c : t.counters) line += " " + std::to_string(c);
  line += " names " + counters.description();
  write_line(fd, line);
  return 0;
}

}  // namespace

bool parse_result_line(const std::string& line, RunResult* r) {
  std::istringstream ss(line);
  std::string word;
  ss >> word;
  if (word == "load_error" || word == "wrong_result") {
    r->status = word;
    std::getline(ss >> std::ws, r->detail);
    return true;
  }
  if (word != "ok") return false;
  r->status = "ok";
  ss >> r->seconds >> word;  // "samples"
  while (ss >> word && word != "counters") r->samples.push_back(std::stod(word));
  if (word == "counters") {
    size_t n = 0;
    ss >> n;
    for (size_t i = 0; i < n; ++i) {
      long long v;
      ss >> v;
      r->counters.push_back(v);
    }
    ss >> word;  // "names"
    std::getline(ss >> std::ws, r->counter_names);
  }
  return true;
}

RunResult run_candidate(const ProblemData& p, const std::string& so_path, const std::string& symbol,
                        int cpu, const TimingProtocol& protocol, double timeout_s) {
  RunResult r;
  ForkResult fr = run_forked([&](int fd) { return child_main(fd, p, so_path, symbol, cpu, protocol); },
                             timeout_s);
  for (const auto& line : fr.lines)
    if (parse_result_line(line, &r)) return r;
  if (fr.timed_out) {
    r.status = "timeout";
    r.detail = fmt::format("no result within {:.0f} s (--timeout)", timeout_s);
  } else {
    r.status = "crash";
    r.detail = fr.signal ? fmt::format("killed by signal {} ({})", fr.signal, strsignal(fr.signal))
                         : fmt::format("exited with code {} before reporting", fr.exit_code);
  }
  return r;
}

}  // namespace convtune
