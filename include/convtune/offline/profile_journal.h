#pragma once
// The journal of a running `convtune profile` (<table>.journal.jsonl, JSON
// Lines, json_lines.h): a header with what the run measures and against which
// peak, then one line per measured microkernel, appended as soon as it is
// measured. A killed or interrupted profile keeps it; `profile --resume` reads
// it back and measures only the rest; the finished table replaces it.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convtune/execution/runner.h"
#include "convtune/ukernel/ukernel.h"

namespace convtune {

constexpr int kJournalFormatVersion = 1;

/// What a profile's measurements depend on: a resume must match all of it.
struct ProfileJournalHeader {
  std::string isa;
  bool quick = false;
  double threshold = 0;
  int per_unit = 0;
  double min_repeat_ms = 0;
  int repeat = 0;
  bool emulated = false;
  std::string machine;   // MachineInfo::fingerprint()
  std::string compiler;  // the compiler's version line
  std::string tool_version;
  double peak_start_gflops = 0;
  std::string created;   // when the profile started (ISO 8601 UTC)

  nlohmann::json to_json() const;
  static ProfileJournalHeader from_json(const nlohmann::json& j);
};

/// The pass a measurement belongs to: the first, or the re-measurement of
/// those below the threshold.
enum class ProfilePass { first, again };

struct ProfileJournalEntry {
  std::string name;  // ukernel_name
  UkSizes sizes;
  ProfilePass pass = ProfilePass::first;
  UkMeasured measured;
  TapFence fence = TapFence::none;  // the form measured: plain or fenced ("fence" key, absent for plain)

  nlohmann::json to_json() const;
  static ProfileJournalEntry from_json(const nlohmann::json& j);
};

/// Where the journal of the table `table_path` lives.
std::string journal_path(const std::string& table_path);

/// Where a journaled profile keeps its compiled units (<journal>.units/),
/// each under a hash of its source: a resumed run measures them without
/// compiling them again (compiling is most of a profile's time).
std::string units_dir(const std::string& journal);
/// Removes the journal and its units, once the table holds what they did.
void remove_journal(const std::string& journal);

/// A journal as read back (torn tail not yet dropped).
struct ProfileJournal {
  bool exists = false;  // a regular, non-empty file
  bool has_header = false;
  ProfileJournalHeader header;
  std::vector<ProfileJournalEntry> entries;
  size_t first_line_of_entries = 0;
  uint64_t complete_bytes = 0, torn_bytes = 0;
};

/// Reads the journal; `names` are the microkernels this profile measures.
/// Every complete line must be valid (the first a header, then entries of
/// known microkernels, each form and pass at most once): otherwise throws Error
/// "journal '<path>' line N: <problem>; fix or remove that line, or remove the
/// journal to start over". `isa` (when given) is this run's --arch: a journal
/// of another ISA is refused for that, before its entries are looked at
/// (its microkernels are not this run's: naming one would mislead).
ProfileJournal read_journal(const std::string& path, const std::map<std::string, UkSizes>& names,
                            const std::string& isa = "");

/// Throws Error "journal '<path>' was started with <what>, not <now>; ..."
/// when the journal's header does not match this run's.
void check_resumable(const std::string& path, const ProfileJournalHeader& journal, const ProfileJournalHeader& now);

void append_journal(const std::string& path, const nlohmann::json& line);

/// Drops the torn tail, printing a note when there was one.
void repair_journal(const std::string& path, const ProfileJournal& j);

}  // namespace convtune
