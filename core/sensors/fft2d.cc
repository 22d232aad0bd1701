#include "core/sensors/fft2d.h"

#include <cmath>

#include "core/common/check.h"

namespace taxel::sensors {

int Fft2d::NextPowerOfTwo(int n) {
  int p = 1;
  while (p < n) p <<= 1;
  return p;
}

Fft2d::Plan1d Fft2d::MakePlan(int n) {
  TAXEL_CHECK(IsPowerOfTwo(n));
  Plan1d p;
  p.n = n;
  p.bitrev.resize(n);
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  for (int i = 0; i < n; ++i) {
    int r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    p.bitrev[i] = r;
  }
  p.twiddle.resize(std::max(1, n / 2));
  for (int k = 0; k < n / 2; ++k) p.twiddle[k] = std::polar(1.0, -2.0 * M_PI * k / n);
  return p;
}

Fft2d::Fft2d(int rows, int cols) : rows_(rows), cols_(cols), row_plan_(MakePlan(cols)), col_plan_(MakePlan(rows)) {}

void Fft2d::Transform1d(const Plan1d& plan, std::complex<double>* x, int stride, bool inverse,
                        std::complex<double>* scratch) {
  const int n = plan.n;
  for (int i = 0; i < n; ++i) scratch[plan.bitrev[i]] = x[i * stride];
  for (int len = 2; len <= n; len <<= 1) {
    const int half = len / 2, step = n / len;
    for (int start = 0; start < n; start += len) {
      for (int k = 0; k < half; ++k) {
        std::complex<double> w = plan.twiddle[k * step];
        if (inverse) w = std::conj(w);
        const std::complex<double> a = scratch[start + k], b = w * scratch[start + k + half];
        scratch[start + k] = a + b;
        scratch[start + k + half] = a - b;
      }
    }
  }
  for (int i = 0; i < n; ++i) x[i * stride] = scratch[i];
}

void Fft2d::Transform(std::complex<double>* data, bool inverse) const {
  thread_local std::vector<std::complex<double>> scratch;
  scratch.resize(std::max(rows_, cols_));
  for (int r = 0; r < rows_; ++r) Transform1d(row_plan_, data + static_cast<size_t>(r) * cols_, 1, inverse, scratch.data());
  for (int c = 0; c < cols_; ++c) Transform1d(col_plan_, data + c, cols_, inverse, scratch.data());
  if (inverse) {
    const double s = 1.0 / (static_cast<double>(rows_) * cols_);
    for (size_t i = 0; i < static_cast<size_t>(rows_) * cols_; ++i) data[i] *= s;
  }
}

}  // namespace taxel::sensors
