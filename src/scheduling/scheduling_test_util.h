// Helpers shared by the scheduling tests: requests with given rows/shape/parameters
// whose callbacks record their outcome.
#ifndef INFERA_SCHEDULING_SCHEDULING_TEST_UTIL_H_
#define INFERA_SCHEDULING_SCHEDULING_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduling/scheduler.h"

namespace infera::testing {

// Collects the outcome of each request by id, in completion order.
class Outcomes {
 public:
  InferCallback Callback(const std::string& id) {
    return [this, id](absl::StatusOr<InferResponse> result, ResponseDelivery) {
      absl::MutexLock lock(&mu_);
      order_.push_back(id);
      statuses_.push_back(result.status());
    };
  }
  std::vector<std::string> order() const {
    absl::MutexLock lock(&mu_);
    return order_;
  }
  absl::Status status_of(const std::string& id) const {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < order_.size(); ++i) {
      if (order_[i] == id) return statuses_[i];
    }
    return absl::UnknownError("not completed");
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return order_.size();
  }
  // Waits until `n` outcomes arrived (at most `timeout`); false when they did not.
  bool AwaitSize(size_t n, absl::Duration timeout = absl::Seconds(30)) const {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return order_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> statuses_ ABSL_GUARDED_BY(mu_);
};

// A request of `rows` rows whose single input "x" has shape [rows, width].
inline std::unique_ptr<ScheduledRequest> MakeRequest(const std::string& id, int64_t rows,
                                                     InferCallback callback, int64_t width = 2,
                                                     Parameters parameters = {}) {
  auto r = std::make_unique<ScheduledRequest>();
  r->request.id = id;
  r->request.model_name = "m";
  r->request.parameters = std::move(parameters);
  r->request.inputs.push_back(Tensor{"x", DataType::kInt32, {rows, width}, {}});
  r->batch_size = rows;
  r->callback = std::move(callback);
  return r;
}

}  // namespace infera::testing

#endif  // INFERA_SCHEDULING_SCHEDULING_TEST_UTIL_H_
