// What every seed file's claims share: the seed files' names, the way a claim is written down, and the small
// program pieces several claims build. One file per seed (seed_000.cpp ... seed_004.cpp) holds its claims, in the
// order the seed states them; seed_claims.cpp puts them together.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli/claims/claim.h"
#include "program/program_builder.h"

namespace parity::cli::claims {

inline constexpr const char* kSeed0 = "000_8f20afcace787d72.txt";
inline constexpr const char* kSeed1 = "001_0eb46fe5404de266.txt";
inline constexpr const char* kSeed2 = "002_42f908d5a4841829.txt";
inline constexpr const char* kSeed3 = "003_c73b785c5b727395.txt";
inline constexpr const char* kSeed4 = "004_992d6d9837e2f385.txt";

using Check = std::function<Verdict(const judge::Trace&)>;

inline Claim claim(std::string id, std::string source, std::vector<std::string> also_in, std::string statement,
                    const program::ProgramBuilder& b, std::vector<int> may_raise, Check check) {
  return Claim{std::move(id), std::move(source),  std::move(also_in),  std::move(statement),
               b.program(),      std::move(may_raise), std::move(check)};
}

inline std::string dtype_of(const judge::TensorObs& o) { return std::string(program::to_string(o.dtype)); }

// "shares storage with v0" / "own storage": storage relative to `source`.
inline std::string storage_vs(const judge::TensorObs& source, const judge::TensorObs& copy) {
  return shares_storage(source, copy) ? "shares the source's storage" : "storage apart from the source";
}

// An int64 tensor [11, 10, 9] that needs no grad (a leaf, like a literal): arange(3), negated, plus 11.
inline int int_tensor_11_10_9(program::ProgramBuilder& b) {
  const int r = b.arange(3, program::DType::Int64);
  const int n = b.unary(program::OpId::Neg, r);
  return b.int_scalar(program::OpId::AddScalar, n, 11);
}

// What copies of a source share with it, in words, and whether a copy is fully detached from it (seeds 001, 002).
inline std::string copy_facts(const judge::TensorObs& source, const judge::TensorObs& o) {
  return "strides " + program::render_ints(o.strides) + ", " + storage_vs(source, o) +
         ", requires_grad=" + flag(o.requires_grad) + ", leaf=" + flag(o.is_leaf) + ", grad_fn " + grad_fn_of(o);
}

inline bool detached_copy(const judge::TensorObs& source, const judge::TensorObs& o) {
  return !shares_storage(source, o) && !o.requires_grad && o.is_leaf && o.grad_fn.empty() &&
         o.values == source.values && o.dtype == source.dtype && o.sizes == source.sizes;
}

// copy.deepcopy of a non-leaf: y = 2 * ones(5) requiring grad.
struct DeepcopyNonLeafProgram {
  program::ProgramBuilder b;
  int y, dc;
  DeepcopyNonLeafProgram() {
    const int x = b.ones({5}, true);
    y = b.int_scalar(program::OpId::MulScalar, x, 2);
    dc = b.deepcopy(y);
  }
};

inline std::string deepcopy_outcome(const judge::Trace& t, int dc) {
  const auto& s = step_at(t, dc);
  if (s.status != judge::StepObs::Status::Ok) return "deepcopy " + outcome_of(s);
  const judge::TensorObs& o = made(t, dc);
  return "deepcopy ran: values " + nums(o.values) + ", requires_grad=" + flag(o.requires_grad) + ", grad_fn " +
         grad_fn_of(o);
}

// Each seed file's claims, in the order it states them.
std::vector<Claim> seed_000_claims();
std::vector<Claim> seed_001_claims();
std::vector<Claim> seed_002_claims();
std::vector<Claim> seed_003_claims();
std::vector<Claim> seed_004_claims();

}  // namespace parity::cli::claims
