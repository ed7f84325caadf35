#pragma once
// Ctrl-C / SIGTERM: the tuner finishes the candidate in flight, keeps its log
// whole and reports the best so far.
namespace convtune {

/// Installs SIGINT/SIGTERM handlers that only set a flag.
void install_interrupt_handlers();
bool interrupted();

}  // namespace convtune
