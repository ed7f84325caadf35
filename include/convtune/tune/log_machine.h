#pragma once
// Records measured on one machine say little about another: tune --resume,
// bench (and what reads logs like bench) refuse a log from another machine
// unless told (--any-machine).
#include <string>
#include <vector>

#include "convtune/core/machine_id.h"
#include "convtune/tune/records.h"

namespace convtune {

/// Throws Error naming both machines when a record of the log at `path` was
/// measured on a machine other than `here`. Records of an unknown machine
/// (written before records named one) pass.
void check_log_machine(const std::string& path, const std::vector<Record>& records, const MachineId& here);

}  // namespace convtune
