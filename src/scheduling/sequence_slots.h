// SequenceSlots: which sequence holds which slot of which instance, the requests each
// slot and the backlog hold, and the idle release (docs/sequence_batching.md).
//
// A sequence is bound to one slot (instance, index) from its START until its END request
// is taken into a batch or it has been idle for `max_idle`; its requests wait in the
// slot's FIFO, and a batch takes at most one request per slot, so they run in order. New
// sequences wait in a bounded backlog while every slot is taken. Time is passed in
// (injected clock): nothing here reads a clock or sleeps.
//
// Not thread-safe: owned by the SequenceBatcher and used under its mutex.
#ifndef INFERA_SCHEDULING_SEQUENCE_SLOTS_H_
#define INFERA_SCHEDULING_SEQUENCE_SLOTS_H_

#include <chrono>
#include <cstddef>
#include <deque>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "scheduling/scheduler.h"
#include "scheduling/sequence_request.h"

namespace infera {

class SequenceSlots {
 public:
  using Clock = std::chrono::steady_clock;

  // A request waiting in a slot or the backlog, with its sequence's flags.
  struct Pending {
    std::unique_ptr<ScheduledRequest> request;
    SequenceRequest sequence;
  };
  // A request taken into a batch, with the slot it runs in.
  struct Row {
    int slot = 0;
    Pending pending;
  };

  // `oldest_first`: NextBatch orders rows by the age of their sequence and takes at most
  // `max_rows` (the oldest strategy); otherwise by slot index (direct).
  SequenceSlots(std::string model_name, int instances, int slots_per_instance, size_t max_backlog_requests,
                std::chrono::microseconds max_idle, bool oldest_first = false, int64_t max_rows = 0);

  // Places `request` in its sequence's slot, or the backlog. On error `request` is left
  // with the caller: InvalidArgument (Triton's text) for a request of an unknown sequence
  // without START; ResourceExhausted when it would go to a full backlog. Returns the
  // instance whose worker has new work, or -1 (backlogged).
  absl::StatusOr<int> Admit(std::unique_ptr<ScheduledRequest>& request, const SequenceRequest& sequence,
                            Clock::time_point now);

  // Takes the next request of every slot of `instance` that has one (direct: in slot
  // order; oldest: oldest sequences first, at most max_rows). A slot whose END request is
  // taken is freed and given to the oldest backlog sequence. `compatible` decides whether
  // a request may join the first one taken (same shapes); others wait. At most
  // `row_limit` rows (oldest: a preferred batch size). `now` counts as the taken
  // sequences' last activity.
  template <typename Compatible>
  std::vector<Row> NextBatch(int instance, Clock::time_point now, Compatible compatible,
                             int row_limit = std::numeric_limits<int>::max());

  // Frees every slot whose sequence has nothing queued and no request since `max_idle`
  // before `now`; returns the instances that got a backlog sequence (new work).
  std::vector<int> ReleaseIdle(Clock::time_point now);
  // When the next slot becomes idle (nullopt: none can).
  std::optional<Clock::time_point> NextIdleDeadline() const;

  bool HasWork(int instance) const;
  // The rows NextBatch(instance) would take at most (shapes not compared) and the enqueue
  // time of the oldest of them; rows 0 when the instance has no work.
  struct Readiness {
    int rows = 0;
    Clock::time_point oldest_arrival{};
  };
  Readiness ReadyRows(int instance) const;
  size_t QueuedRequests() const { return queued_; }
  size_t ActiveSequences() const { return active_.size(); }
  size_t BacklogSequences() const { return backlog_.size(); }

  // Every queued request (slots and backlog), leaving everything empty.
  std::vector<std::unique_ptr<ScheduledRequest>> TakeAll();

 private:
  struct Slot {
    bool occupied = false;
    std::optional<SequenceId> sequence;  // unset once its END was admitted
    uint64_t age = 0;                    // admission order of the sequence's START
    std::deque<Pending> pending;
    Clock::time_point last_request{};
  };
  struct BacklogSequence {
    std::optional<SequenceId> sequence;  // unset once its END was admitted
    uint64_t age = 0;
    std::deque<Pending> pending;
  };

  Slot& SlotAt(int slot_number) { return slots_[slot_number]; }
  std::optional<int> FreeSlot() const;
  void Bind(int slot_number, uint64_t age, std::deque<Pending> pending, std::optional<SequenceId> id,
            Clock::time_point now);
  // Frees the slot; returns the instance that got a backlog sequence, or -1.
  int Release(int slot_number, Clock::time_point now);
  std::vector<int> ReadySlots(int instance) const;

  std::string model_name_;
  int instances_;
  int slots_per_instance_;
  size_t max_backlog_requests_;
  std::chrono::microseconds max_idle_;
  bool oldest_first_;
  int64_t max_rows_;
  std::vector<Slot> slots_;  // instance-major: slot_number = instance * S + index
  std::map<SequenceId, int> active_;  // id -> slot_number
  std::list<BacklogSequence> backlog_;
  std::map<SequenceId, std::list<BacklogSequence>::iterator> backlogged_;
  size_t backlog_requests_ = 0;
  size_t queued_ = 0;
  uint64_t next_age_ = 0;
};

template <typename Compatible>
std::vector<SequenceSlots::Row> SequenceSlots::NextBatch(int instance, Clock::time_point now,
                                                         Compatible compatible, int row_limit) {
  std::vector<Row> rows;
  const ScheduledRequest* first = nullptr;
  std::vector<int> ended;
  for (int slot_number : ReadySlots(instance)) {
    if (static_cast<int>(rows.size()) >= row_limit) break;
    Slot& slot = SlotAt(slot_number);
    Pending& next = slot.pending.front();
    if (first != nullptr && !compatible(*first, *next.request)) continue;
    if (first == nullptr) first = next.request.get();
    if (next.sequence.end) ended.push_back(slot_number);
    slot.last_request = now;
    rows.push_back(Row{slot_number - instance * slots_per_instance_, std::move(next)});
    slot.pending.pop_front();
    --queued_;
  }
  for (int slot_number : ended) {
    // Nothing can follow an END in its slot: its id was detached when the END was
    // admitted, so a later request of that id starts a new sequence elsewhere.
    if (SlotAt(slot_number).pending.empty()) Release(slot_number, now);
  }
  return rows;
}

}  // namespace infera

#endif  // INFERA_SCHEDULING_SEQUENCE_SLOTS_H_
