// impl as a program::Backend: runs Programs on the in-house library (the oracle/ folder does the same for
// LibTorch). Outside impl/, since it depends on program/ and impl does not.
#pragma once
#include <memory>

#include "program/backend.h"

namespace parity::impl_backend {

std::unique_ptr<program::Backend> make_impl_backend();

}  // namespace parity::impl_backend
