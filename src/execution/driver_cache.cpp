// The driver-object cache (driver_cache.h).
#include "convtune/execution/driver_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/files.h"

namespace convtune {

namespace fs = std::filesystem;

namespace {

std::string entry(const std::string& key) { return cache_dir() + "/driver/" + key; }

}  // namespace

std::string driver_key(const std::vector<std::string>& parts) {
  uint64_t h = 14695981039346656037ull;
  for (const std::string& p : parts) {
    for (unsigned char c : p) h = (h ^ c) * 1099511628211ull;
    h *= 1099511628211ull;  // the NUL between parts: ("ab","c") differs from ("a","bc")
  }
  return fmt::format("{:016x}", h);
}

std::string compiled_key(const Compiler& cc, const std::vector<std::string>& inputs) {
  std::vector<std::string> parts = cc.command;
  parts.push_back(cc.info().version);
  parts.insert(parts.end(), cc.flags.begin(), cc.flags.end());
  parts.insert(parts.end(), inputs.begin(), inputs.end());
  return driver_key(parts);
}

bool fetch_compiled(const std::string& key, const std::vector<std::string>& files, const std::string& dir) {
  std::error_code ec;
  for (const std::string& f : files) {
    fs::copy_file(entry(key) + "/" + f, dir + "/" + f, fs::copy_options::overwrite_existing, ec);
    if (ec) return false;
  }
  fs::last_write_time(entry(key), fs::file_time_type::clock::now(), ec);  // used now: prune_compiled keeps it
  return true;
}

void prune_compiled(const std::string& file, size_t keep) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> holders;
  for (fs::directory_iterator it(cache_dir() + "/driver", ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e;
    if (!fs::exists(it->path() / file, e)) continue;
    const fs::file_time_type t = fs::last_write_time(it->path(), e);
    if (!e) holders.emplace_back(t, it->path());
  }
  if (holders.size() <= keep) return;
  std::sort(holders.begin(), holders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = keep; i < holders.size(); ++i) fs::remove_all(holders[i].second, ec);
}

void store_compiled(const std::string& key, const std::vector<std::string>& files, const std::string& dir) {
  std::error_code ec;
  const std::string final_dir = entry(key);
  if (fs::exists(final_dir, ec)) return;
  const std::string tmp = fmt::format("{}.tmp{}", final_dir, getpid());
  fs::create_directories(tmp, ec);
  bool ok = !ec;
  for (size_t i = 0; ok && i < files.size(); ++i) {
    fs::copy_file(dir + "/" + files[i], tmp + "/" + files[i], fs::copy_options::overwrite_existing, ec);
    ok = !ec;
  }
  if (ok) fs::rename(tmp, final_dir, ec);  // fails when another run stored it first: theirs is the same
  if (!ok || ec) fs::remove_all(tmp, ec);
}

// Precompiled headers kept in the cache (150 MB): two ISAs with and without
// -fopenmp, and room for a wrapper's that does not push those out (the tests
// make several); beyond it, the least recently used is made again (about a second).
constexpr size_t kCachedHeaders = 6;

std::vector<std::string> precompiled_header_flags(const Compiler& cc, const std::string& header,
                                                  const std::string& dir,
                                                  const std::vector<std::string>& job_flags) {
  const std::string h = dir + "/ct_intrin.h", text = "#include <" + header + ">\n";
  write_work_file(h, text);
  Compiler pch = cc;
  pch.output_flags = {"-fPIC", "-x", "c-header"};  // -x before the source: no link_flags follow
  pch.link_flags.clear();
  // Cached like the driver's objects (driver_cache.h): making it is about a
  // second of GCC, paid by every tune, bench and profile, and by most tests.
  std::vector<std::string> inputs = pch.output_flags;
  inputs.insert(inputs.end(), job_flags.begin(), job_flags.end());
  inputs.push_back(text);
  std::string key;
  try {
    key = compiled_key(pch, inputs);
  } catch (const Error&) {
    return {};  // no compiler: every compile will say so
  }
  const bool cached = fetch_compiled(key, {"ct_intrin.h.gch"}, dir);
  if (!cached && !compile_one(pch, {h, h + ".gch", job_flags}).ok) return {};
  std::vector<std::string> use{"-fPIC", "-include", h};
  // A compiler that wrote a header it cannot read back (a wrapper, another
  // compiler's format) would fail every compile: try one first.
  write_work_file(dir + "/ct_intrin_check.c", "int ct_intrin_check;\n");
  Compiler check = cc;
  check.flags.insert(check.flags.end(), use.begin(), use.end());
  check.output_flags = {"-c"};
  check.link_flags.clear();
  if (!compile_one(check, {dir + "/ct_intrin_check.c", dir + "/ct_intrin_check.o", job_flags}).ok) return {};
  if (!cached) {
    store_compiled(key, {"ct_intrin.h.gch"}, dir);  // only one that compiled a file
    prune_compiled("ct_intrin.h.gch", kCachedHeaders);
  }
  return use;
}

}  // namespace convtune
