// The version of parity's report records (findings.jsonl lines, run.json). Programs inside them carry their own
// (program::kSchemaVersion). Documented, as JSON Schema, in reports/schema/; bump both together.
//   1: the first reports.
//   2: run.json has `groups` (count, first case, smallest program per signature) in place of
//      `findings_by_signature`, and `device`; findings and run.json carry `planted_faults`.
//   3: run.json has `out_of_memory`, `shrink_seconds`, `unshrunk_findings`, `isolation`, `jobs` and
//      `memory_limit_mb` (persistent workers); parity reads run.json of version 2 with their old meanings.
//   4: run.json's coverage has `situation_pairs` and `backward_through`; a version 3 run.json reads as one that
//      reached none of them.
//   5: findings have `reproducible` (confirming runs before shrinking), and a crash's divergence has `signal`
//      with its signature naming it ("neg:crash:SIGSEGV"), and an observed tensor of more than 4096 elements
//      has `values_summary` in place of its values; run.json has `flaky_findings`, `resumed`, `budget`
//      (the `--cases` and `--seconds` asked for, so a partial run can be told from a whole one) and `partial`
//      (what `parity merge --allow-partial` let through); a version 4 record reads as unconfirmed, a crash by no
//      signal, never resumed, with nothing flaky, an unknown budget and merged whole.
//   6: run.json and findings have `oracle` ("libtorch", or "impl-cpu": reports/oracle.h); a record of an older
//      version reads as judged by LibTorch.
//   7: a trace's gradients have `version` and `grad_alias_of`, and are observed with every live value after
//      each step that writes (not after backward steps only); an older trace's gradient reads as its value's own,
//      at version 0.
//   8: run.json's coverage has `role_pairs` and `role_triples` (events on one storage keyed by the role of the
//      tensor each happened to); a version 7 run.json reads as one that met none of them.
//   9: findings have `origin` (generated, mutated or corpus: reports/case_origin.h) and run.json has `guidance`
//      (coverage guidance's share and counts); a version 8 finding reads as generated, a run.json as unguided.
//  10: a raised step of a trace has `exception` (the C++ class thrown: judge/exception_type.h), and a divergence
//      may be of kind `exception_type`; a version 9 trace reads as one whose backends named no class.
//  11: an `exception` may be std::logic_error (1.13's AccumulateGrad), which version 10 called `other`.
//  12: run.json's coverage has `op_operands` (each op × operand situation met: judge/operand_class.h); a version
//      11 run.json reads as one that met none.
#pragma once

namespace parity::reports {

inline constexpr int kReportSchemaVersion = 12;

}  // namespace parity::reports
