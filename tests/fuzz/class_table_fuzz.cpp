// Fuzzes the class table JSON as read from a file (read_table): a table that
// reads back is written and read again unchanged; every rejection is one
// Error line.
#include "convtune/offline/class_table.h"
#include "fuzz_check.h"

using namespace convtune;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  const std::string path = fuzz::as_file(data, size);
  ClassTable t;
  if (!fuzz::parses([&] { t = read_table(path); })) return 0;
  const std::string once = table_to_json(t).dump();
  ClassTable back;
  if (!fuzz::parses([&] { back = table_from_json(table_to_json(t), path); }))
    fuzz::fail("a table that was read cannot be read back after writing", once);
  if (table_to_json(back).dump() != once) fuzz::fail("class table round trip", once);
  return 0;
}
