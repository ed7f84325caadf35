#!/usr/bin/python3
"""Builds the models convtune's ONNX import is checked and benchmarked with,
here, never downloaded (issue 13): ResNet-18, VGG-11, GoogLeNet and
MobileNetV2 from torchvision with weights=None, exported with
torch.onnx.export at 1x3x224x224 (opset 13); and a small model for the test
suite (tests/data/small.onnx, committed: the suite needs no torch).

usage: bench/models.py [--out bench/models] | --fixtures tests/data
Needs Debian's python3-torch and python3-torchvision (run with /usr/bin/python3).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def export(model, path, size=224, channels=3):
    import torch
    model.eval()
    x = torch.zeros(1, channels, size, size)
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"])
    print(path)


class Small:
    """A few convolutions that exercise what the import must handle: two equal
    shapes (merged with a count), a depthwise conv (groups), a dilated conv,
    unequal strides, and a 1x1 conv."""

    @staticmethod
    def build():
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
                self.a = nn.Conv2d(16, 16, 3, padding=1)
                self.b = nn.Conv2d(16, 16, 3, padding=1)          # same shape as a
                self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
                self.dil = nn.Conv2d(16, 16, 3, padding=2, dilation=2)
                self.wide = nn.Conv2d(16, 16, (1, 3), stride=(1, 2), padding=(0, 1))
                self.pw = nn.Conv2d(16, 32, 1)
                self.relu = nn.ReLU()

            def forward(self, x):
                x = self.relu(self.stem(x))
                x = self.relu(self.b(self.relu(self.a(x))))
                x = self.dil(self.dw(x))
                y = self.pw(x)
                return y, self.wide(x)

        return Net()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "models"), help="directory for the four networks")
    ap.add_argument("--fixtures", help="write only the test models to this directory: small.onnx, "
                    "noconv.onnx (no Conv node) and dynamic.onnx (input height and width dynamic)")
    a = ap.parse_args()
    try:
        import torch
        import torchvision.models as tv
    except ImportError as e:
        sys.exit(f"models: error: {e}; install python3-torch and python3-torchvision and run with /usr/bin/python3")
    torch.manual_seed(0)
    if a.fixtures:
        os.makedirs(a.fixtures, exist_ok=True)
        export(Small.build(), os.path.join(a.fixtures, "small.onnx"), size=32, channels=3)
        x = torch.zeros(1, 3, 8, 8)
        torch.onnx.export(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(192, 4)), x,
                          os.path.join(a.fixtures, "noconv.onnx"), opset_version=13)
        torch.onnx.export(torch.nn.Conv2d(3, 4, 3), x, os.path.join(a.fixtures, "dynamic.onnx"), opset_version=13,
                          input_names=["input"], dynamic_axes={"input": {2: "height", 3: "width"}})
        return
    os.makedirs(a.out, exist_ok=True)
    nets = {
        "resnet18": lambda: tv.resnet18(weights=None),
        "vgg11": lambda: tv.vgg11(weights=None),
        "googlenet": lambda: tv.googlenet(weights=None, aux_logits=False, init_weights=False),
        "mobilenet_v2": lambda: tv.mobilenet_v2(weights=None),
    }
    for name, make in nets.items():
        export(make(), os.path.join(a.out, name + ".onnx"))


if __name__ == "__main__":
    main()
