// A small radix-2 complex FFT in one and two dimensions (power-of-two sizes), for the exact
// zero-padded convolutions of the ElastomerTaxel. Iterative Cooley–Tukey with precomputed
// twiddles and bit reversal; no allocation per transform.
#ifndef TAXEL_CORE_SENSORS_FFT2D_H_
#define TAXEL_CORE_SENSORS_FFT2D_H_

#include <complex>
#include <vector>

namespace taxel::sensors {

class Fft2d {
 public:
  /// @pre rows and cols are powers of two (≥ 1).
  Fft2d(int rows, int cols);
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  /// In-place 2D transform of a row-major rows × cols array. Forward: X[k] = Σ x[n]·e^{−2πi kn/N};
  /// inverse includes the 1/(rows·cols) factor, so Inverse(Forward(x)) = x.
  void Forward(std::complex<double>* data) const { Transform(data, false); }
  void Inverse(std::complex<double>* data) const { Transform(data, true); }

  static bool IsPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }
  static int NextPowerOfTwo(int n);

 private:
  struct Plan1d {
    int n = 1;
    std::vector<int> bitrev;
    std::vector<std::complex<double>> twiddle;  // e^{−2πi k/n}, k < n/2
  };
  static Plan1d MakePlan(int n);
  static void Transform1d(const Plan1d& plan, std::complex<double>* x, int stride, bool inverse,
                          std::complex<double>* scratch);
  void Transform(std::complex<double>* data, bool inverse) const;

  int rows_, cols_;
  Plan1d row_plan_, col_plan_;
};

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_FFT2D_H_
