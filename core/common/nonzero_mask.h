// The nonzero-mask form of an array: the compact form a taxel.v1.Tensor takes when a read asks for
// it (ReadSpec.sparse). Tactile readings are mostly zeros (a 1024-env grasp batch is ~75 % zeros:
// every probe out of contact reads 0), so the form carries a bit per element and only the
// elements whose bit is set.
//
//   mask   ceil(n / 8) bytes; bit i is bit (i % 8) of byte i / 8, least significant first. The bit
//          is set when element i's bytes are not all zero. Bits past n in the last byte are 0.
//   values the elements whose bit is set, in order, packed.
//
// "Zero" means all-zero bytes: +0.0f is left out, −0.0f and NaN are kept, so expanding the form
// restores every bit of the array.
#ifndef TAXEL_CORE_COMMON_NONZERO_MASK_H_
#define TAXEL_CORE_COMMON_NONZERO_MASK_H_

#include <cstddef>
#include <cstdint>

namespace taxel {

/// Bytes of the mask of `n` elements.
constexpr size_t NonzeroMaskBytes(size_t n) { return (n + 7) / 8; }

/// Writes the mask of the `n` elements of `item_size` bytes (1, 2, 4 or 8) at `data` to `mask`
/// (NonzeroMaskBytes(n) bytes) and returns the number of set bits.
size_t BuildNonzeroMask(const void* data, size_t n, size_t item_size, uint8_t* mask);

/// Copies the elements of `data` whose mask bit is set to `dst`, in order; returns the end.
char* PackNonzero(const void* data, size_t n, size_t item_size, const uint8_t* mask, char* dst);

/// The inverse of BuildNonzeroMask + PackNonzero: writes all n elements to `dst`, taken in order
/// from `packed` where the bit is set, zero elsewhere. `packed` holds CountNonzeroMask(mask, n)
/// elements. With `dst_is_zero` (dst already holds zeros) runs of zeros are not written again.
void UnpackNonzero(const char* packed, size_t n, size_t item_size, const uint8_t* mask, void* dst,
                   bool dst_is_zero = false);

/// Number of set bits among the first n of `mask`; −1 when a bit past n in the last byte is set
/// (a malformed mask).
int64_t CountNonzeroMask(const uint8_t* mask, size_t n);

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_NONZERO_MASK_H_
