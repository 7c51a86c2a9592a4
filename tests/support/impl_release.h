// impl behaves as one PyTorch release only where one is chosen (impl/torch_version.h): nothing is followed by
// default. A suite of impl's own tests states the release its expectations are LibTorch's for by deriving its
// fixture from FollowsRelease; a test that compares releases chooses each inside it with a
// TargetTorchVersionGuard. A test of impl that forgets fails on the first behaviour that differs by release.
#pragma once
#include <gtest/gtest.h>

#include "impl/torch_version.h"

namespace parity::testing {

template <int Major, int Minor>
class FollowsRelease : public ::testing::Test {
 private:
  impl::TargetTorchVersionGuard release_{impl::TorchVersion{Major, Minor}};
};

// The release impl's unit tests were written against: Debian's LibTorch, the default oracle.
using FollowsTorch113 = FollowsRelease<1, 13>;

}  // namespace parity::testing
