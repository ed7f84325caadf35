#include "convtune/tune/log_machine.h"

#include <fmt/format.h>

#include "convtune/core/error.h"

namespace convtune {

void check_log_machine(const std::string& path, const std::vector<Record>& records, const MachineId& here) {
  for (const Record& r : records)
    if (r.machine.known() && r.machine.key != here.key)
      throw Error(fmt::format("log '{}' holds records of machine {}, not of this machine {}; use this machine's "
                              "directory of a merged store (<store>/{}/...), or pass --any-machine to use them anyway",
                              path, r.machine.describe(), here.describe(), here.key));
}

}  // namespace convtune
