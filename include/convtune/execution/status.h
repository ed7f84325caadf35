#pragma once
// How a run of generated code ended: the one status type of the
// runner's results, the tuning log's records, the finalists, the class
// table's microkernels and the profile journal's entries. Typed, as TVM's
// MeasureErrorNo, so that a misspelt status is a compile error rather than a
// comparison that is silently never true; text only at the JSON edge (logs,
// tables, journals, child-process lines, reports), where to_string and
// parse_status convert, spelling each value as the files always have.
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace convtune {

enum class Status {
  ok,             // verified, and timed when timing was asked for
  compile_error,  // the C compiler refused it (or a duel could not build it)
  wrong_result,   // ran, but its output differs from the reference
  crash,          // died, or reported nothing readable
  timeout,        // silent past --timeout
  load_error,     // did not start: the executable or the driver's work could not load
};

/// Every status, in enum order: the order in which messages list them.
const std::vector<Status>& all_statuses();

/// Its text in files and reports: "ok", "compile_error", "wrong_result",
/// "crash", "timeout", "load_error".
const char* to_string(Status s);

/// The texts of `v`, in its order, joined by ", ".
std::string status_list(const std::vector<Status>& v);

/// The status spelled `text`, or nullopt.
std::optional<Status> status_from_text(std::string_view text);

/// The status spelled `text` when it is one of `accepted`; otherwise throws
/// Error "status 'X' is not one of: ok, compile_error, ..." (status_list of
/// `accepted`).
Status parse_status(std::string_view text, const std::vector<Status>& accepted = all_statuses());

/// Its text (what GoogleTest prints of a failed comparison).
std::ostream& operator<<(std::ostream& os, Status s);

/// Not as JSON implicitly: nlohmann would write the enum's integer. Write
/// to_string(s) and read with parse_status.
void to_json(nlohmann::json& j, Status s) = delete;
void from_json(const nlohmann::json& j, Status& s) = delete;

}  // namespace convtune
