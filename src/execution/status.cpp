// Statuses and their text (status.h).
#include "convtune/execution/status.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "convtune/core/error.h"

namespace convtune {

namespace {

// In enum order: the text of Status(i) is kStatusNames[i].
const char* const kStatusNames[] = {"ok", "compile_error", "wrong_result", "crash", "timeout", "load_error"};
static_assert(sizeof(kStatusNames) / sizeof(kStatusNames[0]) == size_t(Status::load_error) + 1, "a text per status");

}  // namespace

const std::vector<Status>& all_statuses() {
  static const std::vector<Status> v = {Status::ok,    Status::compile_error, Status::wrong_result,
                                        Status::crash, Status::timeout,       Status::load_error};
  return v;
}

const char* to_string(Status s) { return kStatusNames[size_t(s)]; }

std::string status_list(const std::vector<Status>& v) {
  std::string o;
  for (Status s : v) {
    if (!o.empty()) o += ", ";
    o += to_string(s);
  }
  return o;
}

std::optional<Status> status_from_text(std::string_view text) {
  for (Status s : all_statuses())
    if (text == to_string(s)) return s;
  return std::nullopt;
}

Status parse_status(std::string_view text, const std::vector<Status>& accepted) {
  const std::optional<Status> s = status_from_text(text);
  if (!s || std::find(accepted.begin(), accepted.end(), *s) == accepted.end())
    throw Error(fmt::format("status '{}' is not one of: {}", text, status_list(accepted)));
  return *s;
}

std::ostream& operator<<(std::ostream& os, Status s) { return os << to_string(s); }

}  // namespace convtune
