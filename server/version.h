#ifndef TAXEL_SERVER_VERSION_H_
#define TAXEL_SERVER_VERSION_H_

#include "taxel/version.h"  // generated from the repository's VERSION file

namespace taxel::server {
inline constexpr const char* kTaxelVersion = taxel::kVersion;
}  // namespace taxel::server

#endif  // TAXEL_SERVER_VERSION_H_
