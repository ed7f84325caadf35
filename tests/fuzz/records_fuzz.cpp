// Fuzzes the tuning log (read_records on a file): the records it keeps
// survive to_json/from_json unchanged; every rejection is one Error line.
#include "convtune/tune/records.h"
#include "fuzz_check.h"

using namespace convtune;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  const std::string path = fuzz::as_file(data, size);
  std::vector<Record> recs;
  if (!fuzz::parses([&] { recs = read_records(path); })) return 0;
  for (const Record& r : recs) {
    const std::string once = r.to_json().dump();
    Record back;
    if (!fuzz::parses([&] { back = Record::from_json(r.to_json()); }))
      fuzz::fail("a record that was read cannot be read back after writing", once);
    if (back.to_json().dump() != once) fuzz::fail("record round trip", once);
  }
  return 0;
}
