// What a client asks for when it adds a sensor: the kind, the link, the probe layout and options.
#ifndef TAXEL_CORE_SENSORS_SENSOR_SPEC_H_
#define TAXEL_CORE_SENSORS_SENSOR_SPEC_H_

#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/string_view.h"
#include "core/contact/nonlinear_law.h"
#include "core/contact/spring_damper_law.h"
#include "core/geometry/sdf_backend.h"

namespace taxel::sensors {

/// How crosstalk treats the grid border.
///  - kZero: neighbours outside the grid read 0 (what Genesis does); signal leaks out at the edges.
///  - kRenormalize: each source spreads its value over the in-grid (non-filler) taxels only, so the
///    total over the grid is conserved.
enum class CrosstalkBorder { kZero, kRenormalize };

/// Hardware-style imperfections of the measured branch (docs/reference.md#sensors), applied in this order each
/// step: radius noise and per-(env, probe) gain inside the kernel → spatial crosstalk →
/// viscoelastic hysteresis → random walk → white noise → bias → quantisation → dead taxels; then
/// timing (update period, delay with jitter; history). The ground-truth branch never sees them.
/// All defaults are "off". The stages after the kernel run in float (the readings' precision).
struct ImperfectionSpec {
  /// σ_R (m): each step R_m = max(0, R + U(−1, 1)·σ_R) per (env, probe).
  double probe_radius_noise = 0;
  /// Gain per probe (1 shared value or one per probe); multiplies the kernel's output.
  std::vector<double> probe_gain = {1.0};
  /// If set, [lo, hi]: at every reset each (env, probe) gain is redrawn from U(lo, hi).
  std::optional<std::pair<double, double>> probe_gain_resample_range;
  /// Gaussian crosstalk (grid sensors): y = (1 − strength)·x + strength·(G ⋆ x), G the
  /// L1-normalised Gaussian of standard deviation `crosstalk_sigma` (m) on the physical grid,
  /// truncated at ±3σ (and at the grid's own size). A kernel that is the identity (strength 0, or
  /// an explicit delta) leaves the values bit for bit unchanged.
  double crosstalk_strength = 0;
  double crosstalk_sigma = 0;
  /// Or an explicit odd kernel (replaces the Gaussian): crosstalk_kernel_layers × rows × cols
  /// values, row-major; 1 layer for every channel, 2 layers normal | shear+torque, 3 layers
  /// normal | shear | torque. Cross-correlation: y[i,j] = Σ K[a,b]·x[i + a − rows/2, j + b − cols/2].
  std::vector<double> crosstalk_kernel;
  int crosstalk_kernel_layers = 0, crosstalk_kernel_rows = 0, crosstalk_kernel_cols = 0;
  CrosstalkBorder crosstalk_border = CrosstalkBorder::kZero;
  /// Viscoelastic hysteresis: ξ ← e^(−dt/τ)·ξ + Δx; y = x + strength·ξ (τ in s; dt is the time
  /// between samples, update_period steps).
  double hysteresis_strength = 0;
  double hysteresis_tau = 0;
  /// Standard deviation of the per-step increment of a random walk added to every channel.
  double random_walk = 0;
  /// Standard deviation of white Gaussian noise added every step.
  double noise = 0;
  /// Constant offset added to every channel.
  double bias = 0;
  /// Quantisation step; values are rounded to a multiple of it, half to even (in float:
  /// round(x · (1/step)) · step). 0 = off.
  double resolution = 0;
  /// At every reset each (env, probe) is dead with this probability; every channel of a dead
  /// probe reads a constant drawn from U(dead_taxel_value_range).
  double dead_taxel_probability = 0;
  std::pair<double, double> dead_taxel_value_range = {0.0, 0.0};
  /// Latency (s): the measured branch returns the sample round(delay/dt) steps old (zero-order
  /// hold; 0 until filled). Jitter (s, ≤ delay, ≤ dt) perturbs the delay by U(−jitter, jitter)
  /// with probabilistic rounding of the slot; a delayed sensor never returns undelayed data.
  double delay = 0;
  double jitter = 0;
  /// Keep the last `history_length` measured samples (not delayed) for history reads.
  int history_length = 0;
  /// Sample every `update_period` steps; hold the last sample in between.
  int update_period = 1;

  /// True when any stage or timing option differs from its default.
  bool any() const;
};

enum class SensorKind {
  kContactProbe,       ///< contact flag per probe (Schmitt trigger on the depth)
  kContactDepthProbe,  ///< penetration depth (+ normal, cap area, partner link)
  kKinematicTaxel,     ///< spring–damper force and torque per probe
  kElastomerTaxel,     ///< gel-skin marker displacement (dilation + shear)
  kProximityTaxel,     ///< point-cloud proximity force and torque
};
/// Every SensorKind, in order (arrays "one per sensor kind" are indexed by the kind's value).
inline constexpr SensorKind kSensorKinds[] = {SensorKind::kContactProbe, SensorKind::kContactDepthProbe,
                                              SensorKind::kKinematicTaxel, SensorKind::kElastomerTaxel,
                                              SensorKind::kProximityTaxel};
inline constexpr int kNumSensorKinds = static_cast<int>(std::size(kSensorKinds));

absl::string_view SensorKindName(SensorKind kind);

/// ElastomerTaxel options (docs/reference.md#sensors): marker displacement = dilation + shear.
struct ElastomerParams {
  double lambda_d = 700.0;            ///< dilation spread, m⁻² (exp(−λ_d r²))
  double dilate_scale = 1.0;          ///< overall dilation gain
  double normal_exponent = 2.0;       ///< p of the normal bulge h^p
  double compressibility = 1.0;       ///< 1: local Gaussian in-plane weight; 0: incompressible (peak-normalised blend)
  double elastomer_thickness = 2e-3;  ///< gel layer thickness h (grid: bonded-layer kernel), else ε of 1/(r²+ε²) (m)
  double lambda_s = 300.0;            ///< shear spread, m⁻²
  double shear_scale = 1.0;           ///< overall shear gain
  double contact_threshold = 1e-5;    ///< a tracked point anchors when it penetrates the gel deeper (m)
  double release_threshold = -1e-4;   ///< and releases when its penetration drops below (m; −: separation)
  /// Dilation by zero-padded FFT convolution on regular grids with one shared normal (exactly the
  /// direct sum); false forces the direct sum.
  bool use_fft = true;
};

/// ProximityTaxel options (docs/reference.md#sensors).
struct ProximityParams {
  double stiffness = 100.0;       ///< k
  double shear_coupling = 0.0;    ///< k_sh
  double twist_scalar = 0.0;      ///< k_tw
  double density_scalar = 100.0;  ///< ρ = density_scalar / (sample points of the tracked link)
};

/// Where the probes of an SDF-query sensor (ContactProbe, ContactDepthProbe, KinematicTaxel,
/// ElastomerTaxel) get the signed distance to meshes from (geometry/sdf_backend.h). kGrid: the
/// mesh's narrow-band grid, built on upload or on first use, whose band covers the sensor's
/// largest probe radius.
using geometry::SdfBackend;

/// A sensor as specified by a client (unvalidated; Scene::AddSensor validates it).
struct SensorSpec {
  std::string name;  ///< unique in the scene
  SensorKind kind = SensorKind::kContactDepthProbe;
  /// The link carrying the sensor: "entity/link", or just "link" when that is unambiguous.
  std::string link;

  // Probe layout (link frame L). See ProbeLayout::Create.
  std::vector<Eigen::Vector3d> probe_local_pos;
  int grid_rows = 0, grid_cols = 0;                 ///< rows·cols == probes for a grid, 0 for a flat list
  std::vector<double> probe_radius = {0.0};         ///< 1 shared value or one per probe (m)
  std::vector<Eigen::Vector3d> probe_local_normal;  ///< 0, 1 shared or one per probe

  /// Signed distance to meshes: exact (default) or from their narrow-band grid.
  SdfBackend sdf_backend = SdfBackend::kExact;

  /// Links whose geometry this sensor ignores (same naming as `link`).
  std::vector<std::string> filter_links;

  // ContactProbe: Schmitt trigger. On when depth ≥ contact_threshold; off when depth <
  // release_threshold (defaults to contact_threshold: no hysteresis; may be negative).
  double contact_threshold = 1e-4;
  std::optional<double> release_threshold;

  // KinematicTaxel force law: the spring–damper of docs/reference.md#sensors (default) or the nonlinear law of
  // docs/reference.md#contact-laws (normal force with ramped damping and regularised Coulomb friction for the
  // tangential part; the twist term keeps spring_damper.twist_damping).
  enum class ForceLaw { kSpringDamper, kNonlinear };
  static constexpr ForceLaw kForceLaws[] = {ForceLaw::kSpringDamper, ForceLaw::kNonlinear};
  /// "spring_damper", "nonlinear".
  static absl::string_view ForceLawName(ForceLaw law);
  ForceLaw force_law = ForceLaw::kSpringDamper;
  contact::SpringDamperParams spring_damper;
  contact::NonlinearLawParams nonlinear;

  // ElastomerTaxel and ProximityTaxel: the links whose geometry is tracked ("entity/link" or bare
  // names), and how many surface points are sampled from them (split across the tracked links by
  // area; each per-env asset variant gets the full budget).
  std::vector<std::string> track_links;
  int n_sample_points = 500;
  ElastomerParams elastomer;
  ProximityParams proximity;

  /// Measured-branch imperfections (all sensor kinds).
  ImperfectionSpec imperfections;
};

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_SENSOR_SPEC_H_
