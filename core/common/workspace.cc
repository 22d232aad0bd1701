#include "core/common/workspace.h"

#include <algorithm>
#include <cstdint>

#include "core/common/check.h"

namespace taxel {

namespace {

constexpr size_t kMinBlockBytes = size_t{64} << 10;

size_t RoundUp(size_t bytes) { return (bytes + Workspace::kAlignment - 1) & ~(Workspace::kAlignment - 1); }

}  // namespace

Workspace::Block Workspace::MakeBlock(size_t size) {
  Block b;
  b.size = size;
  b.storage = std::make_unique<std::byte[]>(size + kAlignment);
  const auto address = reinterpret_cast<uintptr_t>(b.storage.get());
  b.begin = b.storage.get() + (RoundUp(address) - address);
  return b;
}

size_t Workspace::used_bytes() const {
  size_t used = 0;
  for (size_t b = 0; b < mark_.block && b < blocks_.size(); ++b) used += blocks_[b].size;
  return used + mark_.offset;
}

void* Workspace::Allocate(size_t bytes) {
  TAXEL_DCHECK(open_scopes_ > 0);
  bytes = RoundUp(std::max<size_t>(bytes, 1));
  // The current block, or the next existing one that fits, or a new one.
  while (mark_.block < blocks_.size()) {
    Block& b = blocks_[mark_.block];
    if (b.size - mark_.offset >= bytes) {
      void* p = b.begin + mark_.offset;
      mark_.offset += bytes;
      return p;
    }
    ++mark_.block;
    mark_.offset = 0;
  }
  blocks_.push_back(MakeBlock(RoundUp(std::max({bytes, capacity_, kMinBlockBytes}))));  // at least doubles
  capacity_ += blocks_.back().size;
  mark_.block = blocks_.size() - 1;
  mark_.offset = bytes;
  return blocks_.back().begin;
}

void Workspace::Release(Mark mark) {
  --open_scopes_;
  mark_ = mark;
  if (open_scopes_ > 0 || blocks_.size() <= 1) return;
  // Outermost scope closed after an overflow: one block of the total size from now on.
  blocks_.clear();
  blocks_.push_back(MakeBlock(capacity_));
}

}  // namespace taxel
