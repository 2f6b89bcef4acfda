// SequenceBatchingOptions: how a stateful model's sequences are given slots and batched,
// derived once from its config's `sequence_batching` (docs/sequence_batching.md).
//
// Value type.
#ifndef INFERA_SCHEDULING_SEQUENCE_OPTIONS_H_
#define INFERA_SCHEDULING_SEQUENCE_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/data_type.h"
#include "model_config.pb.h"

namespace infera {

// One control tensor the batcher adds to every row it sends to the model.
struct SequenceControl {
  enum class Kind { kStart, kReady, kEnd, kCorrelationId };
  Kind kind = Kind::kStart;
  std::string input_name;
  // kBool, kInt32 or kFp32 for START/READY/END; kUint64, kInt64, kUint32, kInt32 or
  // kBytes for CORRID.
  DataType dtype = DataType::kInt32;
  double false_value = 0;  // START/READY/END only
  double true_value = 1;
};

struct SequenceBatchingOptions {
  enum class Strategy { kDirect, kOldest };
  std::string model_name;
  Strategy strategy = Strategy::kDirect;
  // Slots per instance: max(1, max_batch_size) for direct, max_candidate_sequences for
  // oldest.
  int slots_per_instance = 1;
  // Rows one execution may hold (oldest); the model batches (max_batch_size > 0).
  int64_t max_batch_rows = 1;
  bool batched = false;
  // A slot whose sequence has been idle this long is released (Triton's default: 1 s).
  std::chrono::microseconds max_idle{1'000'000};
  // Requests the backlog (sequences waiting for a slot) may hold; never 0.
  size_t max_backlog_requests = 1024;
  std::vector<SequenceControl> controls;  // in control_input order
  // The CORRID control's dtype, kInvalid when the model has none.
  DataType correlation_id_dtype = DataType::kInvalid;
  // How long a worker may hold its ready rows back, waiting for more ready sequences
  // (scheduling/sequence_batch_hold.h); 0: never. The strategy's
  // max_queue_delay_microseconds.
  std::chrono::microseconds max_queue_delay{0};
  // Direct: the ready rows that run without waiting, ceil(minimum_slot_utilization ×
  // slots_per_instance); 0: never wait.
  int min_ready_rows = 0;
  // Oldest: preferred_batch_size, ascending.
  std::vector<int> preferred_rows;
};

// Builds the options for `config` (which must have sequence_batching). InvalidArgument,
// naming the field, for a config the batcher cannot serve: a malformed control, a
// duplicate kind or name, a control named like a config input, bad strategy values.
absl::StatusOr<SequenceBatchingOptions> SequenceBatchingOptionsFromConfig(
    const inference::ModelConfig& config, size_t default_max_queue_size);

}  // namespace infera

#endif  // INFERA_SCHEDULING_SEQUENCE_OPTIONS_H_
