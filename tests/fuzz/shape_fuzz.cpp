// Fuzzes the shape text ("K=512,C=256,H=34,R=3"): parse_shape either gives a
// shape whose text form parses back to the same shape, or one Error line.
#include "convtune/core/shape.h"
#include "fuzz_check.h"

using namespace convtune;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  const std::string text = fuzz::text_of(data, size);
  Shape s;
  if (!fuzz::parses([&] { s = parse_shape(text); })) return 0;
  Shape back;
  if (!fuzz::parses([&] { back = parse_shape(s.to_string()); }))
    fuzz::fail("the text form of a parsed shape does not parse", s.to_string());
  if (back.to_string() != s.to_string()) fuzz::fail("shape text round trip", s.to_string() + " vs " + back.to_string());
  return 0;
}
