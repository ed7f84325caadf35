// convtune: an autotuner for CPU 2D convolutions (paper 000).
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "convtune/core/error.h"
#include "convtune/core/interrupt.h"
#include "convtune/core/text.h"

namespace convtune::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"profile", "offline stage: measure the microkernel space and write a class table", setup_profile},
      {"tune", "online stage: search the tiling space for one layer or network, keep the best kernel", setup_tune},
      {"bench", "compare convtune's best kernel for a layer with oneDNN and im2col+OpenBLAS on one core", setup_bench},
      {"export", "build the tuned kernels of layers or a network into one static library with a header", setup_export},
      {"table", "summarise a class table (the shipped one, or --table FILE)", setup_table},
      {"space", "what tune would search for a layer and --threads N, without measuring (sizes, parallel splits)",
       setup_space},
      {"layers", "list the layer zoo or a selection of it; --list: one job per line for a scheduler", setup_layers},
      {"merge", "merge tuning logs of many machines and runs into one store", setup_merge},
  };
  return table;
}

}  // namespace convtune::cli

namespace {

// The one line for whatever ended the command; destructors (work dirs,
// locks) have run by the time main prints it.
std::string error_text(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const convtune::Error& x) {
    return x.what();
  } catch (const std::bad_alloc&) {
    return "out of memory; try a smaller shape (--shape) or free some memory";
  } catch (const std::filesystem::filesystem_error& x) {
    std::string paths = x.path1().empty() ? "" : " '" + x.path1().string() + "'";
    if (!x.path2().empty()) paths += " and '" + x.path2().string() + "'";
    return fmt::format("cannot use{}: {}; check that path and its permissions", paths, x.code().message());
  } catch (const std::exception& x) {
    return fmt::format("{}; this is a bug in convtune, please report it", x.what());
  } catch (...) {
    return "an unknown exception; this is a bug in convtune, please report it";
  }
}

// --json: a failure is a JSON line on stdout as well as the line on stderr.
bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i)
    if (std::strcmp(argv[i], "--json") == 0) return true;
  return false;
}

// Whatever the message quotes (a --layer of bytes that are not UTF-8, a
// control character), it is printed escaped (text.h escape_text): one line,
// and a JSON string that can hold it.
int fail(int argc, char** argv, const std::string& raw, int code) {
  const std::string message = convtune::escape_text(raw);
  std::fflush(stdout);
  std::fprintf(stderr, "convtune: error: %s\n", message.c_str());
  if (wants_json(argc, argv))
    std::printf("%s\n", nlohmann::json{{"error", message}}
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                            .c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace convtune::cli;
  CLI::App app{"convtune " CONVTUNE_VERSION
               ": autotuner for CPU 2D convolutions (offline microkernel profiling, "
               "online search of a structured tiling space)"};
  app.set_version_flag("--version", "convtune " CONVTUNE_VERSION);
  app.require_subcommand(1);
  std::map<CLI::App*, Runner> runners;
  for (const auto& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    runners[sub] = c.setup(sub);
  }
  CLI::App* internal = app.add_subcommand("internal-onednn", "");
  runners[internal] = setup_internal_onednn(internal);
  CLI::App* duel = app.add_subcommand("internal-duel", "");
  runners[duel] = setup_internal_duel(duel);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ValidationError& e) {
    return fail(argc, argv, e.what(), 2);  // "--timeout: 0 is out of range; give seconds in (0, 86400]"
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) return fail(argc, argv, std::string(e.what()) + "; see 'convtune --help'", 2);
    return app.exit(e);
  }
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const convtune::Interrupted& e) {  // Ctrl-C before anything was kept: 130 as a signal's exit
    return fail(argc, argv, e.what(), 130);
  } catch (...) {
    return fail(argc, argv, error_text(std::current_exception()), 1);
  }
  return 0;
}
