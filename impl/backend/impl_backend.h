// impl's Backend adapter: runs Programs on the in-house library.
#pragma once
#include <memory>

#include "program/backend.h"

namespace parity::impl {

std::unique_ptr<program::Backend> make_impl_backend();

}  // namespace parity::impl
