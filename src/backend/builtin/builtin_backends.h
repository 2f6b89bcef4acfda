// Built-in test backends, for protocol, overhead and lifecycle tests.
//
//   identity: OUTPUTi = INPUTi for every input, any datatype (BYTES included) and shape;
//             the output shares the input's bytes (no copy).
//   add_sub:  OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, element-wise, for any
//             numeric datatype from the config (Triton's "simple" example model).
//             Integers wrap around on overflow; FP16/BF16 compute in float and round.
//   fault_injection: identity with a per-execution delay (`delay_ms`) and a seeded
//             failure rate (`failure_rate`) from config parameters, for overload,
//             timeout, drain and canary tests.
//   repeat:   a decoupled model (Triton's repeat_int32): one response per element of
//             its input IN (OUT, IDX), sent from a thread the loaded model owns, then
//             the final flag; optional DELAY / WAIT inputs pace it (repeat_backend.cc).
//
// All take the datatype and shape from config.pbtxt, like Triton's example models.
#ifndef INFERA_BACKEND_BUILTIN_BUILTIN_BACKENDS_H_
#define INFERA_BACKEND_BUILTIN_BUILTIN_BACKENDS_H_

#include <memory>

#include "backend/backend.h"

namespace infera {

std::unique_ptr<Backend> CreateIdentityBackend();
std::unique_ptr<Backend> CreateAddSubBackend();
std::unique_ptr<Backend> CreateFaultInjectionBackend();
std::unique_ptr<Backend> CreateRepeatBackend();
// The sequence batcher's demo stateful model (accumulate_backend.cc).
std::unique_ptr<Backend> CreateAccumulateBackend();

}  // namespace infera

#endif  // INFERA_BACKEND_BUILTIN_BUILTIN_BACKENDS_H_
