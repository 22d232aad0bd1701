#include "core/contact/contact_matrix.h"

#include <algorithm>

namespace taxel::contact {

absl::string_view ContactSourceName(ContactSource source) {
  switch (source) {
    case ContactSource::kEstimated: return "estimated";
    case ContactSource::kReported: return "reported";
  }
  return "unknown";
}

bool IsGlob(const std::string& p) { return p.find_first_of("*?") != std::string::npos; }

bool GlobMatch(const std::string& pattern, const std::string& text) {
  // Iterative wildcard matching with backtracking to the last '*'.
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

ContactMatrix::ContactMatrix(int num_envs, std::vector<std::string> row_names, std::vector<std::string> column_names,
                             bool friction, bool gradients)
    : num_envs_(num_envs), row_names_(std::move(row_names)), column_names_(std::move(column_names)) {
  normal_.assign(static_cast<size_t>(num_envs_) * rows() * cols() * 3, 0.f);
  if (friction) friction_.assign(normal_.size(), 0.f);
  if (gradients) gradient_.assign(normal_.size() * 12, 0.f);
  touched_.resize(num_envs_);
  overflow_.assign(num_envs_, 0);
}

float* ContactMatrix::Accumulate(int env, int row, int col, float** friction_out, float** gradient_out) {
  const uint32_t cell = static_cast<uint32_t>(row * cols() + col);
  std::vector<uint32_t>& t = touched_[env];
  if (!overflow_[env]) {
    if (t.size() >= static_cast<size_t>(rows()) * cols() / 4 + 16) {
      overflow_[env] = 1;
      t.clear();
    } else {
      t.push_back(cell);
    }
  }
  const size_t at = Offset(env) + static_cast<size_t>(cell) * 3;
  if (friction_out != nullptr) *friction_out = has_friction() ? &friction_[at] : nullptr;
  if (gradient_out != nullptr) *gradient_out = has_gradient() ? &gradient_[at * 12] : nullptr;
  return &normal_[at];
}

void ContactMatrix::ClearEnv(int env) {
  const size_t n = static_cast<size_t>(rows()) * cols() * 3;
  if (overflow_[env]) {
    std::fill(normal_.begin() + Offset(env), normal_.begin() + Offset(env) + n, 0.f);
    if (has_friction()) std::fill(friction_.begin() + Offset(env), friction_.begin() + Offset(env) + n, 0.f);
    if (has_gradient()) std::fill(gradient_.begin() + Offset(env) * 12, gradient_.begin() + (Offset(env) + n) * 12, 0.f);
    overflow_[env] = 0;
    return;
  }
  for (uint32_t cell : touched_[env]) {
    const size_t at = Offset(env) + static_cast<size_t>(cell) * 3;
    normal_[at] = normal_[at + 1] = normal_[at + 2] = 0.f;
    if (has_friction()) friction_[at] = friction_[at + 1] = friction_[at + 2] = 0.f;
    if (has_gradient()) std::fill_n(gradient_.begin() + at * 12, kGradientFloats, 0.f);
  }
  touched_[env].clear();
}

}  // namespace taxel::contact
