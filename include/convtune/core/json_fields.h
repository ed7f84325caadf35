#pragma once
// Typed, checked reads of a JSON object's keys (a log record, a journal line):
// each throws Error naming the key ("key 'status' is missing", "key 'gflops'
// is a string, not a number").
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/error.h"

namespace convtune::json_field {

using nlohmann::json;

/// "a string", "an array", "null".
std::string describe(const json& v);

/// The value of `key` if present (nullptr when absent and not required);
/// throws when it has another JSON type.
const json* field(const json& j, const char* key, bool required, bool (json::*is)() const noexcept,
                  const char* type);

std::string text(const json& j, const char* key, bool required = false);
/// A finite, non-negative number (0 when absent).
double number(const json& j, const char* key, bool required = false);
/// A non-negative integer, or nullptr when absent.
const json* counter(const json& j, const char* key);

template <typename T>
std::vector<T> array_of(const json& j, const char* key, bool (json::*is)() const noexcept, const char* type) {
  const json* v = field(j, key, false, &json::is_array, "an array");
  std::vector<T> out;
  if (!v) return out;
  for (const auto& e : *v) {
    if (!(e.*is)()) throw Error(fmt::format("key '{}' holds {}, not only {}", key, e.type_name(), type));
    out.push_back(e.get<T>());
  }
  return out;
}

}  // namespace convtune::json_field
