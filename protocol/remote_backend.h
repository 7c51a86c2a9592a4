// A backend in another process, spoken to over the backend protocol (docs/backend-protocol.md): `--impl-cmd` and
// `--oracle-cmd`. Its session answers the run loop from one exchange per step (judge::Session::will_run), and asks
// again only for what that exchange did not cover. A backend process that dies or breaks the protocol throws
// judge::SessionLost out of the run loop; the next session starts a fresh process.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "judge/backend.h"
#include "protocol/handshake.h"

namespace parity::protocol {

inline constexpr std::chrono::milliseconds kDefaultStartTimeout{30000};

class BackendProcess;

class RemoteBackend final : public judge::Backend {
 public:
  // `expected`: what the campaign's probe saw, which every later start must declare again (nullptr: anything).
  RemoteBackend(std::string command, std::chrono::milliseconds start_timeout, const Capabilities* expected = nullptr);
  ~RemoteBackend() override;

  std::string name() const override;
  std::string version() const override;
  // Starts the process first when none runs. Throws ProtocolError when its handshake fails.
  std::unique_ptr<judge::Session> start() override;
  const Capabilities& capabilities();  // starting the process when none runs
  // How long one answer may take; none (the default) waits, for an evaluating process whose parent enforces the
  // case's time limit. A backend that takes longer is killed and its session lost (`parity claims` runs protocol
  // backends in its own process, with this).
  void set_answer_timeout(std::chrono::milliseconds t) { answer_timeout_ = t; }

 private:
  friend class RemoteSession;
  void ensure_started();
  void lose();  // the process is of no more use: kill it, the next start() begins another

  std::string command_;
  std::chrono::milliseconds start_timeout_;
  std::optional<Capabilities> expected_;
  std::optional<std::chrono::milliseconds> answer_timeout_;
  std::unique_ptr<BackendProcess> process_;
  Capabilities capabilities_;
};

// Starts `command`, shakes hands and ends it: what a campaign checks before it forks anything. Throws
// ProtocolError saying why a backend cannot be used (it did not start, took longer than `start_timeout`, wrote
// something else than its hello, declared what parity does not know).
Capabilities probe(const std::string& command, std::chrono::milliseconds start_timeout);

}  // namespace parity::protocol
