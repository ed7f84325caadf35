#pragma once
// The kernel tune delivered for a layer, read back from its log: the winner
// of the finalists' re-measure (finalists.json beside the log) when tune
// recorded one, else the best correct candidate. What `bench` times and
// `export` builds into a library.
#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "convtune/core/epilogue.h"
#include "convtune/core/shape.h"
#include "convtune/tune/records.h"

namespace convtune {

struct DeliveredKernel {
  int64_t records = 0;      // records in the log (0: no log, or an empty one)
  bool found = false;       // a correct record exists
  Record record;            // the delivered one, when found
  bool finalist = false;    // it is finalists.json's winner
  // When a finalists.json beside the log is empty, corrupt or no object
  // with a winner, or its winner has no correct record in the log: what,
  // and that the log's best was taken instead ("" otherwise).
  std::string finalists_note;
  // The first record that does not belong to this log's layer, and why:
  std::string other_shape;  // its shape, when not `shape` ("" otherwise)
  int other_threads = 0;    // its --threads, when not `threads` (0 otherwise)
  std::optional<Epilogue> other_epilogue;  // its --epilogue, when not `epilogue`
};

/// Reads the log at `log_path` and finalists.json in its directory. `threads`
/// 0 accepts records of any thread count. The caller turns what is missing or
/// foreign into its own error line (its fix differs: bench can tune, export
/// names the tune command).
DeliveredKernel delivered_kernel(const std::string& log_path, const Shape& shape, int threads,
                                 Epilogue epilogue = Epilogue::none);
/// The same over the log's records already read (finalists.json is still
/// looked for beside log_path): tune --start-from reads the log once.
DeliveredKernel delivered_kernel(const std::vector<Record>& records, const std::string& log_path, const Shape& shape,
                                 int threads, Epilogue epilogue = Epilogue::none);

}  // namespace convtune
