// Built-in test backends, for protocol, overhead and lifecycle tests.
//
//   identity: OUTPUTi = INPUTi for every input, any datatype (BYTES included) and shape;
//             the output shares the input's bytes (no copy).
//   add_sub:  OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, element-wise, for any
//             numeric datatype from the config (Triton's "simple" example model).
//             Integers wrap around on overflow; FP16/BF16 compute in float and round.
//
// Both take the datatype and shape from config.pbtxt, like Triton's example models.
#ifndef INFERA_BACKEND_BUILTIN_BUILTIN_BACKENDS_H_
#define INFERA_BACKEND_BUILTIN_BUILTIN_BACKENDS_H_

#include <memory>

#include "backend/backend.h"

namespace infera {

std::unique_ptr<Backend> CreateIdentityBackend();
std::unique_ptr<Backend> CreateAddSubBackend();

}  // namespace infera

#endif  // INFERA_BACKEND_BUILTIN_BUILTIN_BACKENDS_H_
