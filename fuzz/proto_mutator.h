// A small structure-aware mutator for inputs that are serialised protobuf messages.
//
// Why not libprotobuf-mutator: Debian 12 does not package it (apt-cache search protobuf-mutator
// finds nothing) and nothing else can be fetched here. Byte-level mutation of a serialised
// message mostly breaks the framing, so each target keeps raw bytes as its input format (seed
// corpora are serialised valid requests, reproducers are plain files) and installs this
// LLVMFuzzerCustomMutator, which parses the input and edits it through protobuf reflection:
//   - scalars and enums get boundary values (0, −0, ±1, tiny, huge, ±inf, NaN, INT_MIN/MAX,
//     out-of-range enum numbers), small perturbations or bit flips;
//   - repeated fields grow (a copy of an element), shrink or get cleared;
//   - sub-messages are cleared, created, or replaced by another message of the same type found
//     elsewhere in the input (a structural cross-over);
//   - Tensor.data is edited element by element in its dtype, or resized to match its shape;
//   - strings and bytes go through libFuzzer's own mutator (which uses the -dict entries).
// A quarter of the calls (and every input that does not parse) use libFuzzer's byte mutator
// instead, so the parser and unknown-field paths stay covered.
#ifndef TAXEL_FUZZ_PROTO_MUTATOR_H_
#define TAXEL_FUZZ_PROTO_MUTATOR_H_

#include <cstddef>
#include <cstdint>

#include "google/protobuf/message.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace taxel::fuzz {

/// Mutates the serialised `prototype`-typed message in data[0, size) in place; returns the new
/// size (<= max_size). Deterministic for a given `seed`.
size_t MutateProtoInput(const google::protobuf::Message& prototype, uint8_t* data, size_t size, size_t max_size,
                        unsigned int seed);

}  // namespace taxel::fuzz

/// Installs MutateProtoInput as the target's custom mutator for inputs of type `Message`.
#define TAXEL_FUZZ_PROTO_MUTATOR(Message)                                                                     \
  extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) { \
    static const Message* prototype = new Message;                                                            \
    return ::taxel::fuzz::MutateProtoInput(*prototype, data, size, max_size, seed);                           \
  }

#endif  // TAXEL_FUZZ_PROTO_MUTATOR_H_
