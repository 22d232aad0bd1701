#include "taxel/png.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

void HeatmapColour(float v, uint8_t rgb[3]) {
  v = std::clamp(v, 0.f, 1.f);
  rgb[0] = static_cast<uint8_t>(255 * std::clamp(3 * v, 0.f, 1.f));
  rgb[1] = static_cast<uint8_t>(255 * std::clamp(3 * v - 1, 0.f, 1.f));
  rgb[2] = static_cast<uint8_t>(255 * std::clamp(3 * v - 2, 0.f, 1.f));
}

namespace {

// A 3 × 5 pixel font for the scale's labels: each glyph is 5 rows of 3 bits (bit 2 = left column).
struct Glyph {
  char c;
  uint8_t rows[5];
};
constexpr Glyph kFont[] = {
    {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
    {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 1, 1}},
    {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {'.', {0, 0, 0, 0, 2}}, {'-', {0, 0, 7, 0, 0}},
    {'+', {0, 2, 7, 2, 0}}, {'e', {7, 5, 7, 4, 7}}, {'E', {7, 4, 7, 4, 7}}, {'N', {5, 7, 7, 7, 5}},
    {'m', {0, 7, 7, 5, 5}}, {'a', {0, 7, 1, 7, 7}}, {'x', {0, 5, 2, 2, 5}},
};

class Canvas {
 public:
  Canvas(int w, int h, uint8_t grey) : w_(w), h_(h), rgb_(static_cast<size_t>(w) * h * 3, grey) {}
  int width() const { return w_; }
  int height() const { return h_; }
  const std::vector<uint8_t>& rgb() const { return rgb_; }
  void Set(int x, int y, const uint8_t c[3]) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* p = &rgb_[(static_cast<size_t>(y) * w_ + x) * 3];
    p[0] = c[0], p[1] = c[1], p[2] = c[2];
  }
  // Text with its top-left corner at (x, y), each font pixel `scale` pixels wide, 1 glyph column gap.
  void Text(int x, int y, const std::string& text, int scale, const uint8_t c[3]) {
    for (char ch : text) {
      for (const Glyph& g : kFont) {
        if (g.c != ch) continue;
        for (int r = 0; r < 5; ++r)
          for (int col = 0; col < 3; ++col)
            if (g.rows[r] & (4 >> col))
              for (int dy = 0; dy < scale; ++dy)
                for (int dx = 0; dx < scale; ++dx) Set(x + col * scale + dx, y + r * scale + dy, c);
      }
      x += 4 * scale;
    }
  }

 private:
  int w_, h_;
  std::vector<uint8_t> rgb_;
};

}  // namespace

absl::Status WriteHeatmapPng(const std::string& path, int rows, int cols, const std::vector<float>& values,
                             const HeatmapOptions& options) {
  if (rows <= 0 || cols <= 0 || static_cast<int64_t>(values.size()) != static_cast<int64_t>(rows) * cols) {
    return absl::InvalidArgumentError("heatmap: values do not match the grid");
  }
  if (options.cell_px < 1) return absl::InvalidArgumentError("heatmap: cell_px must be >= 1");
  float vmax = 0;
  for (float v : values) vmax = std::max(vmax, std::abs(v));
  // Layout: the grid, a 12 px gap, a 16 px bar as tall as the grid (at least 60 px), 6 px, labels.
  constexpr int kGap = 12, kBar = 16, kScale = 2, kLabelChars = 9;
  const int grid_w = cols * options.cell_px, grid_h = rows * options.cell_px;
  const int bar_h = std::max(grid_h, 60);
  const int label_x = grid_w + kGap + kBar + 6;
  Canvas img(label_x + kLabelChars * 4 * kScale + 4, bar_h, 64);
  uint8_t c[3];
  for (int y = 0; y < grid_h; ++y) {
    for (int x = 0; x < grid_w; ++x) {
      // Row 0 of the grid at the bottom of the image (y up), like a plot.
      const float v = std::abs(values[(rows - 1 - y / options.cell_px) * cols + x / options.cell_px]);
      HeatmapColour(vmax > 0 ? v / vmax : 0.f, c);
      img.Set(x, y + (bar_h - grid_h), c);
    }
  }
  for (int y = 0; y < bar_h; ++y) {  // top row = 1 (max), bottom row = 0
    HeatmapColour(bar_h > 1 ? 1.f - static_cast<float>(y) / (bar_h - 1) : 1.f, c);
    for (int x = 0; x < kBar; ++x) img.Set(grid_w + kGap + x, y, c);
  }
  const uint8_t ink[3] = {255, 255, 255};
  img.Text(label_x, 0, absl::StrFormat("%.3g", vmax), kScale, ink);
  if (!options.unit.empty()) img.Text(label_x, bar_h / 2 - 5, options.unit, kScale, ink);
  img.Text(label_x, bar_h - 5 * kScale, "0", kScale, ink);

  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::InvalidArgumentError(absl::StrCat("heatmap: cannot write '", path, "'"));
  const std::string png = EncodePngRgb(img.width(), img.height(), img.rgb());
  out.write(png.data(), static_cast<std::streamsize>(png.size()));
  return absl::OkStatus();
}

}  // namespace taxel
