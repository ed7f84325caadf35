// The driver-object cache (driver_cache.h).
#include "convtune/execution/driver_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>

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

}  // namespace convtune
