#include "server/response_buffers.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "grpc/slice.h"

namespace taxel::server {
namespace {

struct Buffer {
  std::unique_ptr<char[]> data;
  size_t capacity;
};

// Idle buffers, smallest first. Never destroyed: slices may be released by gRPC threads during
// process exit.
class Pool {
 public:
  Buffer* Take(size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it =
        std::lower_bound(idle_.begin(), idle_.end(), size, [](const Buffer* b, size_t s) { return b->capacity < s; });
    if (it != idle_.end() && (*it)->capacity / 2 <= size) {
      Buffer* b = *it;
      idle_.erase(it);
      idle_bytes_ -= b->capacity;
      return b;
    }
    return nullptr;
  }

  void Give(Buffer* b) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::lower_bound(idle_.begin(), idle_.end(), b->capacity,
                               [](const Buffer* x, size_t c) { return x->capacity < c; });
    idle_.insert(it, b);
    idle_bytes_ += b->capacity;
    // Over the cap: free the smallest idle buffers first (large responses are the ones that pay
    // for fresh pages).
    while (idle_bytes_ > kMaxIdleResponseBytes && !idle_.empty()) {
      idle_bytes_ -= idle_.front()->capacity;
      delete idle_.front();
      idle_.erase(idle_.begin());
    }
  }

  size_t idle_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return idle_bytes_;
  }

 private:
  std::mutex mu_;
  std::vector<Buffer*> idle_;
  size_t idle_bytes_ = 0;
};

Pool& GetPool() {
  static Pool* pool = new Pool();
  return *pool;
}

void ReturnToPool(void* buffer) { GetPool().Give(static_cast<Buffer*>(buffer)); }

}  // namespace

grpc::Slice NewResponseSlice(size_t size, char** data) {
  if (size < kMinPooledResponseBytes) {
    // Never inlined (grpc_slice_malloc keeps up to 23 bytes inside the grpc_slice struct, which
    // moves when the slice is copied; *data must stay valid).
    grpc_slice s = grpc_slice_malloc_large(size);
    *data = reinterpret_cast<char*>(GRPC_SLICE_START_PTR(s));
    return grpc::Slice(s, grpc::Slice::STEAL_REF);
  }
  Buffer* b = GetPool().Take(size);
  if (b == nullptr) {
    constexpr size_t kRound = 1 << 20;  // whole MiB, so that slightly larger responses reuse it
    const size_t capacity = (size + kRound - 1) / kRound * kRound;
    b = new Buffer{std::unique_ptr<char[]>(new char[capacity]), capacity};
  }
  *data = b->data.get();
  return grpc::Slice(grpc_slice_new_with_user_data(b->data.get(), size, ReturnToPool, b), grpc::Slice::STEAL_REF);
}

size_t IdleResponseBytes() { return GetPool().idle_bytes(); }

}  // namespace taxel::server
