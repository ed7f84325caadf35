// `convtune bench`: get convtune's best kernel (log or fresh tune), regenerate
// and compile it, measure the peak, then in this process pinned to --threads
// cores: prepare the baselines on that many threads, check every output
// against the reference, time each.
#include "convtune/bench/bench.h"

#include <sched.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <functional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "convtune/baselines/baseline.h"
#include "convtune/core/aligned.h"
#include "convtune/codegen/conv.h"
#include "convtune/space/config.h"
#include "convtune/tune/delivered.h"
#include "convtune/execution/clock_probe.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/loaded_kernel.h"
#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/execution/measure.h"
#include "convtune/execution/output_check.h"
#include "convtune/execution/runner.h"
#include "convtune/execution/workdir.h"
#include "convtune/tune/log_machine.h"
#include "convtune/bench/interleaved.h"
#include "pinned.h"
#include "triad.h"
#include "report_text.h"

namespace convtune {

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string function_name(const std::string& layer) {
  std::string f = "ct_conv_" + layer;
  for (auto& ch : f)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return f;
}

// The kernel tune delivered (delivered.h), or an error line saying how to get one.
Record best_from_log(const std::string& path, const Shape& shape, int threads, Epilogue epilogue, int64_t* trials) {
  const DeliveredKernel d = delivered_kernel(path, shape, threads, epilogue);
  if (d.records == 0)
    throw Error(fmt::format("no tuning log '{}' for {}; tune the layer first (convtune tune) or pass --trials N",
                            path, layer_id(shape)));
  if (!d.other_shape.empty())
    throw Error(fmt::format("log '{}' is for shape {}, not {}; use another --log", path, d.other_shape,
                            shape.to_string()));
  if (d.other_threads)
    throw Error(fmt::format("log '{}' was measured with --threads {}, not {}; pass --threads {}, tune with "
                            "--trials N, or use another --log",
                            path, d.other_threads, threads, d.other_threads));
  if (d.other_epilogue)
    throw Error(fmt::format("log '{}' was tuned with --epilogue {}, not {}; pass --epilogue {}, tune with "
                            "--trials N, or use another --log",
                            path, to_string(*d.other_epilogue), to_string(epilogue), to_string(*d.other_epilogue)));
  if (!d.found)
    throw Error(fmt::format("log '{}' holds no correct candidate among {}; tune more (--trials N --resume)", path,
                            d.records));
  *trials = d.records;
  return d.record;
}

}  // namespace

const BenchEntry* BenchResult::find(const std::string& name) const {
  for (const auto& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

BenchResult bench_kernel(const BenchOptions& opt, Isa* isa_out) {
  const TuneOptions& t = opt.tune;
  BenchResult res;
  res.shape = t.shape;
  res.layer = layer_id(t.shape);
  res.epilogue = t.epilogue;
  if (t.repeat < 1 || t.min_repeat_ms <= 0) throw Error("--repeat and --min-repeat-ms must be positive");
  Isa isa = load_isa(t.isa);
  if (!cpu_supports(isa))
    throw Error(fmt::format("this CPU cannot run {} code (needs CPU flags: {}); choose another --arch", isa.name,
                            fmt::join(isa.cpu_flags, " ")));
  res.cpu = t.cpu >= 0 ? t.cpu : default_cpu();
  check_cpu(res.cpu);
  res.threads = t.threads;
  res.cpus = measuring_cpus(res.cpu, t.threads);

  // convtune's kernel: one given by hand, a fresh tune, or the best of the layer's log.
  if (!opt.config.empty()) {
    // bench --config: how a kernel that no search proposed is measured against oneDNN (the
    // hand-written variants of issue 11's analyses), under the same protocol as the log's best.
    const Config c = parse_config(opt.config);
    validate_config(c, t.shape, isa.lanes);
    // Its P loops fix its threads: said, not left to be guessed from a slow time.
    if (const int64_t n = config_threads(c); n > available_cpus())
      std::fprintf(stderr,
                   "convtune: note: --config runs %lld threads (its P loops) on the %d CPU%s this process may use: "
                   "they share %s, so the time is not that of %lld cores\n",
                   static_cast<long long>(n), available_cpus(), available_cpus() == 1 ? "" : "s",
                   available_cpus() == 1 ? "it" : "them", static_cast<long long>(n));
    res.best.config = to_string(c);
    res.best.isa = isa.name;
    res.config_given = true;
  } else if (opt.fresh_tune) {
    TuneOptions o = t;
    o.cpu = res.cpu;
    TuneResult tr = run_tune(o);
    if (tr.interrupted) throw Error("interrupted while tuning; run bench again with --resume to continue the log");
    if (!tr.has_best)
      throw Error(fmt::format("no candidate of {} ran correctly in {} trials; tune more (--trials N --resume)",
                              res.layer, tr.trials));
    res.log_path = tr.log_path;
    res.best = tr.best;
    res.trials = tr.trials;
  } else {
    const std::string out_dir = t.out_dir.empty() ? default_out_dir(res.layer, t.threads, t.epilogue) : t.out_dir;
    res.log_path = t.log.empty() ? out_dir + "/log.jsonl" : t.log;
    if (!t.any_machine)
      check_log_machine(res.log_path, read_records(res.log_path), machine_id(detect_machine(res.cpu)));
    res.best = best_from_log(res.log_path, t.shape, t.threads, t.epilogue, &res.trials);
  }
  *isa_out = isa;
  return res;
}

BenchResult run_bench(const BenchOptions& opt) {
  const TuneOptions& t = opt.tune;
  Isa isa;
  BenchResult res = bench_kernel(opt, &isa);
  const std::string fn = function_name(res.layer);
  GeneratedKernel k = generate_conv(isa, {t.shape, parse_config(res.best.config), fn, "convtune bench", t.epilogue});
  Compiler cc = Compiler::from_env(isa.cflags);
  cc.info();
  WorkDir wd("bench");
  const std::string src = wd.path() + "/" + fn + ".c", so = wd.path() + "/" + fn + ".so";
  write_work_file(src, k.c_source);
  CompileResult built = compile_one(cc, {src, so, k.cflags});  // -fopenmp for a P loop
  if (!built.ok)
    throw Error(fmt::format("convtune's kernel for {} does not compile ({}); re-tune the layer", res.layer,
                            built.log.substr(0, built.log.find('\n'))));
  const std::unique_ptr<ClockProbe> probe = one_core_probe(isa, res.cpu, wd.path(), t.min_repeat_ms);
  res.peak_gflops = probe->reference_gflops() * t.threads;
  res.machine = detect_machine().cpu_model;
  res.date = utc_now();

  ProblemData data = ProblemData::make(t.shape, t.check_points, 20221101, t.epilogue);
  // Packing, like oneDNN's weight reorder, happens once, outside the timing (loaded_kernel.h).
  const LoadedKernel kernel(so, fn, data);
  AlignedFloats out(data.output_size(), std::nanf(""));  // aligned as oneDNN's own output (core/aligned.h)
  const std::function<void()> conv = [&] { kernel.run(out.data()); };
  Pinned pinned(res.cpus);

  BenchEntry ct{"convtune", res.best.config};
  BenchEntry dn{"oneDNN"}, bl{"im2col+OpenBLAS"};
  std::unique_ptr<Baseline> onednn, blas;
  try {
    onednn = make_onednn(data, &dn.missing, t.threads);
  } catch (const Error& e) {
    dn.missing = e.what();
  }
  blas = make_im2col_blas(data, &bl.missing, t.threads);
  BenchEntry xn{"XNNPACK"};
  std::unique_ptr<Baseline> xnnpack;
  try {
    xnnpack = make_xnnpack(data, &xn.missing, t.threads);
  } catch (const Error& e) {
    xn.missing = e.what();
  }
  BenchEntry lx{"LIBXSMM"};
  std::unique_ptr<Baseline> libxsmm;
  try {
    libxsmm = make_libxsmm(data, &lx.missing, t.threads);
  } catch (const Error& e) {
    lx.missing = e.what();
  }
  if (libxsmm) lx.impl = libxsmm->impl();
  if (xnnpack) xn.impl = xnnpack->impl();
  if (onednn) dn.impl = onednn->impl();
  if (blas) bl.impl = blas->impl();
  pinned.bind_openmp();  // after XNNPACK's pool started inside the whole set
  Triad triad(isa, t.shape.tensor_bytes(), t.threads, wd.path());
  BenchEntry tr{"STREAM triad", fmt::format("a = b + s*c over {:.2f} MB (the layer's tensors), {} thread{}",
                                            triad.bytes() * 1e-6, t.threads, t.threads > 1 ? "s" : "")};

  // Agreement first: every implementation against the reference points.
  conv();
  const std::string fix = res.config_given ? "the configuration is valid, so this is a convtune bug: please report it "
                                             "with the configuration and the shape"
                                           : fmt::format("re-tune the layer or remove the log '{}'", res.log_path);
  std::string err = check_output(data, out.data(), "convtune's kernel", fix, &ct.max_error);
  if (err.empty() && onednn) {
    onednn->run();
    err = check_output(data, onednn->output(), "oneDNN",
                       "check the libdnnl installation (ONEDNN_VERBOSE=1 shows what ran)", &dn.max_error);
  }
  if (err.empty() && blas) {
    blas->run();
    err = check_output(data, blas->output(), "im2col+OpenBLAS",
                       "check the OpenBLAS installation (OPENBLAS_CORETYPE picks another kernel)", &bl.max_error);
  }
  if (err.empty() && xnnpack) {
    xnnpack->run();
    err = check_output(data, xnnpack->output(), "XNNPACK", "check the libxnnpack installation", &xn.max_error);
  }
  if (err.empty() && libxsmm) {
    libxsmm->run();
    err = check_output(data, libxsmm->output(), "LIBXSMM", "check the libxsmm installation (LIBXSMM_VERBOSE=1)",
                       &lx.max_error);
  }
  if (!err.empty()) throw Error(err);

  // Interleaved rounds, the clock probe beside each measurement (interleaved.h):
  // the ratios compare the implementations' speeds, not the moments at which
  // each one ran.
  std::vector<TimedCall> impls{{&ct, conv}};
  if (onednn) impls.push_back({&dn, [&] { onednn->run(); }});
  if (blas) impls.push_back({&bl, [&] { blas->run(); }});
  if (xnnpack) impls.push_back({&xn, [&] { xnnpack->run(); }});
  if (libxsmm) impls.push_back({&lx, [&] { libxsmm->run(); }});
  impls.push_back({&tr, triad.call(), false});
  std::string names;
  for (const TimedCall& x : impls) names += (names.empty() ? "" : ", ") + x.entry->name;
  bench_note(t.quiet, fmt::format("bench {}: timing {} in {} interleaved rounds on CPU{} {}", res.layer, names,
                                  t.repeat, res.cpus.size() > 1 ? "s" : "", cpu_list(res.cpus)));
  time_interleaved(impls, t.min_repeat_ms, t.repeat, *probe, t.shape.real_flops(), t.threads);
  res.entries = {ct, dn, bl, xn, lx, tr};
  return res;
}

}  // namespace convtune
