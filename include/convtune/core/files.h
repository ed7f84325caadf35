#pragma once
#include <cstddef>
#include <string>

namespace convtune {

/// Creates the parent directory and checks that `path` can be written,
/// without leaving a file behind; throws Error naming `option` otherwise.
void ensure_writable(const std::string& path, const std::string& option);

/// Writes all of `data` to `fd`, retrying after a short write so that a full
/// disk shows as ENOSPC; returns 0 or the errno of the failed write().
int write_all(int fd, const char* data, size_t size);

/// Writes `text` to `path` through a temporary file in the same directory
/// (written, flushed, checked, renamed): `path` ends up whole or untouched.
/// Throws Error "cannot write <what> to '<path>': <reason>; <fix>".
void write_file_atomic(const std::string& path, const std::string& text, const std::string& what,
                       const std::string& fix);

/// Writes a file of a work directory (a generated source) the same way,
/// without syncing it; throws Error "cannot write <path>: <reason>; free
/// space in the temporary directory or set TMPDIR".
void write_work_file(const std::string& path, const std::string& text);

/// convtune's per-user cache: $XDG_CACHE_HOME/convtune when that is an
/// absolute path (the XDG spec ignores relative ones), else ~/.cache/convtune.
/// Profiled tables and compiled driver objects live there.
std::string cache_dir();

}  // namespace convtune
