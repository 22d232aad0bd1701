#include "core/scene/contact_estimation.h"

#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/field_error.h"
#include "core/common/pose.h"
#include "core/common/status_macros.h"
#include "core/contact/pair_contact.h"

namespace taxel::scene {
namespace {

using contact::GlobMatch;
using contact::IsGlob;

// Resolves selectors against candidate names (canonical order kept). `aliases[i]` are extra
// names candidate i answers to. Returns the selected candidate indices.
absl::StatusOr<std::vector<int>> Select(const std::vector<std::string>& selectors,
                                        const std::vector<std::vector<std::string>>& aliases, bool allow_all,
                                        absl::string_view field) {
  std::vector<uint8_t> chosen(aliases.size(), 0);
  std::vector<std::string> unknown;
  for (const std::string& sel : selectors) {
    bool matched = false;
    for (size_t i = 0; i < aliases.size(); ++i) {
      for (const std::string& name : aliases[i]) {
        if ((allow_all && sel == "all") || (IsGlob(sel) ? GlobMatch(sel, name) : sel == name)) {
          chosen[i] = 1;
          matched = true;
          break;
        }
      }
    }
    if (!matched) unknown.push_back(absl::StrCat("'", sel, "'"));
  }
  if (!unknown.empty()) {
    return InvalidFieldError(field,
                             absl::StrCat("unknown names or globs matching nothing: ", absl::StrJoin(unknown, ", ")));
  }
  std::vector<int> out;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (chosen[i]) out.push_back(static_cast<int>(i));
  }
  return out;
}

struct Column {
  std::string name;
  std::vector<LinkIndex> links;
};

// Partner columns in canonical order: terrain, robot links, objects, projectiles, statics.
std::vector<Column> PartnerColumns(const SceneModel& m, const std::vector<LinkIndex>& robot_links,
                                   const std::vector<std::string>& robot_names) {
  std::vector<Column> columns;
  Column terrain{"terrain", {}};
  for (int l = 0; l < m.num_links(); ++l) {
    if (m.links()[l].kind == EntityKind::kTerrain) terrain.links.push_back(LinkIndex(l));
  }
  if (!terrain.links.empty()) columns.push_back(terrain);
  for (size_t i = 0; i < robot_links.size(); ++i) columns.push_back({"robot/" + robot_names[i], {robot_links[i]}});
  for (EntityKind kind : {EntityKind::kObject, EntityKind::kProjectile, EntityKind::kStatic}) {
    for (const EntityModel& e : m.entities()) {
      if (e.kind == kind) columns.push_back({absl::StrCat(EntityKindName(kind), "/", e.name), e.links});
    }
  }
  return columns;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ContactEstimation>> ContactEstimation::Create(const contact::ContactMatrixSpec& spec,
                                                                             const SceneModel& m,
                                                                             absl::string_view field,
                                                                             MemoryBudget& budget,
                                                                             const geometry::MeshLookup* meshes) {
  TAXEL_RETURN_IF_ERROR(contact::ValidateNonlinearLaw(spec.law, absl::StrCat(field, ".law")));
  if (!(spec.sample_spacing > 0) || !std::isfinite(spec.sample_spacing)) {
    return InvalidFieldError(absl::StrCat(field, ".sample_spacing"),
                             absl::StrCat("expected a finite value > 0, got ", spec.sample_spacing));
  }
  if (spec.sdf_backend == geometry::SdfBackend::kGrid && spec.source == contact::ContactSource::kReported) {
    return InvalidFieldError(absl::StrCat(field, ".sdf_backend"),
                             "GRID applies to ESTIMATED contacts; REPORTED contacts come from the simulator");
  }
  // Robot links: a short name when unique among robot links, else "entity/link".
  std::vector<LinkIndex> robot_links;
  std::map<std::string, int> short_count;
  for (int l = 0; l < m.num_links(); ++l) {
    if (m.links()[l].kind == EntityKind::kRobot) {
      robot_links.push_back(LinkIndex(l));
      ++short_count[m.links()[l].short_name];
    }
  }
  if (robot_links.empty()) {
    return InvalidFieldError(absl::StrCat(field, ".bodies"), "the scene has no ROBOT links to select");
  }
  std::vector<std::string> robot_names;
  std::vector<std::vector<std::string>> robot_aliases;
  for (LinkIndex l : robot_links) {
    const LinkModel& link = m.link(l);
    robot_names.push_back(short_count[link.short_name] == 1 ? link.short_name : link.name);
    robot_aliases.push_back({robot_names.back(), link.name});
  }
  TAXEL_ASSIGN_OR_RETURN(std::vector<int> rows,
                         Select(spec.bodies, robot_aliases, true, absl::StrCat(field, ".bodies")));

  const std::vector<Column> columns = PartnerColumns(m, robot_links, robot_names);
  std::vector<std::vector<std::string>> column_aliases;
  for (const Column& c : columns) column_aliases.push_back({c.name});
  TAXEL_ASSIGN_OR_RETURN(std::vector<int> cols,
                         Select(spec.partners, column_aliases, false, absl::StrCat(field, ".partners")));

  std::unique_ptr<ContactEstimation> est(new ContactEstimation());
  est->spec_ = spec;
  est->row_of_link_.assign(m.num_links(), -1);
  est->column_of_link_.assign(m.num_links(), -1);
  std::vector<std::string> row_names, col_names;
  for (int r : rows) {
    est->row_of_link_[robot_links[r].value()] = static_cast<int>(est->row_links_.size());
    est->row_links_.push_back(robot_links[r]);
    row_names.push_back(robot_names[r]);
  }
  for (int c : cols) {
    for (LinkIndex l : columns[c].links) est->column_of_link_[l.value()] = static_cast<int>(est->column_links_.size());
    est->column_links_.push_back(columns[c].links);
    col_names.push_back(columns[c].name);
  }
  if (spec.gradients) TAXEL_RETURN_IF_ERROR(est->CheckGradientShapes(m, field));
  // Everything is reserved before anything large is allocated.
  const double matrix_bytes = static_cast<double>(m.num_envs()) * static_cast<double>(row_names.size()) *
                              static_cast<double>(col_names.size()) * 3 * sizeof(float) *
                              ((spec.friction ? 2 : 1) + (spec.gradients ? 12 : 0));
  TAXEL_RETURN_IF_ERROR(budget.Reserve(
      matrix_bytes, absl::StrCat(field, ".bodies"),
      absl::StrCat("a ", m.num_envs(), " x ", row_names.size(), " x ", col_names.size(), " contact matrix")));
  const bool estimated = spec.source == contact::ContactSource::kEstimated;
  if (estimated) TAXEL_RETURN_IF_ERROR(est->ReserveSamples(m, field, budget));
  est->matrix_ =
      std::make_unique<contact::ContactMatrix>(m.num_envs(), std::move(row_names), std::move(col_names), spec.friction,
                                               spec.gradients);
  if (estimated) {
    TAXEL_RETURN_IF_ERROR(est->PrepareShapes(m, field, budget, meshes));
    TAXEL_RETURN_IF_ERROR(est->CreateImplicitStates(m, field, budget));
  }
  return est;
}

absl::Status ContactEstimation::CheckGradientShapes(const SceneModel& m, absl::string_view field) const {
  const std::string f = absl::StrCat(field, ".gradients");
  if (spec_.source != contact::ContactSource::kEstimated) {
    return InvalidFieldError(f, "gradients are of ESTIMATED contacts; REPORTED forces come from the simulator");
  }
  for (int l = 0; l < m.num_links(); ++l) {
    if (!InMatrix(l)) continue;
    for (const auto& shapes : m.links()[l].assets) {
      for (const ShapeInstance& si : shapes) {
        if (si.shape.kind() == geometry::ShapeKind::kImplicit) continue;
        return InvalidFieldError(
            f, absl::StrCat("gradients need implicit shapes on both sides of every selected pair; link '",
                            m.link(LinkIndex(l)).name, "' has a ", geometry::ShapeKindName(si.shape.kind()), " shape"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ContactEstimation::ReserveSamples(const SceneModel& m, absl::string_view field,
                                               MemoryBudget& budget) const {
  // Sampling costs time in proportion to its memory: a scene takes at most kMaxSamples samples
  // (a humanoid at the default 5 mm takes about 1e5), so that one request cannot hold a request
  // thread for long.
  constexpr double kMaxSamples = 2e6;
  const double spacing = spec_.sample_spacing;
  const std::string f = absl::StrCat(field, ".sample_spacing");
  double total = 0;
  for (int l = 0; l < m.num_links(); ++l) {
    if (!InMatrix(l)) continue;
    for (const auto& shapes : m.links()[l].assets) {
      for (const ShapeInstance& si : shapes) {
        const double samples = contact::CountSurfaceSamples(si.shape, spacing);
        total += samples;
        if (total > kMaxSamples) {
          return MemoryRefusal(contact::SampleSurfaceBytes(si.shape, spacing), f,
                               absl::StrCat("sampling the surfaces at ", spacing, " m (", total,
                                            " samples so far, at link '", m.link(LinkIndex(l)).name, "')"),
                               "a scene takes at most 2e6 samples; use a larger sample_spacing");
        }
        const std::string what = absl::StrCat("sampling a surface of link '", m.link(LinkIndex(l)).name, "' at ",
                                              spacing, " m (", samples, " samples)");
        TAXEL_RETURN_IF_ERROR(budget.Reserve(contact::SampleSurfaceBytes(si.shape, spacing), f, what));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ContactEstimation::PrepareShapes(const SceneModel& m, absl::string_view field, MemoryBudget& budget,
                                              const geometry::MeshLookup* meshes) {
  const bool grid = spec_.sdf_backend == geometry::SdfBackend::kGrid;
  const std::string grid_field = absl::StrCat(field, ".sdf_backend");
  shapes_.resize(m.num_links());
  for (int l = 0; l < m.num_links(); ++l) {
    if (!InMatrix(l)) continue;
    for (const auto& shapes : m.links()[l].assets) {
      std::vector<ShapeData>& per_shape = shapes_[l].emplace_back();
      for (const ShapeInstance& si : shapes) {
        ShapeData& d = per_shape.emplace_back();
        d.samples = contact::SampleSurface(si.shape, spec_.sample_spacing);
        // Scaled meshes are the scene's own copies: no grid (as for GRID sensors).
        if (!grid || si.shape.kind() != geometry::ShapeKind::kMesh || si.scaled_mesh) continue;
        if (meshes == nullptr) {
          return FieldError(absl::StatusCode::kFailedPrecondition, grid_field, "no mesh store to build grids from");
        }
        // Any band serves: deeper than it the grid answers exactly, farther out "no contact".
        TAXEL_ASSIGN_OR_RETURN(d.grid, meshes->Grid(si.mesh_id, geometry::MeshLookup::kMinGridBand, budget, grid_field));
      }
    }
  }
  return absl::OkStatus();
}

template <typename Fn>
void ContactEstimation::ForEachLinkPair(int env, const SceneModel& m, Fn&& fn) const {
  for (size_t r = 0; r < row_links_.size(); ++r) {
    const LinkIndex b = row_links_[r];
    const int asset_b = m.AssetIn(b, env);
    if (asset_b < 0) continue;
    const int col_b = column_of_link_[b.value()];
    for (size_t c = 0; c < column_links_.size(); ++c) {
      for (LinkIndex q : column_links_[c]) {
        if (q == b) continue;  // self-pairs stay zero
        const bool mirrored = row_of_link_[q.value()] >= 0 && col_b >= 0;
        if (mirrored && q < b) continue;  // computed once, from the lower link index
        const int asset_q = m.AssetIn(q, env);
        if (asset_q < 0) continue;
        fn(static_cast<int>(r), static_cast<int>(c), b, q, asset_b, asset_q, mirrored);
      }
    }
  }
}

absl::Status ContactEstimation::CreateImplicitStates(const SceneModel& m, absl::string_view field,
                                                     MemoryBudget& budget) {
  implicit_ordinal_.resize(m.num_links());
  implicit_count_.resize(m.num_links());
  bool any = false;
  for (int l = 0; l < m.num_links(); ++l) {
    if (!InMatrix(l)) continue;
    for (const auto& shapes : m.links()[l].assets) {
      std::vector<int> ordinal;
      int count = 0;
      for (const ShapeInstance& si : shapes) {
        ordinal.push_back(si.shape.kind() == geometry::ShapeKind::kImplicit ? count++ : -1);
      }
      implicit_ordinal_[l].push_back(std::move(ordinal));
      implicit_count_[l].push_back(count);
      any |= count > 0;
    }
  }
  std::vector<size_t> per_env(m.num_envs(), 0);
  double total = 0;
  for (int e = 0; any && e < m.num_envs(); ++e) {
    ForEachLinkPair(e, m, [&](int, int, LinkIndex b, LinkIndex q, int asset_b, int asset_q, bool) {
      per_env[e] += static_cast<size_t>(implicit_count_[b.value()][asset_b]) * implicit_count_[q.value()][asset_q];
    });
    total += static_cast<double>(per_env[e]);
  }
  if (total == 0) {
    implicit_ordinal_.clear();
    implicit_count_.clear();
    return absl::OkStatus();
  }
  TAXEL_RETURN_IF_ERROR(budget.Reserve(total * sizeof(contact::ImplicitPairState), absl::StrCat(field, ".bodies"),
                                       absl::StrCat("the warm starts of ", total, " implicit shape pairs")));
  implicit_states_.resize(m.num_envs());
  for (int e = 0; e < m.num_envs(); ++e) implicit_states_[e].resize(per_env[e]);
  implicit_iterations_.assign(m.num_envs(), 0);
  return absl::OkStatus();
}

void ContactEstimation::ResetEnv(int env) {
  matrix_->ClearEnv(env);
  if (implicit_states_.empty()) return;
  for (contact::ImplicitPairState& s : implicit_states_[env]) s = contact::ImplicitPairState();
  implicit_iterations_[env] = 0;
}

void ContactEstimation::EstimateEnv(int env, const SceneModel& m, const KinematicsFn& kin, Workspace& ws) {
  contact::ContactMatrix& M = *matrix_;
  M.ClearEnv(env);
  const bool gradients = M.has_gradient();
  // Adds the force on the row's body (sign +1) or its opposite (−1) to a cell; with gradients,
  // J's body block (columns 0–5) and partner block (6–11), swapped when `swap`.
  auto add = [&](int row, int col, const contact::PairForce& f, const contact::PairForceJacobian& J, double sign,
                 bool swap) {
    if (f.normal.isZero(0) && f.friction.isZero(0) && (!gradients || J.isZero(0))) return;
    float *fv = nullptr, *gv = nullptr;
    float* nv = M.Accumulate(env, row, col, &fv, &gv);
    for (int a = 0; a < 3; ++a) nv[a] += static_cast<float>(sign * f.normal[a]);
    if (fv != nullptr) {
      for (int a = 0; a < 3; ++a) fv[a] += static_cast<float>(sign * f.friction[a]);
    }
    if (gv == nullptr) return;
    for (int a = 0; a < 3; ++a) {
      for (int k = 0; k < 12; ++k) {
        const int side = (k < 6) != swap ? 0 : 1;  // 0: the row's body, 1: the partner
        gv[a * 12 + side * 6 + k % 6] += static_cast<float>(sign * J(a, k));
      }
    }
  };
  // World bounds of every link of the matrix in this env, computed once.
  Workspace::Scope scope(ws);
  geometry::Aabb* world_bounds = ws.Take<geometry::Aabb>(m.num_links());
  std::uninitialized_fill(world_bounds, world_bounds + m.num_links(), geometry::Aabb::Empty());
  for (int l = 0; l < m.num_links(); ++l) {
    if (!InMatrix(l)) continue;
    const int asset = m.AssetIn(LinkIndex(l), env);
    if (asset >= 0) world_bounds[l] = m.links()[l].asset_bounds_L[asset].Transformed(kin(env, LinkIndex(l)).X_WL);
  }
  contact::ImplicitPairState* states = implicit_states_.empty() ? nullptr : implicit_states_[env].data();
  size_t next_state = 0;  // the first state of the current link pair
  int64_t iterations = 0;
  ForEachLinkPair(env, m, [&](int r, int c, LinkIndex b, LinkIndex q, int asset_b, int asset_q, bool mirrored) {
    // States are numbered whether or not the pair overlaps in this step.
    const size_t first = next_state;
    const int count_q = states != nullptr ? implicit_count_[q.value()][asset_q] : 0;
    if (states != nullptr) next_state += static_cast<size_t>(implicit_count_[b.value()][asset_b]) * count_q;
    if (!world_bounds[b.value()].Overlaps(world_bounds[q.value()])) return;
    const sensors::LinkKinematics& kb = kin(env, b);
    const sensors::LinkKinematics& kq = kin(env, q);
    contact::PairForce total;
    contact::PairForceJacobian J_total = contact::PairForceJacobian::Zero(), J;
    const auto& shapes_b = m.link(b).assets[asset_b];
    const auto& shapes_q = m.link(q).assets[asset_q];
    for (size_t i = 0; i < shapes_b.size(); ++i) {
      const ShapeData& da = shapes_[b.value()][asset_b][i];
      const contact::PlacedShape A{
          &shapes_b[i].shape, kb.X_WL * shapes_b[i].X_LS, &da.samples, kb.v_W, kb.w_W, kb.X_WL.p, da.grid.get()};
      const int ordinal_b = states != nullptr ? implicit_ordinal_[b.value()][asset_b][i] : -1;
      for (size_t j = 0; j < shapes_q.size(); ++j) {
        const ShapeData& dq = shapes_[q.value()][asset_q][j];
        const contact::PlacedShape B{
            &shapes_q[j].shape, kq.X_WL * shapes_q[j].X_LS, &dq.samples, kq.v_W, kq.w_W, kq.X_WL.p, dq.grid.get()};
        const int ordinal_q = ordinal_b >= 0 ? implicit_ordinal_[q.value()][asset_q][j] : -1;
        contact::ImplicitPairState* state =
            ordinal_q >= 0 ? &states[first + static_cast<size_t>(ordinal_b) * count_q + ordinal_q] : nullptr;
        const contact::PairForce f = contact::ComputePairForce(spec_.law, A, B, state, gradients ? &J : nullptr);
        if (state != nullptr) iterations += state->iterations;
        total.normal += f.normal;
        total.friction += f.friction;
        if (gradients) J_total += J;
      }
    }
    // The partner's twist is about its column's reference origin (the first link of the column:
    // a multi-link partner moves as one rigid body); a twist (δt, δθ) about o_ref is
    // (δt + δθ × (o_q − o_ref), δθ) about o_q.
    if (gradients) {
      const LinkIndex ref = column_links_[c].front();
      if (ref != q) J_total.middleCols<3>(9) -= J_total.middleCols<3>(6) * Skew(kq.X_WL.p - kin(env, ref).X_WL.p);
    }
    add(r, c, total, J_total, 1.0, false);
    // Robot/robot entries are antisymmetric (both links are single-link columns).
    if (mirrored) add(row_of_link_[q.value()], column_of_link_[b.value()], total, J_total, -1.0, true);
  });
  if (states != nullptr) implicit_iterations_[env] = iterations;
}

absl::Status ContactEstimation::ValidateReported(const ReportedContacts& k, absl::Span<const int32_t> stepped) const {
  const size_t n = k.env.size();
  if (k.body.size() != n || k.partner.size() != n || k.force.size() != 3 * n ||
      (!k.friction.empty() && k.friction.size() != 3 * n)) {
    return InvalidFieldError("contacts", absl::StrCat("env, body and partner need the same length (", n,
                                                      "), force and friction [", n, ", 3]"));
  }
  const int num_envs = matrix_->num_envs();
  std::vector<uint8_t> is_stepped(num_envs, 0);
  for (int32_t e : stepped) is_stepped[e] = 1;
  const int num_links = static_cast<int>(row_of_link_.size());
  for (size_t i = 0; i < n; ++i) {
    if (k.env[i] < 0 || k.env[i] >= num_envs || !is_stepped[k.env[i]]) {
      return InvalidFieldError(absl::StrCat("contacts.env[", i, "]"),
                               absl::StrCat("env ", k.env[i], " is not one of the envs this step updates"));
    }
    if (k.body[i] < 0 || k.body[i] >= num_links) {
      return InvalidFieldError(absl::StrCat("contacts.body[", i, "]"),
                               absl::StrCat("link index ", k.body[i], " out of range [0, ", num_links, ")"));
    }
    if (k.partner[i] < 0 || k.partner[i] >= num_links) {
      return InvalidFieldError(absl::StrCat("contacts.partner[", i, "]"),
                               absl::StrCat("link index ", k.partner[i], " out of range [0, ", num_links, ")"));
    }
    for (int a = 0; a < 3; ++a) {
      if (!std::isfinite(k.force[3 * i + a])) {
        return InvalidFieldError(absl::StrCat("contacts.force[", i, "][", a, "]"),
                                 absl::StrCat("expected a finite number, got ", k.force[3 * i + a]));
      }
      if (!k.friction.empty() && !std::isfinite(k.friction[3 * i + a])) {
        return InvalidFieldError(absl::StrCat("contacts.friction[", i, "][", a, "]"),
                                 absl::StrCat("expected a finite number, got ", k.friction[3 * i + a]));
      }
    }
  }
  return absl::OkStatus();
}

void ContactEstimation::ApplyReported(const ReportedContacts& k, absl::Span<const int32_t> stepped) {
  contact::ContactMatrix& M = *matrix_;
  for (int32_t e : stepped) M.ClearEnv(e);
  // Each contact acts on both links (Newton's third law): +f on the body, −f on the partner; each
  // side lands in the matrix when that link is a row and the other falls in a selected column.
  auto add = [&](int32_t env, int r, int c, size_t i, float sign) {
    if (r < 0 || c < 0) return;  // unselected pairs are dropped
    float* fv = nullptr;
    float* nv = M.Accumulate(env, r, c, &fv);
    for (int a = 0; a < 3; ++a) nv[a] += sign * static_cast<float>(k.force[3 * i + a]);
    if (fv != nullptr && !k.friction.empty()) {
      for (int a = 0; a < 3; ++a) fv[a] += sign * static_cast<float>(k.friction[3 * i + a]);
    }
  };
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.body[i] == k.partner[i]) continue;
    add(k.env[i], row_of_link_[k.body[i]], column_of_link_[k.partner[i]], i, 1.f);
    add(k.env[i], row_of_link_[k.partner[i]], column_of_link_[k.body[i]], i, -1.f);
  }
}

size_t ContactEstimation::memory_bytes() const {
  size_t total = sizeof(*this) + matrix_->memory_bytes();
  // (The grids are the mesh store's memory.)
  for (const auto& env : implicit_states_) total += env.capacity() * sizeof(contact::ImplicitPairState);
  for (const auto& link : shapes_) {
    for (const auto& asset : link) {
      for (const ShapeData& d : asset) {
        total += d.samples.points.capacity() * sizeof(Eigen::Vector3d) + d.samples.areas.capacity() * 8;
      }
    }
  }
  return total;
}

}  // namespace taxel::scene
