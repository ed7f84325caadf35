#include "convtune/core/json_fields.h"

#include <cmath>
#include <cstdint>

namespace convtune::json_field {

std::string describe(const json& v) {
  if (v.is_null()) return "null";
  return fmt::format("{} {}", v.is_object() || v.is_array() ? "an" : "a", v.type_name());
}

const json* field(const json& j, const char* key, bool required, bool (json::*is)() const noexcept,
                  const char* type) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) throw Error(fmt::format("key '{}' is missing", key));
    return nullptr;
  }
  if (!((*it).*is)()) throw Error(fmt::format("key '{}' is {}, not {}", key, describe(*it), type));
  return &*it;
}

std::string text(const json& j, const char* key, bool required) {
  const json* v = field(j, key, required, &json::is_string, "a string");
  return v ? v->get<std::string>() : std::string();
}

double number(const json& j, const char* key, bool required) {
  const json* v = field(j, key, required, &json::is_number, "a number");
  if (!v) return 0;
  double d = v->get<double>();
  if (!std::isfinite(d)) throw Error(fmt::format("key '{}' is not a finite number", key));
  if (d < 0) throw Error(fmt::format("key '{}' is negative ({})", key, v->dump()));
  return d;
}

const json* counter(const json& j, const char* key) {
  const json* v = field(j, key, false, &json::is_number_integer, "an integer");
  if (v && v->is_number_integer() && !v->is_number_unsigned() && v->get<int64_t>() < 0)
    throw Error(fmt::format("key '{}' is negative ({})", key, v->dump()));
  return v;
}

}  // namespace convtune::json_field
