// The partner-resolved contact matrix (docs/reference.md#contact-laws, the ProtoMotions contract): per env, per
// selected body (row) and per partner (column), the sum of the contact forces on the body from
// that partner, world axes, newtons:
//
//   F[e, b, p] = Σ_k f_n[k]·n_on_b[k]   (normal part; opposing contacts cancel)
//   Ff[e, b, p] = Σ_k friction_on_b[k]  (optional friction part)
//   G[e, b, p] = ∂F[e, b, p]/∂(ξ_b, ξ_p)  (optional, ESTIMATED implicit pairs: [3, 2, 6] per cell)
//
// Rows are robot links; columns are `terrain`, `robot/<link>`, `object/<slot>`,
// `projectile/<slot>`, `static/<name>` in that canonical order. Storage [E, B, P, 3] float32.
#ifndef TAXEL_CORE_CONTACT_CONTACT_MATRIX_H_
#define TAXEL_CORE_CONTACT_CONTACT_MATRIX_H_

#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/string_view.h"
#include "core/contact/nonlinear_law.h"
#include "core/geometry/sdf_backend.h"

namespace taxel::contact {

/// Where the forces come from.
///  - kEstimated: Taxel generates the contacts of the selected pairs from the poses it receives
///    and applies the nonlinear law as a pressure (see pair_contact.h).
///  - kReported: each step carries the simulator's own contacts; Taxel selects, aggregates,
///    resets and slices them.
enum class ContactSource { kEstimated, kReported };
inline constexpr ContactSource kContactSources[] = {ContactSource::kEstimated, ContactSource::kReported};
/// "estimated", "reported".
absl::string_view ContactSourceName(ContactSource source);

/// The nonlinear law's defaults with the stiffness and damping of a pressure (see ContactMatrixSpec).
inline NonlinearLawParams DefaultPressureLaw() {
  NonlinearLawParams p;
  p.stiffness = 1e9;
  p.damping = 1e5;
  return p;
}

struct ContactMatrixSpec {
  /// Rows: robot link names, globs (`*`, `?`) or "all". Empty disables the matrix.
  std::vector<std::string> bodies;
  /// Columns: `terrain`, `robot/<link>`, `object/<slot>`, `projectile/<slot>`, `static/<name>`,
  /// or globs over those names.
  std::vector<std::string> partners = {"terrain"};
  ContactSource source = ContactSource::kEstimated;
  bool friction = false;  ///< keep the friction matrix too
  /// Pressure law of the estimated contacts: p = k_p·δ^n + damping (Pa), integrated over the
  /// contact area. Defaults sized for robots on the ground: k_p 1e9 Pa/m^1.5 (a 20 × 10 cm foot
  /// sole 1 mm deep carries 632 N), k_c 1e5 Pa·s/m; the friction defaults of the law.
  NonlinearLawParams law = DefaultPressureLaw();
  double sample_spacing = 0.005;  ///< m, surface sampling for pairs without a closed form
  /// ESTIMATED: where the sampled pairs read a mesh's signed distance (pair_contact.h). kGrid: from
  /// its narrow-band grid, so a sample's depth is off by at most the grid's measured max_error
  /// while it lies within the band, exact deeper, and no contact beyond. Refused with REPORTED.
  geometry::SdfBackend sdf_backend = geometry::SdfBackend::kExact;
  /// ESTIMATED: also keep the gradient of the normal part (ContactMatrix::gradient): every shape
  /// of the rows' and columns' links must be implicit (pair_contact.h, PairForceJacobian).
  bool gradients = false;

  bool enabled() const { return !bodies.empty(); }
};

/// `*` matches any run of characters, `?` one character; everything else literally.
bool GlobMatch(const std::string& pattern, const std::string& text);
bool IsGlob(const std::string& pattern);

class ContactMatrix {
 public:
  ContactMatrix(int num_envs, std::vector<std::string> row_names, std::vector<std::string> column_names, bool friction,
                bool gradients = false);

  int num_envs() const { return num_envs_; }
  int rows() const { return static_cast<int>(row_names_.size()); }
  int cols() const { return static_cast<int>(column_names_.size()); }
  bool has_friction() const { return !friction_.empty(); }
  bool has_gradient() const { return !gradient_.empty(); }
  /// Floats of one cell's gradient: [3, 2, 6] = ∂F_i/∂ξ with ξ the world twist (translation then
  /// rotation) of the body (index 0) or of the partner (index 1), see ContactEstimation.
  static constexpr int kGradientFloats = 36;
  const std::vector<std::string>& row_names() const { return row_names_; }
  const std::vector<std::string>& column_names() const { return column_names_; }

  /// [B·P·3] of env e.
  float* normal(int env) { return &normal_[Offset(env)]; }
  const float* normal(int env) const { return &normal_[Offset(env)]; }
  float* friction(int env) { return has_friction() ? &friction_[Offset(env)] : nullptr; }
  const float* friction(int env) const { return has_friction() ? &friction_[Offset(env)] : nullptr; }
  /// [B·P·36] of env e, when kept.
  const float* gradient(int env) const { return has_gradient() ? &gradient_[Offset(env) * 12] : nullptr; }
  /// Value of (env, row, column), normal part.
  Eigen::Vector3f Normal(int env, int row, int col) const {
    const float* p = normal(env) + (static_cast<size_t>(row) * cols() + col) * 3;
    return {p[0], p[1], p[2]};
  }

  /// The 3 floats of cell (row, col) of env e for accumulation (normal, and friction when kept:
  /// *friction_out; its 36 gradient floats when kept: *gradient_out), remembering the cell so that
  /// ClearEnv only zeroes cells that were written.
  float* Accumulate(int env, int row, int col, float** friction_out, float** gradient_out = nullptr);
  /// Zeroes env e (only its written cells).
  void ClearEnv(int env);
  /// Bytes of one matrix: E × B × P × 3 × 4.
  size_t matrix_bytes() const { return static_cast<size_t>(num_envs_) * rows() * cols() * 3 * sizeof(float); }
  size_t memory_bytes() const { return matrix_bytes() * ((has_friction() ? 2 : 1) + (has_gradient() ? 12 : 0)); }

 private:
  size_t Offset(int env) const { return static_cast<size_t>(env) * rows() * cols() * 3; }
  int num_envs_;
  std::vector<std::string> row_names_, column_names_;
  std::vector<float> normal_, friction_, gradient_;
  // Cells written since the last clear, per env; an env whose list overflows is cleared whole.
  std::vector<std::vector<uint32_t>> touched_;
  std::vector<uint8_t> overflow_;
};

}  // namespace taxel::contact

#endif  // TAXEL_CORE_CONTACT_CONTACT_MATRIX_H_
