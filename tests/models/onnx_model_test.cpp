// ONNX import (issue 13): the committed fixtures tests/data/small.onnx (made by
// bench/models.py --fixtures) and tests/data/*.onnx (make_conv_models.py,
// make_fault_models.py) read through the ONNX library: every Conv node's
// shape, the merge of equal shapes, the skip reasons; the commands that take
// --onnx; and the one-line errors for bad models.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

// `convtune layers --onnx` on tests/data/<model> exits 0 and prints each of `texts`.
void expect_layers_print(const std::string& model, const std::vector<std::string>& texts) {
  const test::CliResult r = run_cli("layers --onnx " CONVTUNE_SOURCE_DIR "/tests/data/" + model);
  ASSERT_EQ(r.exit_code, 0) << model << ": " << r.err;
  for (const std::string& t : texts)
    EXPECT_NE(r.out.find(t), std::string::npos) << model << " does not print\n" << t << "\nbut\n" << r.out;
}

TEST(OnnxModel, EveryConvWithItsShapeMerged) {
  SKIP_WITHOUT_ONNX();
  const OnnxModel m = read_onnx(kSmall);
  EXPECT_EQ(m.name, "small");
  ASSERT_EQ(m.convs.size(), 7u);
  EXPECT_EQ(m.convs[0].node, "/stem/Conv");
  EXPECT_EQ(m.convs[0].dims, "N=1 K=16 C=3 H=32 W=32 R=3 S=3 strides=2,2 pads=1,1,1,1 groups=1 dilations=1,1");
  EXPECT_EQ(m.convs[0].shape.to_string(), "N=1,K=16,C=3,H=32,W=32,R=3,S=3,stride=2,pad=1");
  // Inner nodes get their input dims from ONNX shape inference.
  EXPECT_EQ(m.convs[1].shape.to_string(), "N=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad=1");
  // PyTorch's depthwise, dilated and 1x3 stride-(1,2) convolutions, as exported.
  EXPECT_EQ(m.convs[3].shape.to_string(), "N=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad=1,groups=16");
  EXPECT_TRUE(m.convs[3].shape.depthwise());
  EXPECT_EQ(m.convs[4].shape.to_string(), "N=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad=2,dilation=2");
  EXPECT_EQ(m.convs[6].shape.to_string(),
            "N=1,K=16,C=16,H=16,W=16,R=1,S=3,stride_h=1,stride_w=2,pad_h=0,pad_w=1");
  for (const auto& c : m.convs) EXPECT_EQ(c.skip, "") << c.node;
  const std::vector<OnnxLayer> l = onnx_layers(m);
  ASSERT_EQ(l.size(), 6u);  // most FLOPs (times count) first
  EXPECT_EQ(l[0].shape.name, "small-0");
  EXPECT_EQ(l[0].count, 2);
  EXPECT_EQ(l[0].nodes, (std::vector<std::string>{"/a/Conv", "/b/Conv"}));
  EXPECT_EQ(l[2].shape.to_string(), "N=1,K=32,C=16,H=16,W=16,R=1,S=1,stride=1,pad=0");
  EXPECT_EQ(l[5].shape.name, "small-5");
}

TEST(OnnxModel, LayersPrintsCountsWindowsAndASummary) {
  SKIP_WITHOUT_ONNX();
  auto r = run_cli("layers --onnx " + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The pad column as wide as "0,1,0,1"; strides and dilations h x w where they differ.
  EXPECT_EQ(r.out.rfind("layer                 K     C    H    W  R  S stride     pad dil groups   Ho   Wo     MFLOP "
                        "count  nodes\n", 0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("\nsmall-0              16    16   16   16  3  3      1       1   1      1   16   16       1.2 "
                       "    2  /a/Conv (+1 more)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nsmall-4              16    16   16   16  1  3    1x2 0,1,0,1   1      1   16    8       0.2 "
                       "    1  /wide/Conv\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nsmall-5              16    16   16   16  3  3      1       1   1     16   16   16       0.1 "
                       "    1  /dw/Conv\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nsmall: 7 Conv nodes, 7 supported in 6 distinct shapes, 0 skipped\n"), std::string::npos)
      << r.out;
  r = run_cli("layers --onnx " + kSmall + " --list");  // jobs for a scheduler, as for --network
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("small-0\tN=1,K=16,C=16,H=16,W=16,R=3,S=3,stride=1,pad=1\n", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 6);
  // Plain shapes keep their columns, two added.
  r = run_cli("layers --layer resnet18-1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "layer               K     C    H    W  R  S stride pad dil groups   Ho   Wo     MFLOP\n"
                   "resnet18-1         64     3  224  224  7  7      2   3   1      1  112  112     236.0\n");
}

// Each attribute of a Conv node in its Shape (tests/data/make_conv_models.py):
// groups, dilation, the four pads in ONNX's order (top, left, bottom, right),
// auto_pad as the ONNX Conv spec pads (the odd one at the end for
// SAME_UPPER, at the start for SAME_LOWER), per-axis strides.
TEST(OnnxModel, ConvAttributesBecomeTheShape) {
  SKIP_WITHOUT_ONNX();
  const OnnxModel m = read_onnx(CONVTUNE_SOURCE_DIR "/tests/data/conv_attrs.onnx");
  std::map<std::string, std::string> shape, skip;
  for (const auto& c : m.convs) (c.skip.empty() ? shape[c.node] = c.shape.to_string() : skip[c.node] = c.skip);
  const std::string x = "N=1,K=16,C=16,H=16,W=16,R=3,S=3,";
  EXPECT_EQ(shape["grouped"], "N=1,K=32,C=16,H=16,W=16,R=3,S=3,stride=1,pad=1,groups=4");
  EXPECT_EQ(shape["depthwise"], x + "stride=2,pad=1,groups=16");
  EXPECT_EQ(shape["dilated"], x + "stride=1,pad=2,dilation=2");
  EXPECT_EQ(shape["asymmetric"], x + "stride=1,pad_t=0,pad_l=1,pad_b=1,pad_r=2");
  // h: in 16, stride 2, out 8: one pad in all; w: stride 1: two.
  EXPECT_EQ(shape["same_upper"], x + "stride_h=2,stride_w=1,pad_t=0,pad_l=1,pad_b=1,pad_r=1");
  EXPECT_EQ(shape["same_lower"], x + "stride_h=2,stride_w=1,pad_t=1,pad_l=1,pad_b=0,pad_r=1");
  EXPECT_EQ(shape["valid"], x + "stride=1,pad=0");
  EXPECT_EQ(shape["strides"], x + "stride_h=1,stride_w=2,pad=1");
  EXPECT_EQ(shape["shared"], x + "stride=1,pad=1");  // weights through an Identity are constant
  const OnnxConv& upper = *std::find_if(m.convs.begin(), m.convs.end(), [](auto& c) { return c.node == "same_upper"; });
  EXPECT_EQ(upper.dims, "N=1 K=16 C=16 H=16 W=16 R=3 S=3 strides=2,1 pads=0,1,1,1 groups=1 dilations=1,1");
  EXPECT_EQ(shape.size(), 9u);
  EXPECT_EQ(skip["weight_input"],
            "its weights 'w_in' are not a constant: they are the model's input 'w_in'; convtune tunes convolutions "
            "of fixed weights: export the model with its weights as initializers (torch.onnx.export's "
            "export_params=True)");
  EXPECT_EQ(skip["weight_computed"],
            "its weights 'w_scaled' are not a constant: node scale_w (op Mul) computes them; convtune tunes "
            "convolutions of fixed weights: export the model with its weights as initializers (torch.onnx.export's "
            "export_params=True, constant folding on)");
  EXPECT_EQ(skip.size(), 2u);
  expect_layers_print("conv_attrs.onnx",
                      {"\nskipped weight_input: its weights 'w_in' are not a constant",
                       "\nconv_attrs: 11 Conv nodes, 9 supported in 9 distinct shapes, 2 skipped\n"});
}

// Input dims ONNX's inference cannot reach (its Slice, Split and Resize
// bounds computed in the graph, as torchvision's ShuffleNetV2 and DeepLabV3
// export them) come from the reader's propagation; a Reshape to a shape
// given at run time has none, and only that node is skipped.
TEST(OnnxModel, ShapesComputedInTheGraphArePropagated) {
  SKIP_WITHOUT_ONNX();
  const OnnxModel m = read_onnx(CONVTUNE_SOURCE_DIR "/tests/data/shuffle.onnx");
  ASSERT_EQ(m.convs.size(), 5u);
  EXPECT_EQ(m.convs[0].shape.to_string(), "N=1,K=16,C=8,H=8,W=8,R=1,S=1,stride=1,pad=0");
  EXPECT_EQ(m.convs[1].node, "after_slice");  // channels [8, 16) of the shuffled 16
  EXPECT_EQ(m.convs[1].shape.to_string(), "N=1,K=8,C=8,H=8,W=8,R=3,S=3,stride=1,pad=1,groups=8");
  EXPECT_EQ(m.convs[2].node, "after_split");
  EXPECT_EQ(m.convs[2].shape.to_string(), "N=1,K=4,C=8,H=8,W=8,R=1,S=1,stride=2,pad=0");
  EXPECT_EQ(m.convs[3].node, "after_resize");  // 16 resized channels and 8 split ones
  EXPECT_EQ(m.convs[3].shape.to_string(), "N=1,K=8,C=24,H=8,W=8,R=3,S=3,stride=1,pad=1");
  EXPECT_EQ(m.convs[4].node, "after_input_reshape");
  EXPECT_EQ(m.convs[4].skip,
            "its input 'reshaped' has no static shape: node reshape_input (op Reshape) gives 'reshaped' dims that "
            "depend on values known only at run time (or an op neither ONNX shape inference nor convtune follows); "
            "export the model with fixed input sizes and constant folding (torch.onnx.export's default)");
  expect_layers_print("shuffle.onnx", {"\nshuffle: 5 Conv nodes, 4 supported in 4 distinct shapes, 1 skipped\n"});
}

// dense.onnx (make_conv_models.py): equal, dilated and asymmetrically padded
// convolutions of strides 2x1, which the dense kernels take.
TEST(OnnxModel, TuneTunesTheDistinctShapesAsANetwork) {
  SKIP_WITHOUT_ONNX();
  test::TempDir td;
  const std::string dense = CONVTUNE_SOURCE_DIR "/tests/data/dense.onnx";
  auto r = run_cli("tune --onnx " + dense + " --arch avx2 --trials 1 --top 0 --threads 1 --no-onednn --json -q "
                   "--min-repeat-ms 1 --repeat 1 --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4u);  // three layers, then the network
  EXPECT_EQ(lines[0]["layer"], "dense-0");
  EXPECT_EQ(lines[2]["layer"], "dense-2");
  EXPECT_EQ(lines[3]["network"], dense);
  EXPECT_EQ(lines[3]["layers"], 3);
  // The network time counts dense-0 twice (two nodes of that shape).
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
  // A model input of dynamic height and width: the node is skipped, saying why, and no shape is left to tune.
  expect_layers_print("dynamic.onnx",
                      {"\nskipped /Conv: its input 'input' has no static shape: the model's input 'input' has dims "
                       "[1,3,height,width]; export the model with fixed input sizes (torch.onnx.export with a "
                       "concrete example input, no dynamic_axes)\n"});
  r = run_cli("bench --onnx " + data + "dynamic.onnx");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --onnx: '" + data + "dynamic.onnx' has no Conv node convtune supports; "
                   "'convtune layers --onnx " + data + "dynamic.onnx' says why\n");
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
  expect_layers_print("bad_attrs.onnx", {"\nbad_attrs: 6 Conv nodes, 1 supported in 1 distinct shape, 5 skipped\n"});
}

// Issue 60: a 1-D or 3-D Conv, or a Conv after an op of a custom domain, is
// skipped with its own reason; the rest of the model is listed.
TEST(OnnxModel, OtherRanksAndCustomOpsSkipTheNodeNotTheModel) {
  SKIP_WITHOUT_ONNX();
  expect_layers_print("conv1d3d.onnx",
                      {"\nskipped conv1d: a 1-D convolution (input of rank 3); convtune tunes 2-D convolutions "
                       "only\nskipped conv3d: a 3-D convolution (input of rank 5); convtune tunes 2-D convolutions "
                       "only\n",
                       "\nconv1d3d: 3 Conv nodes, 1 supported in 1 distinct shape, 2 skipped\n"});
  expect_layers_print("custom_op.onnx",
                      {"\nskipped after_custom: its input 't' has no inferred shape: it comes after node foo (op Foo "
                       "of the custom domain 'com.example'), which ONNX shape inference does not know\n",
                       "\ncustom_op-0           8     8   16   16  3  3      1   1   1      1   16   16"
                       "       0.3     1  direct\n"});
}

TEST(OnnxModel, WithoutTheLibraryOnnxSaysWhatToInstall) {
  if (onnx_supported()) GTEST_SKIP() << "this convtune reads ONNX models (the stub is for builds without libonnx-dev)";
  EXPECT_THROW(read_onnx(kSmall), Error);
}

}  // namespace
}  // namespace convtune::onnx_model_test
