// The messages of a program (docs/backend-protocol.md, after the handshake): the step request and its answer's
// parts (live values' identity keys, tensor answers), written by the server side (protocol/serve.h) and read,
// validated, by the client side (protocol/remote_backend.h). Reading throws ProtocolError naming the place.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "judge/backend.h"
#include "judge/observation.h"
#include "judge/trace.h"
#include "program/program.h"

namespace parity::protocol {

// A live value's identity keys: equal keys, the same storage or tensor. Opaque integers chosen by the backend.
struct LiveKeys {
  int id = -1;
  std::int64_t storage = 0, tensor = 0;
  std::optional<std::int64_t> base, grad_storage, grad_tensor;
  bool operator==(const LiveKeys&) const = default;
};

// `python`: the step's PyTorch statement, sent to a backend that asked for it (empty: none).
nlohmann::json step_request(const program::Step& step, int index, const judge::StepReads& reads,
                            const std::string& python);

nlohmann::json live_to_json(const LiveKeys&, bool with_grad_tensor);
// `declared` says which keys the backend must send.
LiveKeys live_from_json(const nlohmann::json&, const judge::Observations& declared, const std::string& where);

// A full tensor answer (observe), or one with only its elements (read).
nlohmann::json tensor_to_json(const judge::TensorObs&);
nlohmann::json values_to_json(const std::vector<double>&);
// A tensor answer that raised is thrown as std::runtime_error with its message (the run loop's "reading the
// step's result raised"); a field `declared` needs and the answer lacks is a ProtocolError.
judge::TensorObs tensor_from_json(const nlohmann::json&, const judge::Observations& declared, bool with_grad,
                                  const std::string& where);
// `declared`: whether the backend observes values; one that does not may leave them out (they read as none).
std::vector<double> values_from_json(const nlohmann::json&, bool declared, const std::string& where);

// A step's error: {"message", "category", "exception"}; a missing category is classified as LibTorch's messages
// are; a missing exception (the C++ class thrown, judge/exception_type.h) is not compared.
nlohmann::json error_to_json(const judge::StepError&);
judge::StepError error_from_json(const nlohmann::json&, const std::string& where);

}  // namespace parity::protocol
