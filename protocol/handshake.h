// The backend protocol's handshake (docs/backend-protocol.md): what parity says first, and what a backend
// declares in answer: its library, the ops, dtypes and devices it runs, the observations it provides, the
// features it wants. Programs are made from what it declares, and only what it observes is compared.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "judge/observation.h"
#include "program/op_table.h"
#include "program/types.h"

namespace parity::protocol {

inline constexpr int kProtocolVersion = 1;

// A backend that cannot be used: its handshake, or a message, broke the protocol. The message says what, for a
// person who writes backends.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Capabilities {
  std::string library, version;
  int protocol = kProtocolVersion;
  std::vector<bool> ops;  // per OpId
  std::vector<program::DType> dtypes;
  std::vector<program::Device> devices;
  judge::Observations observations;
  bool python = false;  // the "python" feature: each step also comes as a PyTorch Python statement

  bool runs(program::OpId op) const { return ops.at(static_cast<std::size_t>(op)); }
  bool has_dtype(program::DType d) const;
  bool has_device(program::Device d) const;
  // Everything parity has, as its in-process backends provide it.
  static Capabilities everything(std::string library, std::string version);
};

// parity's first message: every op and dtype it knows, so that a backend that runs them all can echo them.
nlohmann::json hello_request();
nlohmann::json hello_answer(const Capabilities&);
// Throws ProtocolError naming what is wrong: not a hello, another protocol version, a name parity does not know,
// no factory among the ops.
Capabilities parse_hello_answer(const nlohmann::json&);

// The record of one side of a comparison, as run.json writes it: {"library", "version", "protocol"}.
nlohmann::json side_record(const Capabilities&);

}  // namespace parity::protocol
