#include "console/console_assets.h"

namespace infera {

const EmbeddedAsset* FindConsoleAsset(std::string_view name) {
  for (size_t i = 0; i < console_internal::kEmbeddedAssetCount; ++i) {
    if (console_internal::kEmbeddedAssets[i].name == name) return &console_internal::kEmbeddedAssets[i];
  }
  return nullptr;
}

}  // namespace infera
