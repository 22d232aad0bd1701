// Strong integer ids, so that a link index can not be passed where a sensor id is expected.
#ifndef TAXEL_CORE_COMMON_IDS_H_
#define TAXEL_CORE_COMMON_IDS_H_

#include <cstdint>
#include <functional>
#include <ostream>

namespace taxel {

/// A typed wrapper around a non-negative integer index. Default-constructed ids are invalid (-1).
template <typename Tag>
class Id {
 public:
  constexpr Id() = default;
  constexpr explicit Id(int32_t value) : value_(value) {}
  constexpr int32_t value() const { return value_; }
  constexpr bool is_valid() const { return value_ >= 0; }
  friend constexpr bool operator==(Id a, Id b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(Id a, Id b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(Id a, Id b) { return a.value_ < b.value_; }
  friend std::ostream& operator<<(std::ostream& os, Id id) { return os << id.value_; }

 private:
  int32_t value_ = -1;
};

struct LinkTag {};
struct EntityTag {};
struct SensorTag {};
/// Canonical link index: links numbered entity by entity, link by link, in registration order.
using LinkIndex = Id<LinkTag>;
/// Entity index in registration order.
using EntityIndex = Id<EntityTag>;
/// Sensor id within a scene; stable for the scene's lifetime (never reused after removal).
using SensorId = Id<SensorTag>;

}  // namespace taxel

template <typename Tag>
struct std::hash<taxel::Id<Tag>> {
  size_t operator()(taxel::Id<Tag> id) const noexcept { return std::hash<int32_t>()(id.value()); }
};

#endif  // TAXEL_CORE_COMMON_IDS_H_
