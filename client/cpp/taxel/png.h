// A minimal PNG writer (8-bit RGB, uncompressed deflate blocks) for heatmaps; no zlib needed.
#ifndef TAXEL_CLIENT_CPP_TAXEL_PNG_H_
#define TAXEL_CLIENT_CPP_TAXEL_PNG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace taxel {

/// Encodes width × height RGB pixels (row-major, 3 bytes each) as a PNG file's bytes.
std::string EncodePngRgb(int width, int height, const std::vector<uint8_t>& rgb);

/// The colour of a value v in [0, 1] on the heatmap scale: black (0) through red and yellow to
/// white (1). Values outside [0, 1] are clamped.
void HeatmapColour(float v, uint8_t rgb[3]);

struct HeatmapOptions {
  int cell_px = 16;  ///< side of a taxel's square, pixels (>= 1)
  /// Unit printed under the scale ("N", "m", ...); empty prints none. Characters outside
  /// `0-9 . - + e E N m a x` and space are drawn as blanks.
  std::string unit;
};

/// Writes a heatmap of a rows × cols grid of values (row-major, row 0 at the bottom of the image):
/// each cell becomes a square of `cell_px` pixels coloured by |value| / max |value| (HeatmapColour),
/// and to its right a colour bar from 0 (bottom) to max |value| (top), labelled with both and with
/// the unit.
absl::Status WriteHeatmapPng(const std::string& path, int rows, int cols, const std::vector<float>& values,
                             const HeatmapOptions& options = {});

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_PNG_H_
