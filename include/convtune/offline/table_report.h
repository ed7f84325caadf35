#pragma once
#include <string>

#include "convtune/offline/class_table.h"

namespace convtune {

/// A human summary of a class table: where it is from, peak, counts, the
/// microkernels per family, the best microkernel, the BLIS-like
/// (2,1,12,1,1,1) figure, the largest classes.
std::string table_summary(const ClassTable& t);

}  // namespace convtune
