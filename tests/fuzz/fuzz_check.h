#pragma once
// What every parser fuzzer checks: the parser either succeeds or throws a
// convtune::Error whose message is one non-empty line. Any other exception, an
// empty or multi-line message, a crash, a sanitizer report or a hang is a
// finding (abort() makes libFuzzer save the input).
#include <cxxabi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "convtune/core/error.h"

namespace convtune::fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

/// Runs f(); returns true when it succeeded, false when it threw a good Error.
template <typename F>
bool parses(F f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.empty()) fail("empty convtune::Error message", "");
    if (msg.find('\n') != std::string::npos) fail("convtune::Error message of more than one line", msg);
    return false;
  } catch (const std::exception& e) {
    // Only convtune::Error may escape a parser.
    char* type = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, nullptr);
    fail(type ? type : typeid(e).name(), e.what());
  }
}

/// The fuzzer's bytes as text.
inline std::string text_of(const unsigned char* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// A path to a file holding the fuzzer's bytes, for parsers that read a path.
/// The file lives in memory (memfd): rewriting a disk file per input made the
/// fuzzers wait for writeback (ext4 flushes a truncated-and-rewritten file).
inline std::string as_file(const unsigned char* data, size_t size) {
  static const int fd = memfd_create("convtune-fuzz-input", 0);
  if (fd < 0) fail("memfd_create", "cannot create the in-memory input file");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size)) fail("pwrite", "cannot write the input");
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace convtune::fuzz
