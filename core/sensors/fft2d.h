// A small radix-2 complex FFT in one and two dimensions (power-of-two sizes), for the exact
// zero-padded convolutions of the ElastomerTaxel. Iterative Cooley–Tukey with precomputed
// twiddles and bit reversal; no allocation per transform (scratch from the caller's workspace).
#ifndef TAXEL_CORE_SENSORS_FFT2D_H_
#define TAXEL_CORE_SENSORS_FFT2D_H_

#include <complex>
#include <vector>

#include "core/common/workspace.h"

namespace taxel::sensors {

class Fft2d {
 public:
  /// @pre rows and cols are powers of two (≥ 1).
  Fft2d(int rows, int cols);
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  /// In-place 2D transform of a row-major rows × cols array. Forward: X[k] = Σ x[n]·e^{−2πi kn/N};
  /// inverse includes the 1/(rows·cols) factor, so Inverse(Forward(x)) = x.
  ///
  /// Zero padding shortcuts (both exact): Forward may be told that only the first `nonzero_rows`
  /// rows of the input can be non-zero (the rest must hold zeros: their row transforms are
  /// skipped); Inverse may be told that only the first `needed_rows` rows of the output are wanted
  /// (the other rows are left holding intermediate values). -1 = all rows.
  /// Scratch (max(rows, cols) values) comes from `ws`.
  void Forward(std::complex<double>* data, Workspace& ws, int nonzero_rows = -1) const;
  void Inverse(std::complex<double>* data, Workspace& ws, int needed_rows = -1) const;

  static bool IsPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }
  static int NextPowerOfTwo(int n);

 private:
  struct Plan1d {
    int n = 1;
    std::vector<int> bitrev;
    std::vector<std::complex<double>> twiddle[2];  // [0]: e^{−2πi k/n}, [1]: conjugates; k < n/2
  };
  static Plan1d MakePlan(int n);
  static void Transform1d(const Plan1d& plan, std::complex<double>* x, int stride, bool inverse,
                          std::complex<double>* scratch);
  void Rows(std::complex<double>* data, int n_rows, bool inverse, std::complex<double>* scratch) const;
  void Columns(std::complex<double>* data, bool inverse, std::complex<double>* scratch) const;

  int rows_, cols_;
  Plan1d row_plan_, col_plan_;
};

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_FFT2D_H_
