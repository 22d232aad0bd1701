// Bytes that are no request at all, sent to every RPC: INVALID_ARGUMENT naming "request", like
// Step's "request: not a valid taxel.v1.StepRequest (protobuf parse failed)".
#include "tests/server/bad_inputs/bad_input.h"

namespace taxel::testing {

std::vector<BadInput> UndecodableCases() {
  // Wire format: a tag is a varint (field << 3 | type); 0xff 0xff 0xff is a varint that never
  // ends. 0x0b / 0x0c start / end a group of field 1 (type 3 / 4): 100k of them nested is far past
  // protobuf's recursion limit (100). 0x0a 0x64 announces 100 bytes of field 1; 2 follow.
  const std::string garbage("\xff\xff\xff", 3);
  const std::string nested = std::string(100000, '\x0b') + std::string(100000, '\x0c');
  const std::string truncated("\x0a\x64\x08\x01", 4);
  std::vector<BadInput> cases;
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("taxel.v1.Taxel");
  for (int m = 0; m < service->method_count(); ++m) {
    const std::string method = service->method(m)->name();
    const std::string message = "request: not a valid " + service->method(m)->input_type()->full_name();
    for (const auto& [kind, bytes] : {std::make_pair("garbage_bytes", garbage), std::make_pair("nested_groups", nested),
                                      std::make_pair("truncated_field", truncated)}) {
      cases.push_back(Case(kind, method, Bytes(bytes), kInvalid, "request", message));
    }
  }
  return cases;
}

}  // namespace taxel::testing
