#!/usr/bin/python3
"""The small ONNX models of the fault cases (tests/data/*.onnx, scripts/fault-cases.sh), made
with Debian's python3-onnx: run it from anywhere to make them again."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def weights(name, *dims):
    return numpy_helper.from_array(np.zeros(dims, dtype=np.float32), name)


def save(name, nodes, inputs, outputs, inits, opsets=None):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=opsets or [helper.make_opsetid("", 13)], producer_name="convtune tests")
    m.ir_version = 7
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


def x(name, *dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def out(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


# Conv nodes whose repeated attributes have the wrong length, beside one good one.
bad = [
    ("dil_empty", dict(dilations=[], auto_pad="SAME_LOWER")),
    ("dil_one", dict(dilations=[1])),
    ("strides3", dict(strides=[1, 1, 1])),
    ("pads2", dict(pads=[1, 1])),
    ("kernel1", dict(kernel_shape=[3])),
    ("good", dict(pads=[1, 1, 1, 1])),
]
save("bad_attrs", [helper.make_node("Conv", ["input", "w"], ["y_" + n], name=n, **a) for n, a in bad],
     [x("input", 1, 8, 16, 16)], [out("y_" + n) for n, _ in bad], [weights("w", 8, 8, 3, 3)])

# A 1-D, a 3-D and a 2-D Conv.
save("conv1d3d",
     [helper.make_node("Conv", ["x1", "w1"], ["y1"], name="conv1d"),
      helper.make_node("Conv", ["x3", "w3"], ["y3"], name="conv3d"),
      helper.make_node("Conv", ["x2", "w2"], ["y2"], name="conv2d", pads=[1, 1, 1, 1])],
     [x("x1", 1, 8, 16), x("x3", 1, 8, 8, 8, 8), x("x2", 1, 8, 16, 16)], [out("y1"), out("y3"), out("y2")],
     [weights("w1", 8, 8, 3), weights("w3", 8, 8, 3, 3, 3), weights("w2", 8, 8, 3, 3)])

# A Conv after an op of a custom domain, and one on the model's input.
save("custom_op",
     [helper.make_node("Foo", ["input"], ["t"], name="foo", domain="com.example"),
      helper.make_node("Conv", ["t", "w"], ["y1"], name="after_custom", pads=[1, 1, 1, 1]),
      helper.make_node("Conv", ["input", "w"], ["y2"], name="direct", pads=[1, 1, 1, 1])],
     [x("input", 1, 8, 16, 16)], [out("y1"), out("y2")], [weights("w", 8, 8, 3, 3)],
     [helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])

# One small Conv: tune --onnx and export --onnx of a one-layer model.
save("one_conv", [helper.make_node("Conv", ["input", "w"], ["y"], name="only", pads=[1, 1, 1, 1])],
     [x("input", 1, 16, 8, 8)], [out("y")], [weights("w", 16, 16, 3, 3)])
