// `convtune merge` (merge.h): read every input log, group by (machine, ISA,
// threads, shape), keep one record per candidate, write each log whole.
#include "convtune/library/merge.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/core/file_lock.h"
#include "convtune/core/files.h"
#include "convtune/core/json_lines.h"
#include "convtune/core/machine.h"
#include "convtune/execution/workdir.h"
#include "convtune/tune/records.h"

namespace fs = std::filesystem;

namespace convtune {

namespace {

constexpr int kStoreFormatVersion = 1;
const char* const kStoreFormat = "convtune-store";
const char* const kUnknownMachine = "unknown";
const JsonLinesName kInputName{"log", "fix it or leave it out of the merge"};

struct Entry {
  Record rec;
  std::string line;  // the record's JSON as written (compact), kept as is
};

// A name that becomes one directory of the store: no '/', no '..'.
bool safe_component(const std::string& s) {
  return !s.empty() && s.size() <= 200 && s != "." && s != ".." &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") ==
             std::string::npos;
}

// Whether `a` goes before `b` by the first rules of both orders below: a
// correct record before a failure, then the faster of two correct ones;
// nullopt where these do not decide.
std::optional<bool> correct_then_faster(const Entry& a, const Entry& b) {
  const bool oa = a.rec.status == Status::ok, ob = b.rec.status == Status::ok;
  if (oa != ob) return oa;
  if (oa && relative_speed(a.rec) != relative_speed(b.rec)) return faster(a.rec, b.rec);
  return std::nullopt;
}

// The record to keep of two of the same candidate: a correct one over a
// failure (the same code on the same machine failing once is a transient:
// a timeout under load, a kill), then the faster at its own session's clock
// (records.h faster; noise only slows down);
// ties by the earlier measurement, then the text, so that the choice never
// depends on the order of the inputs.
bool better(const Entry& a, const Entry& b) {
  if (const auto o = correct_then_faster(a, b)) return *o;
  if (a.rec.timestamp != b.rec.timestamp) return a.rec.timestamp < b.rec.timestamp;
  return a.line < b.line;
}

// Order in a store log: correct records fastest first, then failures.
bool before(const Entry& a, const Entry& b) {
  if (const auto o = correct_then_faster(a, b)) return *o;
  if (a.rec.config != b.rec.config) return a.rec.config < b.rec.config;
  return a.line < b.line;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The log files of one input: the file itself, or every log.jsonl below a directory.
std::vector<std::string> logs_of(const std::string& input) {
  const std::string fix = "give directories that tune wrote logs into (--out), merged stores, or log files";
  std::error_code ec;
  const fs::file_status st = fs::status(input, ec);
  if (!fs::exists(st)) throw Error(fmt::format("'{}' does not exist; {}", input, fix));
  if (fs::is_regular_file(st)) return {input};
  if (!fs::is_directory(st)) throw Error(fmt::format("'{}' is neither a directory nor a log file; {}", input, fix));
  std::vector<std::string> v;
  for (auto it = fs::recursive_directory_iterator(input, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it)
    if (it->path().filename() == "log.jsonl" && it->is_regular_file()) v.push_back(it->path().string());
  if (v.empty()) throw Error(fmt::format("'{}' holds no tune log (log.jsonl); {}", input, fix));
  std::sort(v.begin(), v.end());
  return v;
}

// The owner file of a store being created: written before a new
// store's first file, removed after its store.json. Found without a
// store.json by a later merge (which holds the store's lock, so its writer
// is gone), it marks a partial store that merge made: cleaned and made again.
const char* const kCreatingFile = ".convtune-store-creating";

// Checks --out, under the store's lock: empty (but for that lock), a partial
// store a killed merge left (cleaned, with a note), or a store. True when it
// is a store.
bool check_store(const std::string& out, std::vector<std::string>* notes) {
  const std::string fix = "give a new directory or an existing store";
  std::error_code ec;
  const std::string meta = out + "/store.json";
  if (!fs::exists(meta, ec)) {
    bool creating = false, other = false;
    for (const auto& e : fs::directory_iterator(out)) {
      const std::string name = e.path().filename().string();
      if (name == kCreatingFile)
        creating = true;
      else if (name != "store.json.lock" && !is_atomic_temp_name(name))
        other = true;
    }
    if (creating) {
      std::ifstream f(out + "/" + kCreatingFile);
      std::string owner;
      std::getline(f, owner);
      for (const auto& e : fs::directory_iterator(out))
        if (e.path().filename() != "store.json.lock") fs::remove_all(e.path());
      notes->push_back(fmt::format("--out '{}' was a store a killed merge (pid {}) had begun; made again from the "
                                   "inputs",
                                   out, owner.substr(0, owner.find(' '))));
      return false;
    }
    if (!other) return false;
    throw Error(fmt::format("--out '{}' is neither empty nor a convtune store (it has no store.json); {}", out, fix));
  }
  const std::string text = read_text(meta);
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw Error(fmt::format("--out '{}': store.json is corrupt ({}); the logs are intact: rebuild the store from them "
                            "with 'convtune merge {} --out NEW' and use NEW",
                            out, text.empty() ? "empty" : "not JSON, cut short?", out));
  if (!j.is_object() || j.value("format", "") != kStoreFormat)
    throw Error(fmt::format("--out '{}': store.json is not a convtune store's; {}", out, fix));
  if (j.value("format_version", 0) != kStoreFormatVersion)
    throw Error(fmt::format("--out '{}': store format_version {} is not {} (written by another convtune version); {}",
                            out, j.value("format_version", 0), kStoreFormatVersion, fix));
  fs::remove(out + "/" + kCreatingFile, ec);  // killed after its store.json: the store is whole
  return true;
}

using GroupKey = std::tuple<std::string, std::string, int, std::string>;  // machine key, isa, threads, shape

}  // namespace


// One log of the store, as store.json and `merge --json` list it.
static nlohmann::json store_log_json(const StoreLog& s) {
  return {{"dir", s.dir},
          {"machine", s.machine.known() ? nlohmann::json(s.machine.key) : nlohmann::json()},
          {"isa", s.isa},
          {"threads", s.threads},
          {"layer", s.layer},
          {"shape", s.shape},
          {"records", s.records},
          {"ok", s.ok},
          {"best_gflops", s.best_gflops},
          {"best_config", s.best_config}};
}

MergeResult merge_logs(const MergeOptions& opt) {
  MergeResult res;
  res.out = opt.out;
  res.here = machine_id(detect_machine());
  if (opt.inputs.empty())
    throw Error("nothing to merge; give the directories of tune runs or stores: convtune merge DIR... --out STORE");
  if (opt.out.empty()) throw Error("give the store to merge into: --out DIR");
  std::vector<std::string> files;
  for (const auto& in : opt.inputs) {
    auto v = logs_of(in);  // every input checked before anything is written
    files.insert(files.end(), v.begin(), v.end());
  }
  std::error_code ec;
  if (fs::exists(opt.out, ec) && !fs::is_directory(opt.out, ec))
    throw Error(fmt::format("--out '{}' is not a directory; give a new directory or an existing store", opt.out));
  // A failed merge leaves no new directory behind (the lock is gone first: declared later).
  struct RemoveIfEmpty {
    std::string dir;
    ~RemoveIfEmpty() {
      std::error_code e;
      if (!dir.empty() && fs::is_empty(dir, e)) fs::remove(dir, e);
    }
  } cleanup{fs::exists(opt.out, ec) ? "" : opt.out};
  fs::create_directories(opt.out);
  // One merge per store at a time, and the lock first: a second merge while
  // the first creates the store is told whose it is.
  FileLock store_lock(opt.out + "/store.json", "store", "--out");
  const bool existing = check_store(opt.out, &res.notes);
  // What killed merges left (temporary logs, lock files nobody holds).
  remove_stale_files(opt.out, {store_lock.lock_path()});
  if (existing) {
    auto v = logs_of(opt.out);
    files.insert(files.end(), v.begin(), v.end());
  }

  // Read every log once (an input may hold the store, or be given twice).
  std::set<std::string> seen;
  std::map<GroupKey, std::map<std::pair<std::string, std::string>, Entry>> groups;  // -> (config, table fp) -> kept
  std::map<GroupKey, std::set<std::string>> layer_names;
  for (const auto& path : files) {
    if (!seen.insert(fs::weakly_canonical(path).string()).second) continue;
    ++res.logs_read;
    JsonLinesTail tail = read_json_lines(path, kInputName, "fix or remove that line", [&](const nlohmann::json& j,
                                                                                          size_t) {
      Entry e{Record::from_json(j), j.dump()};
      const Record& r = e.rec;
      if (!safe_component(r.layer))
        throw Error(fmt::format("layer '{}' cannot name a directory of the store (letters, digits, . _ + - only)",
                                r.layer));
      if (!safe_component(r.isa))
        throw Error(fmt::format("isa '{}' cannot name a directory of the store (letters, digits, . _ + - only)",
                                r.isa));
      ++res.records_read;
      GroupKey g{r.machine.key, r.isa, r.threads, r.shape};
      layer_names[g].insert(r.layer);
      auto& kept = groups[g];
      auto id = std::make_pair(r.config, r.table_fingerprint);
      auto it = kept.find(id);
      if (it == kept.end()) {
        kept.emplace(id, std::move(e));
      } else {
        ++res.duplicates;
        if (better(e, it->second)) it->second = std::move(e);
      }
    });
    if (tail.torn_bytes)
      res.notes.push_back(fmt::format("log '{}' ends in a torn line ({} bytes: a killed tune, or one still running); "
                                      "left out of the merge",
                                      path, tail.torn_bytes));
  }

  // One log per group, named by its layer; two shapes under one name cannot share a log.
  std::map<std::string, std::vector<Entry>> store;  // dir -> records in order
  std::map<std::string, std::string> shape_of_dir;
  for (auto& [g, kept] : groups) {
    const auto& [key, isa, threads, shape] = g;
    const std::set<std::string>& names = layer_names[g];
    const std::string layer = *names.begin();
    if (names.size() > 1)
      res.notes.push_back(fmt::format("records of shape {} come under {} layer names ({}); kept together under '{}'",
                                      shape, names.size(), fmt::join(names, ", "), layer));
    const std::string dir =
        fmt::format("{}/{}-t{}/{}", key.empty() ? kUnknownMachine : key, isa, threads, layer);
    auto [at, fresh] = shape_of_dir.emplace(dir, shape);
    if (!fresh)
      throw Error(fmt::format("layer '{}' comes in two shapes ({} and {}) for machine {}, {}, {} threads; merge them "
                              "into separate stores",
                              layer, at->second, shape, key.empty() ? kUnknownMachine : key, isa, threads));
    std::vector<Entry> v;
    for (auto& [id, e] : kept) v.push_back(std::move(e));
    std::sort(v.begin(), v.end(), before);
    StoreLog s;
    s.dir = dir;
    s.machine = v.front().rec.machine;
    s.isa = isa;
    s.layer = layer;
    s.shape = shape;
    s.threads = threads;
    s.records = v.size();
    for (const auto& e : v) s.ok += e.rec.status == Status::ok;
    if (v.front().rec.status == Status::ok) {
      s.best_gflops = v.front().rec.gflops;
      s.best_config = v.front().rec.config;
    }
    res.records += v.size();
    res.logs.push_back(s);
    store.emplace(dir, std::move(v));
  }
  std::sort(res.logs.begin(), res.logs.end(), [](const StoreLog& a, const StoreLog& b) { return a.dir < b.dir; });

  // Write: the logs that change, each whole, none while a tune holds it.
  std::vector<std::pair<std::string, std::string>> to_write;  // path, text
  for (auto& s : res.logs) {
    std::string text;
    for (const auto& e : store[s.dir]) text += e.line + "\n";
    const std::string path = opt.out + "/" + s.dir + "/log.jsonl";
    if (fs::exists(path, ec) && read_text(path) == text) continue;
    s.written = true;
    to_write.emplace_back(path, std::move(text));
  }
  const std::string creating = opt.out + "/" + kCreatingFile;
  if (!existing)  // before the store's first file: a kill from here on leaves a store the next merge makes again
    write_file_atomic(creating, workdir_owner_text() + "\n", "the store's owner file",
                      "free some space or choose another --out; the inputs are unchanged");
  std::vector<std::unique_ptr<FileLock>> locks;
  for (const auto& [path, text] : to_write) {
    fs::create_directories(fs::path(path).parent_path());
    locks.push_back(std::make_unique<FileLock>(path, "log", "--out"));
  }
  const std::string fix = "free some space or choose another --out; the inputs are unchanged";
  for (const auto& [path, text] : to_write) write_file_atomic(path, text, "the merged log", fix);

  nlohmann::json meta{{"format", kStoreFormat}, {"format_version", kStoreFormatVersion}};
  nlohmann::json logs = nlohmann::json::array(), machines = nlohmann::json::object();
  for (const auto& s : res.logs) {
    logs.push_back(store_log_json(s));
    if (s.machine.known()) machines[s.machine.key] = s.machine.to_json();
  }
  meta["machines"] = machines;
  meta["logs"] = logs;
  const std::string meta_path = opt.out + "/store.json", meta_text = meta.dump(2) + "\n";
  if (!fs::exists(meta_path, ec) || read_text(meta_path) != meta_text)
    write_file_atomic(meta_path, meta_text, "the store's index", fix);
  if (!existing) fs::remove(creating, ec);  // the store is whole
  return res;
}

std::string merge_summary(const MergeResult& r) {
  auto n = [](size_t count, const char* what) { return fmt::format("{} {}{}", count, what, count == 1 ? "" : "s"); };
  std::string o = fmt::format("merged {} ({}, {} dropped) into '{}': {} in {}\n", n(r.logs_read, "log"),
                              n(r.records_read, "record"), n(r.duplicates, "duplicate"), r.out, n(r.records, "record"),
                              n(r.logs.size(), "log"));
  std::string machine = "-";
  for (const auto& s : r.logs) {
    const std::string key = s.machine.known() ? s.machine.key : kUnknownMachine;
    if (key != machine) {
      machine = key;
      o += fmt::format("{}{}:\n", s.machine.known() ? "machine " + s.machine.describe() : "unknown machine (records "
                                                                                         "written before machines "
                                                                                         "were recorded)",
                       key == r.here.key ? ", this machine" : "");
    }
    o += fmt::format("  {:<40} {:>5} records, {:>5} ok, {}{}\n", s.dir, s.records, s.ok,
                     s.best_gflops > 0 ? fmt::format("best {:.1f} GFLOP/s", s.best_gflops) : "no correct record",
                     s.written ? "" : "  (unchanged)");
  }
  bool mine = std::any_of(r.logs.begin(), r.logs.end(), [&](const StoreLog& s) { return s.machine.key == r.here.key; });
  if (mine)
    o += fmt::format("this machine's records: --out {}/{}/<isa>-t<threads> for tune --resume and bench with --network, "
                     ".../<layer> with --layer\n",
                     r.out, r.here.key);
  return o;
}

std::string merge_json(const MergeResult& r) {
  nlohmann::json logs = nlohmann::json::array();
  for (const auto& s : r.logs) {
    nlohmann::json j = store_log_json(s);
    j["written"] = s.written;
    logs.push_back(j);
  }
  nlohmann::json j{{"out", r.out},       {"logs_read", r.logs_read}, {"records_read", r.records_read},
                   {"duplicates", r.duplicates}, {"records", r.records},    {"logs", logs},
                   {"this_machine", r.here.key}, {"notes", r.notes}};
  return j.dump() + "\n";
}

}  // namespace convtune
