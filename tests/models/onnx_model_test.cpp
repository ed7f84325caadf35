// ONNX import (issue 13): the committed fixture tests/data/small.onnx (made by
// bench/models.py --small) read through the ONNX library: every Conv node's
// shape, the merge of equal shapes, the skip reasons; the commands that take
// --onnx; and the one-line errors for bad models.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/models/onnx_model.h"
#include "test_util.h"

namespace convtune::onnx_model_test {
namespace {

using test::run_cli;

const std::string kSmall = CONVTUNE_SOURCE_DIR "/tests/data/small.onnx";

#define SKIP_WITHOUT_ONNX() \
  if (!onnx_supported()) GTEST_SKIP() << "this convtune was built without the ONNX library (libonnx-dev)"

TEST(OnnxModel, EveryConvWithItsShapeMergedAndSkipped) {
  SKIP_WITHOUT_ONNX();
  const OnnxModel m = read_onnx(kSmall);
  EXPECT_EQ(m.name, "small");
  ASSERT_EQ(m.convs.size(), 7u);
  EXPECT_EQ(m.convs[0].node, "/stem/Conv");
  EXPECT_EQ(m.convs[0].dims, "N=1 K=16 C=3 H=32 W=32 R=3 S=3 strides=2,2 pads=1,1,1,1 groups=1 dilations=1,1");
  EXPECT_EQ(m.convs[0].shape.to_string(), "N=1,K=16,C=3,H=32,W=32,R=3,S=3,stride=2,pad=1");
  // Inner nodes get their input dims from ONNX shape inference.
  EXPECT_EQ(m.convs[1].shape.to_string(), "N=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad=1");
  EXPECT_EQ(m.convs[3].skip, "groups=16: grouped convolutions are not supported yet; only groups=1");
  EXPECT_EQ(m.convs[4].skip, "dilations=2,2: dilated convolutions are not supported yet; only 1,1");
  EXPECT_EQ(m.convs[6].skip, "strides=1,2: unequal strides are not supported yet; only equal ones");
  const std::vector<OnnxLayer> l = onnx_layers(m);
  ASSERT_EQ(l.size(), 3u);  // most FLOPs (times count) first
  EXPECT_EQ(l[0].shape.name, "small-0");
  EXPECT_EQ(l[0].count, 2);
  EXPECT_EQ(l[0].nodes, (std::vector<std::string>{"/a/Conv", "/b/Conv"}));
  EXPECT_EQ(l[1].shape.to_string(), "N=1,K=32,C=16,H=16,W=16,R=1,S=1,stride=1,pad=0");
  EXPECT_EQ(l[2].shape.name, "small-2");
}

TEST(OnnxModel, LayersPrintsCountsSkipsAndASummary) {
  SKIP_WITHOUT_ONNX();
  auto r = run_cli("layers --onnx " + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nsmall-0              16    16   16   16  3  3      1   1   16   16       1.2     2  "
                       "/a/Conv (+1 more)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nskipped /dw/Conv (N=1 K=16 C=16 H=16 W=16 R=3 S=3 strides=1,1 pads=1,1,1,1 groups=16 "
                       "dilations=1,1): groups=16: grouped convolutions are not supported yet; only groups=1\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nsmall: 7 Conv nodes, 4 supported in 3 distinct shapes, 3 skipped\n"), std::string::npos)
      << r.out;
  r = run_cli("layers --onnx " + kSmall + " --list");  // jobs for a scheduler, as for --network
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("small-0\tN=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad=1\n", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);
}

TEST(OnnxModel, TuneTunesTheDistinctShapesAsANetwork) {
  SKIP_WITHOUT_ONNX();
  test::TempDir td;
  auto r = run_cli("tune --onnx " + kSmall + " --arch avx2 --trials 1 --top 0 --threads 1 --no-onednn --json -q "
                   "--min-repeat-ms 1 --repeat 1 --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4u);  // three layers, then the network
  EXPECT_EQ(lines[0]["layer"], "small-0");
  EXPECT_EQ(lines[3]["network"], kSmall);
  EXPECT_EQ(lines[3]["layers"], 3);
  // The network time counts small-0 twice (two nodes of that shape).
  const double t = 2 * lines[0]["best"]["seconds"].get<double>() + lines[1]["best"]["seconds"].get<double>() +
                   lines[2]["best"]["seconds"].get<double>();
  EXPECT_NEAR(lines[3]["network_seconds"].get<double>(), t, 1e-12 + 1e-9 * t);
}

TEST(OnnxModel, BadModelsGetOneLine) {
  SKIP_WITHOUT_ONNX();
  test::TempDir td;
  auto r = run_cli("layers --onnx " + td.file("missing.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --onnx: cannot read '" + td.file("missing.onnx") +
                       "'; give the path of an .onnx model file\n");
  test::write_file(td.file("text.onnx"), "this is not a model\n");
  r = run_cli("tune --onnx " + td.file("text.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --onnx: '" + td.file("text.onnx") +
                       "' is not an ONNX model (no protobuf ModelProto with a graph); export one with "
                       "torch.onnx.export (bench/models.py)\n");
  const std::string data = CONVTUNE_SOURCE_DIR "/tests/data/";
  r = run_cli("layers --onnx " + data + "noconv.onnx");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --onnx: '" + data + "noconv.onnx' has no Conv node; convtune tunes 2-D "
                   "convolutions only\n");
  r = run_cli("bench --onnx " + data + "dynamic.onnx");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --onnx: '" + data + "dynamic.onnx': the input dims of Conv node /Conv "
                   "('input') cannot be inferred; export the model with fixed input sizes (torch.onnx.export "
                   "with a concrete example input)\n");
  r = run_cli("layers --onnx " + kSmall + " --network resnet18");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: give exactly one of --layer NAME, --network NAME, --shape "
                   "\"K=..,C=..,H=..,R=..\" or --onnx MODEL\n");
}

// Issue 60: every repeated attribute is length-checked before it is read
// (dilations=[] with auto_pad=SAME_LOWER crashed the reader), and a wrong
// length is named as such, not as unequal strides or asymmetric pads.
TEST(OnnxModel, AttributesOfTheWrongLengthAreNamed) {
  SKIP_WITHOUT_ONNX();
  const OnnxModel m = read_onnx(CONVTUNE_SOURCE_DIR "/tests/data/bad_attrs.onnx");
  ASSERT_EQ(m.convs.size(), 6u);
  EXPECT_EQ(m.convs[0].skip, "dilations=[] has 0 values; a 2-D Conv has 2");
  EXPECT_EQ(m.convs[1].skip, "dilations=[1] has 1 value; a 2-D Conv has 2");
  EXPECT_EQ(m.convs[2].skip, "strides=[1,1,1] has 3 values; a 2-D Conv has 2");
  EXPECT_EQ(m.convs[3].skip, "pads=[1,1] has 2 values; a 2-D Conv has 4");
  EXPECT_EQ(m.convs[4].skip, "kernel_shape=[3] has 1 value; a 2-D Conv has 2");
  EXPECT_EQ(m.convs[5].skip, "");
  EXPECT_EQ(m.convs[5].shape.to_string(), "N=1,K=8,C=8,H=16,W=16,R=3,S=3,stride=1,pad=1");
  auto r = run_cli("layers --onnx " CONVTUNE_SOURCE_DIR "/tests/data/bad_attrs.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nbad_attrs: 6 Conv nodes, 1 supported in 1 distinct shape, 5 skipped\n"), std::string::npos)
      << r.out;
}

// Issue 60: a 1-D or 3-D Conv, or a Conv after an op of a custom domain, is
// skipped with its own reason; the rest of the model is listed.
TEST(OnnxModel, OtherRanksAndCustomOpsSkipTheNodeNotTheModel) {
  SKIP_WITHOUT_ONNX();
  const std::string data = CONVTUNE_SOURCE_DIR "/tests/data/";
  auto r = run_cli("layers --onnx " + data + "conv1d3d.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nskipped conv1d: a 1-D convolution (input of rank 3); convtune tunes 2-D convolutions "
                       "only\nskipped conv3d: a 3-D convolution (input of rank 5); convtune tunes 2-D convolutions "
                       "only\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nconv1d3d: 3 Conv nodes, 1 supported in 1 distinct shape, 2 skipped\n"), std::string::npos)
      << r.out;
  r = run_cli("layers --onnx " + data + "custom_op.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nskipped after_custom: its input 't' has no inferred shape: it comes after node foo (op Foo "
                       "of the custom domain 'com.example'), which ONNX shape inference does not know\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ncustom_op-0           8     8   16   16  3  3      1   1   16   16       0.3     1  direct\n"),
            std::string::npos)
      << r.out;
}

TEST(OnnxModel, WithoutTheLibraryOnnxSaysWhatToInstall) {
  if (onnx_supported()) GTEST_SKIP() << "this convtune reads ONNX models (the stub is for builds without libonnx-dev)";
  EXPECT_THROW(read_onnx(kSmall), Error);
}

}  // namespace
}  // namespace convtune::onnx_model_test
