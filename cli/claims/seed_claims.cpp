// The registry of seed claims. Each entry restates one factual claim of a seed file (shared/seeds/*.txt) and
// checks it with a program of its own; some claims are wrong, and LibTorch says which. Python names in the
// comments (x.grad, y.clone()) are the values of the program, not code of the seeds. One file per seed file holds
// its claims (seed_000.cpp ... seed_004.cpp).
#include <vector>

#include "cli/claims/claim.h"
#include "cli/claims/seed_claim_support.h"

namespace parity::cli::claims {

const std::vector<Claim>& seed_claims() {
  static const std::vector<Claim> claims = [] {
    std::vector<Claim> all;
    for (auto* seed : {seed_000_claims, seed_001_claims, seed_002_claims, seed_003_claims, seed_004_claims})
      for (Claim& c : seed()) all.push_back(std::move(c));
    return all;
  }();
  return claims;
}

}  // namespace parity::cli::claims
