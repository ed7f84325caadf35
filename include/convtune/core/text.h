#pragma once
// Small text helpers that several stages need; one definition each.
#include <cstddef>
#include <string>

namespace convtune {

// `s` without the leading and trailing characters in `blanks`.
std::string trim(const std::string& s, const char* blanks = " \t\r\n");

// `s` in ASCII capitals (C macro names from function names).
std::string upper(std::string s);

// Bytes of the valid UTF-8 character at s[i] (1 for ASCII), 0 when the
// bytes there are not one (a stray continuation byte, a cut or overlong
// sequence, a surrogate).
size_t utf8_length(const std::string& s, size_t i);

// `s` safe to print on one line and to put in JSON: valid UTF-8 kept as it
// is, every byte that is not part of one and every control character
// written as \xHH (a tab as \t, a newline as \n). ASCII text is unchanged.
std::string escape_text(const std::string& s);

// User input quoted for a message: '<escape_text(s)>'. Every error that
// quotes input quotes it through here, so no message holds a broken byte.
std::string quote_text(const std::string& s);

}  // namespace convtune
