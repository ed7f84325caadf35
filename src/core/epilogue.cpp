#include "convtune/core/epilogue.h"

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "reference.h"

namespace convtune {

static_assert(int(Epilogue::none) == CT_EPILOGUE_NONE && int(Epilogue::bias) == CT_EPILOGUE_BIAS &&
                  int(Epilogue::bias_relu) == CT_EPILOGUE_BIAS_RELU &&
                  int(Epilogue::bias_relu6) == CT_EPILOGUE_BIAS_RELU6 && int(Epilogue::bias_add) == CT_EPILOGUE_BIAS_ADD,
              "Epilogue and reference.h's CT_EPILOGUE_* must agree");

const std::vector<std::string>& epilogue_names() {
  static const std::vector<std::string> v = {"none", "bias", "bias,relu", "bias,relu6", "bias,add"};
  return v;
}

std::string to_string(Epilogue e) { return epilogue_names().at(size_t(e)); }

Epilogue parse_epilogue(const std::string& text) {
  const auto& names = epilogue_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return Epilogue(i);
  // The choices hold commas themselves, hence " | " between them.
  throw Error(fmt::format("unknown --epilogue '{}'; choose one of: {}", text, fmt::join(names, " | ")));
}

std::string epilogue_suffix(Epilogue e) {
  if (e == Epilogue::none) return "";
  std::string s = "-" + to_string(e);
  for (auto& ch : s)
    if (ch == ',') ch = '-';
  return s;
}

}  // namespace convtune
