#!/usr/bin/python3
"""Builds the models convtune's ONNX import is checked and benchmarked with,
here, never downloaded (issue 13): ResNet-18, VGG-11, GoogLeNet, MobileNetV2,
EfficientNet-B0, Inception-v3, ResNeXt-50 32x4d, ShuffleNetV2 x1.0 and
DeepLabV3-ResNet50 from torchvision with weights=None (no backbone weights
either), exported with torch.onnx.export at a fixed 1x3x224x224 (Inception-v3
at its 299x299; opset 13); and a small model for the test suite
(tests/data/small.onnx, committed: the suite needs no torch).

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
    # DeepLabV3 returns a dict ("out"): export its tensor only.
    if hasattr(model, "classifier") and hasattr(model, "backbone"):
        model = OutOnly(model)
    x = torch.zeros(1, channels, size, size)
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"])
    print(path)


def OutOnly(model):
    import torch.nn as nn

    class Out(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, x):
            return self.inner(x)["out"]

    return Out().eval()


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
    ap.add_argument("--out", default=os.path.join(HERE, "models"), help="directory for the networks")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="only these networks (e.g. shufflenet_v2_x1_0)")
    ap.add_argument("--fixtures", help="write only the test models to this directory: small.onnx, "
                    "noconv.onnx (no Conv node) and dynamic.onnx (input height and width dynamic)")
    a = ap.parse_args()
    try:
        import torch
        import torchvision.models as tv
        import torchvision.models.segmentation as seg
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
        "resnet50": lambda: tv.resnet50(weights=None),
        "vgg11": lambda: tv.vgg11(weights=None),
        "googlenet": lambda: tv.googlenet(weights=None, aux_logits=False, init_weights=False),
        "mobilenet_v2": lambda: tv.mobilenet_v2(weights=None),
        "efficientnet_b0": lambda: tv.efficientnet_b0(weights=None),
        "inception_v3": lambda: tv.inception_v3(weights=None, aux_logits=False, init_weights=False),
        "resnext50_32x4d": lambda: tv.resnext50_32x4d(weights=None),
        "shufflenet_v2_x1_0": lambda: tv.shufflenet_v2_x1_0(weights=None),
        "deeplabv3_resnet50": lambda: seg.deeplabv3_resnet50(weights=None, weights_backbone=None, aux_loss=False),
    }
    sizes = {"inception_v3": 299}
    unknown = sorted(set(a.only or []) - set(nets))
    if unknown:
        sys.exit(f"models: error: unknown network {', '.join(unknown)}; choose from {', '.join(nets)}")
    for name, make in nets.items():
        if a.only and name not in a.only:
            continue
        export(make(), os.path.join(a.out, name + ".onnx"), size=sizes.get(name, 224))


if __name__ == "__main__":
    main()
