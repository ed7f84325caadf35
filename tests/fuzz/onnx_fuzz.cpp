// Fuzzes ONNX model bytes through read_onnx, the reader `convtune layers
// --onnx` uses (attribute lengths, ranks and names come from the file), and the
// report layers prints: either a model with every Conv node shaped or
// skipped with a reason, or one Error line. Seeded with tests/data/*.onnx.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "convtune/models/onnx_model.h"
#include "fuzz_check.h"

using namespace convtune;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  // The bytes as a file without touching the disk: read_onnx takes a path.
  static const int fd = memfd_create("onnx_fuzz", 0);
  if (fd < 0) fuzz::fail("memfd_create", "");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size)) fuzz::fail("writing the memfd", "");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  OnnxModel m;
  if (!fuzz::parses([&] { m = read_onnx(path); })) return 0;
  std::string report;
  if (!fuzz::parses([&] { report = onnx_report(m); })) return 0;
  for (const auto& c : m.convs) {
    if (c.skip.empty() && c.shape.flops() <= 0) fuzz::fail("a supported Conv without a shape", c.node);
    if (c.skip.find('\n') != std::string::npos) fuzz::fail("a skip reason of more than one line", c.skip);
  }
  return 0;
}
