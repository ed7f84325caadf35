#pragma once
// Wall-clock dates for records, locks and reports (the measuring clock is
// execution/timer.h's, PAPI's).
#include <string>

namespace convtune {

/// The current time as ISO 8601 UTC ("2026-11-21T05:01:45Z").
std::string utc_timestamp();

}  // namespace convtune
