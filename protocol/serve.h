// The server side of the backend protocol (docs/backend-protocol.md): any judge::Backend behind stdin/stdout.
// `parity serve --backend impl` is impl as the reference protocol backend, so that a campaign through the protocol
// can be held to the in-process one.
#pragma once
#include <istream>
#include <ostream>

#include "judge/backend.h"
#include "protocol/handshake.h"

namespace parity::protocol {

// Answers requests from `in` on `out` until `in` ends or a `bye`. Returns 0, or 2 after a request it could not
// read (its error is written to `err`: the other side broke the protocol).
int serve(judge::Backend& backend, const Capabilities& declared, std::istream& in, std::ostream& out,
          std::ostream& err);

}  // namespace parity::protocol
