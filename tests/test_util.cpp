#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convtune/core/embedded_data.h"
#include "convtune/core/isa.h"
#include "convtune/ukernel/ukernel.h"

namespace convtune::test {

UkSizes uk(int k, int c, int w, int h, int r, int s) {
  UkSizes u;
  u.k = k, u.c = c, u.w = w, u.h = h, u.r = r, u.s = s;
  return u;
}

UkLayout odd_layout(const UkSizes& u, int lanes, size_t i, int64_t pad) {
  UkLayout l;
  // Strides 1 and 2 and dilations 1 to 3, unequal between the axes on some cases.
  l.stride = 1 + int(i % 2);
  l.stride_w = 1 + int((i / 2) % 2);
  l.dil_h = 1 + int((i / 3) % 3);
  l.dil_w = 1 + int((i / 4) % 2);
  const int64_t C = 3 * u.c + 1, Kp = int64_t(u.k) * lanes + pad;
  l.in_pix = C;
  l.in_row = ((u.w - 1) * l.stride_w + (u.s - 1) * l.dil_w + 3) * C;
  l.w_c = Kp;
  l.w_s = C * Kp;
  l.w_r = u.s * C * Kp;
  l.w_it = u.c * Kp;  // RSCK, unpacked: the contract allows any strides
  l.out_pix = Kp + pad / 2;
  l.out_row = u.w * (Kp + pad / 2) + 2 * pad;
  return l;
}

UkRecord uk_record(UkSizes u, double percent, Status status) {
  UkRecord r;
  r.name = ukernel_name(u, "avx512");
  r.sizes = u;
  r.status = status;
  r.percent_peak = percent;
  r.gflops = percent * 1.5;
  return r;
}

ClassTable table_of(const std::vector<UkRecord>& records) {
  ClassTable t;
  t.isa = "avx512";
  t.peak_gflops = 150;
  t.threshold = 0.8;
  t.microkernels = records;
  t.select_and_classify();
  return t;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/convtune-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << text;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string edited_isa_error(const std::string& isa, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(embedded_file("microkernels/isa/" + isa + ".json"));
  edit(j);
  return error_of([&] { parse_isa(j.dump(), "x.json"); });
}

std::string host_table() { return std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/" + best_isa() + ".json"; }

CliResult run_cli(const std::string& args) { return run_command(std::string(CONVTUNE_BIN) + " " + args); }

void expect_three_processes(const std::string& args) {
  const CliResult r = run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nprocesses: 3, each with its own buffers; times are the medians of theirs;"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find(": process 3 of 3\n"), std::string::npos) << r.err;  // each one announced
}

CliResult run_command(const std::string& command) {
  TempDir td;
  std::string out = td.file("out"), err = td.file("err");
  std::string cmd = command + " >" + out + " 2>" + err + " </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
  const char* old = std::getenv(name);
  had_ = old != nullptr;
  if (had_) old_ = old;
  setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (had_)
    setenv(name_, old_.c_str(), 1);
  else
    unsetenv(name_);
}

MachineId test_machine(const std::string& model, int cores) {
  MachineInfo m;
  m.cpu_model = model;
  m.isa_flags = {"avx2", "fma"};
  m.cores = cores;
  return machine_id(m);
}

}  // namespace convtune::test
