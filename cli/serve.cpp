// `parity serve --backend impl|libtorch`: one of parity's own backends behind the backend protocol
// (docs/backend-protocol.md), on stdin and stdout: the reference protocol backend, and a way to use this build's
// LibTorch as another parity's judge.
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "impl_backend/backend.h"
#include "oracle/torch_backend.h"
#include "protocol/serve.h"

namespace parity::cli {

namespace {

constexpr std::string_view kHelp = R"(usage: parity serve --backend B

Serves one of parity's backends over the backend protocol (docs/backend-protocol.md) on stdin and stdout, for
as long as stdin is open: `parity fuzz --impl-cmd "parity serve --backend impl"` runs a campaign through the
protocol, which finds what an in-process campaign finds.

options:
  --backend B   impl (the library under test, following this build's LibTorch release), or libtorch (this
                build's LibTorch, a judge for another parity: --oracle-cmd)

It declares every op, dtype and observation, and the devices this build runs.

exit status: 0 stdin ended, 2 bad usage or a request that is no protocol message (said on stderr).
)";

}  // namespace

int serve_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  Args args("parity serve", argv, {{"--backend"}});
  if (!args.positional().empty()) throw UsageError("unexpected argument \"" + args.positional()[0] + "\" (see `parity serve --help`)");
  const std::string which = args.value("--backend").value_or("");
  std::unique_ptr<judge::Backend> backend;
  if (which == "impl") backend = impl_backend::make_impl_backend();
  else if (which == "libtorch") backend = oracle::make_torch_backend();
  else throw UsageError("--backend must be impl or libtorch (see `parity serve --help`)");
  protocol::Capabilities declared = protocol::Capabilities::everything(backend->name(), backend->version());
  // A device this build cannot reach is not declared: a campaign on cuda then refuses before it starts.
  const bool cuda = which == "impl" ? impl_backend::built_with_cuda() : oracle::linked_with_cuda();
  if (!cuda) std::erase(declared.devices, program::Device::CUDA);
  std::ios::sync_with_stdio(false);
  return protocol::serve(*backend, declared, std::cin, std::cout, std::cerr);
}

}  // namespace parity::cli
