#pragma once
// The measuring code convtune compiles (the driver's objects, the clock
// probe's peak loop) kept across runs in <cache_dir()>/driver/<key>/
// (core/files.h), the key a hash of everything that goes into the files: the
// compiler's command and version, the flags, the sources' text. Compiling
// the driver (five files, about 1.3 s) was the fixed cost of every tune,
// bench and profile, and of each generated-kernel test; like ccache, a
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

}  // namespace convtune
