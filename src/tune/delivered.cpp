// The kernel tune delivered for a layer (delivered.h).
#include "convtune/tune/delivered.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace convtune {

namespace {

// The winner of tune's top-k re-measure (finalists.json beside the log), or
// "" with what is wrong with a finalists.json that names none ("" when there
// is no such file: tune --top 0).
std::string finalists_winner(const std::string& log_path, std::string* problem) {
  const std::string dir = std::filesystem::path(log_path).parent_path().string();
  const std::string path = (dir.empty() ? "." : dir) + "/finalists.json";
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("winner") && j["winner"].is_string()) return j["winner"].get<std::string>();
  const char* why = text.find_first_not_of(" \t\r\n") == std::string::npos ? "is empty"
                    : j.is_discarded()                                      ? "is not JSON (corrupt or cut short)"
                                                                            : "is not an object with a \"winner\" string";
  *problem = fmt::format("'{}' {}", path, why);
  return "";
}

}  // namespace

DeliveredKernel delivered_kernel(const std::string& log_path, const Shape& shape, int threads, Epilogue epilogue) {
  return delivered_kernel(read_records(log_path), log_path, shape, threads, epilogue);
}

DeliveredKernel delivered_kernel(const std::vector<Record>& recs, const std::string& log_path, const Shape& shape,
                                 int threads, Epilogue epilogue) {
  DeliveredKernel d;
  d.records = int64_t(recs.size());
  const std::string want = shape.to_string();
  for (const auto& r : recs) {
    if (r.shape != want) {
      if (d.other_shape.empty() && !d.other_threads) d.other_shape = r.shape;
      continue;
    }
    if (threads > 0 && r.threads != threads) {
      if (d.other_shape.empty() && !d.other_threads) d.other_threads = r.threads;
      continue;
    }
    if (r.epilogue != epilogue) {
      if (d.other_shape.empty() && !d.other_threads && !d.other_epilogue) d.other_epilogue = r.epilogue;
      continue;
    }
    if (r.status == Status::ok && (!d.found || faster(r, d.record))) {
      d.record = r;
      d.found = true;
    }
  }
  if (!d.other_shape.empty() || d.other_threads || d.other_epilogue) {  // a foreign log delivers nothing
    d.found = false;
    d.record = Record{};
    return d;
  }
  std::string problem;
  const std::string winner = finalists_winner(log_path, &problem);
  for (const auto& r : recs)
    if (r.status == Status::ok && !winner.empty() && r.config == winner) {
      d.record = r;
      d.finalist = true;
      break;
    }
  if (!winner.empty() && !d.finalist)
    problem = fmt::format("the finalists' winner '{}' beside '{}' has no correct record in that log", winner,
                          log_path);
  if (!problem.empty() && d.found)  // said, never a silent fallback
    d.finalists_note = problem + "; took the best correct record of the log instead (tune again with --resume to "
                                 "re-measure the finalists)";
  return d;
}

}  // namespace convtune
