// Compiled into SimGrid-using programs of sanitizer builds only (CMake TRIDENT_SANITIZE):
// SimGrid's default "raw" contexts switch actor stacks behind AddressSanitizer's back ("ASan
// is ignoring requested __asan_handle_no_return ... False positive error reports may
// follow"), and the Debian SimGrid is not built with ASan's fiber annotations. Thread
// contexts run each actor on a real thread stack, which ASan follows. The factory must be
// chosen before any Engine exists; its "configuration change" note is silenced.
#include <xbt/log.h>

#include <simgrid/s4u/Engine.hpp>

namespace {

const bool kThreadContexts = [] {
  xbt_log_control_set("xbt_cfg.thres:warning");
  simgrid::s4u::Engine::set_config("contexts/factory:thread");
  return true;
}();

}  // namespace
