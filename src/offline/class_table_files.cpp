// Where class tables are read from and written to: files written atomically,
// the user's cache directory, the tables shipped in the binary.
#include "convtune/offline/class_table.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "convtune/core/embedded_data.h"
#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/core/machine.h"

namespace convtune {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

// Objects one key per line, lists of objects one element per line: a
// re-profile then shows up in `git diff` as one changed line per microkernel.
void pretty(std::ostream& os, const json& v, int depth) {
  const std::string pad(2 * (depth + 1), ' '), end(2 * depth, ' ');
  if (v.is_object() && !v.empty()) {
    os << "{\n";
    size_t i = 0;
    for (auto it = v.begin(); it != v.end(); ++it, ++i) {
      os << pad << dump(it.key()) << ": ";
      pretty(os, it.value(), depth + 1);
      os << (i + 1 < v.size() ? ",\n" : "\n");
    }
    os << end << "}";
  } else if (v.is_array() && !v.empty() && v[0].is_object()) {
    os << "[\n";
    for (size_t i = 0; i < v.size(); ++i)
      os << pad << dump(v[i]) << (i + 1 < v.size() ? ",\n" : "\n");
    os << end << "]";
  } else {
    os << dump(v);
  }
}

std::string errno_text(int e) { return e ? std::strerror(e) : "write failed"; }

}  // namespace

void write_table(const ClassTable& t, const std::string& path) {
  std::ostringstream text;
  pretty(text, table_to_json(t), 0);
  text << "\n";
  // Written aside and renamed: an interrupted write never leaves a truncated table.
  write_file_atomic(path, text.str(), "class table", "choose another --out");
}

ClassTable read_table(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(fmt::format("class table '{}' does not exist; run 'convtune profile --arch ISA' "
                            "or pass an existing --table",
                            path));
  if (fs::is_directory(path, ec))
    throw Error(fmt::format("class table '{}' is a directory; pass a table file with --table", path));
  errno = 0;
  std::ifstream f(path, std::ios::binary);
  std::stringstream text;
  if (f) text << f.rdbuf();
  if (!f) throw Error(fmt::format("cannot read class table '{}': {}", path, errno_text(errno)));
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 1: ...; last read: ..."
    std::string msg = e.what();
    size_t p = msg.find("] ");
    if (p != std::string::npos) msg = msg.substr(p + 2);
    if (msg.rfind("parse error at ", 0) == 0) msg = msg.substr(15);
    msg = msg.substr(0, msg.find(';'));
    throw Error(fmt::format("class table '{}' is corrupt or truncated ({}); re-run 'convtune "
                            "profile' or delete it",
                            path, msg));
  } catch (const json::exception&) {  // e.g. 406: a number beyond double's range
    throw Error(fmt::format("class table '{}' is corrupt (a number is out of range); re-run 'convtune "
                            "profile' or delete it",
                            path));
  }
  return table_from_json(j, path);
}

std::string default_table_path(const std::string& isa) { return cache_dir() + "/tables/" + isa + ".json"; }

ClassTable load_table(const std::string& isa, const std::optional<std::string>& path) {
  ClassTable t;
  std::error_code ec;
  std::string user = default_table_path(isa);
  if (path) {
    t = read_table(*path);
  } else if (fs::exists(user, ec)) {
    t = read_table(user);
  } else {
    const std::string rel = "configs/tables/" + isa + ".json";
    const char* text = embedded_file(rel);
    json j = text ? json::parse(text, nullptr, false) : json();
    // The shipped table starts as a placeholder until a real profile is committed.
    if (!j.is_object() || (j.contains("placeholder") && j["placeholder"] == true))
      throw Error(
          fmt::format("no class table for ISA '{}': run 'convtune profile --arch {}'", isa, isa));
    t = table_from_json(j, "built-in " + rel);
  }
  // Microkernels of another ISA would not even compile for this one.
  if (!isa.empty() && t.isa != isa)
    throw Error(fmt::format("class table {} was profiled for ISA '{}', not '{}'; pass --arch {} "
                            "or a table profiled for {}",
                            t.origin, t.isa, isa, t.isa, isa));
  return t;
}

std::string fingerprint_warning(const ClassTable& t) {
  MachineInfo here = detect_machine();
  if (t.machine.fingerprint() == here.fingerprint()) return "";
  std::string where = t.machine.cpu_model == here.cpu_model
                          ? fmt::format("was profiled on '{}' with other ISA flags ({}), this CPU "
                                        "has ({})",
                                        t.machine.cpu_model, fmt::join(t.machine.isa_flags, ","),
                                        fmt::join(here.isa_flags, ","))
                          : fmt::format("was profiled on '{}', this CPU is '{}'",
                                        t.machine.cpu_model, here.cpu_model);
  return fmt::format(
      "warning: class table {} {}; run 'convtune profile --arch {}' for tables that fit this "
      "machine",
      t.origin, where, t.isa);
}

}  // namespace convtune
