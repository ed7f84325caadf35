// `convtune export` (export.h): the delivered kernel of each layer's log,
// regenerated with the one code generator, compiled with tune's flags, and
// archived with a generated dispatcher into lib<name>.a.
#include "convtune/library/export.h"

#include <fcntl.h>
#include <stdio.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/file_lock.h"
#include "convtune/core/files.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/core/text.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/subprocess.h"
#include "convtune/execution/workdir.h"
#include "convtune/codegen/conv.h"
#include "convtune/space/config.h"
#include "convtune/tune/delivered.h"
#include "convtune/tune/log_machine.h"
#include "convtune/tune/records.h"
#include "convtune/tune/tune.h"

namespace fs = std::filesystem;

namespace convtune {

namespace {

std::string c_identifier(const std::string& text) {
  std::string s = text;
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "c_" + s;
  return s;
}

// How to tune a layer: by its zoo name when it is one, else by its shape.
std::string tune_command(const Shape& s, const std::string& layer, const ExportOptions& opt, int64_t records) {
  bool zoo = false;
  if (!s.name.empty()) {
    try {
      zoo = zoo_layer(s.name).to_string() == s.to_string();
    } catch (const Error&) {
    }
  }
  std::string cmd = "convtune tune " + (zoo ? "--layer " + s.name : "--shape " + s.to_string());
  if (opt.epilogue != Epilogue::none) cmd += " --epilogue " + to_string(opt.epilogue);
  if (records > 0) cmd += fmt::format(" --trials {} --resume", records + 20);
  if (!opt.logs_root.empty())
    cmd += " --out " + opt.logs_root + "/" + layer;
  else if (opt.threads > 0 && opt.threads != available_cpus())
    cmd += fmt::format(" --threads {}", opt.threads);
  return cmd;
}

std::string log_of(const ExportOptions& opt, const std::string& layer) {
  if (!opt.logs_root.empty()) return opt.logs_root + "/" + layer + "/log.jsonl";
  return default_out_dir(layer, std::max(1, opt.threads), opt.epilogue) + "/log.jsonl";
}

// The C name of an epilogue after <NAME>_EPILOGUE_: NONE, BIAS_RELU, ...
std::string epilogue_c(Epilogue e) { return upper(c_identifier(to_string(e))); }

// What each epilogue does to an output element, as the generated code does it
// (ukernel/codegen.cpp; CONTRACT.md "Epilogues"): no clamp after the add.
std::string epilogue_formula(Epilogue e) {
  switch (e) {
    case Epilogue::none: return "conv; bias and residual NULL";
    case Epilogue::bias: return "conv + bias[k]; residual NULL";
    case Epilogue::bias_relu: return "max(conv + bias[k], 0); residual NULL";
    case Epilogue::bias_relu6: return "min(max(conv + bias[k], 0), 6); residual NULL";
    case Epilogue::bias_add: return "conv + bias[k] + residual[n][h][w][k]; no ReLU after the add";
  }
  return "";
}

// The per-shape entry point's parameters (codegen.h), without restrict (the header is C++ too).
std::string kernel_params(Epilogue e) {
  return e == Epilogue::none
             ? "const float *input, const float *packed, float *output"
             : "const float *input, const float *packed, const float *bias, const float *residual,\n    float *output";
}

// The per-kernel part of the header: what it computes, where it comes from.
std::string kernel_declarations(const ExportedKernel& k, Epilogue epilogue) {
  const Shape& s = k.shape;
  std::string layers = k.layers[0];
  if (k.layers.size() > 1)
    layers += fmt::format(" (also {})", fmt::join(k.layers.begin() + 1, k.layers.end(), ", "));
  const std::string fn = k.function, FN = upper(fn);
  return fmt::format(
      "/* {0}: {1} -> output {2}x{3}x{4} (Ho x Wo x K)\n"
      "   config {5}\n"
      "   {6}; {7}; {8} ({9}, {10:.1f} GFLOP/s in the search) */\n"
      "#define {11}_PACKED_FLOATS {12}\n"
      "extern const unsigned long {13}_packed_floats;\n"
      "void {13}_pack(const float *weights, float *packed);\n"
      "void {13}({14});\n\n",
      layers, s.to_string(), s.Ho(), s.Wo(), s.K, k.record.config, k.record.isa,
      k.threads > 1 ? fmt::format("{} OpenMP threads", k.threads) : std::string("the calling thread"),
      k.finalist ? "the winner of finalists.json (checked at every output element)"
                 : "the best correct record of its log",
      k.log,
      k.record.gflops, FN, k.packed_floats, fn, kernel_params(epilogue));
}

std::string header_text(const ExportResult& r) {
  const std::string n = r.name, N = upper(r.name);
  std::string enumerators;
  for (size_t i = 0; i < epilogue_names().size(); ++i) {
    const Epilogue e = Epilogue(i);
    const std::string item = fmt::format("  {}_EPILOGUE_{} = {}{}", N, epilogue_c(e), i,
                                         i + 1 < epilogue_names().size() ? "," : "");
    enumerators += fmt::format("{:<34}/* {} */\n", item, epilogue_formula(e));
  }
  const Epilogue e = r.epilogue;
  const std::string uses = e == Epilogue::none       ? "NULL bias and residual"
                           : has_residual(e) ? "a bias and a residual"
                                             : "a bias and a NULL residual";
  std::string o = fmt::format(
      "/* {0}.h -- generated by convtune {1} export: {2} tuned 2D convolutions (f32).\n"
      " * Build: pkg-config --cflags --libs {0} (PKG_CONFIG_PATH=<this directory>), or in CMake\n"
      " * find_package({0}) (CMAKE_PREFIX_PATH=<this directory>) and link {0}::{0}.\n"
      " * Every function: input [N][H][W][C] (NHWC, not padded: padding taps are skipped), weights\n"
      " * [K][C/groups][R][S] (as PyTorch and ONNX store them; [K][C][R][S] without groups) packed once\n"
      " * by a pack function, output [N][Ho][Wo][K] (NHWC, exactly K wide, overwritten); no alignment\n"
      " * required, nothing allocated. With groups, output channels [g*K/groups, (g+1)*K/groups) read\n"
      " * input channels [g*C/groups, (g+1)*C/groups) only; groups = C is a depthwise convolution.\n"
      " * Output row h, column w, filter tap (r, s) reads input row h*stride_h + r*dilation_h - pad_t and\n"
      " * column w*stride_w + s*dilation_w - pad_l (zero outside the input), so\n"
      " *   Ho = (H + pad_t + pad_b - dilation_h*(R-1) - 1) / stride_h + 1,\n"
      " *   Wo = (W + pad_l + pad_r - dilation_w*(S-1) - 1) / stride_w + 1.\n"
      "{5}"
      "{3}"
      " */\n"
      "#ifndef {4}_H\n#define {4}_H\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n"
      "/* Return codes of the descriptor functions; {0}_strerror says them in words. */\n"
      "#define {4}_OK 0\n"
      "#define {4}_ERR_NULL_ARGUMENT 1        /* a pointer argument, or a bias or residual needed, is NULL */\n"
      "#define {4}_ERR_SHAPE_NOT_TUNED 2      /* no kernel of this library has the descriptor's shape */\n"
      "#define {4}_ERR_EPILOGUE_UNSUPPORTED 3 /* not {4}_LIBRARY_EPILOGUE, or a bias or residual it does not read */\n"
      "#define {4}_ERR_INVALID_DESCRIPTOR 4   /* a size, stride, dilation or groups below 1, or a pad below 0 */\n\n"
      "/* What is applied to each output element after the convolution, in registers before the store:\n"
      "   conv is the convolution's value at [n][h][w][k], in float. bias: K floats, one per output channel;\n"
      "   residual: a second tensor [N][Ho][Wo][K] laid out as the output, only read (must not overlap it). */\n"
      "typedef enum {0}_epilogue {{\n{6}}} {0}_epilogue;\n\n"
      "/* The epilogue every kernel of this library applies; a descriptor must give it, with {7}. */\n"
      "#define {4}_LIBRARY_EPILOGUE {4}_EPILOGUE_{8}\n\n"
      "/* A convolution: the shape it was tuned for selects the kernel; every field from N to groups\n"
      "   must equal that of a kernel below (a dense convolution: dilations 1, groups 1). */\n"
      "typedef struct {0}_desc {{\n"
      "  long N, K, C;                     /* batch, output channels, input channels */\n"
      "  long H, W;                        /* input height and width, not padded */\n"
      "  long R, S;                        /* filter height and width */\n"
      "  long stride_h, stride_w;          /* steps between output rows, columns, in input rows, columns */\n"
      "  long pad_t, pad_l, pad_b, pad_r;  /* zeros above, left of, below, right of the input (ONNX order) */\n"
      "  long dilation_h, dilation_w;      /* spacing of filter taps in input rows, columns; 1: adjacent */\n"
      "  long groups;                      /* channel groups, C and K split alike; 1: none; C: depthwise */\n"
      "  {0}_epilogue epilogue; /* {4}_LIBRARY_EPILOGUE */\n"
      "  const float *bias;     /* [K] for every epilogue but NONE, else NULL */\n"
      "  const float *residual; /* [N][Ho][Wo][K] for BIAS_ADD, else NULL */\n"
      "}} {0}_desc;\n\n"
      "/* Floats of the packed weight buffer of d's kernel, into *n. */\n"
      "int {0}_packed_floats(const {0}_desc *d, unsigned long *n);\n"
      "/* Once per set of weights: weights [K][C/groups][R][S] into packed ({0}_packed_floats floats). */\n"
      "int {0}_pack(const {0}_desc *d, const float *weights, float *packed);\n"
      "/* The convolution of d, then its epilogue with d->bias and d->residual; packed as {0}_pack wrote\n"
      "   it for the same shape. */\n"
      "int {0}_conv(const {0}_desc *d, const float *input, const float *packed, float *output);\n"
      "/* A return code in words. */\n"
      "const char *{0}_strerror(int code);\n\n"
      "/* The same kernels by shape, without a descriptor{9}. */\n\n",
      n, CONVTUNE_VERSION, r.kernels.size(),
      r.openmp ? " * Kernels with OpenMP threads (below) run a team of that many threads per call, fixed by\n"
                 " * their configuration; link with -fopenmp (the .pc and the CMake target do) and call them\n"
                 " * from one thread at a time. Bind the threads for the tuned speed: OMP_PROC_BIND=close\n"
                 " * OMP_PLACES=cores.\n"
               : " * Every kernel runs on the calling thread and keeps no state: concurrent calls are safe.\n",
      N,
      e == Epilogue::none
          ? " * No epilogue: the kernels store the convolution as it is (export --epilogue fuses one).\n"
          : fmt::format(" * Epilogue of every kernel (export --epilogue): {}, fused before the store.\n", to_string(e)),
      enumerators, uses, epilogue_c(e),
      e == Epilogue::none ? ""
                          : fmt::format(": bias [K]; residual {}", has_residual(e) ? "[N][Ho][Wo][K]" : "not read, NULL"));
  for (const auto& k : r.kernels) o += kernel_declarations(k, r.epilogue);
  o += "#ifdef __cplusplus\n}\n#endif\n#endif\n";
  return o;
}

std::string dispatcher_text(const ExportResult& r) {
  const std::string n = r.name, N = upper(r.name);
  const Epilogue e = r.epilogue;
  // One epilogue per library: the kernels share one signature, and a
  // descriptor asking for another epilogue (or passing an operand it would
  // ignore) is refused rather than computed differently from what it says.
  const std::string unused = e == Epilogue::none ? "d->bias || d->residual" : has_residual(e) ? "" : "d->residual";
  const std::string needed =
      e == Epilogue::none ? "" : has_residual(e) ? " || !d->bias || !d->residual" : " || !d->bias";
  const std::string call =
      e == Epilogue::none ? "input, packed, output" : "input, packed, d->bias, d->residual, output";
  const std::string why_epilogue =
      e == Epilogue::none
          ? fmt::format("this library's kernels were exported without an epilogue: give {}_EPILOGUE_NONE and NULL "
                        "bias and residual, or export another library with convtune export --epilogue",
                        N)
          : fmt::format("this library's kernels were exported with epilogue {}: give {}_EPILOGUE_{}, {}, or "
                        "export another library with convtune export --epilogue",
                        to_string(e), N, epilogue_c(e),
                        has_residual(e) ? "a bias and a residual" : "a bias and a NULL residual");
  const std::string why_null = e == Epilogue::none ? "a pointer argument is NULL"
                               : has_residual(e)   ? "a pointer argument, or the descriptor's bias or residual, is NULL"
                                                   : "a pointer argument, or the descriptor's bias, is NULL";
  std::string table;
  for (const auto& k : r.kernels) {
    const Shape& s = k.shape;
    table += fmt::format("  {{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}UL, {}_pack, {}}},\n",
                         s.N, s.K, s.C, s.H, s.W, s.R, s.S, s.stride_h, s.stride_w, s.pad_t, s.pad_l, s.pad_b,
                         s.pad_r, s.dil_h, s.dil_w, s.groups, k.packed_floats, k.function, k.function);
  }
  return fmt::format(
      "/* The dispatcher of {0}.h, generated by convtune {1} export. */\n"
      "#include <stddef.h>\n\n#include \"{0}.h\"\n\n"
      "typedef struct {{\n"
      "  long N, K, C, H, W, R, S, stride_h, stride_w, pad_t, pad_l, pad_b, pad_r, dilation_h, dilation_w, groups;\n"
      "  unsigned long packed_floats;\n"
      "  void (*pack)(const float *, float *);\n"
      "  void (*conv)({4});\n"
      "}} {0}_kernel_;\n\n"
      "static const {0}_kernel_ {0}_kernels_[] = {{\n{2}}};\n\n"
      "static int {0}_find_(const {0}_desc *d, const {0}_kernel_ **k) {{\n"
      "  if (!d) return {3}_ERR_NULL_ARGUMENT;\n"
      "  if (d->N < 1 || d->K < 1 || d->C < 1 || d->H < 1 || d->W < 1 || d->R < 1 || d->S < 1 || d->stride_h < 1 ||\n"
      "      d->stride_w < 1 || d->pad_t < 0 || d->pad_l < 0 || d->pad_b < 0 || d->pad_r < 0 || d->dilation_h < 1 ||\n"
      "      d->dilation_w < 1 || d->groups < 1)\n"
      "    return {3}_ERR_INVALID_DESCRIPTOR;\n"
      "  if (d->epilogue != {3}_LIBRARY_EPILOGUE{5}) return {3}_ERR_EPILOGUE_UNSUPPORTED;\n"
      "  for (size_t i = 0; i < sizeof {0}_kernels_ / sizeof {0}_kernels_[0]; ++i) {{\n"
      "    const {0}_kernel_ *e = &{0}_kernels_[i];\n"
      "    if (e->N == d->N && e->K == d->K && e->C == d->C && e->H == d->H && e->W == d->W && e->R == d->R &&\n"
      "        e->S == d->S && e->stride_h == d->stride_h && e->stride_w == d->stride_w && e->pad_t == d->pad_t &&\n"
      "        e->pad_l == d->pad_l && e->pad_b == d->pad_b && e->pad_r == d->pad_r &&\n"
      "        e->dilation_h == d->dilation_h && e->dilation_w == d->dilation_w && e->groups == d->groups) {{\n"
      "      *k = e;\n"
      "      return {3}_OK;\n"
      "    }}\n"
      "  }}\n"
      "  return {3}_ERR_SHAPE_NOT_TUNED;\n"
      "}}\n\n"
      "int {0}_packed_floats(const {0}_desc *d, unsigned long *n) {{\n"
      "  const {0}_kernel_ *k;\n"
      "  int rc = {0}_find_(d, &k);\n"
      "  if (rc) return rc;\n"
      "  if (!n) return {3}_ERR_NULL_ARGUMENT;\n"
      "  *n = k->packed_floats;\n"
      "  return {3}_OK;\n"
      "}}\n\n"
      "int {0}_pack(const {0}_desc *d, const float *weights, float *packed) {{\n"
      "  const {0}_kernel_ *k;\n"
      "  int rc = {0}_find_(d, &k);\n"
      "  if (rc) return rc;\n"
      "  if (!weights || !packed) return {3}_ERR_NULL_ARGUMENT;\n"
      "  k->pack(weights, packed);\n"
      "  return {3}_OK;\n"
      "}}\n\n"
      "int {0}_conv(const {0}_desc *d, const float *input, const float *packed, float *output) {{\n"
      "  const {0}_kernel_ *k;\n"
      "  int rc = {0}_find_(d, &k);\n"
      "  if (rc) return rc;\n"
      "  if (!input || !packed || !output{6}) return {3}_ERR_NULL_ARGUMENT;\n"
      "  k->conv({7});\n"
      "  return {3}_OK;\n"
      "}}\n\n"
      "const char *{0}_strerror(int code) {{\n"
      "  switch (code) {{\n"
      "    case {3}_OK: return \"success\";\n"
      "    case {3}_ERR_NULL_ARGUMENT: return \"{8}\";\n"
      "    case {3}_ERR_SHAPE_NOT_TUNED:\n"
      "      return \"no kernel for this shape in {0}: tune it (convtune tune) and export the library again\";\n"
      "    case {3}_ERR_EPILOGUE_UNSUPPORTED:\n"
      "      return \"{9}\";\n"
      "    case {3}_ERR_INVALID_DESCRIPTOR:\n"
      "      return \"the descriptor has a size, stride, dilation or groups below 1 or a pad below 0: give \"\n"
      "             \"every field (a dense convolution has dilation_h, dilation_w and groups 1)\";\n"
      "    default: return \"unknown {0} return code\";\n"
      "  }}\n"
      "}}\n",
      n, CONVTUNE_VERSION, table, N,
      e == Epilogue::none ? "const float *, const float *, float *"
                          : "const float *, const float *, const float *, const float *, float *",
      unused.empty() ? "" : " || " + unused, needed, call, why_null, why_epilogue);
}

std::string pkg_config_text(const ExportResult& r) {
  return fmt::format(
      "# Generated by convtune {1} export; paths relative to this file.\n"
      "prefix=${{pcfiledir}}\n"
      "libdir=${{prefix}}\n"
      "includedir=${{prefix}}\n\n"
      "Name: {0}\n"
      "Description: {2} 2D convolutions tuned by convtune\n"
      "Version: {1}\n"
      "Cflags: -I${{includedir}}\n"
      "Libs: -L${{libdir}} -l{0}{3}\n",
      r.name, CONVTUNE_VERSION, r.kernels.size(), r.openmp ? " -fopenmp" : "");
}

std::string cmake_config_text(const ExportResult& r) {
  return fmt::format(
      "# Generated by convtune {1} export: find_package({0}) with CMAKE_PREFIX_PATH=<this directory>\n"
      "# defines {0}::{0}, the static library lib{0}.a with {0}.h{3}.\n"
      "if(NOT TARGET {0}::{0})\n"
      "  add_library({0}::{0} STATIC IMPORTED)\n"
      "  set_target_properties({0}::{0} PROPERTIES\n"
      "    IMPORTED_LOCATION \"${{CMAKE_CURRENT_LIST_DIR}}/lib{0}.a\"\n"
      "    INTERFACE_INCLUDE_DIRECTORIES \"${{CMAKE_CURRENT_LIST_DIR}}\"{2})\n"
      "endif()\n",
      r.name, CONVTUNE_VERSION,
      r.openmp ? "\n    INTERFACE_LINK_OPTIONS \"-fopenmp\"" : "",
      r.openmp ? " (some kernels have OpenMP threads: linked with -fopenmp)" : "");
}

std::string read_binary(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read the archive '{}' the archiver wrote; set AR to a working ar", path));
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// --out as a directory path with a name: "lib/" and "." resolved.
fs::path out_path(const std::string& out_dir) {
  fs::path p = fs::absolute(out_dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "lib/" -> "lib"
  return p;
}

// The staging directories beside --out: ".<out name>.tmp-XXXXXX".
std::string staging_prefix(const fs::path& out) { return "." + out.filename().string() + ".tmp-"; }

// export replaces its --out whole: the files of an earlier export
// go, other files are kept (linked into the new set); a subdirectory, or
// --out being the current directory, cannot be carried over atomically.
void check_out_dir(const std::string& out_dir) {
  const fs::path out = out_path(out_dir);
  std::error_code ec;
  if (!fs::is_directory(out, ec)) return;
  const std::string fix = "give the library a directory of its own (e.g. --out lib)";
  if (fs::equivalent(out, fs::current_path(), ec))
    throw Error(fmt::format("--out '{}' is the current directory: export replaces its --out as a whole; {}", out_dir,
                            fix));
  for (const auto& e : fs::directory_iterator(out))
    if (e.is_directory() && !e.is_symlink())
      throw Error(fmt::format("--out '{}' holds the directory '{}': export replaces its --out as a whole and keeps "
                              "only its files; {}",
                              out_dir, e.path().filename().string(), fix));
}

// Writes `files` (name, bytes) as the directory --out in one step: staged in
// a directory beside it, then renamed over it (an atomic exchange with the
// old one), so that --out holds the old set or the new one, never a mix.
// Files of --out that are not the library's (nor stale temporaries) are kept.
void publish(const std::string& out_dir, const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path out = out_path(out_dir), parent = out.parent_path();
  const std::string fix = "choose another --out";
  fs::create_directories(parent);
  remove_stale_workdirs(parent.string(), staging_prefix(out));  // those of killed exports
  std::string tmpl = (parent / (staging_prefix(out) + "XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    throw Error(fmt::format("cannot create a directory beside --out '{}' ({}); {}", out_dir, std::strerror(errno),
                            fix));
  const std::string stage = tmpl;
  struct Remove {
    std::string dir;
    ~Remove() {
      std::error_code e;
      if (!dir.empty()) fs::remove_all(dir, e);
    }
  } cleanup{stage};
  write_file_atomic(stage + "/" + kWorkDirOwnerFile, workdir_owner_text() + "\n", "the export's owner file", fix);
  std::set<std::string> ours{kWorkDirOwnerFile};
  for (const auto& [name, text] : files) {
    write_file_atomic(stage + "/" + name, text, name, fix);
    ours.insert(name);
  }
  std::error_code ec;
  const bool existed = fs::is_directory(out, ec);
  if (existed)
    for (const auto& e : fs::directory_iterator(out)) {
      const std::string name = e.path().filename().string();
      if (ours.count(name) || is_atomic_temp_name(name) || !e.is_regular_file()) continue;
      fs::create_hard_link(e.path(), stage + "/" + name, ec);
      if (ec) fs::copy_file(e.path(), stage + "/" + name);
    }
  // The old set gets our owner file too: after the exchange it is the staging
  // directory, removed by the next export if we are killed before removing it.
  if (existed)
    write_file_atomic((out / kWorkDirOwnerFile).string(), workdir_owner_text() + "\n", "the export's owner file", fix);
  if (!existed) {
    if (rename(stage.c_str(), out.c_str()) != 0)
      throw Error(fmt::format("cannot rename '{}' to --out '{}': {}; {}", stage, out_dir, std::strerror(errno), fix));
  } else if (renameat2(AT_FDCWD, stage.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) != 0) {
    // No atomic exchange on this file system: the old set steps aside first.
    const std::string old = stage + ".old";
    if (rename(out.c_str(), old.c_str()) != 0 || rename(stage.c_str(), out.c_str()) != 0)
      throw Error(fmt::format("cannot replace --out '{}' with '{}': {}; {}", out_dir, stage, std::strerror(errno),
                              fix));
    fs::remove_all(old, ec);
  }  // after the exchange `stage` holds the old set: the cleanup removes it
  fs::remove(out / kWorkDirOwnerFile, ec);
}

}  // namespace

void check_library_name(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 64 && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                  std::all_of(name.begin(), name.end(), [](char ch) {
                    return ch == '_' || (std::isalnum(static_cast<unsigned char>(ch)) && ch >= 0);
                  });
  if (!ok)
    throw Error(fmt::format("--name '{}' is not a C identifier of at most 64 characters; use letters, digits and "
                            "'_', not starting with a digit (e.g. '{}')",
                            name, c_identifier(name).substr(0, 64)));
}

std::string default_library_name(const std::string& network, const std::vector<Shape>& shapes) {
  if (!network.empty()) return c_identifier(network);
  if (shapes.size() == 1) return c_identifier(layer_id(shapes[0]));
  return "convtune";
}

ExportResult run_export(const ExportOptions& opt) {
  check_library_name(opt.name);
  if (opt.shapes.empty()) throw Error("no layer to export; give --layer, --network or --shape");
  ExportResult res;
  res.name = opt.name;
  res.epilogue = opt.epilogue;
  res.out_dir = opt.out_dir.empty() ? "." : opt.out_dir;
  {  // fail now, not after compiling; a failed export leaves no --out it made
    std::error_code ec;
    const bool existed = fs::exists(res.out_dir, ec);
    ensure_writable(res.out_dir + "/" + res.name + ".h", "--out");
    if (!existed) fs::remove(res.out_dir, ec);
    check_out_dir(res.out_dir);
  }

  // The selected layers by shape, in selection order: one kernel per shape.
  std::vector<std::vector<Shape>> groups;
  std::map<std::string, size_t> group_of;
  for (const Shape& s : opt.shapes) {
    auto [it, fresh] = group_of.emplace(s.to_string(), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(s);
  }

  std::set<std::string> symbols;  // every external name, so that no two kernels clash
  for (const char* f : {"packed_floats", "pack", "conv", "strerror", "desc", "epilogue"})
    symbols.insert(res.name + "_" + f);
  std::vector<GeneratedKernel> generated;
  const MachineId here = machine_id(detect_machine(default_cpu()));  // whose logs are ours (issue 14)
  for (const auto& group : groups) {
    ExportedKernel k;
    DeliveredKernel best;
    for (const Shape& s : group) {
      const std::string layer = layer_id(s), log = log_of(opt, layer);
      k.layers.push_back(layer);
      if (!opt.any_machine) check_log_machine(log, read_records(log), here);
      const DeliveredKernel d = delivered_kernel(log, s, opt.threads, opt.epilogue);
      if (!d.other_shape.empty())
        throw Error(fmt::format("log '{}' of {} is for shape {}, not {}; remove it or point --logs at the layers' "
                                "tune directories",
                                log, layer, d.other_shape, s.to_string()));
      if (d.other_threads)
        throw Error(fmt::format("log '{}' of {} was measured with --threads {}, not {}; pass --threads {}", log,
                                layer, d.other_threads, opt.threads, d.other_threads));
      if (d.other_epilogue)  // one epilogue per library (export.h)
        throw Error(fmt::format("log '{}' of {} was tuned with --epilogue {}, not {}; pass --epilogue {} to export "
                                "it (one epilogue per library)",
                                log, layer, to_string(*d.other_epilogue), to_string(opt.epilogue),
                                to_string(*d.other_epilogue)));
      // By share of each record's own peak (records.h): the logs may come from sessions at other clocks.
      if (d.found && (!best.found || faster(d.record, best.record))) {
        best = d;
        k.log = log;
      }
      if (!d.finalists_note.empty()) res.notes.push_back(layer + ": " + d.finalists_note);
      if (&s == &group[0] && !d.found) best.records = d.records;  // for the error about the first layer
    }
    const Shape& shape = group[0];
    if (!best.found) {
      const std::string layer = k.layers[0], log = log_of(opt, layer);
      const std::string why = best.records == 0
                                  ? fmt::format("no log '{}'", log)
                                  : fmt::format("its log '{}' holds no correct candidate among {}", log, best.records);
      if (opt.skip_untuned) {
        for (const auto& l : k.layers) res.skipped.push_back(l + ": " + why);
        continue;
      }
      throw Error(fmt::format("layer {} is not tuned: {}; tune it with '{}' or pass --skip-untuned to leave it out",
                              layer, why, tune_command(shape, layer, opt, best.records)));
    }
    k.shape = shape;
    k.record = best.record;
    k.finalist = best.finalist;
    const Isa isa = load_isa(k.record.isa.empty() ? best_isa() : k.record.isa);
    if (isa.arch != host_arch())
      throw Error(fmt::format("the kernel of {} in '{}' is {} code for {}; export builds with $CC for this {} "
                              "machine: export it on an {} one",
                              k.layers[0], k.log, isa.name, isa.arch, host_arch(), isa.arch));
    std::string base = res.name + "_" + c_identifier(k.layers[0]);
    std::string fn = base;
    for (int i = 2; symbols.count(fn) || symbols.count(fn + "_pack") || symbols.count(fn + "_packed_floats"); ++i)
      fn = fmt::format("{}_{}", base, i);
    symbols.insert({fn, fn + "_pack", fn + "_packed_floats"});
    k.function = fn;
    GeneratedKernel g;
    try {
      g = generate_conv(isa, {shape, parse_config(k.record.config), fn,
                              fmt::format("{}, exported from '{}'", k.record.table, k.log), opt.epilogue});
    } catch (const Error& e) {
      throw Error(fmt::format("the configuration '{}' in '{}' does not fit {} ({}); re-tune the layer",
                              k.record.config, k.log, shape.to_string(), e.what()));
    }
    k.threads = g.threads;
    k.packed_floats = g.packed_floats;
    res.openmp = res.openmp || g.threads > 1;
    res.kernels.push_back(k);
    generated.push_back(std::move(g));
  }
  if (res.kernels.empty())
    throw Error(fmt::format("no selected layer is tuned ({} left out by --skip-untuned): nothing to export; tune "
                            "them first (convtune tune)",
                            res.skipped.size()));

  // Each kernel with its own ISA's flags, as tune builds it; then the dispatcher.
  WorkDir wd("export");
  Compiler cc = Compiler::from_env({});
  cc.info();  // a missing compiler is one clear line
  cc.output_flags = {"-c", "-fPIC"};  // -fPIC: the archive may go into a shared library too
  std::vector<CompileJob> jobs;
  for (size_t i = 0; i < res.kernels.size(); ++i) {
    const ExportedKernel& k = res.kernels[i];
    const std::string src = fmt::format("{}/{}.c", wd.path(), k.function);
    write_work_file(src, generated[i].c_source);
    std::vector<std::string> flags = load_isa(k.record.isa.empty() ? best_isa() : k.record.isa).cflags;
    flags.insert(flags.end(), generated[i].cflags.begin(), generated[i].cflags.end());  // -fopenmp for a P loop
    jobs.push_back({src, fmt::format("{}/{}.o", wd.path(), k.function), flags});
  }
  write_work_file(wd.path() + "/" + res.name + ".h", header_text(res));
  write_work_file(wd.path() + "/" + res.name + "_dispatch.c", dispatcher_text(res));
  jobs.push_back({wd.path() + "/" + res.name + "_dispatch.c", wd.path() + "/" + res.name + "_dispatch.o",
                  {"-O2", "-Wall", "-Wextra", "-I" + wd.path()}});
  const std::vector<CompileResult> built = compile_all(cc, jobs, opt.jobs > 0 ? opt.jobs : default_jobs());
  const std::string cc_text = fmt::format("{}", fmt::join(cc.command, " "));
  for (size_t i = 0; i < built.size(); ++i) {
    if (built[i].ok) continue;
    const std::string first = built[i].log.substr(0, built[i].log.find('\n'));
    if (i < res.kernels.size())
      throw Error(fmt::format("the kernel of {} does not compile with '{}' ({}); check CC or re-tune the layer",
                              res.kernels[i].layers[0], cc_text, first));
    throw Error(fmt::format("the dispatcher of {} does not compile with '{}' ({}); check CC", res.name, cc_text,
                            first));
  }
  std::vector<std::string> ar;
  {
    const char* env = std::getenv("AR");
    std::istringstream ss(env && *env ? env : "ar");
    for (std::string w; ss >> w;) ar.push_back(w);
  }
  const std::string ar_text = fmt::format("{}", fmt::join(ar, " "));
  const std::string archive = wd.path() + "/lib" + res.name + ".a";
  std::vector<std::string> argv = ar;
  argv.insert(argv.end(), {"rcs", archive});
  for (const auto& j : jobs) argv.push_back(j.output);
  const ProcResult p = run_command(argv, 120);
  if (!p.ok())
    throw Error(fmt::format("the archiver '{}' failed ({}); install binutils or set AR", ar_text,
                            p.output.empty() ? failure_text(p, 120) : p.output.substr(0, p.output.find('\n'))));

  res.library = res.out_dir + "/lib" + res.name + ".a";
  res.header = res.out_dir + "/" + res.name + ".h";
  res.pkg_config = res.out_dir + "/" + res.name + ".pc";
  res.cmake_config = res.out_dir + "/" + res.name + "Config.cmake";
  publish(res.out_dir, {{"lib" + res.name + ".a", read_binary(archive)},
                        {res.name + ".h", header_text(res)},
                        {res.name + ".pc", pkg_config_text(res)},
                        {res.name + "Config.cmake", cmake_config_text(res)}});
  return res;
}

std::string export_summary(const ExportResult& r) {
  std::string o = fmt::format("exported {} convolution{}{} as {} into {}:\n", r.kernels.size(),
                              r.kernels.size() == 1 ? "" : "s",
                              r.epilogue == Epilogue::none ? "" : " with epilogue " + to_string(r.epilogue), r.name,
                              r.out_dir);
  for (const auto& k : r.kernels)
    o += fmt::format("  {:<14} {}  {}{}: {}\n", fmt::format("{}", fmt::join(k.layers, ",")), k.function,
                     k.finalist ? "finalists' winner" : "best of its log",
                     k.threads > 1 ? fmt::format(", {} threads", k.threads) : "", k.record.config);
  for (const auto& s : r.skipped) o += "  skipped (not tuned): " + s + "\n";
  o += fmt::format("files: {} {} {} {}\n", r.library, r.header, r.pkg_config, r.cmake_config);
  o += fmt::format("use:   cc app.c $(PKG_CONFIG_PATH={} pkg-config --cflags --libs {})\n", r.out_dir, r.name);
  o += fmt::format("       CMake: find_package({0}) with CMAKE_PREFIX_PATH={1}; target_link_libraries(app {0}::{0})\n",
                   r.name, r.out_dir);
  if (r.openmp) o += "note: some kernels use OpenMP threads: the library links with -fopenmp\n";
  for (const auto& n : r.notes) o += "note: " + n + "\n";
  return o;
}

}  // namespace convtune
