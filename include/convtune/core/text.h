#pragma once
// Small text helpers that several stages need; one definition each.
#include <string>

namespace convtune {

// `s` without the leading and trailing characters in `blanks`.
std::string trim(const std::string& s, const char* blanks = " \t\r\n");

// `s` in ASCII capitals (C macro names from function names).
std::string upper(std::string s);

}  // namespace convtune
