#include "backend/warmup_scope.h"

namespace infera {
namespace {

thread_local bool warming_up = false;

}  // namespace

WarmupScope::WarmupScope() : outer_active_(warming_up) { warming_up = true; }

WarmupScope::~WarmupScope() { warming_up = outer_active_; }

bool WarmupScope::Active() { return warming_up; }

}  // namespace infera
