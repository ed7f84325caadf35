#include "convtune/core/text.h"

#include <cctype>

#include <fmt/format.h>

namespace convtune {

std::string trim(const std::string& s, const char* blanks) {
  size_t b = s.find_first_not_of(blanks);
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(blanks);
  return s.substr(b, e - b + 1);
}

std::string upper(std::string s) {
  for (auto& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

size_t utf8_length(const std::string& s, size_t i) {
  if (i >= s.size()) return 0;
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // the second byte's range (RFC 3629's table)
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  return n;
}

std::string escape_text(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_length(s, i);
    if (n > 1) {
      o.append(s, i, n);
      i += n;
      continue;
    }
    if (c == '\n')
      o += "\\n";
    else if (c == '\t')
      o += "\\t";
    else if (n == 0 || c < 0x20 || c == 0x7F)
      o += fmt::format("\\x{:02X}", c);
    else
      o += char(c);
    ++i;
  }
  return o;
}

std::string quote_text(const std::string& s) { return "'" + escape_text(s) + "'"; }

}  // namespace convtune
