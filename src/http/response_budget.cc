#include "http/response_budget.h"

namespace infera {

bool ResponseBudget::TryReserve(int64_t bytes) {
  int64_t current = buffered_.load(std::memory_order_relaxed);
  while (true) {
    if (bytes > kAlwaysAdmittedBytes && current > 0 && current + bytes > max_bytes_) return false;
    if (buffered_.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed)) return true;
  }
}

}  // namespace infera
