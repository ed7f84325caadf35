#pragma once
// The measuring code convtune compiles (the driver's objects, the clock
// probe's peak loop) kept across runs in <cache_dir()>/driver/<key>/
// (core/files.h), the key a hash of everything that goes into the files: the
// compiler's command and version, the flags, the sources' text. Compiling
// the driver (five files, over a second of GCC) would otherwise be the fixed
// cost of every tune, bench and profile, and of each generated-kernel test; like ccache, a
// changed compiler, flag or source is another key. Any failure of the cache
// (no home directory, a full or read-only disk) only means compiling.
#include <string>
#include <vector>

#include "convtune/execution/compiler.h"

namespace convtune {

/// A stable hex hash (64-bit FNV-1a) of the parts, each ended by a NUL.
std::string driver_key(const std::vector<std::string>& parts);

/// The key of what `cc` compiles from `inputs` (the flags it adds beyond
/// cc.flags, the sources' text): driver_key of its command, the first line
/// of its --version, its flags and the inputs. Throws Error as
/// Compiler::info() does when the compiler cannot be run.
std::string compiled_key(const Compiler& cc, const std::vector<std::string>& inputs);

/// Copies the cached files (names such as "driver.o") for `key` into dir;
/// false when the cache has not all of them (then compile and store_compiled).
bool fetch_compiled(const std::string& key, const std::vector<std::string>& files, const std::string& dir);

/// Caches dir's files under `key`: copied into a temporary directory that is
/// then renamed, so a concurrent run finds all of them or none.
void store_compiled(const std::string& key, const std::vector<std::string>& files, const std::string& dir);

/// Of the entries that hold `file`, keeps the `keep` most recently stored or
/// fetched and removes the others: what bounds the cache where an entry is
/// big (a precompiled header is 25 MB) and a compiler wrapper in a new
/// directory is a new key each time.
void prune_compiled(const std::string& file, size_t keep);

/// Precompiles the intrinsics header `header` (the ISA's, e.g. immintrin.h)
/// into <dir>/ct_intrin.h.gch with cc's flags, `job_flags` and -fPIC, and
/// returns the flags that use it: -fPIC -include <dir>/ct_intrin.h. A compile
/// with other job flags (a macro such as -fopenmp's _REENTRANT) parses the
/// header as before: GCC checks and ignores it. Parsing immintrin.h is about
/// half of compiling a small kernel with GCC, and a tune
/// compiles every candidate and finalist, a profile thousands of units. The
/// generated C still includes the header itself (include guards make that a
/// no-op), so exported kernels need nothing of this. Returns no flags when
/// the compiler made no such file or cannot compile with it: compiles then
/// work as before, only slower. A header that compiled the check is cached
/// (driver_cache.h) under the compiler, its flags, `job_flags` and `header`,
/// so later runs fetch it instead of spending about a second of GCC again.
std::vector<std::string> precompiled_header_flags(const Compiler& cc, const std::string& header,
                                                  const std::string& dir,
                                                  const std::vector<std::string>& job_flags = {});

}  // namespace convtune
