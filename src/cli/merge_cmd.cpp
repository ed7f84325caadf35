// `convtune merge`: tuning logs of many machines and runs into one store (merge.h).
#include <cstdio>

#include "commands.h"
#include "convtune/library/merge.h"

namespace convtune::cli {

Runner setup_merge(CLI::App* sub) {
  auto opt = std::make_shared<MergeOptions>();
  auto json = std::make_shared<bool>(false);
  sub->add_option("inputs", opt->inputs,
                  "directories that tune wrote logs into (their --out; every log.jsonl below), stores, or log files");
  sub->add_option("--out", opt->out, "the store: a new or empty directory, or a store to add to");
  sub->add_flag("--json", *json, "print one JSON object instead of the summary");
  return [opt, json] {
    MergeResult r = merge_logs(*opt);
    for (const auto& n : r.notes) std::fprintf(stderr, "convtune: note: %s\n", n.c_str());
    std::fputs((*json ? merge_json(r) : merge_summary(r)).c_str(), stdout);
    return 0;
  };
}

}  // namespace convtune::cli
