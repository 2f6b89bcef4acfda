#include "scheduling/sequence_slots.h"

#include <algorithm>
#include <utility>

#include "common/str_cat.h"

namespace infera {

SequenceSlots::SequenceSlots(std::string model_name, int instances, int slots_per_instance,
                             size_t max_backlog_requests, std::chrono::microseconds max_idle, bool oldest_first,
                             int64_t max_rows)
    : model_name_(std::move(model_name)),
      instances_(std::max(1, instances)),
      slots_per_instance_(std::max(1, slots_per_instance)),
      max_backlog_requests_(std::max<size_t>(1, max_backlog_requests)),
      max_idle_(max_idle),
      oldest_first_(oldest_first),
      max_rows_(max_rows > 0 ? max_rows : slots_per_instance_),
      slots_(static_cast<size_t>(instances_) * slots_per_instance_) {}

absl::StatusOr<int> SequenceSlots::Admit(std::unique_ptr<ScheduledRequest>& request, const SequenceRequest& sequence,
                                         Clock::time_point now) {
  auto active = active_.find(sequence.id);
  auto backlogged = backlogged_.find(sequence.id);
  if (!sequence.start && active == active_.end() && backlogged == backlogged_.end()) {
    return absl::InvalidArgumentError(StrCat("inference request for sequence ", SequenceIdToString(sequence.id),
                                             " to model '", model_name_,
                                             "' must specify the START flag on the first request of the sequence"));
  }
  if (active != active_.end()) {
    // START on an active id: the previous sequence never ended; this one continues in
    // the same slot and the START control tells the model to restart (as Triton).
    const int slot_number = active->second;
    Slot& slot = SlotAt(slot_number);
    slot.pending.push_back(Pending{std::move(request), sequence});
    slot.last_request = now;
    ++queued_;
    if (sequence.end) {
      slot.sequence.reset();
      active_.erase(active);
    }
    return slot_number / slots_per_instance_;
  }
  if (backlog_requests_ >= max_backlog_requests_) {
    return absl::ResourceExhaustedError(StrCat("sequence backlog of model '", model_name_, "' is full (",
                                               max_backlog_requests_,
                                               " requests wait for a sequence slot); retry later"));
  }
  if (backlogged != backlogged_.end()) {
    BacklogSequence& waiting = *backlogged->second;
    waiting.pending.push_back(Pending{std::move(request), sequence});
    ++backlog_requests_;
    ++queued_;
    if (sequence.end) {
      waiting.sequence.reset();
      backlogged_.erase(backlogged);
    }
    return -1;
  }
  // A new sequence.
  std::deque<Pending> pending;
  pending.push_back(Pending{std::move(request), sequence});
  ++queued_;
  const uint64_t age = next_age_++;
  std::optional<SequenceId> id;
  if (!sequence.end) id = sequence.id;
  if (std::optional<int> free = FreeSlot()) {
    Bind(*free, age, std::move(pending), std::move(id), now);
    return *free / slots_per_instance_;
  }
  backlog_.push_back(BacklogSequence{id, age, std::move(pending)});
  ++backlog_requests_;
  if (id) backlogged_[*id] = std::prev(backlog_.end());
  return -1;
}

std::optional<int> SequenceSlots::FreeSlot() const {
  // Lowest index first, then lowest instance: spreads sequences over the instances and
  // keeps each instance's batches compact (rows 0..n).
  for (int index = 0; index < slots_per_instance_; ++index) {
    for (int instance = 0; instance < instances_; ++instance) {
      const int slot_number = instance * slots_per_instance_ + index;
      if (!slots_[slot_number].occupied) return slot_number;
    }
  }
  return std::nullopt;
}

void SequenceSlots::Bind(int slot_number, uint64_t age, std::deque<Pending> pending, std::optional<SequenceId> id,
                         Clock::time_point now) {
  Slot& slot = SlotAt(slot_number);
  slot.occupied = true;
  slot.age = age;
  slot.pending = std::move(pending);
  slot.last_request = now;
  slot.sequence = id;
  if (id) active_[*id] = slot_number;
}

int SequenceSlots::Release(int slot_number, Clock::time_point now) {
  Slot& slot = SlotAt(slot_number);
  if (slot.sequence) active_.erase(*slot.sequence);
  slot = Slot{};
  if (backlog_.empty()) return -1;
  BacklogSequence next = std::move(backlog_.front());
  backlog_.pop_front();
  if (next.sequence) backlogged_.erase(*next.sequence);
  backlog_requests_ -= next.pending.size();
  Bind(slot_number, next.age, std::move(next.pending), std::move(next.sequence), now);
  return slot_number / slots_per_instance_;
}

std::vector<int> SequenceSlots::ReleaseIdle(Clock::time_point now) {
  std::vector<int> woken;
  for (int slot_number = 0; slot_number < static_cast<int>(slots_.size()); ++slot_number) {
    const Slot& slot = slots_[slot_number];
    if (!slot.occupied || !slot.pending.empty() || now - slot.last_request < max_idle_) continue;
    const int instance = Release(slot_number, now);
    if (instance >= 0) woken.push_back(instance);
  }
  return woken;
}

std::optional<SequenceSlots::Clock::time_point> SequenceSlots::NextIdleDeadline() const {
  std::optional<Clock::time_point> earliest;
  for (const Slot& slot : slots_) {
    if (!slot.occupied || !slot.pending.empty()) continue;
    const Clock::time_point deadline = slot.last_request + max_idle_;
    if (!earliest || deadline < *earliest) earliest = deadline;
  }
  return earliest;
}

std::vector<int> SequenceSlots::ReadySlots(int instance) const {
  std::vector<int> ready;
  for (int index = 0; index < slots_per_instance_; ++index) {
    const int slot_number = instance * slots_per_instance_ + index;
    if (!slots_[slot_number].pending.empty()) ready.push_back(slot_number);
  }
  if (oldest_first_) {
    std::stable_sort(ready.begin(), ready.end(),
                     [this](int a, int b) { return slots_[a].age < slots_[b].age; });
    if (static_cast<int64_t>(ready.size()) > max_rows_) ready.resize(max_rows_);
  }
  return ready;
}

SequenceSlots::Readiness SequenceSlots::ReadyRows(int instance) const {
  Readiness readiness;
  for (int slot_number : ReadySlots(instance)) {
    const Clock::time_point arrival = slots_[slot_number].pending.front().request->enqueue_time;
    if (readiness.rows == 0 || arrival < readiness.oldest_arrival) readiness.oldest_arrival = arrival;
    ++readiness.rows;
  }
  return readiness;
}

bool SequenceSlots::HasWork(int instance) const {
  for (int index = 0; index < slots_per_instance_; ++index) {
    if (!slots_[instance * slots_per_instance_ + index].pending.empty()) return true;
  }
  return false;
}

std::vector<std::unique_ptr<ScheduledRequest>> SequenceSlots::TakeAll() {
  std::vector<std::unique_ptr<ScheduledRequest>> all;
  for (Slot& slot : slots_) {
    for (Pending& p : slot.pending) all.push_back(std::move(p.request));
    slot = Slot{};
  }
  for (BacklogSequence& waiting : backlog_) {
    for (Pending& p : waiting.pending) all.push_back(std::move(p.request));
  }
  backlog_.clear();
  backlogged_.clear();
  active_.clear();
  backlog_requests_ = 0;
  queued_ = 0;
  return all;
}

}  // namespace infera
