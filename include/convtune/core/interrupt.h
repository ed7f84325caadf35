#pragma once
// Ctrl-C / SIGTERM: the tuner finishes the candidate in flight, keeps its log
// whole and reports the best so far.
#include "convtune/core/error.h"

namespace convtune {

/// Installs SIGINT/SIGTERM handlers that only set a flag.
void install_interrupt_handlers();
bool interrupted();

/// Ctrl-C before a command has anything to keep (tune's and profile's
/// opening peak measurement): the message says what was left as it
/// was; the CLI prints it as any error (a JSON line with --json) and exits 130.
class Interrupted : public Error {
 public:
  explicit Interrupted(const std::string& msg) : Error(msg) {}
};

}  // namespace convtune
