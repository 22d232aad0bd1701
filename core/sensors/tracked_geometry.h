// What the ElastomerTaxel and the ProximityTaxel keep about the links they track: surface sample
// points (per link and asset, in the link frame), KD-trees over them (proximity), the per-env
// anchors of the elastomer's shear model, and the FFT kernels of its dilation.
#ifndef TAXEL_CORE_SENSORS_TRACKED_GEOMETRY_H_
#define TAXEL_CORE_SENSORS_TRACKED_GEOMETRY_H_

#include <complex>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "absl/types/span.h"
#include "core/common/ids.h"
#include "core/sensors/fft2d.h"
#include "core/sensors/probe_kernels.h"

namespace taxel::geometry {
class PointCloudIndex;  // nanoflann KD-tree over one point set (core/geometry/point_cloud_index.h)
}  // namespace taxel::geometry

namespace taxel::sensors {

/// Sample points of one tracked link, one set per asset of its entity (link frame, m).
struct TrackedLink {
  LinkIndex link;
  std::vector<std::vector<Eigen::Vector3d>> points;           ///< [asset][point]
  std::vector<std::shared_ptr<const geometry::PointCloudIndex>> index;  ///< [asset] (proximity only)
};

/// One tracked link as it is in a given env: which asset, and where it is.
struct TrackedLinkInEnv {
  const TrackedLink* tracked = nullptr;
  int asset = -1;  ///< −1: empty object slot
  const LinkKinematics* kinematics = nullptr;
};

class TrackedGeometry {
 public:
  /// `links` with their sample points; `num_envs` and, per env and tracked link, the number of
  /// points of the asset it holds (for the shear anchors).
  TrackedGeometry(std::vector<TrackedLink> links, int num_envs, const std::vector<std::vector<int>>& points_per_env);
  ~TrackedGeometry();

  const std::vector<TrackedLink>& links() const { return links_; }

  /// Builds the KD-trees (proximity taxels).
  void BuildIndices();
  /// For a layout that is a regular grid with one shared normal: the bonded-layer kernel when
  /// compressibility < 1 (LayerKernel), and with use_fft the spectra of the dilation kernels.
  /// Returns whether the FFT path is ready (false: the direct sum is used).
  bool PrepareDilation(const ProbeLayout& layout, const ElastomerParams& params);
  bool has_fft() const { return fft_ != nullptr; }

  /// The in-plane dilation kernel of an incompressible elastic layer of thickness h bonded to a
  /// rigid base, on a regular grid (Genesis' model for a grid gel with compressibility < 1):
  /// K̂(k) = −i·(k/|k|)·S(|k|·h) (BondedLayerTransfer) at the discrete frequencies of the
  /// zero-padded grid, K̂(0) = 0 and 0 on the Nyquist rows and columns (they have no sign: the
  /// kernel stays real), transformed back to the lattice offsets and divided by its largest
  /// magnitude there (the blend normaliser N_i). It points away from the indentation and, beyond
  /// a few h, falls off as 1/r like the 1/(r² + ε²) kernel of other layouts.
  class LayerKernel {
   public:
    /// col_step, row_step: the lattice steps in the gel's plane (link frame).
    LayerKernel(int rows, int cols, const Eigen::Vector3d& col_step, const Eigen::Vector3d& row_step, double h);
    /// Unit-peak kernel (link frame) at lattice offset (di, dj), |di| < rows, |dj| < cols.
    const Eigen::Vector3d& at(int di, int dj) const { return k_[Index(di, dj)]; }
    size_t memory_bytes() const { return sizeof(*this) + k_.capacity() * sizeof(Eigen::Vector3d); }

   private:
    size_t Index(int di, int dj) const {
      return static_cast<size_t>(di + rows_ - 1) * (2 * cols_ - 1) + (dj + cols_ - 1);
    }
    int rows_, cols_;
    std::vector<Eigen::Vector3d> k_;
  };
  /// Null unless the layout is a regular grid and compressibility < 1.
  const LayerKernel* layer_kernel() const { return layer_.get(); }

  /// Elastomer shear anchors of env e: anchored flag and anchor (sensor link frame) per point of
  /// tracked link t's asset in that env.
  /// (Pointer arithmetic, not operator[]: a link without points, e.g. a half-space, has an
  /// empty range, possibly at the end of an empty vector.)
  uint8_t* anchored(int env, int t) { return anchored_.data() + offset(env, t); }
  Eigen::Vector3d* anchors(int env, int t) { return anchors_.data() + offset(env, t); }

  void ResetEnv(int env);
  size_t memory_bytes() const;

  // FFT state (see elastomer_taxel.cc).
  struct FftKernels {
    int rows = 0, cols = 0;    ///< probe grid
    int prows = 0, pcols = 0;  ///< padded transform size
    std::unique_ptr<Fft2d> fft;
    std::vector<std::complex<double>> kx, ky, kz, kn;  ///< spectra of K_vec components and K_n
  };
  const FftKernels& fft() const { return *fft_; }

 private:
  size_t offset(int env, int t) const { return env_offsets_[static_cast<size_t>(env) * links_.size() + t]; }
  std::vector<TrackedLink> links_;
  std::vector<size_t> env_offsets_;  // [env][tracked link] → start in anchored_/anchors_
  std::vector<size_t> env_counts_;
  std::vector<uint8_t> anchored_;
  std::vector<Eigen::Vector3d> anchors_;
  std::unique_ptr<FftKernels> fft_;
  std::unique_ptr<LayerKernel> layer_;
};

/// ElastomerTaxel for env e: indentation of every marker into the tracked shapes (`candidates`,
/// the tracked links' shapes near the pad), dilation (FFT or direct sum), and the shear of
/// tracked points anchored in the gel (`gel`: the sensor link's own shapes). Writes the ground
/// truth displacement and, when the sensor has a pipeline, the raw measured one (× gain) into
/// `raw_measured` (Sensor::raw_measured of env e; unused without a pipeline). Scratch from `ws`.
void EvaluateElastomer(Sensor& sensor, int env, const LinkKinematics& sensor_link,
                       absl::Span<const ProbeCandidate> candidates, absl::Span<const ProbeCandidate> gel,
                       absl::Span<const TrackedLinkInEnv> tracked, float* raw_measured, Workspace& ws);

/// ProximityTaxel for probes [begin, end) of env e (point clouds of the tracked links); the raw
/// measured values, with a pipeline, go to `raw_measured` (env e's array). Scratch from `ws`.
void EvaluateProximity(Sensor& sensor, int env, int begin, int end, uint64_t step, const LinkKinematics& sensor_link,
                       absl::Span<const TrackedLinkInEnv> tracked, float* raw_measured, Workspace& ws);

/// The direct dilation sum for any layout (exposed for tests of the FFT path):
/// u_i = dilate_scale·Σ_j [T_i(x_i − x_j)·h_j·w(r) + (1 − c)·h_j·K_layer(i − j) + n_i·h_j^p·exp(−λ_d r²)],
/// r = |T_i(x_i − x_j)|, w the peak-normalised blend of elastomer_taxel.cc (its 1/(r² + ε²) term
/// only when there is no layer kernel), K_layer the geometry's LayerKernel if it has one (a
/// regular grid with compressibility < 1; geometry may be null). positions/normals in the link frame.
void DilationDirect(const ProbeLayout& layout, const ElastomerParams& p, const double* h, double* u,
                    const TrackedGeometry* geometry = nullptr);
/// S(q) = 2q²/(sinh 2q − 2q), the in-plane transfer of a bonded incompressible layer at q = |k|·h,
/// with q clamped to [1e-3, 30] and a series for 2q < 1 (S → 3/(2q) as q → 0, 4q²·e^(−2q) as q → ∞).
double BondedLayerTransfer(double q);
/// The same by zero-padded FFT convolution, scratch from `ws`. @pre geometry.PrepareDilation
/// returned true for the layout.
void DilationFft(const TrackedGeometry& geometry, const ProbeLayout& layout, const ElastomerParams& p, const double* h,
                 double* u, Workspace& ws);

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_TRACKED_GEOMETRY_H_
