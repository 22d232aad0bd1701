// Scratch memory of one executor worker: a bump arena with nested scopes.
//
// Every kernel that needs temporary arrays (crosstalk passes, FFT rows, gathered radii, ...) takes
// them from the Workspace of the worker that runs it (`Executor::ParallelFor` hands out the worker
// index; the scene keeps one Workspace per worker). Nothing on the data path keeps scratch in
// `thread_local` storage, so all of it is owned, bounded by the largest step, and reported in the
// scene's `memory_bytes()`.
//
//   Workspace::Scope scope(ws);               // everything taken below is given back at '}'
//   float* tmp = ws.Take<float>(n);          // uninitialised, 64-byte aligned
//   double* acc = ws.TakeZeroed<double>(n);
//
// Memory comes in blocks that never move, so pointers stay valid while their scope is open even
// when later requests add blocks. When the outermost scope closes after the arena overflowed its
// first block, the blocks are merged into one of the total size: after the first step, a steady
// workload allocates nothing.
//
// Not thread-safe: one Workspace belongs to one worker at a time.
#ifndef TAXEL_CORE_COMMON_WORKSPACE_H_
#define TAXEL_CORE_COMMON_WORKSPACE_H_

#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace taxel {

class Workspace {
  struct Mark {
    size_t block = 0;   // index into blocks_
    size_t offset = 0;  // bytes used in that block
  };

 public:
  /// Alignment of every block handed out, in bytes (a cache line; enough for AVX-512 loads).
  static constexpr size_t kAlignment = 64;

  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  Workspace(Workspace&&) = default;
  Workspace& operator=(Workspace&&) = default;

  /// Gives back, when it ends, everything taken from the workspace since it began. Scopes nest.
  class Scope {
   public:
    explicit Scope(Workspace& ws) : ws_(ws), mark_(ws.mark_) { ++ws_.open_scopes_; }
    ~Scope() { ws_.Release(mark_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Workspace& ws_;
    Mark mark_;
  };

  /// Room for `n` values of T, uninitialised, valid until the innermost open Scope ends. Nothing is
  /// constructed: write plain numbers directly, class types (e.g. Eigen fixed-size vectors) with
  /// std::uninitialized_fill or placement new. Nothing is destroyed either.
  /// @pre a Scope is open; T is trivially destructible.
  template <typename T>
  T* Take(size_t n) {
    static_assert(std::is_trivially_destructible_v<T>, "Workspace never runs destructors");
    static_assert(alignof(T) <= kAlignment);
    return static_cast<T*>(Allocate(n * sizeof(T)));
  }

  /// As Take, with every byte zero (0 and 0.0 for arithmetic types). @pre T is trivially copyable.
  template <typename T>
  T* TakeZeroed(size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    T* p = Take<T>(n);
    if (n > 0) std::memset(static_cast<void*>(p), 0, n * sizeof(T));
    return p;
  }

  /// Bytes reserved from the system (all blocks): the high-water mark of the largest step so far.
  size_t capacity_bytes() const { return capacity_; }
  /// Bytes currently handed out.
  size_t used_bytes() const;

 private:
  struct Block {
    std::unique_ptr<std::byte[]> storage;  // size + kAlignment bytes, for alignment
    std::byte* begin = nullptr;            // aligned start
    size_t size = 0;
  };

  static Block MakeBlock(size_t size);
  void* Allocate(size_t bytes);
  void Release(Mark mark);

  std::vector<Block> blocks_;
  Mark mark_;
  size_t capacity_ = 0;
  int open_scopes_ = 0;
};

/// One Workspace per executor worker, indexed by the `worker` argument of ParallelFor.
class WorkspacePool {
 public:
  /// Makes sure there are at least `n` workspaces (existing ones keep their memory).
  void Reserve(int n) {
    while (static_cast<int>(pool_.size()) < n) pool_.push_back(std::make_unique<Workspace>());
  }
  Workspace& operator[](int worker) { return *pool_[static_cast<size_t>(worker)]; }
  int size() const { return static_cast<int>(pool_.size()); }
  /// Sum of the workspaces' capacity_bytes().
  size_t capacity_bytes() const {
    size_t total = 0;
    for (const auto& w : pool_) total += w->capacity_bytes();
    return total;
  }

 private:
  std::vector<std::unique_ptr<Workspace>> pool_;  // stable addresses while the pool grows
};

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_WORKSPACE_H_
