#include "impl/autograd/grad_mode.h"

namespace parity::impl::autograd {

namespace {
thread_local bool g_grad_enabled = true;
}

bool grad_mode_enabled() { return g_grad_enabled; }
void set_grad_mode(bool enabled) { g_grad_enabled = enabled; }

}  // namespace parity::impl::autograd
