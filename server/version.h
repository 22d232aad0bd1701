#ifndef TAXEL_SERVER_VERSION_H_
#define TAXEL_SERVER_VERSION_H_

namespace taxel::server {
inline constexpr char kTaxelVersion[] = "0.1.0";
}  // namespace taxel::server

#endif  // TAXEL_SERVER_VERSION_H_
