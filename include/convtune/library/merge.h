#pragma once
// `convtune merge`: tuning logs from many machines and runs (a Slurm array,
// GNU parallel jobs, reruns) combined into one store that tune --resume,
// bench and export read like any tune output:
//
//   <store>/store.json                                  what the store holds
//   <store>/<machine key>/<isa>-t<threads>/<layer>/log.jsonl
//
// One log per (machine, ISA, threads, shape), so `tune --network N --out
// <store>/<key>/avx512-t1 --resume` and `bench --out <store>/<key>/avx512-t1
// --network N` find every layer; machine "unknown" holds records written
// before records named their machine. In a log, records of the same
// candidate (config, machine, table fingerprint, threads) are one: the
// better record is kept whole (a correct one over a failure, then the
// faster median), since timing noise only slows a kernel down and a record
// must stay one real measurement (its samples, counters and timestamp
// belong together). The best comes first; each record keeps its JSON as
// written (keys of newer versions included) and its trial number in its run.
//
// Merging is idempotent (the store is an input of the next merge: merging
// the same logs again changes nothing) and atomic per file: each log and
// store.json is replaced whole through a temporary file and a rename, a
// log only grows, and a log that a tune holds (--resume into the store) is
// refused, so a killed merge loses nothing and running it again completes it.
// The store's lock is taken before --out is looked at (a second merge is told
// whose it is); a new store carries an owner file until its store.json is
// written, so a first merge killed midway leaves a partial store that the
// next one makes again; the temporary files and lock files of killed writers
// are removed.
#include <cstddef>
#include <string>
#include <vector>

#include "convtune/core/machine_id.h"

namespace convtune {

struct MergeOptions {
  std::vector<std::string> inputs;  // directories searched for log.jsonl, or log files
  std::string out;                  // the store: new, empty, or an existing store
};

/// One log of the store.
struct StoreLog {
  std::string dir;      // relative to the store: <key|unknown>/<isa>-t<threads>/<layer>
  MachineId machine;
  std::string isa, layer, shape;
  int threads = 1;
  size_t records = 0, ok = 0;
  double best_gflops = 0;  // 0: no correct record
  std::string best_config;
  bool written = false;    // changed by this merge
};

struct MergeResult {
  std::string out;
  size_t logs_read = 0;     // distinct log files read, the store's own included
  size_t records_read = 0;
  size_t duplicates = 0;    // records dropped as the same candidate as a kept one
  size_t records = 0;       // records in the store
  std::vector<StoreLog> logs;  // by dir
  std::vector<std::string> notes;  // torn lines left out
  MachineId here;           // this machine, to point at its directory
};

/// Merges; throws Error (one line) for a missing input, an input without
/// logs, an invalid record (with its log and line), an --out that is not a
/// store, or a store log in use. Nothing is written before every input is read.
MergeResult merge_logs(const MergeOptions& opt);

/// Human summary and the --json object.
std::string merge_summary(const MergeResult& r);
std::string merge_json(const MergeResult& r);

}  // namespace convtune
