#pragma once
// Helpers shared by the tests: temporary directories and running the CLI.
#include <string>

#include "convtune/error.h"

namespace convtune::test {

/// A fresh directory under $TMPDIR (or /tmp), removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CliResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};
/// Runs the built convtune binary with the given argument string (shell-quoted
/// by the caller) and captures its output.
CliResult run_cli(const std::string& args);

/// Writes text to a file (throws on failure).
void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);

/// The message of the convtune::Error that f() throws, or "no error".
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace convtune::test
