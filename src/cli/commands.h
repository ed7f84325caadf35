#pragma once
// The subcommand table: each command adds its options to a CLI11 subcommand
// and returns the function that runs it. src/cli only parses and calls.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace convtune::cli {

using Runner = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  Runner (*setup)(CLI::App* sub);
};

Runner setup_profile(CLI::App* sub);
Runner setup_layers(CLI::App* sub);
Runner setup_table(CLI::App* sub);
Runner setup_tune(CLI::App* sub);
Runner setup_bench(CLI::App* sub);
Runner setup_space(CLI::App* sub);
Runner setup_export(CLI::App* sub);
Runner setup_merge(CLI::App* sub);
/// `internal-onednn`, hidden: what tune spawns for its oneDNN comparison (tune_compare.h).
Runner setup_internal_onednn(CLI::App* sub);
/// `internal-duel`, hidden: what tune spawns for its finalists' duel (finalist_duel.h).
Runner setup_internal_duel(CLI::App* sub);

/// Help text of --arch, listing the known ISAs.
std::string arch_help();
/// best_isa(), with the note saying so ("--arch not given; using ...").
std::string best_arch(std::string* note);
/// Help text of --epilogue (tune, bench, export), listing the choices.
std::string epilogue_help();

/// Every subcommand, in the order `convtune --help` lists them.
const std::vector<Command>& commands();

}  // namespace convtune::cli
