#include "convtune/core/json_lines.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/files.h"

namespace convtune {

void append_json_line(const std::string& path, const nlohmann::json& object, const JsonLinesName& name) {
  const std::string line = object.dump() + "\n";
  auto fail = [&](int err) {
    throw Error(fmt::format("cannot append to {} '{}': {}; {}{}", name.what, path, std::strerror(err),
                            err == ENOSPC || err == EDQUOT ? "free some space or " : "", name.fix));
  };
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail(errno);
  struct stat st {};
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const off_t start = regular ? st.st_size : 0;  // the writer holds the file's lock: nobody else appends
  // One write() of the whole line: a kill leaves whole lines or a torn last
  // one. write_all writes the rest only after a short write, to learn the
  // real errno (a full disk: ENOSPC).
  int err = write_all(fd, line.data(), line.size());
  if (err && regular) {
    int undone = ftruncate(fd, start);  // if this fails too, the next reader cuts the torn line off
    (void)undone;
  }
  if (close(fd) != 0 && !err) err = errno;
  if (err) fail(err);
}

JsonLinesTail read_json_lines(const std::string& path, const JsonLinesName& name, const std::string& line_fix,
                              const std::function<void(const nlohmann::json&, size_t)>& each) {
  JsonLinesTail tail;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return tail;  // none yet, or /dev/null and the like
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw Error(fmt::format("cannot read {} '{}': {}; check the file or {}", name.what, path, std::strerror(errno),
                            name.fix));
  const std::string data{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  size_t end = data.rfind('\n');
  tail.complete_bytes = end == std::string::npos ? 0 : end + 1;
  tail.torn_bytes = data.size() - tail.complete_bytes;
  size_t pos = 0, line_no = 0;
  while (pos < tail.complete_bytes) {
    size_t nl = data.find('\n', pos);
    std::string line = data.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::parse_error& e) {
        throw Error(fmt::format("not a JSON object (syntax error at byte {})", e.byte));
      } catch (const nlohmann::json::exception&) {  // e.g. 406: a number beyond double's range
        throw Error("not a JSON object (a number is out of range)");
      }
      each(j, line_no);
    } catch (const Error& e) {
      throw Error(fmt::format("{} '{}' line {}: {}; {}", name.what, path, line_no, e.what(), line_fix));
    }
  }
  return tail;
}

uint64_t drop_torn_tail(const std::string& path, const JsonLinesName& name, const JsonLinesTail& tail) {
  if (tail.torn_bytes == 0) return 0;
  if (truncate(path.c_str(), off_t(tail.complete_bytes)) != 0)
    throw Error(fmt::format("cannot repair the torn last line of {} '{}': {}; remove that line by hand", name.what,
                            path, std::strerror(errno)));
  return tail.torn_bytes;
}

std::string torn_tail_note(const std::string& path, const JsonLinesName& name, uint64_t bytes) {
  return fmt::format("{} '{}' ended in a torn line (a killed or failed write); dropped its {} bytes", name.what, path,
                     bytes);
}

void print_json_line(const nlohmann::json& object) {
  std::printf("%s\n", object.dump().c_str());
  std::fflush(stdout);
}

}  // namespace convtune
