#pragma once
// An append-only JSON Lines file (the tuning log, the profile journal): one
// object per line, each appended with one write() as soon as it is known, so
// a kill loses at most the line in flight and leaves whole lines or a torn
// last one, which the reader reports and drop_torn_tail cuts off.
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace convtune {

/// How a file is named in messages: "log", "journal"; `fix` ends a message
/// about the file as a whole ("choose another --log").
struct JsonLinesName {
  std::string what;
  std::string fix;
};

/// Prints `object` as one line on stdout and flushes it: a child process's
/// protocol with its parent (internal-onednn, internal-duel), which reads
/// the lines as they come and blames a crash on the last one it saw.
void print_json_line(const nlohmann::json& object);

/// Appends `object` as one line with one write(); a short write is undone.
/// Throws Error "cannot append to <what> '<path>': <errno text>; [free some
/// space or ]<fix>".
void append_json_line(const std::string& path, const nlohmann::json& object, const JsonLinesName& name);

/// Where the complete lines end, and the bytes after them (a torn last line).
struct JsonLinesTail {
  uint64_t complete_bytes = 0;  // up to and including the last '\n'
  uint64_t torn_bytes = 0;
};

/// Reads a file line by line (no file, or one that is not a regular file such
/// as /dev/null, reads as empty) and hands each complete non-blank line,
/// parsed, to each(object, line number). A line that is not JSON, or that
/// each() throws Error for, throws Error "<what> '<path>' line N: <problem>;
/// <line_fix>".
JsonLinesTail read_json_lines(const std::string& path, const JsonLinesName& name, const std::string& line_fix,
                              const std::function<void(const nlohmann::json&, size_t)>& each);

/// Cuts a torn tail off so that the next line starts a line; returns the bytes
/// dropped (0: nothing to do).
uint64_t drop_torn_tail(const std::string& path, const JsonLinesName& name, const JsonLinesTail& tail);

/// The one-line note to print after drop_torn_tail dropped `bytes`.
std::string torn_tail_note(const std::string& path, const JsonLinesName& name, uint64_t bytes);

}  // namespace convtune
