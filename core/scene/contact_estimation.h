// The contact matrix of a scene: which links are rows and columns (resolved from the spec's
// names and globs), the surface samples of the shapes involved, and the per-step update from
// the poses (ESTIMATED) or from the simulator's reported contacts (REPORTED).
#ifndef TAXEL_CORE_SCENE_CONTACT_ESTIMATION_H_
#define TAXEL_CORE_SCENE_CONTACT_ESTIMATION_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/common/ids.h"
#include "core/common/workspace.h"
#include "core/contact/contact_matrix.h"
#include "core/contact/pair_contact.h"
#include "core/contact/surface_samples.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/scene_model.h"
#include "core/sensors/probe_kernels.h"

namespace taxel::scene {

/// Contacts a simulator reports with a step (REPORTED source), structure of arrays of length K.
struct ReportedContacts {
  absl::Span<const int32_t> env;      ///< env of each contact
  absl::Span<const int32_t> body;     ///< canonical link index of the body the force acts on
  absl::Span<const int32_t> partner;  ///< canonical link index of the partner
  absl::Span<const double> force;     ///< [K, 3] normal force on the body (N, world)
  absl::Span<const double> friction;  ///< optional [K, 3] friction force on the body
  size_t size() const { return env.size(); }
};

class ContactEstimation {
 public:
  using KinematicsFn = std::function<const sensors::LinkKinematics&(int env, LinkIndex link)>;

  /// Resolves the selection. Errors (INVALID_ARGUMENT naming `field`.bodies / .partners and the
  /// offending names): unknown names, globs matching nothing, no robot links; law validation.
  /// RESOURCE_EXHAUSTED (naming `field`.sample_spacing or `field`.bodies) when the surface samples
  /// or the matrix do not fit `budget`, which is asked before each is allocated.
  ///
  /// sdf_backend GRID (ESTIMATED only): every unscaled mesh of the rows' and columns' links gets
  /// its narrow-band grid from `meshes` — MeshLookup::Grid with a band of at least
  /// MeshLookup::kMinGridBand: the grid built on upload or for a GRID sensor, else one built now
  /// (its bytes from `budget`) — and the sampled pairs test samples against it. Errors naming
  /// `field`.sdf_backend: INVALID_ARGUMENT with source REPORTED; FAILED_PRECONDITION without
  /// `meshes` when the selection holds a mesh; RESOURCE_EXHAUSTED when a grid does not fit.
  static absl::StatusOr<std::unique_ptr<ContactEstimation>> Create(const contact::ContactMatrixSpec& spec,
                                                                   const SceneModel& model, absl::string_view field,
                                                                   MemoryBudget& budget = MemoryBudget::Unlimited(),
                                                                   const geometry::MeshLookup* meshes = nullptr);

  const contact::ContactMatrixSpec& spec() const { return spec_; }
  contact::ContactMatrix& matrix() { return *matrix_; }
  const contact::ContactMatrix& matrix() const { return *matrix_; }
  /// Row of a link (−1 when not selected) and the column a partner link falls in (−1 unselected).
  int row_of(LinkIndex l) const { return row_of_link_[l.value()]; }
  int column_of(LinkIndex l) const { return column_of_link_[l.value()]; }

  /// ESTIMATED: recomputes env e from the current poses and velocities (scratch from `ws`). With
  /// spec().gradients, each cell (b, p) also gets ∂F/∂(ξ_b, ξ_p) (ContactMatrix::gradient): ξ_b the
  /// world twist of body b about its link origin, ξ_p that of partner p about the origin of the
  /// column's first link (all of a column's links moving as one rigid body), translation then
  /// rotation, N/m and N/rad; the normal part only, the links' velocities held fixed.
  /// Implicit–implicit pairs of shapes start from env e's previous solution of the same pair
  /// (contact::ImplicitPairState): calls for different envs may run concurrently, calls for one env
  /// may not. The results depend on env e's own history only, never on the thread count.
  void EstimateEnv(int env, const SceneModel& model, const KinematicsFn& kinematics, Workspace& ws);
  /// Forgets env e: zeroes its matrix and drops its pairs' warm starts (after Scene::Reset the next
  /// estimate solves cold).
  void ResetEnv(int env);
  /// Newton steps of the implicit–implicit pair solves of env e's last estimate (0 before any).
  int64_t implicit_pair_iterations(int env) const {
    return implicit_iterations_.empty() ? 0 : implicit_iterations_[env];
  }
  /// The states of env e's implicit–implicit pairs of shapes (empty when there are none), each as
  /// left by the last estimate that reached it (pairs whose bounds did not overlap keep theirs).
  absl::Span<const contact::ImplicitPairState> implicit_pair_states(int env) const {
    if (implicit_states_.empty()) return {};
    return implicit_states_[env];
  }

  /// REPORTED: checks a step's contacts (env ids must be among `stepped`, links in range, forces
  /// finite); INVALID_ARGUMENT naming "contacts.<array>[k]".
  absl::Status ValidateReported(const ReportedContacts& contacts, absl::Span<const int32_t> stepped) const;
  /// REPORTED: clears the stepped envs and adds the contacts of selected pairs (others dropped).
  /// A contact acts on both of its links: +force on `body` in (row body, column of partner), and
  /// −force on `partner` in (row partner, column of body) — so a simulator reports each contact
  /// once, in either order, and robot/robot cells are antisymmetric as in ESTIMATED.
  void ApplyReported(const ReportedContacts& contacts, absl::Span<const int32_t> stepped);

  size_t memory_bytes() const;

 private:
  ContactEstimation() = default;
  /// Calls fn(row, column, b, q, asset_b, asset_q, mirrored) for every (row link b, partner link q)
  /// that env's estimate considers, in a fixed order: not self-pairs, robot/robot pairs once from
  /// the lower link index (`mirrored`: the pair also fills (row of q, column of b)), not empty
  /// object slots. The order numbers the implicit pair states.
  template <typename Fn>
  void ForEachLinkPair(int env, const SceneModel& m, Fn&& fn) const;
  /// ESTIMATED: numbers the implicit shapes of every asset and sizes the per-env pair states
  /// (RESOURCE_EXHAUSTED naming `field`.bodies when they do not fit `budget`).
  absl::Status CreateImplicitStates(const SceneModel& m, absl::string_view field, MemoryBudget& budget);
  contact::ContactMatrixSpec spec_;
  std::unique_ptr<contact::ContactMatrix> matrix_;
  std::vector<LinkIndex> row_links_;
  std::vector<std::vector<LinkIndex>> column_links_;
  std::vector<int> row_of_link_, column_of_link_;
  bool InMatrix(int link) const { return row_of_link_[link] >= 0 || column_of_link_[link] >= 0; }
  // gradients: ESTIMATED only, every shape of the matrix's links implicit (INVALID_ARGUMENT naming
  // `field`.gradients otherwise).
  absl::Status CheckGradientShapes(const SceneModel& m, absl::string_view field) const;
  // ESTIMATED: reserves the surface samples of the links in the matrix (kMaxSamples at most).
  absl::Status ReserveSamples(const SceneModel& model, absl::string_view field, MemoryBudget& budget) const;
  // ESTIMATED: samples those surfaces and, with GRID, finds their meshes' grids (see Create).
  absl::Status PrepareShapes(const SceneModel& model, absl::string_view field, MemoryBudget& budget,
                             const geometry::MeshLookup* meshes);

  // What the ESTIMATED pairs use of one shape.
  struct ShapeData {
    contact::SurfaceSamples samples;
    std::shared_ptr<const geometry::MeshSdfGrid> grid;  // GRID and an unscaled mesh; else null
  };
  // Per link, asset and shape (only for links in the matrix).
  std::vector<std::vector<std::vector<ShapeData>>> shapes_;
  // Implicit shapes per link and asset: ordinal among the asset's implicit shapes (−1: another
  // kind), and their count. Empty when the matrix has no implicit–implicit pair.
  std::vector<std::vector<std::vector<int>>> implicit_ordinal_;
  std::vector<std::vector<int>> implicit_count_;
  // Per env: the state of each implicit–implicit pair of shapes, in ForEachLinkPair order (for a
  // link pair, shape i of b against shape j of q at i·count_q + j), and the last estimate's steps.
  std::vector<std::vector<contact::ImplicitPairState>> implicit_states_;
  std::vector<int64_t> implicit_iterations_;
};

}  // namespace taxel::scene

#endif  // TAXEL_CORE_SCENE_CONTACT_ESTIMATION_H_
