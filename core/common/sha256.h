// SHA-256 (FIPS 180-4), used to content-address meshes.
#ifndef TAXEL_CORE_COMMON_SHA256_H_
#define TAXEL_CORE_COMMON_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace taxel {

/// Incremental SHA-256. Update() any number of times, then Finish() once.
class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  std::array<uint8_t, 32> Finish();
  /// Lower-case hex of Finish().
  std::string FinishHex();

 private:
  void Compress(const uint8_t* block);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffer_size_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_SHA256_H_
