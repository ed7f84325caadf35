// convtune export end to end: two tiny shapes tuned into a --logs root (one
// with a K tail and the finalists' re-measure, one with a batch, per-axis
// strides, asymmetric pads, dilation 2, W != H and, on two CPUs, OpenMP
// threads), exported as one library, used from a C program built through the
// generated pkg-config file and through the CMake package config; every
// output element is checked against the reference convolution, and the
// dispatcher matches every descriptor field. Then both logs relabelled with
// an epilogue (bias,add; bias,relu), exported as two more libraries and
// checked the same way, bias, ReLU and residual included. Then the error
// lines for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/bench/bench.h"
#include "convtune/core/machine.h"
#include "convtune/core/shape.h"
#include "convtune/execution/runner.h"
#include "convtune/library/export.h"
#include "convtune/tune/records.h"
#include "convtune/tune/tune.h"
#include "test_util.h"

namespace convtune::export_test {
namespace {

using test::run_cli;

const std::string kTable = test::host_table();  // this host's ISA, AVX-512 or not
const std::string kFast = " --min-repeat-ms 1 --repeat 1 --check-points 0 --trials 2 --no-onednn -q --table " + kTable;
// Tuned: K = 20, a masked K tail (finalists.json's winner); a batch of 2 at
// strides 2 x 1, pads 0, 2, 1, 1 (top, left, bottom, right) and dilation 2,
// W != H (two OpenMP threads when there are two CPUs). kUntuned has no log.
// Each tune takes about 5 s, mostly its peak measurements.
const std::vector<std::string> kTuned = {
    "K=20,C=16,H=8,R=3", "N=2,K=16,C=4,H=10,W=7,R=3,stride_h=2,stride_w=1,pad_t=0,pad_l=2,pad_b=1,pad_r=1,dilation=2"};
const std::string kUntuned = "K=8,C=8,H=5,R=1";

std::string id(const std::string& shape) { return layer_id(parse_shape(shape)); }
// The layer id as export names its functions (<name>_<id>): a C identifier.
std::string fn_id(const std::string& shape) {
  std::string s = id(shape);
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// A descriptor's shape fields in <name>.h's order, N to groups.
std::string desc_fields(const Shape& s) {
  return fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}", s.N, s.K, s.C, s.H, s.W, s.R,
                     s.S, s.stride_h, s.stride_w, s.pad_t, s.pad_l, s.pad_b, s.pad_r, s.dil_h, s.dil_w, s.groups);
}

bool has(const std::string& command) {
  return std::system(("command -v " + command + " > /dev/null 2>&1").c_str()) == 0;
}

int sh(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// What both test programs start with: headers, CHECK (a failing call prints
// its strerror text and exits 1) and load (floats from a file).
std::string app_prelude(const std::string& lib) {
  return fmt::format(
      "#include <stddef.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n#include \"{0}.h\"\n\n"
      "#define CHECK(x) \\\n"
      "  do {{ int rc_ = (x); if (rc_) {{ printf(\"%s: %s\\n\", #x, {0}_strerror(rc_)); return 1; }} }} while (0)\n\n"
      "static float *load(const char *path, size_t n) {{\n"
      "  float *p = malloc(n * sizeof *p);\n"
      "  FILE *f = fopen(path, \"rb\");\n"
      "  if (!f || fread(p, sizeof *p, n, f) != n) {{ printf(\"cannot read %s\\n\", path); exit(1); }}\n"
      "  fclose(f);\n"
      "  return p;\n"
      "}}\n\n",
      lib);
}

// The C program: for every tuned shape, descriptor -> packed size, pack, conv,
// output to out<i>.bin, and the same by the shape's own functions (bitwise the
// same); then the return codes for an untuned shape, an epilogue, NULL.
std::string program(const std::vector<std::string>& functions) {
  std::string body;
  for (size_t i = 0; i < kTuned.size(); ++i) {
    const Shape s = parse_shape(kTuned[i]);
    const std::string& fn = functions[i];
    std::string FN = fn;
    for (auto& ch : FN) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    body += fmt::format(
        "  {{\n"
        "    tiny_desc d = {{{}, TINY_EPILOGUE_NONE, NULL, NULL}};\n"
        "    unsigned long n = 0;\n"
        "    CHECK(tiny_packed_floats(&d, &n));\n"
        "    if (n != {}_PACKED_FLOATS || n != {}_packed_floats) {{ puts(\"packed size differs\"); return 1; }}\n"
        "    float *in = load(\"in{}.bin\", {}), *w = load(\"w{}.bin\", {});\n"
        "    float *packed = malloc(n * sizeof *packed), *packed2 = malloc(n * sizeof *packed2);\n"
        "    float *out = malloc({} * sizeof *out), *out2 = malloc({} * sizeof *out2);\n"
        "    CHECK(tiny_pack(&d, w, packed));\n"
        "    CHECK(tiny_conv(&d, in, packed, out));\n"
        "    save(\"out{}.bin\", out, {});\n"
        "    {}_pack(w, packed2);\n"
        "    {}(in, packed2, out2);\n"
        "    if (memcmp(out, out2, {} * sizeof *out)) {{ puts(\"{} differs from tiny_conv\"); return 1; }}\n"
        "    if (!first_in) {{ first_in = in; first_packed = packed; first_out = out; first = d; }}\n"
        "  }}\n",
        desc_fields(s), FN, fn, i, s.N * s.H * s.W * s.C, i, s.K * s.Cg() * s.R * s.S, s.N * s.Ho() * s.Wo() * s.K, s.N * s.Ho() * s.Wo() * s.K, i,
        s.N * s.Ho() * s.Wo() * s.K, fn, fn, s.N * s.Ho() * s.Wo() * s.K, fn);
  }
  const Shape u = parse_shape(kUntuned);
  return app_prelude("tiny") + fmt::format(
      "static void save(const char *path, const float *p, size_t n) {{\n"
      "  FILE *f = fopen(path, \"wb\");\n"
      "  if (!f || fwrite(p, sizeof *p, n, f) != n || fclose(f)) {{ printf(\"cannot write %s\\n\", path); exit(1); }}\n"
      "}}\n\n"
      "int main(void) {{\n"
      "  float *first_in = NULL, *first_packed = NULL, *first_out = NULL;\n"
      "  tiny_desc first;\n"
      "  memset(&first, 0, sizeof first);\n"
      "{}"
      "  tiny_desc u = {{{}, TINY_EPILOGUE_NONE, NULL, NULL}};\n"
      "  unsigned long n = 0;\n"
      "  int conv = tiny_conv(&u, first_in, first_packed, first_out);\n"
      "  printf(\"untuned %d %d %d %d: %s\\n\", tiny_packed_floats(&u, &n), tiny_pack(&u, first_in, first_packed), "
      "conv, TINY_ERR_SHAPE_NOT_TUNED, tiny_strerror(conv));\n"
      "  tiny_desc e = first;\n"
      "  e.epilogue = (tiny_epilogue)1;\n"
      "  conv = tiny_conv(&e, first_in, first_packed, first_out);\n"
      "  e = first;\n"
      "  e.bias = first_in;\n"
      "  printf(\"epilogue %d %d %d: %s\\n\", conv, tiny_conv(&e, first_in, first_packed, first_out), "
      "TINY_ERR_EPILOGUE_UNSUPPORTED, tiny_strerror(conv));\n"
      "  printf(\"null %d %d %d %d\\n\", tiny_conv(NULL, first_in, first_packed, first_out), "
      "tiny_conv(&first, NULL, first_packed, first_out), tiny_packed_floats(&first, NULL), TINY_ERR_NULL_ARGUMENT);\n"
      "  printf(\"ok %d: %s; %s\\n\", TINY_OK, tiny_strerror(TINY_OK), tiny_strerror(99));\n"
      "  /* Each shape field, one at a time: one more than a tuned kernel's is no kernel; below 1\n"
      "     (a pad below 0) is not a convolution. */\n"
      "  const size_t fields[] = {{offsetof(tiny_desc, N), offsetof(tiny_desc, K), offsetof(tiny_desc, C),\n"
      "    offsetof(tiny_desc, H), offsetof(tiny_desc, W), offsetof(tiny_desc, R), offsetof(tiny_desc, S),\n"
      "    offsetof(tiny_desc, stride_h), offsetof(tiny_desc, stride_w), offsetof(tiny_desc, pad_t),\n"
      "    offsetof(tiny_desc, pad_l), offsetof(tiny_desc, pad_b), offsetof(tiny_desc, pad_r),\n"
      "    offsetof(tiny_desc, dilation_h), offsetof(tiny_desc, dilation_w), offsetof(tiny_desc, groups)}};\n"
      "  const int is_pad[] = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0}};\n"
      "  printf(\"one more\");\n"
      "  for (size_t i = 0; i < 16; ++i) {{\n"
      "    e = first;\n"
      "    *(long *)((char *)&e + fields[i]) += 1;\n"
      "    printf(\" %d\", tiny_conv(&e, first_in, first_packed, first_out));\n"
      "  }}\n"
      "  printf(\"\\ninvalid\");\n"
      "  for (size_t i = 0; i < 16; ++i) {{\n"
      "    e = first;\n"
      "    *(long *)((char *)&e + fields[i]) = is_pad[i] ? -1 : 0;\n"
      "    conv = tiny_conv(&e, first_in, first_packed, first_out);\n"
      "    printf(\" %d\", conv);\n"
      "  }}\n"
      "  printf(\": %s\\n\", tiny_strerror(conv));\n"
      "  return 0;\n"
      "}}\n",
      body, desc_fields(u));
}

const std::string kExpectedCodes =
    "untuned 2 2 2 2: no kernel for this shape in tiny: tune it (convtune tune) and export the library again\n"
    "epilogue 3 3 3: this library's kernels were exported without an epilogue: give TINY_EPILOGUE_NONE and NULL "
    "bias and residual, or export another library with convtune export --epilogue\n"
    "null 1 1 1 1\n"
    "ok 0: success; unknown tiny return code\n"
    "one more 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2\n"
    "invalid 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4: the descriptor has a size, stride, dilation or groups below 1 or a pad "
    "below 0: give every field (a dense convolution has dilation_h, dilation_w and groups 1)\n";

// Writes the operands into `run`, builds run/prog.c with `build`, runs it and
// checks each output at every element against the reference.
void build_run_and_check(const std::string& run, const std::string& build) {
  std::filesystem::create_directories(run);
  std::vector<ProblemData> data;
  std::vector<std::string> functions;
  for (size_t i = 0; i < kTuned.size(); ++i) {
    data.push_back(ProblemData::make(parse_shape(kTuned[i]), 0, 11 + i));  // 0: every output element
    const auto& p = data.back();
    test::write_file(fmt::format("{}/in{}.bin", run, i),
                     std::string(reinterpret_cast<const char*>(p.input.data()), p.input.size() * sizeof(float)));
    test::write_file(fmt::format("{}/w{}.bin", run, i),
                     std::string(reinterpret_cast<const char*>(p.weights.data()), p.weights.size() * sizeof(float)));
    functions.push_back("tiny_" + fn_id(kTuned[i]));
  }
  test::write_file(run + "/prog.c", program(functions));
  ASSERT_EQ(sh("(" + build + ") > " + run + "/build.txt 2>&1"), 0) << test::read_file(run + "/build.txt");
  ASSERT_EQ(sh("cd " + run + " && ./prog > stdout.txt 2>&1"), 0) << test::read_file(run + "/stdout.txt");
  EXPECT_EQ(test::read_file(run + "/stdout.txt"), kExpectedCodes);
  for (size_t i = 0; i < kTuned.size(); ++i) {
    const std::string bytes = test::read_file(fmt::format("{}/out{}.bin", run, i));
    std::vector<float> out(data[i].output_size());
    ASSERT_EQ(bytes.size(), out.size() * sizeof(float)) << kTuned[i];
    std::memcpy(out.data(), bytes.data(), bytes.size());
    EXPECT_EQ(check_output(data[i], out, "tiny_conv for " + kTuned[i], "-"), "");
  }
}

// The C program for a library of one kernel with an epilogue: the descriptor
// with the library's epilogue, bias and residual against the reference (out.bin)
// and bitwise against the shape's own 5-argument function; then the return
// codes for another epilogue, a residual the epilogue does not read (or a
// missing one), and a NULL bias.
std::string epilogue_program(const std::string& lib, const Shape& s, Epilogue e, const std::string& fn) {
  std::string L = lib, FN = fn;
  for (auto& ch : L) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  for (auto& ch : FN) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  const int64_t out = s.N * s.Ho() * s.Wo() * s.K;
  const bool add = e == Epilogue::bias_add;
  return app_prelude(lib) + fmt::format(
      "int main(void) {{\n"
      "  {0}_desc d = {{{2}, {1}_LIBRARY_EPILOGUE, NULL, NULL}};\n"
      "  float *in = load(\"in.bin\", {4}), *w = load(\"w.bin\", {5});\n"
      "  float *bias = load(\"bias.bin\", {3}), *res = {8};\n"
      "  unsigned long n = 0;\n"
      "  d.bias = bias;\n"
      "  d.residual = res;\n"
      "  CHECK({0}_packed_floats(&d, &n));\n"
      "  if (n != {7}_PACKED_FLOATS || n != {6}_packed_floats) {{ puts(\"packed size differs\"); return 1; }}\n"
      "  float *packed = malloc(n * sizeof *packed), *packed2 = malloc(n * sizeof *packed2);\n"
      "  float *out = malloc({9} * sizeof *out), *out2 = malloc({9} * sizeof *out2);\n"
      "  CHECK({0}_pack(&d, w, packed));\n"
      "  CHECK({0}_conv(&d, in, packed, out));\n"
      "  FILE *f = fopen(\"out.bin\", \"wb\");\n"
      "  if (!f || fwrite(out, sizeof *out, {9}, f) != {9} || fclose(f)) {{ puts(\"cannot write\"); return 1; }}\n"
      "  {6}_pack(w, packed2);\n"
      "  {6}(in, packed2, bias, res, out2);\n"
      "  if (memcmp(out, out2, {9} * sizeof *out)) {{ puts(\"{6} differs from {0}_conv\"); return 1; }}\n"
      "  {0}_desc e = d;\n"
      "  e.epilogue = {1}_EPILOGUE_{10};\n"
      "  int rc = {0}_conv(&e, in, packed, out2);\n"
      "  printf(\"epilogue %d %d %d: %s\\n\", rc, {0}_packed_floats(&e, &n), {1}_ERR_EPILOGUE_UNSUPPORTED, "
      "{0}_strerror(rc));\n"
      "  e = d;\n"
      "  e.residual = {11};\n"
      "  printf(\"residual %d\\n\", {0}_conv(&e, in, packed, out2));\n"
      "  e = d;\n"
      "  e.bias = NULL;\n"
      "  rc = {0}_conv(&e, in, packed, out2);\n"
      "  printf(\"null bias %d %d %d: %s\\n\", rc, {0}_pack(&e, w, packed2), {1}_ERR_NULL_ARGUMENT, "
      "{0}_strerror(rc));\n"
      "  return 0;\n"
      "}}\n",
      lib, L, desc_fields(s), s.K, s.N * s.H * s.W * s.C, s.K * s.Cg() * s.R * s.S, fn,
      FN, add ? fmt::format("load(\"res.bin\", {})", out) : "NULL", out, add ? "BIAS" : "NONE", add ? "NULL" : "in");
}

// Writes the operands of `data` into `run`, builds the program against the
// library in `lib` with pkg-config, runs it, checks its lines and out.bin at
// every element against the reference (epilogue applied).
void epilogue_run(const std::string& run, const std::string& lib, const std::string& name, const ProblemData& data,
                  const std::string& fn, const std::string& expected) {
  std::filesystem::create_directories(run);
  auto bytes = [](const auto& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  };
  test::write_file(run + "/in.bin", bytes(data.input));
  test::write_file(run + "/w.bin", bytes(data.weights));
  test::write_file(run + "/bias.bin", bytes(data.bias));
  if (!data.residual.empty()) test::write_file(run + "/res.bin", bytes(data.residual));
  test::write_file(run + "/prog.c", epilogue_program(name, data.shape, data.epilogue, fn));
  ASSERT_EQ(sh("cd " + run + " && ${CC:-cc} -std=c99 -Wall -Werror prog.c $(PKG_CONFIG_PATH=" + lib +
               " pkg-config --cflags --libs " + name + ") -o prog > build.txt 2>&1"),
            0)
      << test::read_file(run + "/build.txt");
  ASSERT_EQ(sh("cd " + run + " && ./prog > stdout.txt 2>&1"), 0) << test::read_file(run + "/stdout.txt");
  EXPECT_EQ(test::read_file(run + "/stdout.txt"), expected);
  const std::string got = test::read_file(run + "/out.bin");
  std::vector<float> out(data.output_size());
  ASSERT_EQ(got.size(), out.size() * sizeof(float));
  std::memcpy(out.data(), got.data(), got.size());
  EXPECT_EQ(check_output(data, out, name + "_conv", "-"), "");
  if (data.epilogue == Epilogue::bias_relu) {  // the clamp is exercised: some outputs at 0, some above
    EXPECT_GT(std::count(out.begin(), out.end(), 0.0f), 0);
    EXPECT_GT(std::count_if(out.begin(), out.end(), [](float v) { return v > 0; }), 0);
  }
}

// Issue 13: the tuned logs relabelled with an epilogue (export reads only the
// configuration and the epilogue from a record; tune --epilogue writing such
// records is bench_test's EpilogueEndToEnd), which saves two more tunes.
// kTuned[1] (batch, stride 2, maybe OpenMP) as bias,add in a --logs root;
// kTuned[0] (K tail) as bias,relu in its default tune directory,
// convtune-out/<layer>-bias-relu, which export --epilogue bias,relu finds from
// the working directory. Each library is checked by its C program.
void export_with_epilogues(const test::TempDir& dir) {
  auto relabel = [&](const std::string& from, const std::string& to, const std::string& epilogue) {
    std::string log;
    for (const Record& rec : read_records(from + "/log.jsonl")) {
      nlohmann::json j = rec.to_json();
      j["epilogue"] = epilogue;
      log += j.dump() + "\n";
    }
    std::filesystem::create_directories(to);
    test::write_file(to + "/log.jsonl", log);
    if (std::filesystem::exists(from + "/finalists.json"))
      std::filesystem::copy_file(from + "/finalists.json", to + "/finalists.json");
  };
  const std::string add_layer = id(kTuned[1]), relu_layer = id(kTuned[0]);
  relabel(dir.file("logs/" + add_layer), dir.file("logs_add/" + add_layer), "bias,add");
  relabel(dir.file("logs/" + relu_layer), dir.file("convtune-out/" + relu_layer + "-bias-relu"), "bias,relu");

  auto r = run_cli(fmt::format("export --shape {} --epilogue bias,add --logs {} --name ta --out {}", kTuned[1],
                               dir.file("logs_add"), dir.file("ta")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("exported 1 convolution with epilogue bias,add as ta into ", 0), 0u) << r.out;
  ASSERT_EQ(sh(fmt::format("cd {} && {} export --shape {} --epilogue bias,relu --threads 1 --name tr --out tr > "
                           "out.txt 2>&1",
                           dir.path(), CONVTUNE_BIN, kTuned[0])),
            0)
      << test::read_file(dir.file("out.txt"));
  EXPECT_NE(test::read_file(dir.file("tr/tr.h")).find("convtune-out/" + relu_layer + "-bias-relu/log.jsonl"),
            std::string::npos);  // the default tune directory of that epilogue

  const std::string signature = "(const float *input, const float *packed, const float *bias, const float *residual,\n"
                                "    float *output);\n";
  for (const std::string lib : {"ta", "tr"}) {
    const std::string header = test::read_file(dir.file(lib + "/" + lib + ".h"));
    const std::string L = lib == "ta" ? "TA" : "TR";
    EXPECT_NE(header.find("#define " + L + "_LIBRARY_EPILOGUE " + L +
                          (lib == "ta" ? "_EPILOGUE_BIAS_ADD\n" : "_EPILOGUE_BIAS_RELU\n")),
              std::string::npos)
        << header;
    EXPECT_NE(header.find("void " + lib + "_" + fn_id(kTuned[lib == "ta" ? 1 : 0]) + signature),
              std::string::npos)
        << header;
    if (has("c++"))
      EXPECT_EQ(sh("echo '#include \"" + lib + ".h\"' | c++ -x c++ -std=c++11 -fsyntax-only -Wall -Wextra -pedantic "
                   "-Werror -I " + dir.file(lib) + " -"),
                0);
  }
  {
    SCOPED_TRACE("bias,add");
    epilogue_run(dir.file("run_ta"), dir.file("ta"), "ta",
                 ProblemData::make(parse_shape(kTuned[1]), 0, 21, Epilogue::bias_add), "ta_" + fn_id(kTuned[1]),
                 "epilogue 3 3 3: this library's kernels were exported with epilogue bias,add: give "
                 "TA_EPILOGUE_BIAS_ADD, a bias and a residual, or export another library with convtune export "
                 "--epilogue\n"
                 "residual 1\n"
                 "null bias 1 0 1: a pointer argument, or the descriptor's bias or residual, is NULL\n");
  }
  {
    SCOPED_TRACE("bias,relu");
    epilogue_run(dir.file("run_tr"), dir.file("tr"), "tr",
                 ProblemData::make(parse_shape(kTuned[0]), 0, 22, Epilogue::bias_relu), "tr_" + fn_id(kTuned[0]),
                 "epilogue 3 3 3: this library's kernels were exported with epilogue bias,relu: give "
                 "TR_EPILOGUE_BIAS_RELU, a bias and a NULL residual, or export another library with convtune "
                 "export --epilogue\n"
                 "residual 3\n"
                 "null bias 1 0 1: a pointer argument, or the descriptor's bias, is NULL\n");
  }
}

// Two layers of one shape ("p" and "q", as an ONNX model may name them), each
// with its own log: export takes the record with the larger share of its own
// process's peak (records.h relative_speed), not the larger GFLOP/s. p's copy
// of the tuned record says twice the GFLOP/s at four times the peak (a session
// at a faster clock, or another noise level): q's wins.
void export_picks_by_share_of_peak(const test::TempDir& dir) {
  Record best;
  for (const Record& r : read_records(dir.file("logs/" + id(kTuned[0]) + "/log.jsonl")))
    if (r.status == Status::ok && (best.status != Status::ok || r.gflops > best.gflops)) best = r;
  ASSERT_EQ(best.status, Status::ok);
  ASSERT_GT(best.peak_gflops, 0);
  Record fast_clock = best;
  fast_clock.gflops *= 2;
  fast_clock.peak_gflops *= 4;
  for (const auto& [layer, rec] : {std::pair{"p", fast_clock}, std::pair{"q", best}}) {
    Record r = rec;
    r.layer = layer;
    std::filesystem::create_directories(dir.file("logs_pq/") + layer);
    append_record(dir.file("logs_pq/") + layer + "/log.jsonl", r);
  }
  ExportOptions opt;
  for (const char* layer : {"p", "q"}) {
    opt.shapes.push_back(parse_shape(kTuned[0]));
    opt.shapes.back().name = layer;
  }
  opt.name = "pq";
  opt.out_dir = dir.file("pq");
  opt.logs_root = dir.file("logs_pq");
  const ExportResult res = run_export(opt);
  ASSERT_EQ(res.kernels.size(), 1u);
  EXPECT_EQ(res.kernels[0].layers, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(res.kernels[0].log, dir.file("logs_pq/q/log.jsonl"));
}

// The ISA's -falign-functions=64: linked after 0, 16, 32 or 48 bytes of
// other code, every kernel of the library still starts on a 64-byte line, so
// its loops run at the offsets tune measured (under GCC's default alignment
// of 16 one object can run a few % apart at two link positions). With
// 16, the four builds put a kernel at four different offsets mod 64.
void kernels_start_on_a_cache_line(const std::string& lib, const std::string& run) {
  std::filesystem::create_directories(run);
  std::string prog = "#include <stdint.h>\n#include <stdio.h>\n#include \"tiny.h\"\nint main(void) {\n";
  for (const auto& s : kTuned)
    prog += fmt::format("  printf(\"%d \", (int)((uintptr_t)&tiny_{0} % 64));\n", fn_id(s));
  test::write_file(run + "/align.c", prog + "  return 0;\n}\n");
  std::string expected;  // each kernel's address mod 64
  for (size_t i = 0; i < kTuned.size(); ++i) expected += "0 ";
  for (int pad : {0, 16, 32, 48}) {
    SCOPED_TRACE(fmt::format("{} bytes before the library", pad));
    test::write_file(fmt::format("{}/pad{}.s", run, pad),
                     fmt::format(".section .note.GNU-stack,\"\",@progbits\n.text\n.p2align 4\n.fill {}, 1, 0x90\n", pad));
    ASSERT_EQ(sh(fmt::format("cd {0} && ${{CC:-cc}} -std=c99 align.c pad{1}.s $(PKG_CONFIG_PATH={2} pkg-config "
                             "--cflags --libs tiny) -o align{1} > build{1}.txt 2>&1 && ./align{1} > out{1}.txt",
                             run, pad, lib)),
              0)
        << test::read_file(fmt::format("{}/build{}.txt", run, pad));
    EXPECT_EQ(test::read_file(fmt::format("{}/out{}.txt", run, pad)), expected);
  }
}

// One test, not a suite sharing its set-up: ctest runs every test in a
// process of its own, and the two tunes are most of its 12-15 s.
TEST(Export, TunedShapesBecomeOneLibraryForPkgConfigAndCMake) {
  test::TempDir dir;
  const bool two = available_cpus() >= 2;
  for (size_t i = 0; i < kTuned.size(); ++i) {
    auto r = run_cli(fmt::format("tune --shape {}{} --threads {} --top {} --out {}/logs/{}", kTuned[i], kFast,
                                 i == 1 && two ? 2 : 1, i == 0 ? 5 : 0, dir.path(), id(kTuned[i])));
    ASSERT_EQ(r.exit_code, 0) << kTuned[i] << ": " << r.err;
  }
  // The log's slower correct candidate as finalists.json's winner (as a
  // re-measure may crown it): export must take it over the log's best.
  const std::string log0 = fmt::format("{}/logs/{}/", dir.path(), id(kTuned[0]));
  std::vector<Record> ok;
  for (const Record& r : read_records(log0 + "log.jsonl"))
    if (r.status == Status::ok) ok.push_back(r);
  auto fin = nlohmann::json::parse(test::read_file(log0 + "finalists.json"));
  if (ok.size() == 2 && ok[0].config != ok[1].config) {
    fin["winner"] = ok[0].gflops < ok[1].gflops ? ok[0].config : ok[1].config;
    test::write_file(log0 + "finalists.json", fin.dump());
  }
  ASSERT_TRUE(fin["winner"].is_string()) << fin;
  const std::string winner = fin["winner"];

  const std::string lib = dir.file("lib");
  std::string args = "export --name tiny --skip-untuned --logs " + dir.file("logs") + " --out " + lib;
  for (const auto& s : kTuned) args += " --shape " + s;
  auto r = run_cli(args + " --shape " + kUntuned);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"libtiny.a", "tiny.h", "tiny.pc", "tinyConfig.cmake"})
    EXPECT_TRUE(std::filesystem::is_regular_file(lib + "/" + f)) << f;
  const std::string untuned = id(kUntuned);
  EXPECT_NE(r.out.find(fmt::format("skipped (not tuned): {}: no log '{}/logs/{}/log.jsonl'\n", untuned, dir.path(),
                                   untuned)),
            std::string::npos)
      << r.out;
  const std::string header = test::read_file(lib + "/tiny.h");
  EXPECT_EQ(header.find(untuned), std::string::npos);
  const size_t at = header.find("/* " + id(kTuned[0]) + ": ");
  ASSERT_NE(at, std::string::npos) << header;
  EXPECT_EQ(header.substr(at).find("   config " + winner + "\n"), header.substr(at).find("   config "));
  EXPECT_NE(header.substr(at).find("the winner of finalists.json"), std::string::npos);
  // The header is C99 and C++ (no restrict in its prototypes).
  if (has("c++"))
    EXPECT_EQ(sh("echo '#include \"tiny.h\"' | c++ -x c++ -std=c++11 -fsyntax-only -Wall -Wextra -pedantic "
                 "-Werror -I " + lib + " -"),
              0);
  // OpenMP on the link line exactly when a kernel has threads.
  EXPECT_EQ(test::read_file(lib + "/tiny.pc").find("Libs: -L${libdir} -ltiny -fopenmp\n") != std::string::npos, two);
  EXPECT_EQ(test::read_file(lib + "/tinyConfig.cmake").find("INTERFACE_LINK_OPTIONS \"-fopenmp\"") != std::string::npos,
            two);

  {
    SCOPED_TRACE("two logs of one shape");
    export_picks_by_share_of_peak(dir);
  }

  // As a user's Makefile would build against it: pkg-config.
  if (!has("pkg-config")) GTEST_SKIP() << "pkg-config is not installed (apt-get install pkg-config)";
  {
    SCOPED_TRACE("pkg-config");
    const std::string run = dir.file("pc");
    build_run_and_check(run, "cd " + run + " && ${CC:-cc} -std=c99 -Wall -Werror prog.c $(PKG_CONFIG_PATH=" + lib +
                                 " pkg-config --cflags --libs tiny) -o prog");
  }
  {
    SCOPED_TRACE("kernels on a cache line");
    kernels_start_on_a_cache_line(lib, dir.file("align"));
  }
  {
    SCOPED_TRACE("epilogues");
    export_with_epilogues(dir);
  }
  // find_package(tiny) and tiny::tiny from a tiny CMake project (under a second).
  if (!has("cmake")) GTEST_SKIP() << "cmake is not installed";
  {
    SCOPED_TRACE("CMake");
    const std::string run = dir.file("cm");
    std::filesystem::create_directories(run);
    test::write_file(run + "/CMakeLists.txt",
                     "cmake_minimum_required(VERSION 3.13)\nproject(use_tiny C)\nfind_package(tiny REQUIRED)\n"
                     "add_executable(prog prog.c)\ntarget_link_libraries(prog PRIVATE tiny::tiny)\n");
    const std::string generator = has("ninja") ? "-G Ninja" : "";
    build_run_and_check(run, "cd " + run + " && cmake " + generator + " -S . -B build -DCMAKE_PREFIX_PATH=" + lib +
                                 " && cmake --build build && cp build/prog prog");
  }
}

TEST(ExportErrors, BadInputGetsOneLine) {
  test::TempDir td;
  const std::string shape = "K=32,C=16,H=8,R=3", layer = id(shape), full = parse_shape(shape).to_string();
  auto r = run_cli("export --shape " + shape + " --name my-lib --out " + td.file("o"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --name 'my-lib' is not a C identifier of at most 64 characters; use letters, "
                   "digits and '_', not starting with a digit (e.g. 'my_lib')\n");
  r = run_cli("export --shape " + shape + " --name 3d --out " + td.file("o"));
  EXPECT_EQ(r.err, "convtune: error: --name '3d' is not a C identifier of at most 64 characters; use letters, "
                   "digits and '_', not starting with a digit (e.g. 'c_3d')\n");
  test::write_file(td.file("file"), "x");
  r = run_cli("export --shape " + shape + " --name tiny --out " + td.file("file") + "/lib");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: cannot write --out '" + td.file("file") +
                       "/lib/tiny.h': cannot create its directory (Not a directory); choose another --out\n");
  // No log: the command that tunes the layer, by its shape or its zoo name.
  r = run_cli("export --shape " + shape + " --logs " + td.file("none") + " --out " + td.file("o"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, fmt::format("convtune: error: layer {0} is not tuned: no log '{1}/{0}/log.jsonl'; tune it with "
                               "'convtune tune --shape {2} --out {1}/{0}' or pass --skip-untuned to leave it out\n",
                               layer, td.file("none"), full));
  r = run_cli("export --network resnet18 --logs " + td.file("none") + " --out " + td.file("o"));
  EXPECT_EQ(r.err, fmt::format("convtune: error: layer resnet18-1 is not tuned: no log '{0}/resnet18-1/log.jsonl'; "
                               "tune it with 'convtune tune --layer resnet18-1 --out {0}/resnet18-1' or pass "
                               "--skip-untuned to leave it out\n",
                               td.file("none")));
  r = run_cli("export --layer resnet18-12 --skip-untuned --logs " + td.file("none") + " --out " + td.file("o"));
  EXPECT_EQ(r.err, "convtune: error: no selected layer is tuned (1 left out by --skip-untuned): nothing to export; "
                   "tune them first (convtune tune)\n");
  // A log without a correct candidate: resume it with more trials.
  Record bad;
  bad.layer = layer;
  bad.shape = full;
  bad.config = "[V(k)]";
  bad.status = Status::compile_error;
  std::filesystem::create_directories(td.file("logs/" + layer));
  append_record(td.file("logs/" + layer + "/log.jsonl"), bad);
  r = run_cli("export --shape " + shape + " --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.err, fmt::format("convtune: error: layer {0} is not tuned: its log '{1}/{0}/log.jsonl' holds no "
                               "correct candidate among 1; tune it with 'convtune tune --shape {2} --trials 21 "
                               "--resume --out {1}/{0}' or pass --skip-untuned to leave it out\n",
                               layer, td.file("logs"), full));
  // --threads given with --logs: the records must say the same.
  r = run_cli("export --shape " + shape + " --threads 2 --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.err, fmt::format("convtune: error: log '{}/{}/log.jsonl' of {} was measured with --threads 1, not 2; "
                               "pass --threads 1\n",
                               td.file("logs"), layer, layer));
  // A log of another shape in the layer's place.
  r = run_cli("export --shape K=16,C=16,H=8,R=3 --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.exit_code, 1);
  const std::string other = id("K=16,C=16,H=8,R=3");
  std::filesystem::create_directories(td.file("logs/" + other));
  std::filesystem::copy_file(td.file("logs/" + layer + "/log.jsonl"), td.file("logs/" + other + "/log.jsonl"));
  r = run_cli("export --shape K=16,C=16,H=8,R=3 --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.err, fmt::format("convtune: error: log '{}/{}/log.jsonl' of {} is for shape {}, not {}; remove it or "
                               "point --logs at the layers' tune directories\n",
                               td.file("logs"), other, other, full, parse_shape("K=16,C=16,H=8,R=3").to_string()));
  // Issue 14: another machine's log is refused by name unless --any-machine.
  nlohmann::json foreign = bad.to_json();
  foreign["machine"] = nlohmann::json::parse(R"({"key":"0123456789ab","cpu_model":"Other CPU","isa_flags":["avx2"],)"
                                             R"("cores":64})");
  test::write_file(td.file("logs/" + layer + "/log.jsonl"), foreign.dump() + "\n");
  r = run_cli("export --shape " + shape + " --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind(fmt::format("convtune: error: log '{}/{}/log.jsonl' holds records of machine 0123456789ab "
                                    "(Other CPU; avx2; 64 CPUs), not of this machine ",
                                    td.file("logs"), layer),
                        0),
            0u)
      << r.err;
  r = run_cli("export --shape " + shape + " --any-machine --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_NE(r.err.find("holds no correct candidate among 1"), std::string::npos) << r.err;
  // Issue 13: a log tuned with an epilogue is exported only with the same --epilogue.
  bad.epilogue = Epilogue::bias_add;
  test::write_file(td.file("logs/" + layer + "/log.jsonl"), bad.to_json().dump() + "\n");
  r = run_cli("export --shape " + shape + " --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, fmt::format("convtune: error: log '{}/{}/log.jsonl' of {} was tuned with --epilogue bias,add, not "
                               "none; pass --epilogue bias,add to export it (one epilogue per library)\n",
                               td.file("logs"), layer, layer));
  r = run_cli("export --shape " + shape + " --epilogue bias,relu --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.err, fmt::format("convtune: error: log '{}/{}/log.jsonl' of {} was tuned with --epilogue bias,add, not "
                               "bias,relu; pass --epilogue bias,add to export it (one epilogue per library)\n",
                               td.file("logs"), layer, layer));
  // With the log's epilogue the tune command to resume carries it too.
  r = run_cli("export --shape " + shape + " --epilogue bias,add --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.err, fmt::format("convtune: error: layer {0} is not tuned: its log '{1}/{0}/log.jsonl' holds no "
                               "correct candidate among 1; tune it with 'convtune tune --shape {2} --epilogue "
                               "bias,add --trials 21 --resume --out {1}/{0}' or pass --skip-untuned to leave it out\n",
                               layer, td.file("logs"), full));
  r = run_cli("export --shape " + shape + " --epilogue relu --logs " + td.file("logs") + " --out " + td.file("o"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: unknown --epilogue 'relu'; choose one of: none | bias | bias,relu | bias,relu6 | "
                   "bias,add\n");
  r = run_cli("export --shape " + shape + " --logs " + td.file("logs"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "convtune: error: --out is required; see 'convtune --help'\n");
}

TEST(ExportErrors, DefaultLibraryNames) {
  EXPECT_EQ(default_library_name("resnet18", zoo_network("resnet18").layers), "resnet18");
  EXPECT_EQ(default_library_name("", {zoo_layer("yolo9000-12")}), "yolo9000_12");
  EXPECT_EQ(default_library_name("", {parse_shape("K=8,C=8,H=5,R=1")}), "N1_K8_C8_H5_W5_R1_S1_st1_p0");
  EXPECT_EQ(default_library_name("", {parse_shape("K=8,C=8,H=5,R=1"), parse_shape("K=8,C=8,H=6,R=1")}), "convtune");
  EXPECT_EQ(test::error_of([] { check_library_name("a_1"); }), "no error");
  EXPECT_NE(test::error_of([] { check_library_name(std::string(65, 'a')); }), "no error");
}

}  // namespace
}  // namespace convtune::export_test
