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

namespace taxel::sensors {

class PointCloudIndex;  // nanoflann KD-tree over one point set (proximity_taxel.cc)

/// Sample points of one tracked link, one set per asset of its entity (link frame, m).
struct TrackedLink {
  LinkIndex link;
  std::vector<std::vector<Eigen::Vector3d>> points;           ///< [asset][point]
  std::vector<std::shared_ptr<const PointCloudIndex>> index;  ///< [asset] (proximity only)
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
  /// Precomputes the spectra of the dilation kernels when the layout is a regular grid with one
  /// shared normal (returns false otherwise: the direct sum is used).
  bool PrepareFft(const ProbeLayout& layout, const ElastomerParams& params);
  bool has_fft() const { return fft_ != nullptr; }

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
    int rows = 0, cols = 0;  ///< probe grid
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
};

/// ElastomerTaxel for env e: indentation of every marker into the tracked shapes (`candidates`,
/// the tracked links' shapes near the pad), dilation (FFT or direct sum), and the shear of
/// tracked points anchored in the gel (`gel`: the sensor link's own shapes). Writes the ground
/// truth displacement and, when the sensor has a pipeline, the raw measured one (× gain).
void EvaluateElastomer(Sensor& sensor, int env, const LinkKinematics& sensor_link,
                       absl::Span<const ProbeCandidate> candidates, absl::Span<const ProbeCandidate> gel,
                       absl::Span<const TrackedLinkInEnv> tracked);

/// ProximityTaxel for probes [begin, end) of env e (point clouds of the tracked links).
void EvaluateProximity(Sensor& sensor, int env, int begin, int end, uint64_t step, const LinkKinematics& sensor_link,
                       absl::Span<const TrackedLinkInEnv> tracked);

/// The direct dilation sum of DESIGN §4 for any layout (exposed for tests of the FFT path):
/// u_i = dilate_scale·Σ_j [T_i(x_i − x_j)·w_j + n_i·h_j^p·exp(−λ_d r²)], r = |T_i(x_i − x_j)|,
/// w_j = h_j·(c·exp(−λ_d r²) + (1 − c)/(r² + ε²)). positions/normals in the link frame.
void DilationDirect(const ProbeLayout& layout, const ElastomerParams& p, const double* h, double* u);
/// The same by zero-padded FFT convolution. @pre geometry.PrepareFft succeeded for the layout.
void DilationFft(const TrackedGeometry& geometry, const ProbeLayout& layout, const ElastomerParams& p,
                 const double* h, double* u);

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_TRACKED_GEOMETRY_H_
