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
  for (int dir = 0; dir < 2; ++dir) {
    p.twiddle[dir].resize(std::max(1, n / 2));
    for (int k = 0; k < n / 2; ++k) p.twiddle[dir][k] = std::polar(1.0, (dir == 0 ? -2.0 : 2.0) * M_PI * k / n);
  }
  return p;
}

Fft2d::Fft2d(int rows, int cols) : rows_(rows), cols_(cols), row_plan_(MakePlan(cols)), col_plan_(MakePlan(rows)) {}

void Fft2d::Transform1d(const Plan1d& plan, std::complex<double>* x, int stride, bool inverse,
                        std::complex<double>* scratch) {
  const int n = plan.n;
  for (int i = 0; i < n; ++i) scratch[plan.bitrev[i]] = x[i * stride];
  // Butterflies on interleaved (re, im) doubles: std::complex's operator* would add the C99
  // NaN/infinity recovery (a call to __muldc3) to every product.
  double* s = reinterpret_cast<double*>(scratch);
  const double* tw = reinterpret_cast<const double*>(plan.twiddle[inverse ? 1 : 0].data());
  for (int len = 2; len <= n; len <<= 1) {
    const int half = len / 2, step = n / len;
    for (int start = 0; start < n; start += len) {
      for (int k = 0; k < half; ++k) {
        const double wr = tw[2 * k * step], wi = tw[2 * k * step + 1];
        double* a = s + 2 * (start + k);
        double* b = s + 2 * (start + k + half);
        const double br = wr * b[0] - wi * b[1], bi = wr * b[1] + wi * b[0];
        b[0] = a[0] - br, b[1] = a[1] - bi;
        a[0] += br, a[1] += bi;
      }
    }
  }
  for (int i = 0; i < n; ++i) x[i * stride] = scratch[i];
}

void Fft2d::Rows(std::complex<double>* data, int n_rows, bool inverse, std::complex<double>* scratch) const {
  for (int r = 0; r < n_rows; ++r) Transform1d(row_plan_, data + static_cast<size_t>(r) * cols_, 1, inverse, scratch);
}

void Fft2d::Columns(std::complex<double>* data, bool inverse, std::complex<double>* scratch) const {
  for (int c = 0; c < cols_; ++c) Transform1d(col_plan_, data + c, cols_, inverse, scratch);
}

void Fft2d::Forward(std::complex<double>* data, Workspace& ws, int nonzero_rows) const {
  Workspace::Scope scope(ws);
  auto* scratch = ws.Take<std::complex<double>>(std::max(rows_, cols_));
  // Rows first: the transform of an all-zero row is zero, so those rows need no work.
  Rows(data, nonzero_rows < 0 ? rows_ : std::min(nonzero_rows, rows_), false, scratch);
  Columns(data, false, scratch);
}

void Fft2d::Inverse(std::complex<double>* data, Workspace& ws, int needed_rows) const {
  Workspace::Scope scope(ws);
  auto* scratch = ws.Take<std::complex<double>>(std::max(rows_, cols_));
  // Columns first, so that the last pass (rows) can stop at the rows wanted.
  const int n_rows = needed_rows < 0 ? rows_ : std::min(needed_rows, rows_);
  Columns(data, true, scratch);
  Rows(data, n_rows, true, scratch);
  const double s = 1.0 / (static_cast<double>(rows_) * cols_);
  for (size_t i = 0; i < static_cast<size_t>(n_rows) * cols_; ++i) data[i] *= s;
}

}  // namespace taxel::sensors
