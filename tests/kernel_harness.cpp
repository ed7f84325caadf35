#include "kernel_harness.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/machine.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/dynlib.h"
#include "convtune/offline/class_table.h"
#include "convtune/space/space.h"
#include "test_util.h"

namespace convtune::test {
namespace {

const TimingProtocol kOnce{1, 1, 0};  // the check, then one call timed
double timeout_of(bool emulated) { return emulated ? 120 : 60; }

ConvCheck result_of(const RunResult& r, std::string source, std::vector<std::string> cflags) {
  return {r.status, r.detail, std::move(source), std::move(cflags), r.counter_names};
}

// The driver of a profile unit under emulation, built once per ISA.
Runner& unit_runner(const Isa& isa) {
  static std::map<std::string, std::unique_ptr<Runner>> runners;
  static TempDir dir;
  auto& r = runners[isa.name];
  if (!r) r = std::make_unique<Runner>(isa, emulated_here(isa), emulated_here(isa) ? -1 : default_cpu(), dir.path());
  return *r;
}

}  // namespace

bool emulated_here(const Isa& isa) { return !cpu_supports(isa); }

std::string cannot_run(const Isa& isa) {
  if (cpu_supports(isa)) return "";
  if (isa.emulation.qemu.empty()) return "this CPU cannot run " + isa.name;
  static std::map<std::string, std::string> missing;  // tried once per ISA
  auto it = missing.find(isa.name);
  if (it == missing.end()) it = missing.emplace(isa.name, emulation_missing(isa)).first;
  if (it->second.empty()) return "";
  return "cannot emulate " + isa.name + ": " + it->second +
         "; scripts/install-deps.sh installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user";
}

ConvCheck check_conv_source(const Isa& isa, const Shape& shape, const std::string& c_source,
                            const std::vector<std::string>& cflags, int threads, Epilogue epilogue,
                            std::optional<Epilogue> checked_as) {
  TempDir td;
  write_file(td.file("k.c"), c_source);
  const bool emulated = emulated_here(isa);
  // Every output element (points = 0).
  const ProblemData p = ProblemData::make(shape, 0, 42, checked_as.value_or(epilogue));
  const RunResult r = build_and_run_conv(isa, emulated, p, td.file("k.c"), "ct_conv", emulated ? -1 : default_cpu(),
                                         kOnce, timeout_of(emulated), cflags, threads);
  return result_of(r, c_source, cflags);
}

ConvCheck check_conv(const Isa& isa, const Shape& shape, const Config& cfg, Epilogue epilogue, int threads,
                     std::optional<Epilogue> checked_as) {
  const GeneratedKernel k = generate_conv(isa, {shape, cfg, "ct_conv", "test", epilogue});
  return check_conv_source(isa, shape, k.c_source, k.cflags, threads, epilogue, checked_as);
}

std::string conv_failures(const std::vector<ConvSpec>& specs, const std::vector<ConvCheck>& checked) {
  if (checked.size() != specs.size())
    return fmt::format("{} results for {} kernels\n", checked.size(), specs.size());
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i)
    if (checked[i].status != Status::ok)
      out += fmt::format("{} {}: {}\n", specs[i].shape.to_string(), to_string(specs[i].cfg), checked[i].detail);
  return out;
}

std::vector<Config> sampled_configs(const Isa& isa, const Shape& shape, size_t n, int threads, unsigned seed,
                                    const std::function<bool(const Config&)>& keep) {
  ClassTable t;
  t.isa = isa.name;
  const Space sp = build_space(shape, t, isa.lanes, threads);
  std::mt19937_64 rng(seed);
  std::vector<Config> out;
  for (int i = 0; i < 400 && out.size() < n; ++i)
    if (Config c = sample_config(sp, rng); !keep || keep(c)) out.push_back(c);
  return out;
}

std::vector<ConvCheck> check_convs(const Isa& isa, const std::vector<ConvSpec>& specs) {
  if (specs.empty()) return {};
  const bool with_epilogue = specs[0].epilogue != Epilogue::none;
  TempDir td;
  std::vector<CompileJob> jobs;
  std::vector<GeneratedKernel> kernels;
  for (const ConvSpec& s : specs) {
    if ((s.epilogue != Epilogue::none) != with_epilogue)
      throw Error("check_convs: the kernels need one driver entry: all with an epilogue or none");
    kernels.push_back(generate_conv(isa, {s.shape, s.cfg, "ct_conv", "test", s.epilogue}));
    const std::string base = td.file("k" + std::to_string(jobs.size()));
    write_file(base + ".c", kernels.back().c_source);
    jobs.push_back({base + ".c", base, kernels.back().cflags});
  }
  const bool emulated = emulated_here(isa);
  Runner runner(isa, emulated, emulated ? -1 : default_cpu(), td.path());
  const std::vector<CompileResult> built =
      runner.build(jobs, 1, "ct_conv", {}, with_epilogue ? Epilogue::bias : Epilogue::none);
  std::vector<ConvCheck> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!built[i].ok) {
      out.push_back({Status::compile_error, built[i].log, kernels[i].c_source, kernels[i].cflags, ""});
      continue;
    }
    runner.set_problem(ProblemData::make(specs[i].shape, 0, 42, specs[i].epilogue));  // every output element
    out.push_back(result_of(runner.run_conv(jobs[i].output, kOnce, timeout_of(emulated)), kernels[i].c_source,
                            kernels[i].cflags));
  }
  return out;
}

std::string ukernel_unit(const Isa& isa, const std::vector<UkCase>& cases, const std::string& extra,
                         const std::vector<std::string>& extra_fns) {
  std::string src = generated_prelude(isa) + extra;
  std::vector<std::string> table;
  for (size_t i = 0; i < cases.size(); ++i) {
    src += emit_ukernel(isa, cases[i].u, cases[i].l, "uk" + std::to_string(i));
    table.push_back("uk" + std::to_string(i));
  }
  for (const auto& f : extra_fns) table.push_back(f);
  return src + profile_fn_table(table);
}

std::vector<UkCheck> run_ukernel_unit(const Isa& isa, const std::string& unit, const std::vector<UkCase>& claimed) {
  TempDir td;
  write_file(td.file("unit.c"), unit);
  Runner& runner = unit_runner(isa);
  const auto built = runner.build({{td.file("unit.c"), td.file("unit")}}, 1);
  if (!built[0].ok) return std::vector<UkCheck>(claimed.size(), {Status::compile_error, built[0].log});
  std::vector<UkCheck> status(claimed.size(), {Status::crash, "not measured"});
  std::vector<size_t> todo;
  for (size_t i = 0; i < claimed.size(); ++i) todo.push_back(i);
  runner.measure_unit(td.file("unit"), claimed, 0, todo, 3, 3, TimingProtocol{0.01, 1, 0},
                      [&](size_t i, const UkMeasured& m) { status[i] = {m.status, ""}; });
  return status;
}

std::vector<UkCheck> check_ukernels(const Isa& isa, const std::vector<UkCase>& cases) {
  if (emulated_here(isa)) return run_ukernel_unit(isa, ukernel_unit(isa, cases), cases);
  TempDir td;
  std::string src = generated_prelude(isa);
  for (size_t i = 0; i < cases.size(); ++i) {
    src += emit_ukernel(isa, cases[i].u, cases[i].l, "uk" + std::to_string(i));
    src += "void call" + std::to_string(i) + "(const float *I, const float *W, float *O, long nc, int acc) { uk" +
           std::to_string(i) + "(I, 0, W, O, nc, acc); }\n";
  }
  write_file(td.file("uk.c"), src);
  const CompileResult cr = compile_one(Compiler::from_env(isa.cflags), {td.file("uk.c"), td.file("uk.so")});
  if (!cr.ok) return std::vector<UkCheck>(cases.size(), {Status::compile_error, cr.log});
  DynLib lib(td.file("uk.so"));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<UkCheck> status;
  for (size_t i = 0; i < cases.size(); ++i) {
    const UkSizes& u = cases[i].u;
    const UkLayout& l = cases[i].l;
    using Fn = void (*)(const float*, const float*, float*, long, int);
    auto fn = reinterpret_cast<Fn>(lib.symbol("call" + std::to_string(i)));
    const int64_t nc = 3;
    // 64 guard floats after each buffer: compared like the rest.
    std::vector<float> in(((u.h - 1) * l.stride + (u.r - 1) * l.dil_h + 1) * l.in_row + 64), w(u.r * l.w_r + 64),
        out(u.h * l.out_row + 64), ref;
    for (auto& x : in) x = dist(rng);
    for (auto& x : w) x = dist(rng);
    for (auto& x : out) x = dist(rng);
    ref = out;
    const double tol = 1e-5 * double(nc * u.c * u.r * u.s + 1);
    auto differs = [&](const std::vector<float>& want, const char* mode) -> std::string {
      for (size_t j = 0; j < out.size(); ++j)
        if (!(std::fabs(double(out[j]) - double(want[j])) <= tol))
          return fmt::format("{} {}: element {} is {}, the reference {}", sizes_text(u), mode, j, out[j], want[j]);
      return "";
    };
    // accumulate=1 adds to what is there; then accumulate=0 must ignore NaN garbage.
    fn(in.data(), w.data(), out.data(), nc, 1);
    reference_ukernel(u, l, isa.lanes, in.data(), w.data(), ref.data(), nc, true);
    std::string wrong = differs(ref, "accumulate");
    if (wrong.empty()) {
      std::vector<float> before = out;
      for (int h = 0; h < u.h; ++h)
        for (int x = 0; x < u.w; ++x)
          for (int k = 0; k < u.k * isa.lanes; ++k) out[h * l.out_row + x * l.out_pix + k] = std::nanf("");
      fn(in.data(), w.data(), out.data(), nc, 0);
      reference_ukernel(u, l, isa.lanes, in.data(), w.data(), before.data(), nc, false);
      wrong = differs(before, "overwrite");
    }
    status.push_back({wrong.empty() ? Status::ok : Status::wrong_result, wrong});
  }
  return status;
}

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.shape << " " << c.config; }

namespace {

// The one list: a row per case, its K on each ISA (0: not run there); {K} in
// the shape is that K. Configurations count K in vectors (V(k)), so one row
// serves 16, 8 and 4 lanes with K scaled; a K that is not a whole number of
// vectors checks the masked tail.
struct Row {
  const char* shape;
  int avx512, avx2, neon;
  const char* config;
  int threads = 1;
};
const Row kRows[] = {
    // One microkernel (h=2, two vectors of k), r and s as outer loops.
    {"K={K},C=8,H=6,R=3", 32, 16, 8, "[T(3,r), T(3,h), T(6,w), T(3,s), T(8,c), U(2,h), U(2,k), V(k)]"},
    // r and s unrolled inside the microkernel, c split above and below.
    {"K={K},C=8,H=6,R=3", 32, 0, 8, "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k)]"},
    // Lseq: 17 = 1*8 + 1*9 (000 §3.3).
    {"K={K},C=4,H=17,R=3", 16, 8, 4, "[T(17,w), Lseq(h,[(1,8),(1,9)]), T(3,r), T(3,s), T(4,c), U(a,h), V(k)]"},
    // Lseq above an h tile (each branch covers 2*alpha rows) and below one.
    {"K={K},C=4,H=34,R=1", 16, 0, 0, "[Lseq(h,[(1,8),(1,9)]), T(2,h), T(34,w), T(4,c), U(a,h), V(k)]"},
    {"K={K},C=4,H=34,R=1", 32, 16, 8,
     "[T(2,h), T(2,k), Lseq(h,[(3,3),(1,8)]), T(34,w), T(2,c), U(2,c), U(a,h), V(k)]"},
    // The paper's example shape, Lseq placed between w tiles.
    {"K={K},C=8,H=34,R=3", 64, 0, 0,
     "[T(2,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), T(8,c), U(a,h), U(2,k), V(k)]"},
    // Stride 2 with a 7x7 kernel (resnet18-1 in small), s unrolled; and a 3x3 one.
    {"K={K},C=3,H=16,R=7,stride=2,pad=3", 16, 0, 4, "[T(7,r), T(8,h), T(2,w), T(3,c), U(7,s), U(4,w), V(k)]"},
    {"K={K},C=6,H=9,R=3,stride=2", 32, 16, 8, "[T(5,h), T(3,r), T(3,s), T(5,w), T(2,c), U(3,c), U(2,k), V(k)]"},
    // K padded to two vectors: the loops run over them, the tail is stored masked.
    {"K={K},C=5,H=4,R=1", 20, 10, 6, "[T(2,k), T(4,h), T(4,w), T(5,c), V(k)]"},
    // Compiler fences between the microkernel's rows and taps (F(r), F(s)).
    {"K={K},C=8,H=6,R=3", 32, 0, 0, "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k), F(r)]"},
    {"K={K},C=8,H=6,R=3", 32, 0, 0, "[T(2,c), T(6,h), T(3,w), T(3,r), T(4,c), U(3,s), U(2,w), U(2,k), V(k), F(s)]"},
    // Pf(w): the ISA's prefetch template for a c loop (borders, fence), for a
    // k loop over an Lseq (its calls count a1 + a2 h-blocks), and with the K tail.
    {"K={K},C=8,H=6,R=3", 32, 0, 0,
     "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k), F(r), Pf(w)]"},
    {"K={K},C=8,H=6,R=3", 0, 16, 0, "[T(2,c), T(6,h), T(6,w), T(4,c), U(3,s), U(3,r), U(2,k), V(k), Pf(w)]"},
    {"K={K},C=8,H=6,R=3", 0, 0, 8, "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k), Pf(w)]"},
    {"K={K},C=4,H=34,R=1", 32, 16, 0,
     "[T(2,h), T(2,k), Lseq(h,[(3,3),(1,8)]), T(34,w), T(2,c), U(2,c), U(a,h), V(k), Pf(w)]"},
    {"K={K},C=5,H=4,R=1", 20, 0, 0, "[T(2,k), T(4,h), T(4,w), T(5,c), V(k), Pf(w)]"},
    // Pf(o), alone, after Pf(w) over an Lseq, and with the K tail (NEON's
    // write prefetch, __builtin_prefetch(p, 1, 3)).
    {"K={K},C=8,H=6,R=3", 32, 0, 0, "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k), Pf(o)]"},
    {"K={K},C=4,H=34,R=1", 32, 0, 0,
     "[T(2,h), T(2,k), Lseq(h,[(3,3),(1,8)]), T(34,w), T(2,c), U(2,c), U(a,h), V(k), Pf(w), Pf(o)]"},
    {"K={K},C=5,H=4,R=1", 0, 0, 6, "[T(2,k), T(4,h), T(4,w), T(5,c), V(k), Pf(o)]"},
    // Nt(o): streamed once per block by the call with the last r and s (taps
    // and c outside the microkernel), with Pf(o), over an Lseq, and in the K
    // tail (K = 40 on 16 lanes: only vectors at 64-byte offsets stream). On
    // NEON the stream store is the plain store and its fence empty.
    {"K={K},C=8,H=6,R=3", 32, 0, 0, "[T(3,r), T(3,h), T(6,w), T(3,s), T(8,c), U(2,h), U(2,k), V(k), Nt(o)]"},
    {"K={K},C=8,H=6,R=3", 32, 0, 0,
     "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k), Pf(o), Nt(o)]"},
    {"K={K},C=4,H=34,R=1", 16, 0, 0, "[Lseq(h,[(1,8),(1,9)]), T(2,h), T(34,w), T(4,c), U(a,h), V(k), Nt(o)]"},
    {"K={K},C=5,H=4,R=1", 40, 0, 0, "[T(3,k), T(4,h), T(4,w), T(5,c), V(k), Nt(o)]"},
    {"K={K},C=5,H=4,R=3", 0, 0, 6, "[T(2,k), T(3,r), T(4,h), T(4,w), T(3,s), T(5,c), V(k), Nt(o)]"},
    // R(d) completes a dimension; batch N = 2.
    {"N=2,K={K},C=4,H=6,R=1", 16, 0, 4, "[T(2,n), R(h), T(3,w), T(4,c), U(2,w), V(k)]"},
    // Wino(2): the ISA's winograd.sub, C and K tails of 1 and 2 lanes, 3x3
    // tiles (half ones at the edges), then 3x4 = 12 tiles without padding as
    // 3*2 + 2*3; Wino(2,b), the fused order, 9 tiles in blocks of 3; stride
    // 2's polyphase transform, 5x4 outputs in 3x2 tiles, the last row half.
    // (tests/codegen/codegen_test.cpp ConvWino covers x86 from the shape.)
    {"K={K},C=5,H=5,R=3,pad=1", 0, 0, 6, "[Wino(2), T(2,k), T(9,h), T(5,c), V(k)]"},
    {"K={K},C=4,H=8,W=10,R=3,pad=0", 0, 0, 8, "[Wino(2), T(2,k), Lseq(h,[(3,2),(2,3)]), T(4,c), U(a,h), V(k)]"},
    {"K={K},C=5,H=5,R=3,pad=1", 0, 0, 6, "[Wino(2,3), T(2,k), T(3,h), T(5,c), V(k)]"},
    {"K={K},C=5,H=9,W=7,R=3,stride=2,pad=1", 0, 0, 6, "[Wino(2,3), T(2,k), T(3,h), T(5,c), V(k)]"},
    // P loops on OpenMP threads pinned to 2 CPUs (each output written by one
    // thread): on k; on h above an Lseq (17 = 8 + 9 rows per thread) with
    // padding at both ends; on w; on n with R(h) below it; k x h collapsed
    // into 4 iterations; a masked K tail inside one thread's share; Pf(w)
    // below a P (each thread counts its own calls' shares); uneven shares:
    // 17 rows (9 + 8), 3 k vectors with a masked tail, an uneven P collapsed
    // with an even one.
    {"K={K},C=8,H=6,R=3", 64, 0, 0, "[P(2,k), T(3,r), T(3,h), T(6,w), T(3,s), T(8,c), U(2,h), U(2,k), V(k)]", 2},
    {"K={K},C=4,H=34,R=3", 16, 0, 0,
     "[P(2,h), T(34,w), Lseq(h,[(1,8),(1,9)]), T(3,r), T(3,s), T(4,c), U(a,h), V(k)]", 2},
    {"K={K},C=4,H=6,R=3", 16, 0, 0, "[P(2,w), T(3,h), T(4,c), U(3,s), U(3,r), U(3,w), U(2,h), V(k)]", 2},
    {"N=2,K={K},C=4,H=6,R=1", 16, 0, 0, "[P(2,n), R(h), T(3,w), T(4,c), U(2,w), V(k)]", 2},
    {"K={K},C=8,H=8,R=3", 32, 0, 0, "[P(2,k), P(2,h), T(2,h), T(8,w), T(3,r), T(3,s), T(8,c), U(2,h), V(k)]", 2},
    {"K={K},C=5,H=4,R=1", 20, 0, 0, "[P(2,k), T(4,h), T(4,w), T(5,c), V(k)]", 2},
    {"K={K},C=8,H=6,R=3", 64, 0, 0,
     "[P(2,h), T(2,k), T(3,h), T(6,w), T(2,c), T(4,c), U(3,s), U(3,r), U(2,k), V(k), Pf(w)]", 2},
    {"K={K},C=4,H=17,R=3", 16, 0, 0, "[P(17,h,2), T(17,w), T(3,r), T(3,s), T(4,c), V(k)]", 2},
    {"K={K},C=3,H=5,R=1", 41, 0, 0, "[P(3,k,2), T(5,h), T(5,w), T(3,c), V(k)]", 2},
    {"K={K},C=4,H=5,R=3", 32, 0, 0, "[P(5,h,2), P(2,k), T(5,w), T(3,r), T(3,s), T(4,c), V(k)]", 2},
};

}  // namespace

std::vector<ConvCase> conv_cases(const std::string& isa, int threads) {
  std::vector<ConvCase> out;
  for (const Row& r : kRows) {
    const int k = isa == "avx512" ? r.avx512 : isa == "avx2" ? r.avx2 : isa == "neon" ? r.neon : 0;
    if (k == 0 || r.threads != threads) continue;
    std::string shape = r.shape;
    shape.replace(shape.find("{K}"), 3, std::to_string(k));
    out.push_back({shape, r.config, r.threads});
  }
  if (out.empty()) throw Error("conv_cases: no case for " + isa + " on " + std::to_string(threads) + " threads");
  return out;
}

int64_t largest_divisor(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

Config blocked_config(const Shape& s, int lanes, bool taps, int64_t c_outer, const std::string& outer,
                      const std::string& tail) {
  const Shape gv = group_view(s);  // s itself without groups
  const int64_t kv = gv.padded_K(lanes) / lanes, uk = largest_divisor(kv, 2);
  const int64_t uw = largest_divisor(s.Wo(), 4), uh = largest_divisor(s.Ho(), 2);
  const int64_t cu = taps ? largest_divisor(gv.C / c_outer, 2) : 1;
  std::string t = outer.empty() ? "[" : "[" + outer + ", ";
  if (c_outer > 1) t += fmt::format("T({},c), ", c_outer);
  if (!taps) t += fmt::format("T({},r), ", s.R);
  t += fmt::format("T({},k), T({},h), T({},w), ", kv / uk, s.Ho() / uh, s.Wo() / uw);
  if (!taps) t += fmt::format("T({},s), ", s.S);
  t += fmt::format("T({},c), ", gv.C / c_outer / cu);
  if (taps) t += fmt::format("U({},s), U({},r), U({},c), ", s.S, s.R, cu);
  t += fmt::format("U({},w), U({},h), U({},k), V(k){}]", uw, uh, uk, tail);
  return parse_config(t);
}

}  // namespace convtune::test
