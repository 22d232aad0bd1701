#!/usr/bin/env bash
# Fails when a file under the given core directory includes a gRPC, protobuf or generated-proto
# header (the core is transport-free: the server and clients own the wire), or links them.
set -euo pipefail
core="${1:?usage: $0 CORE_DIR}"
pattern='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](grpc|grpcpp|google/protobuf|google/rpc|taxel/v1/)'
if hits=$(grep -rnE "$pattern" "$core" --include='*.h' --include='*.cc' --include='*.cpp'); then
  echo "core includes transport headers:" >&2
  echo "$hits" >&2
  exit 1
fi
if hits=$(grep -nE 'gRPC::|protobuf::|taxel_proto|Threads::Threads' "$core/CMakeLists.txt"); then
  echo "core/CMakeLists.txt links transport or thread libraries:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "core: no gRPC/protobuf includes, no transport or thread libraries"
