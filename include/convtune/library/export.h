#pragma once
// `convtune export`: the kernels tune delivered for a set of layers, built
// into one static library with one header, a descriptor-based dispatcher,
// and a pkg-config file and CMake package config to find it.
#include <string>
#include <vector>

#include "convtune/core/epilogue.h"
#include "convtune/core/shape.h"
#include "convtune/tune/records.h"

namespace convtune {

struct ExportOptions {
  std::vector<Shape> shapes;  // the selected layers (several may share a shape)
  std::string name;           // the library's name: a C identifier (check_library_name)
  std::string out_dir;
  std::string logs_root;      // "": each layer's default tune dir; else ROOT/<layer>/log.jsonl
  int threads = 1;            // the default tune dir's thread count (default_out_dir); 0: any,
                              // no check of the records' --threads
  Epilogue epilogue = Epilogue::none;  // the one epilogue of every kernel: picks the logs tuned with it
                                      // (default_out_dir's suffix) and the kernels' signature
  bool skip_untuned = false;  // leave out a layer without a correct record instead of failing
  bool any_machine = false;   // take logs another machine measured (issue 14: refused by default)
  int jobs = 0;               // parallel compilations; 0: the cores but one
};

struct ExportedKernel {
  std::vector<std::string> layers;  // the selected layers of this shape
  Shape shape;
  std::string function;  // <name>_<layer>, its _pack and _packed_floats
  std::string log;       // where its record comes from
  Record record;
  bool finalist = false;  // finalists.json's winner (else the log's best)
  int64_t threads = 1;    // OpenMP threads of its P loops (1: none)
  int64_t packed_floats = 0;
};

struct ExportResult {
  std::string name, out_dir;
  Epilogue epilogue = Epilogue::none;   // every kernel's (the dispatcher accepts only it)
  std::vector<ExportedKernel> kernels;  // one per distinct shape, in selection order
  std::vector<std::string> skipped;     // "layer: why", with --skip-untuned
  std::vector<std::string> notes;       // "layer: ..." a finalists.json passed over, and why
  bool openmp = false;                  // some kernel has a P loop: link with -fopenmp
  std::string library, header, pkg_config, cmake_config;  // the files written
};

/// Throws Error unless `name` is a C identifier (it prefixes every symbol and
/// names lib<name>.a).
void check_library_name(const std::string& name);

/// The default --name for a selection: the network's, else the one layer's,
/// as a C identifier; "convtune" for several ad-hoc shapes.
std::string default_library_name(const std::string& network, const std::vector<Shape>& shapes);

/// Builds and writes the library; throws Error (one line) for a layer that
/// is not tuned (unless skip_untuned), a foreign log, a kernel that does not
/// compile, or an --out that cannot be written (checked before any work).
/// --out is replaced as one directory: staged beside it, then
/// renamed over it in one atomic exchange, so it holds the old set or the
/// new one; its other files are kept, a subdirectory (or the current
/// directory as --out) is refused, staging directories of killed exports are
/// removed, and a failed export leaves no --out it created.
ExportResult run_export(const ExportOptions& opt);

/// What was written, and how a build finds it.
std::string export_summary(const ExportResult& r);

}  // namespace convtune
