// BackendRegistry: finds the Backend a model's config asks for.
//
// A config names its runtime by `backend: "pytorch"` or, Triton-style, by
// `platform: "pytorch_libtorch"`; each Backend registers its name and the platform
// names that mean it.
//
// Thread-safe after setup: Register() during server start, Find() from any thread.
#ifndef INFERA_BACKEND_BACKEND_REGISTRY_H_
#define INFERA_BACKEND_BACKEND_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/backend.h"

namespace infera {

class BackendRegistry {
 public:
  // Adds `backend`, reachable by its name() and by each of `platforms`.
  void Register(std::unique_ptr<Backend> backend, std::vector<std::string> platforms = {});

  // The backend for `config`; NotFound naming the field when neither `backend` nor
  // `platform` names a registered one, InvalidArgument when they disagree.
  absl::StatusOr<Backend*> Find(const inference::ModelConfig& config) const;

  // Registered backend names, sorted, for error messages and --help.
  std::vector<std::string> Names() const;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
  std::map<std::string, Backend*, std::less<>> by_name_;
  std::map<std::string, Backend*, std::less<>> by_platform_;
};

}  // namespace infera

#endif  // INFERA_BACKEND_BACKEND_REGISTRY_H_
