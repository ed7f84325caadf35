#!/usr/bin/python3
"""The small ONNX models of tests/models/onnx_model_test.cpp's Conv shapes
(tests/data/conv_attrs.onnx, tests/data/shuffle.onnx), made with Debian's
python3-onnx (no torch): run it from anywhere to make them again.

conv_attrs: one Conv per attribute the reader turns into a Shape (groups,
depthwise, dilation, asymmetric pads, auto_pad SAME_UPPER / SAME_LOWER /
VALID, unequal strides), weights shared through an Identity, and two Conv
nodes whose weights are not constant.

shuffle: Conv nodes whose input dims ONNX's own shape inference (with or
without its data propagation) cannot reach, as in torchvision's
ShuffleNetV2 and DeepLabV3: a channel shuffle (Reshape, Transpose,
Reshape), then Slice and Split with bounds computed from Shape -> Gather ->
Add -> Div -> Mul, and a Resize to sizes from Shape -> Slice -> Concat; and
one Conv after a Reshape to a shape the model reads from an input, which has
no static shape at all. The script checks that ONNX's inference indeed
stops before those Conv nodes.

dense: a small network for tune --onnx of shapes the dense kernels take
today: two equal 3x3 convolutions (one layer of count 2), a dilated one and
a SAME_UPPER one of strides 2x1 (asymmetric pads).

plain: small.onnx's plain convolutions alone (a stem of stride 2, two equal
3x3, a 1x1), for what takes one stride and one pad only (bench --library's
descriptor).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))


def weights(name, *dims):
    return numpy_helper.from_array(np.zeros(dims, dtype=np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def x(name, *dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, list(dims))


def out(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def make(name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="convtune tests")
    m.ir_version = 7
    return m


def conv(name, inp, w, **attrs):
    return helper.make_node("Conv", [inp, w], ["y_" + name], name=name, **attrs)


def conv_attrs():
    convs = [
        conv("grouped", "input", "w_g4", group=4, pads=[1, 1, 1, 1]),
        conv("depthwise", "input", "w_dw", group=16, strides=[2, 2], pads=[1, 1, 1, 1]),
        conv("dilated", "input", "w", dilations=[2, 2], pads=[2, 2, 2, 2]),
        conv("asymmetric", "input", "w", pads=[0, 1, 1, 2]),
        # in 16, stride 2: out 8, total pad 1 along h; stride 1: total 2 along w.
        conv("same_upper", "input", "w", auto_pad="SAME_UPPER", strides=[2, 1]),
        conv("same_lower", "input", "w", auto_pad="SAME_LOWER", strides=[2, 1]),
        conv("valid", "input", "w", auto_pad="VALID"),
        conv("strides", "input", "w", strides=[1, 2], pads=[1, 1, 1, 1]),
        conv("shared", "input", "w_shared", pads=[1, 1, 1, 1]),
        conv("weight_input", "input", "w_in", pads=[1, 1, 1, 1]),
        conv("weight_computed", "input", "w_scaled", pads=[1, 1, 1, 1]),
    ]
    nodes = [helper.make_node("Identity", ["w"], ["w_shared"], name="share"),
             helper.make_node("Mul", ["w", "scale"], ["w_scaled"], name="scale_w")] + convs
    inits = [weights("w", 16, 16, 3, 3), weights("w_g4", 32, 4, 3, 3), weights("w_dw", 16, 1, 3, 3),
             numpy_helper.from_array(np.ones([1], dtype=np.float32), "scale")]
    return make("conv_attrs", nodes, [x("input", 1, 16, 16, 16), x("w_in", 16, 16, 3, 3)],
                [out(n.output[0]) for n in convs], inits)


def shuffle():
    c = lambda name, value: helper.make_node("Constant", [], [name], name=name, value=ints(name + "_v", value))
    nodes = [
        helper.make_node("Conv", ["input", "w_stem"], ["stem"], name="stem"),  # 1x16x8x8
        # The channel shuffle of 2 groups.
        c("shape5", [1, 2, 8, 8, 8]),
        helper.make_node("Reshape", ["stem", "shape5"], ["r5"], name="reshape5"),
        helper.make_node("Transpose", ["r5"], ["t5"], name="transpose", perm=[0, 2, 1, 3, 4]),
        c("shape4", [1, -1, 8, 8]),
        helper.make_node("Reshape", ["t5", "shape4"], ["shuffled"], name="reshape4"),
        # Half the channels as torch.chunk exports them: ends from the dims.
        helper.make_node("Shape", ["shuffled"], ["dims"], name="shape"),
        c("one", [1]), c("two", [2]), c("zero", [0]),
        helper.make_node("Gather", ["dims", "one"], ["channels"], name="gather", axis=0),
        helper.make_node("Add", ["channels", "one"], ["c1"], name="add"),
        helper.make_node("Div", ["c1", "two"], ["half"], name="div"),
        helper.make_node("Mul", ["half", "one"], ["end0"], name="mul"),
        helper.make_node("Mul", ["half", "two"], ["end1"], name="mul2"),
        helper.make_node("Slice", ["shuffled", "end0", "end1", "one"], ["upper"], name="slice"),
        helper.make_node("Conv", ["upper", "w_dw"], ["y_slice"], name="after_slice", group=8, pads=[1, 1, 1, 1]),
        # Split with computed sizes.
        helper.make_node("Concat", ["end0", "end0"], ["sizes"], name="split_sizes", axis=0),
        helper.make_node("Split", ["shuffled", "sizes"], ["lo", "hi"], name="split", axis=1),
        helper.make_node("Conv", ["hi", "w_half"], ["y_split"], name="after_split", strides=[2, 2]),
        # A pooled branch resized back to the dims of `shuffled` (DeepLabV3's ASPP pooling).
        helper.make_node("GlobalAveragePool", ["shuffled"], ["pooled"], name="pool"),
        helper.make_node("Slice", ["dims", "zero", "two", "zero"], ["nc"], name="slice_nc"),
        c("hw", [8, 8]),
        helper.make_node("Concat", ["nc", "hw"], ["resize_to"], name="resize_sizes", axis=0),
        helper.make_node("Resize", ["pooled", "", "", "resize_to"], ["resized"], name="resize", mode="linear"),
        helper.make_node("Concat", ["resized", "lo"], ["joined"], name="join", axis=1),
        helper.make_node("Conv", ["joined", "w_join"], ["y_join"], name="after_resize", pads=[1, 1, 1, 1]),
        # A Reshape to a shape the model is given at run time: no static shape.
        helper.make_node("Reshape", ["stem", "target"], ["reshaped"], name="reshape_input"),
        helper.make_node("Conv", ["reshaped", "w_dyn"], ["y_dyn"], name="after_input_reshape"),
    ]
    inits = [weights("w_stem", 16, 8, 1, 1), weights("w_dw", 8, 1, 3, 3), weights("w_half", 4, 8, 1, 1),
             weights("w_join", 8, 24, 3, 3), weights("w_dyn", 4, 16, 1, 1)]
    outputs = ["y_slice", "y_split", "y_join", "y_dyn"]
    m = make("shuffle", nodes, [x("input", 1, 8, 8, 8), x("target", 4, elem=TensorProto.INT64)],
             [out(o) for o in outputs], inits)
    for data_prop in (False, True):  # the point of the fixture: ONNX alone stops before these Conv inputs
        inferred = shape_inference.infer_shapes(m, data_prop=data_prop)
        static = {v.name for v in inferred.graph.value_info
                  if v.type.tensor_type.HasField("shape")
                  and all(d.HasField("dim_value") for d in v.type.tensor_type.shape.dim)}
        assert not static & {"upper", "hi", "joined"}, (data_prop, static & {"upper", "hi", "joined"})
    return m


def dense():
    nodes = [
        conv("a", "input", "w", pads=[1, 1, 1, 1]),
        conv("b", "y_a", "w", pads=[1, 1, 1, 1]),
        conv("dilated", "y_b", "w", dilations=[2, 2], pads=[2, 2, 2, 2]),
        conv("same_upper", "y_dilated", "w_out", auto_pad="SAME_UPPER", strides=[2, 1]),
    ]
    return make("dense", nodes, [x("input", 1, 8, 8, 8)], [out("y_same_upper")],
                [weights("w", 8, 8, 3, 3), weights("w_out", 16, 8, 3, 3)])


def plain():
    nodes = [
        conv("stem", "input", "w_stem", strides=[2, 2], pads=[1, 1, 1, 1]),
        conv("a", "y_stem", "w", pads=[1, 1, 1, 1]),
        conv("b", "y_a", "w", pads=[1, 1, 1, 1]),
        conv("pw", "y_b", "w_pw"),
    ]
    return make("plain", nodes, [x("input", 1, 3, 32, 32)], [out("y_pw")],
                [weights("w_stem", 16, 3, 3, 3), weights("w", 16, 16, 3, 3), weights("w_pw", 32, 16, 1, 1)])


for model in (conv_attrs(), shuffle(), dense(), plain()):
    onnx.save(model, os.path.join(HERE, model.graph.name + ".onnx"))
