// benchdnn's conv descriptors (models/benchdnn.h): benchdnn's defaults and
// deductions, exact errors for bad input; then oneDNN's own shape lists
// (tests/data/benchdnn/) as a corpus: every entry parses, every 2D one is a
// shape that builds a space with the shipped AVX2 table, and a few of each
// file tune and verify through the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"
#include "convtune/models/benchdnn.h"
#include "convtune/offline/class_table.h"
#include "convtune/space/space.h"
#include "test_util.h"

namespace convtune::benchdnn_test {
namespace {

using test::error_of;
using test::run_cli;

const std::string kDir = CONVTUNE_SOURCE_DIR "/tests/data/benchdnn/";
const std::vector<std::string> kFiles = {"shapes_tails",
                                         "shapes_regression_padding",
                                         "shapes_regression_small_spatial",
                                         "shapes_dw_2d_1d_strided_padding",
                                         "shapes_dw_2d_strided_no-padding",
                                         "shapes_dw_2d_strided_padding",
                                         "shapes_dw_2d_unit-stride_no-padding",
                                         "shapes_dw_2d_unit-stride_padding",
                                         "shapes_dilated_2d_1st_strided_padding",
                                         "shapes_dilated_2d_strided_no-padding",
                                         "shapes_dilated_2d_strided_padding",
                                         "shapes_dilated_2d_unit-stride_no-padding",
                                         "shapes_dilated_2d_unit-stride_padding",
                                         "shapes_mobilenet_dw",
                                         "shapes_1x1"};

std::string shape_of(const std::string& desc) { return benchdnn_shape(parse_benchdnn_desc(desc)).to_string(); }

TEST(Benchdnn, DefaultsAndDeductionsAreBenchdnns) {
  // w copies h, oh from the pad, mb 2 (the shape takes batch 1), name unquoted.
  BenchdnnDesc d = parse_benchdnn_desc("ic32oc13_ih13oh12kh3ph0_n\"tails_conv:1\"");
  EXPECT_EQ(d.mb, 2);
  EXPECT_EQ(d.g, 1);
  EXPECT_EQ(d.iw, 13);
  EXPECT_EQ(d.ow, 12);
  EXPECT_EQ(d.kw, 3);
  EXPECT_EQ(d.ndims, 4);
  EXPECT_EQ(d.name, "tails_conv:1");
  // oh=12 with ph0 leaves one row of bottom pad (and w the same).
  EXPECT_EQ(shape_of("ic32oc13_ih13oh12kh3ph0_n\"tails_conv:1\""),
            "N=1,K=13,C=32,H=13,W=13,R=3,S=3,stride=1,pad_t=0,pad_l=0,pad_b=1,pad_r=1");
  // No oh: from the pads on both sides; no ph either: 0.
  d = parse_benchdnn_desc("mb1ic16oc16_ih10kh5_ph7sh1");
  EXPECT_EQ(d.oh, 20);
  EXPECT_EQ(d.ph_r, 7);
  EXPECT_EQ(shape_of("mb1ic16oc16_ih10kh5_ph7sh1"), "N=1,K=16,C=16,H=10,W=10,R=5,S=5,stride=1,pad=7");
  d = parse_benchdnn_desc("ic4oc4ih9kh3sh2");
  EXPECT_EQ(d.ph, 0);
  EXPECT_EQ(d.oh, 4);
  // No ph: half of what oh leaves over (benchdnn's compute_pad).
  d = parse_benchdnn_desc("ic4oc4ih8oh8kh3");
  EXPECT_EQ(d.ph, 1);
  EXPECT_EQ(d.ph_r, 1);
  // Per-axis values where given.
  EXPECT_EQ(shape_of("ic3oc8_ih7iw5_kh1kw3_sh2sw1_pw1"),
            "N=1,K=8,C=3,H=7,W=5,R=1,S=3,stride_h=2,stride_w=1,pad_h=0,pad_w=1");
}

TEST(Benchdnn, ExplicitOutputsImplyTheEndPads) {
  // shapes_regression_padding's asymmetric 3x3 cases: oh=15 with ph1 leaves a bottom pad of 0,
  // ow=15 with pw0 a right pad of 1.
  EXPECT_EQ(shape_of("mb1ic16oc16_ih16kh3ph1oh15_iw16kw3pw0ow15"),
            "N=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad_t=1,pad_l=0,pad_b=0,pad_r=1");
  EXPECT_EQ(shape_of("mb1ic16oc16_ih16kh3ph0oh15_iw16kw3pw1ow16"),
            "N=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad_t=0,pad_l=1,pad_b=1,pad_r=1");
  // At stride 2 an end pad one below the start pad computes the same: the plain shape.
  BenchdnnDesc d = parse_benchdnn_desc("ic4oc4_ih10oh5kh3sh2ph1");
  EXPECT_EQ(d.ph_r, 0);
  EXPECT_EQ(benchdnn_shape(d).to_string(), "N=1,K=4,C=4,H=10,W=10,R=3,S=3,stride=2,pad=1");
  // A negative end pad within the stride: 0 (the input's last row is read, or none past it).
  d = parse_benchdnn_desc("mb1_g16_ic16oc16_kh2kw2_ih2iw2_oh1ow1_sh2sw2_ph1pw1_dh0dw0");
  EXPECT_EQ(d.ph_r, -1);
  EXPECT_EQ(benchdnn_shape(d).to_string(), "N=1,K=16,C=16,H=2,W=2,R=2,S=2,stride=2,pad_t=1,pad_l=1,pad_b=0,pad_r=0,groups=16");
  // Below it: rows no output reads.
  EXPECT_EQ(error_of([] { shape_of("ic4oc4_ih10oh2kh3sh2ph0"); }),
            "oh=2 reads none of the last 5 input rows (end pad -5); a convtune shape reads every input row (pads >= 0)");
}

TEST(Benchdnn, DilationIsTheGapBetweenTaps) {
  // benchdnn's dh1 is taps 2 apart: the 3x1 kernel spans 5 rows, oh=1 implies a bottom pad of 1.
  BenchdnnDesc d = parse_benchdnn_desc(
      "mb1_ic16oc16_kd1kh3kw1_id1ih3iw1_od1oh1ow1_sd1sh1sw1_pd0ph1pw0_dd0dh1dw0n\"dilated_2d_unit-stride_padding_1\"");
  EXPECT_EQ(d.ndims, 5);
  EXPECT_TRUE(benchdnn_2d(d));
  EXPECT_EQ(d.ph_r, 1);
  const Shape s = benchdnn_shape(d);
  EXPECT_EQ(s.dil_h, 2);
  EXPECT_EQ(s.dil_w, 1);
  EXPECT_EQ(s.Ho(), 1);
  EXPECT_EQ(s.to_string(), "N=1,K=16,C=16,H=3,W=1,R=3,S=1,stride=1,pad_h=1,pad_w=0,dilation_h=2,dilation_w=1");
}

TEST(Benchdnn, DepthAndOneDimensionAreNot2D) {
  BenchdnnDesc d = parse_benchdnn_desc("ic16oc16_id5ih5iw5_kd3kh3kw3");
  EXPECT_EQ(d.ndims, 5);
  EXPECT_FALSE(benchdnn_2d(d));
  EXPECT_EQ(error_of([&] { benchdnn_shape(d); }), "not 2D: a 3D convolution (id=5, kd=3, od=3, pd=0)");
  d = parse_benchdnn_desc("ic16oc16_id4kd3");  // only d given: h and w copy it (a cube)
  EXPECT_EQ(d.ih, 4);
  EXPECT_EQ(d.kw, 3);
  d = parse_benchdnn_desc("ic16oc16_iw9kw3");
  EXPECT_EQ(d.ndims, 3);
  EXPECT_FALSE(benchdnn_2d(d));
  EXPECT_EQ(error_of([&] { benchdnn_shape(d); }), "not 2D: a 1D convolution (no h sizes)");
}

TEST(Benchdnn, BadDescriptorsNameTheEntry) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ic16oc16_ih10kx3",
       "benchdnn descriptor 'ic16oc16_ih10kx3': unrecognized entry at 'kx3'; entries are g, mb, ic, id, ih, iw, oc, "
       "od, oh, ow, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, then n and a name"},
      {"ic16oc_ih10kh3",
       "benchdnn descriptor 'ic16oc_ih10kh3': entry 'oc' has no value; give a non-negative integer ('oc3')"},
      {"ic16oc16_ih10kh3ph-1",
       "benchdnn descriptor 'ic16oc16_ih10kh3ph-1': entry 'ph' has no value; give a non-negative integer ('ph3')"},
      {"ic16_ih10kh3", "benchdnn descriptor 'ic16_ih10kh3': 'ic' and 'oc' are required and at least 1"},
      {"ic16oc16_ih10", "benchdnn descriptor 'ic16oc16_ih10': 'kh' is missing or 0; give it (the kernel size)"},
      {"ic16oc16_kh3", "benchdnn descriptor 'ic16oc16_kh3': 'ih' is missing or 0; give it (the input size)"},
      {"ic16oc16_ih2kh5", "benchdnn descriptor 'ic16oc16_ih2kh5': the kernel spans 5 of ih=2 and pad 0: no output; "
                          "give a smaller kh or more padding"},
      {"ic16oc16", "benchdnn descriptor 'ic16oc16': no spatial size; give ih and kh (and iw, kw if they differ)"},
      {"g0ic16oc16ih4kh3", "benchdnn descriptor 'g0ic16oc16ih4kh3': g0: give at least 1 group, or leave g out"},
      {"ic16oc16ih4kh3sh0", "benchdnn descriptor 'ic16oc16ih4kh3sh0': sh0: strides are at least 1"},
      {"ic16oc16_id4ih4kd3kh3", "benchdnn descriptor 'ic16oc16_id4ih4kd3kh3': a 3D descriptor gives all of its h and "
                                "w sizes or none of them"},
      {"ic16oc16ih4kh3mb99999999999999", "benchdnn descriptor 'ic16oc16ih4kh3mb99999999999999': entry 'mb' is too large"},
  };
  for (const auto& c : cases) EXPECT_EQ(error_of([&] { parse_benchdnn_desc(c.first); }), c.second) << c.first;
  // A shape convtune refuses: validate_shape's reason.
  EXPECT_EQ(error_of([] { shape_of("g3ic16oc16ih4kh3"); }),
            "shape: groups=3 does not divide C=16; groups must divide both C and K");
}

struct FileFigures {
  size_t entries = 0, two_d = 0, shapes = 0, spaces = 0, unprofiled = 0;
  std::map<std::string, size_t> reasons;  // why an entry is not a space, by its first words
};

// Every entry parses; every 2D one is a shape or says why not; every shape
// builds a space with the shipped AVX2 table (fallbacks included): dense,
// grouped (config.h g) and depthwise (its own family) alike.
TEST(BenchdnnCorpus, EveryEntryParsesAndEveryShapeBuildsASpace) {
  const ClassTable table = load_table("avx2", std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json");
  const int64_t lanes = load_isa("avx2").lanes;
  for (const std::string& file : kFiles) {
    std::vector<BenchdnnEntry> entries;
    ASSERT_NO_THROW(entries = read_benchdnn(kDir + file)) << file;
    FileFigures f;
    f.entries = entries.size();
    EXPECT_GT(f.entries, 0u) << file;
    for (const BenchdnnEntry& e : entries) {
      f.two_d += e.two_d;
      if (!e.skip.empty()) {
        // Only entries that are not 2D or leave input unread are not shapes.
        EXPECT_TRUE(!e.two_d || e.skip.find("reads none of the last") != std::string::npos)
            << file << ":" << e.line << ": " << e.skip;
        ++f.reasons[e.skip.substr(0, e.skip.find(':'))];
        continue;
      }
      ++f.shapes;
      EXPECT_EQ(parse_shape(e.shape.to_string()).to_string(), e.shape.to_string()) << file << ":" << e.line;
      try {
        const Space sp = build_space(e.shape, table, lanes);
        EXPECT_FALSE(sp.choices.empty()) << file << ":" << e.line;
        ++f.spaces;
        f.unprofiled += sp.note.find("profiled") != std::string::npos;  // "unprofiled", "has not profiled"
      } catch (const Error& err) {
        ADD_FAILURE() << file << ":" << e.line << " " << e.shape.to_string() << ": " << err.what();
      }
    }
    std::string why;
    for (const auto& [reason, n] : f.reasons) why += fmt::format("; {} {}", n, reason);
    std::printf("%s: %zu entries, %zu 2D, %zu shapes, %zu spaces (%zu with an unprofiled fallback)%s\n",
                file.c_str(), f.entries, f.two_d, f.shapes, f.spaces, f.unprofiled, why.c_str());
  }
}

// A deterministic sample through the CLI (AVX2, one trial each): per file
// the shape of fewest FLOPs and, where one exists, the fewest-FLOP one
// that takes a fallback microkernel; each tunes and its kernel verifies.
TEST(BenchdnnCorpus, ASampleTunesAndVerifies) {
  if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU has no AVX2";
  const ClassTable table = load_table("avx2", std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json");
  std::vector<std::string> shapes;
  for (const std::string& file : kFiles) {
    const std::vector<BenchdnnEntry> entries = read_benchdnn(kDir + file);  // pick points into it
    const BenchdnnEntry* pick[2] = {nullptr, nullptr};  // fewest FLOPs; fewest with a fallback
    for (const BenchdnnEntry& e : entries) {
      if (!e.skip.empty()) continue;
      const bool fallback = build_space(e.shape, table, 8).choices[0].fallback;
      for (int i : {0, 1})
        if ((i == 0 || fallback) && (!pick[i] || e.shape.flops() < pick[i]->shape.flops())) pick[i] = &e;
    }
    for (const BenchdnnEntry* e : pick)
      if (e && std::find(shapes.begin(), shapes.end(), e->shape.to_string()) == shapes.end())
        shapes.push_back(e->shape.to_string());
  }
  ASSERT_FALSE(shapes.empty());
  std::string args = "tune --arch avx2 --trials 1 --top 0 --no-onednn --min-repeat-ms 1 --repeat 1 -q --json";
  for (const std::string& s : shapes) args += " --shape " + s;
  test::TempDir td;
  const auto r = run_cli(args + " --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> layers;
  size_t start = 0;
  for (size_t end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1) {
    const nlohmann::json j = nlohmann::json::parse(r.out.substr(start, end - start));
    if (j.contains("layer")) layers.push_back(j);
  }
  ASSERT_EQ(layers.size(), shapes.size()) << r.out;
  for (size_t i = 0; i < layers.size(); ++i) {
    EXPECT_EQ(layers[i]["shape"], shapes[i]);
    EXPECT_EQ(layers[i]["failed"], 0) << layers[i];
    EXPECT_TRUE(layers[i]["best"].is_object()) << layers[i];
  }
}

TEST(BenchdnnCli, LayersListsAShapeListOrSaysWhyNot) {
  auto r = run_cli("layers --benchdnn " + kDir + "shapes_regression_padding");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("N=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad_t=1,pad_l=0,pad_b=0,pad_r=1\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n21 entries, 19 2D, 19 convtune shapes\n"), std::string::npos) << r.out;
  test::TempDir td;
  test::write_file(td.file("bad"), "# a comment\n\nic16oc16_ih10kh3\nic16oc16_ih10kx3\n");
  r = run_cli("layers --benchdnn " + td.file("bad"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: " + td.file("bad") +
                       ":4: benchdnn descriptor 'ic16oc16_ih10kx3': unrecognized entry at 'kx3'; entries are g, mb, "
                       "ic, id, ih, iw, oc, od, oh, ow, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, then n and a "
                       "name\n");
  r = run_cli("layers --benchdnn " + td.file("bad") + " --shape K=16,C=8,H=8,R=3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "convtune: error: --shape excludes --benchdnn; see 'convtune --help'\n");
  r = run_cli("layers --benchdnn " + td.file("missing"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --benchdnn: cannot read '" + td.file("missing") +
                       "': No such file or directory; give a benchdnn shape list file\n");
}

}  // namespace
}  // namespace convtune::benchdnn_test
