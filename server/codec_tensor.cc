// Tensors and poses.
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include "server/codec.h"

namespace taxel::server {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the wire format is little-endian");

size_t DTypeSize(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT32: return 4;
    case v1::FLOAT64: return 8;
    case v1::INT32: return 4;
    case v1::BOOL: return 1;
    default: return 0;
  }
}

namespace {

// The enum name, or the number for a value this server does not know (proto3 enums are open).
std::string DTypeName(v1::DType dtype) {
  const std::string& name = v1::DType_Name(dtype);
  return name.empty() ? std::to_string(static_cast<int>(dtype)) : name;
}

}  // namespace

std::string ShapeString(absl::Span<const int64_t> shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

absl::StatusOr<TensorView> ViewTensor(const v1::Tensor& tensor, absl::string_view field) {
  TensorView view;
  view.dtype = tensor.dtype();
  const size_t item = DTypeSize(view.dtype);
  if (item == 0) {
    return InvalidFieldError(
        field, absl::StrCat("dtype must be FLOAT32, FLOAT64, INT32 or BOOL, got ", DTypeName(tensor.dtype())));
  }
  if (!tensor.nonzero_mask().empty()) {
    return InvalidFieldError(absl::StrCat(field, ".nonzero_mask"),
                             "inputs must be dense (the sparse form is for outputs); leave it empty");
  }
  view.shape.assign(tensor.shape().begin(), tensor.shape().end());
  int64_t n = 1;
  for (size_t a = 0; a < view.shape.size(); ++a) {
    const int64_t d = view.shape[a];
    if (d < 0) {
      return InvalidFieldError(field, absl::StrCat("shape ", ShapeString(view.shape), " has a negative dimension"));
    }
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 8 / d) {
      return InvalidFieldError(field, absl::StrCat("shape ", ShapeString(view.shape), " is too large"));
    }
    n *= d;
  }
  view.num_elements = n;
  const uint64_t expected = static_cast<uint64_t>(n) * item;
  if (tensor.data().size() != expected) {
    return InvalidFieldError(field, absl::StrCat("shape ", ShapeString(view.shape), " of ", v1::DType_Name(view.dtype),
                                                 " needs ", expected, " bytes, got ", tensor.data().size()));
  }
  view.bytes = tensor.data();
  return view;
}

absl::StatusOr<absl::Span<const double>> RealValues(const TensorView& view, absl::string_view field,
                                                    std::vector<double>* storage) {
  const size_t n = static_cast<size_t>(view.num_elements);
  if (view.dtype == v1::FLOAT64) {
    if (reinterpret_cast<uintptr_t>(view.bytes.data()) % alignof(double) == 0) {
      return absl::MakeConstSpan(reinterpret_cast<const double*>(view.bytes.data()), n);
    }
    storage->resize(n);
    if (n > 0) std::memcpy(storage->data(), view.bytes.data(), n * sizeof(double));  // (null data() at n = 0)
    return absl::MakeConstSpan(*storage);
  }
  if (view.dtype == v1::FLOAT32) {
    storage->resize(n);
    const char* p = view.bytes.data();
    for (size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      (*storage)[i] = f;
    }
    return absl::MakeConstSpan(*storage);
  }
  return InvalidFieldError(field, absl::StrCat("expected dtype FLOAT32 or FLOAT64, got ", v1::DType_Name(view.dtype)));
}

void EncodeTensor(v1::DType dtype, absl::Span<const int64_t> shape, const void* data, size_t bytes, v1::Tensor* out) {
  out->set_dtype(dtype);
  out->mutable_shape()->Assign(shape.begin(), shape.end());
  out->mutable_data()->assign(static_cast<const char*>(data), bytes);
}

void EncodeDoubles(absl::Span<const int64_t> shape, absl::Span<const double> values, v1::Tensor* out) {
  EncodeTensor(v1::FLOAT64, shape, values.data(), values.size() * sizeof(double), out);
}

QuatOrder FromProto(v1::QuatOrder order) {
  switch (order) {
    case v1::XYZW: return QuatOrder::kXyzw;
    case v1::WXYZ: return QuatOrder::kWxyz;
    default: return QuatOrder::kUnspecified;
  }
}

v1::QuatOrder ToProto(QuatOrder order) {
  switch (order) {
    case QuatOrder::kXyzw: return v1::XYZW;
    case QuatOrder::kWxyz: return v1::WXYZ;
    default: return v1::QUAT_ORDER_UNSPECIFIED;
  }
}

absl::StatusOr<RigidTransform> DecodePose(const v1::Pose& pose, absl::string_view field) {
  double v[7] = {0, 0, 0, 0, 0, 0, 1};  // identity in xyzw
  if (pose.position_size() != 0 && pose.position_size() != 3) {
    return InvalidFieldError(absl::StrCat(field, ".position"),
                             absl::StrCat("expected 3 values or none, got ", pose.position_size()));
  }
  for (int i = 0; i < pose.position_size(); ++i) {
    v[i] = pose.position(i);
    if (!std::isfinite(v[i])) {
      return InvalidFieldError(absl::StrCat(field, ".position[", i, "]"),
                               absl::StrCat("expected a finite number, got ", v[i]));
    }
  }
  QuatOrder order = QuatOrder::kXyzw;
  if (pose.quaternion_size() != 0) {
    if (pose.quaternion_size() != 4) {
      return InvalidFieldError(absl::StrCat(field, ".quaternion"),
                               absl::StrCat("expected 4 values or none, got ", pose.quaternion_size()));
    }
    order = FromProto(pose.quat_order());
    TAXEL_RETURN_IF_ERROR(CheckQuatOrder(order, absl::StrCat(field, ".quat_order")));
    for (int i = 0; i < 4; ++i) {
      v[3 + i] = pose.quaternion(i);
      if (!std::isfinite(v[3 + i])) {
        return InvalidFieldError(absl::StrCat(field, ".quaternion[", i, "]"),
                                 absl::StrCat("expected a finite number, got ", v[3 + i]));
      }
    }
  }
  return PoseFromArray(v, order, field);
}

void EncodePose(const RigidTransform& X, v1::Pose* out) {
  double v[7];
  PoseToArray(X, QuatOrder::kXyzw, v);
  out->mutable_position()->Assign(v, v + 3);
  out->mutable_quaternion()->Assign(v + 3, v + 7);
  out->set_quat_order(v1::XYZW);
}

}  // namespace taxel::server
