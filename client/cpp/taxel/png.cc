#include "taxel/png.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace taxel {
namespace {

uint32_t Crc32(const uint8_t* data, size_t n, uint32_t crc = 0) {
  static uint32_t table[256];
  static bool init = [] {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    return true;
  }();
  (void)init;
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

void PutU32(std::string* out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<char>((v >> s) & 0xFF));
}

void Chunk(std::string* out, const char* type, const std::string& data) {
  PutU32(out, static_cast<uint32_t>(data.size()));
  std::string body(type, 4);
  body += data;
  out->append(body);
  PutU32(out, Crc32(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
}

}  // namespace

std::string EncodePngRgb(int width, int height, const std::vector<uint8_t>& rgb) {
  // Raw scanlines: filter byte 0 then the row.
  std::string raw;
  for (int y = 0; y < height; ++y) {
    raw.push_back(0);
    raw.append(reinterpret_cast<const char*>(rgb.data()) + static_cast<size_t>(y) * width * 3, width * 3);
  }
  // zlib stream of stored (uncompressed) deflate blocks, then Adler-32.
  std::string z = {0x78, 0x01};
  for (size_t pos = 0; pos < raw.size() || pos == 0;) {
    const size_t len = std::min<size_t>(65535, raw.size() - pos);
    const bool last = pos + len >= raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<char>(len & 0xFF));
    z.push_back(static_cast<char>(len >> 8));
    z.push_back(static_cast<char>(~len & 0xFF));
    z.push_back(static_cast<char>((~len >> 8) & 0xFF));
    z.append(raw, pos, len);
    pos += len;
    if (last) break;
  }
  uint32_t a = 1, b = 0;
  for (unsigned char c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  PutU32(&z, (b << 16) | a);
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  PutU32(&ihdr, width);
  PutU32(&ihdr, height);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit, RGB, deflate, no filter, no interlace
  Chunk(&png, "IHDR", ihdr);
  Chunk(&png, "IDAT", z);
  Chunk(&png, "IEND", "");
  return png;
}

absl::Status WriteHeatmapPng(const std::string& path, int rows, int cols, const std::vector<float>& values,
                             int cell_px) {
  if (rows <= 0 || cols <= 0 || static_cast<int64_t>(values.size()) != static_cast<int64_t>(rows) * cols) {
    return absl::InvalidArgumentError("heatmap: values do not match the grid");
  }
  float vmax = 0;
  for (float v : values) vmax = std::max(vmax, std::abs(v));
  const int w = cols * cell_px, h = rows * cell_px;
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      // Row 0 of the grid at the bottom of the image (y up), like a plot.
      const float v = vmax > 0 ? std::abs(values[(rows - 1 - y / cell_px) * cols + x / cell_px]) / vmax : 0.f;
      const float r = std::clamp(3 * v, 0.f, 1.f), g = std::clamp(3 * v - 1, 0.f, 1.f),
                  b = std::clamp(3 * v - 2, 0.f, 1.f);
      uint8_t* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>(255 * r), p[1] = static_cast<uint8_t>(255 * g), p[2] = static_cast<uint8_t>(255 * b);
    }
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::InvalidArgumentError(absl::StrCat("heatmap: cannot write '", path, "'"));
  const std::string png = EncodePngRgb(w, h, rgb);
  out.write(png.data(), static_cast<std::streamsize>(png.size()));
  return absl::OkStatus();
}

}  // namespace taxel
