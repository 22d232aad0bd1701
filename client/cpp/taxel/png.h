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

/// Writes a heatmap of a rows × cols grid of values (row-major): each cell becomes a square of
/// `cell_px` pixels coloured from black (0) through red and yellow to white (max |value|).
absl::Status WriteHeatmapPng(const std::string& path, int rows, int cols, const std::vector<float>& values,
                             int cell_px = 16);

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_PNG_H_
