#pragma once
// `convtune bench --library DIR` (issue 13): the library `convtune export
// --out DIR` wrote, linked into a shared object and called through its
// dispatcher (<name>_conv with a <name>_desc), against oneDNN and XNNPACK on
// the same shapes, in one process pinned to --threads cores. Every layer is
// checked against the reference, timed alone, and the whole network (every
// convolution in order, each shape as often as the network has it) is timed
// as one call per implementation.
#include <string>
#include <vector>

#include "convtune/bench/bench.h"
#include "convtune/core/shape.h"

namespace convtune {

struct LibraryBenchOptions {
  std::string dir;              // what `convtune export --out DIR` wrote
  std::vector<Shape> sequence;  // every convolution of the network, in order (shapes repeat)
  int cpu = -1;                 // -1: default_cpu()
  int threads = 1;              // the baselines' threads and the pinned CPUs
  double min_repeat_ms = 100;   // the timing protocol, as bench
  int repeat = 5;
  size_t check_points = 4000;   // output elements checked per layer (0: all)
  bool quiet = false;           // no progress lines on stderr
  int processes = 1;            // > 1: run_library_bench_processes
  std::vector<std::string> selection;  // the sequence as options for those processes ("--onnx", "m.onnx")
};

struct LibraryLayer {
  std::string layer;  // the zoo/ONNX name, else layer_id
  Shape shape;
  int count = 0;                    // convolutions of this shape in the sequence
  std::string kernel_isa;           // the library's kernel as <name>.h describes it ("" if it does not)
  int kernel_threads = 1;           // its OpenMP threads (1: the calling thread)
  std::vector<BenchEntry> entries;  // "library", "oneDNN", "XNNPACK": one call of this shape
  std::vector<double> process_ratios;  // library/oneDNN in each fresh process (processes > 1)
  const BenchEntry* find(const std::string& name) const;
};

struct LibraryBenchResult {
  std::string name, dir;  // the library (lib<name>.a) and where it is
  bool openmp = false;    // some kernel has OpenMP threads (its .pc links -fopenmp)
  int cpu = 0;
  int threads = 1;
  std::vector<int> cpus;  // the process was pinned to these
  std::string machine, date;
  std::vector<LibraryLayer> layers;  // the distinct shapes, in order of first use
  std::vector<size_t> sequence;      // indices into layers: the network's convolutions in order
  std::vector<BenchEntry> totals;    // the whole sequence as one call: "library", "oneDNN", "XNNPACK"
  int processes = 1;                 // measured in this many fresh processes
  std::vector<double> process_ratios;  // the sequence's library/oneDNN in each of them (processes > 1)
  const BenchEntry* total(const std::string& name) const;
  /// Sum over the layers of count x the layer's time alone; 0 when `name`
  /// did not run on every layer.
  double sum_of_layers(const std::string& name) const;
};

/// Links DIR's lib<name>.a into a shared object with $CC, checks every
/// implementation on every distinct shape, then times them. Throws Error (one
/// line) for a DIR without a library, a shape the library lacks, a library
/// that does not link, or an implementation that disagrees with the reference.
LibraryBenchResult run_library_bench(const LibraryBenchOptions& opt);

/// run_library_bench in opt.processes fresh processes, one after another
/// (`convtune bench --library DIR <opt.selection> --json`). On a VM a whole
/// process can run one implementation's 2-thread kernels at half speed
/// (docs/bench.md), which one process's rounds cannot tell from its speed.
/// Every time is the median of the processes' medians; process_ratios keep
/// each process's paired library/oneDNN, and library_ratio is their median.
LibraryBenchResult run_library_bench_processes(const LibraryBenchOptions& opt);

/// oneDNN's time over the library's for the sequence (a layer's, with
/// `layer`): of several processes the median of their paired ratios, else the
/// ratio of the times; 0 when either did not run.
double library_ratio(const LibraryBenchResult& r);
double library_ratio(const LibraryLayer& l);

/// The table (a line per layer, the sequence and the sum of the layers), and
/// the --json object (one line).
std::string library_bench_summary(const LibraryBenchResult& r);
std::string library_bench_json(const LibraryBenchResult& r);
/// library_bench_json's object read back; throws Error if `text` is not one.
LibraryBenchResult library_bench_from_json(const std::string& text);

}  // namespace convtune
