#include "convtune/execution/workdir.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "convtune/core/error.h"
#include "convtune/core/files.h"

namespace convtune {

const char* const kWorkDirOwnerFile = ".convtune-owner";

namespace {

std::string temp_base() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

// Field 22 of /proc/<pid>/stat: the start time, so a reused pid is not taken
// for the owner. "" when the process does not exist (or /proc is absent).
std::string start_time(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(f, text)) return "";
  size_t paren = text.rfind(')');  // the command name may hold blanks
  if (paren == std::string::npos) return "";
  std::istringstream ss(text.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && ss >> field; ++i) {
  }
  return field;
}

// This process's pid namespace ("pid:[4026531836]"): a pid means nothing in another one
// (a container sharing the temporary directory).
std::string pid_namespace() {
  char buf[64];
  ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : "-";
}

bool owner_alive(const std::string& owner_text) {
  std::istringstream ss(owner_text);
  long pid = 0;
  std::string started, ns;
  if (!(ss >> pid >> started >> ns) || pid <= 0) return true;  // unreadable: not ours to judge
  if (ns != pid_namespace()) return true;
  if (kill(pid_t(pid), 0) != 0 && errno == ESRCH) return false;
  const std::string now = start_time(pid);
  return now.empty() || now == started;  // without /proc, a live pid counts as the owner
}

}  // namespace

std::string workdir_owner_text() {
  const std::string started = start_time(getpid());
  return std::to_string(getpid()) + " " + (started.empty() ? "-" : started) + " " + pid_namespace();
}

int remove_stale_workdirs(const std::string& base, const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    struct stat st;
    if (lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
    std::ifstream f(it->path() / kWorkDirOwnerFile);
    std::string owner;
    if (!std::getline(f, owner) || owner_alive(owner)) continue;  // no owner file: still being made, or not ours
    std::error_code rm;
    std::filesystem::remove_all(it->path(), rm);
    if (!rm) ++removed;
  }
  return removed;
}

WorkDir::WorkDir(const std::string& purpose, const std::string& keep_dir) {
  if (!keep_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(keep_dir, ec);
    if (ec) throw Error("cannot create directory '" + keep_dir + "': " + ec.message());
    path_ = keep_dir;
    remove_ = false;
    return;
  }
  const std::string base = temp_base();
  remove_stale_workdirs(base);
  std::string tmpl = base + "/convtune-" + purpose + "-XXXXXX";
  if (!mkdtemp(tmpl.data()))
    throw Error("cannot create a temporary directory (" + std::string(std::strerror(errno)) +
                "); set TMPDIR to a writable directory");
  path_ = tmpl;
  try {
    write_work_file(path_ + "/" + kWorkDirOwnerFile, workdir_owner_text() + "\n");
  } catch (const Error&) {
    rmdir(path_.c_str());  // the destructor will not run
    throw;
  }
}

WorkDir::~WorkDir() {
  if (!remove_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace convtune
