#include "convtune/execution/timer.h"

#include <papi.h>

#include <chrono>
#include <ctime>

namespace convtune {

namespace {

bool papi_ready() {
  static bool ok = [] {
    if (PAPI_is_initialized() != PAPI_NOT_INITED) return true;
    return PAPI_library_init(PAPI_VER_CURRENT) == PAPI_VER_CURRENT;
  }();
  return ok;
}

}  // namespace

int64_t now_ns() {
  if (papi_ready()) return PAPI_get_real_nsec();
  // PAPI failed to initialise: fall back to the monotonic clock.
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

Counters::Counters() {
  if (!papi_ready()) {
    why_none_ = "PAPI failed to initialise";
    return;
  }
  if (PAPI_create_eventset(&eventset_) != PAPI_OK) {
    why_none_ = "PAPI cannot create an event set";
    eventset_ = -1;
    return;
  }
  const std::pair<int, const char*> wanted[] = {
      {PAPI_TOT_CYC, "PAPI_TOT_CYC"}, {PAPI_L1_DCM, "PAPI_L1_DCM"}, {PAPI_L2_DCM, "PAPI_L2_DCM"}};
  for (auto [code, name] : wanted) {
    int rc = PAPI_add_event(eventset_, code);
    if (rc == PAPI_OK)
      names_.push_back(name);
    else if (why_none_.empty())
      why_none_ = std::string(name) + ": " + PAPI_strerror(rc);
  }
  // Some kernels accept the events but refuse to start them.
  if (!names_.empty()) {
    int rc = PAPI_start(eventset_);
    long long tmp[8];
    if (rc == PAPI_OK) {
      PAPI_stop(eventset_, tmp);
    } else {
      why_none_ = std::string("PAPI_start: ") + PAPI_strerror(rc);
      names_.clear();
    }
  }
}

Counters::~Counters() {
  if (eventset_ >= 0) {
    if (running_) {
      long long tmp[8];
      PAPI_stop(eventset_, tmp);
    }
    PAPI_cleanup_eventset(eventset_);
    PAPI_destroy_eventset(&eventset_);
  }
}

std::string Counters::description() const {
  if (names_.empty()) return "none: " + (why_none_.empty() ? std::string("no counters") : why_none_);
  std::string s;
  for (const auto& n : names_) s += (s.empty() ? "" : ",") + n;
  return s;
}

void Counters::start() {
  if (names_.empty()) return;
  running_ = PAPI_start(eventset_) == PAPI_OK;
}

std::vector<long long> Counters::stop() {
  if (names_.empty() || !running_) return {};
  std::vector<long long> v(names_.size());
  running_ = false;
  if (PAPI_stop(eventset_, v.data()) != PAPI_OK) return {};
  return v;
}

}  // namespace convtune
