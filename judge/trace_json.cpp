#include "judge/trace_json.h"

#include <optional>
#include <string>

#include "program/json_object.h"

namespace parity::judge {

using program::describe;
using program::JsonError;
using program::number_from_json;
using program::number_to_json;
using program::Obj;
using program::parse_dtype_field;
using program::quote;

using nlohmann::json;

namespace {
json summary_to_json(const ValueSummary& s) {
  return {{"numel", s.numel},
          {"nan", s.nan},
          {"pos_inf", s.pos_inf},
          {"neg_inf", s.neg_inf},
          {"nonfinite_at", hash_text(s.nonfinite_at)},
          {"min", number_to_json(s.min)},
          {"max", number_to_json(s.max)},
          {"sum", number_to_json(s.sum)},
          {"abs_sum", number_to_json(s.abs_sum)},
          {"sum_sq", number_to_json(s.sum_sq)},
          {"checksum", number_to_json(s.checksum)},
          {"bits", hash_text(s.bits)}};
}

// The summary of a large tensor's values, written only when there is one (judge/value_summary.h).
void put_summary(json& obs, const std::optional<ValueSummary>& s) {
  if (s) obs["values_summary"] = summary_to_json(*s);
}

json grad_to_json(const GradObs& g) {
  json values = json::array();
  for (double v : g.values) values.push_back(number_to_json(v));
  json out = {{"sizes", g.sizes},
              {"strides", g.strides},
              {"dtype", to_string(g.dtype)},
              {"values", std::move(values)},
              {"alias_of", g.alias_of},
              {"grad_alias_of", g.grad_alias_of},
              {"same_as", g.same_as},
              {"replaced", g.replaced},
              {"version", g.version}};
  put_summary(out, g.summary);
  return out;
}

json obs_to_json(const TensorObs& o) {
  json values = json::array();
  for (double v : o.values) values.push_back(number_to_json(v));
  json out = {{"value", o.value},
          {"sizes", o.sizes},
          {"strides", o.strides},
          {"offset", o.offset},
          {"dtype", to_string(o.dtype)},
          {"device", o.device},
          {"requires_grad", o.requires_grad},
          {"is_leaf", o.is_leaf},
          {"retains_grad", o.retains_grad},
          {"grad_fn", o.grad_fn},
          {"version", o.version},
          {"alias_of", o.alias_of},
          {"same_as", o.same_as},
          {"is_view", o.is_view},
          {"base", o.base},
          {"contiguous", o.contiguous},
          {"channels_last", o.channels_last},
          {"channels_last_3d", o.channels_last_3d},
          {"non_overlapping_dense", o.non_overlapping_dense},
          {"values_defined", o.values_defined},
          {"values", std::move(values)},
          {"grad", o.grad ? grad_to_json(*o.grad) : json(nullptr)}};
  put_summary(out, o.summary);
  return out;
}

std::uint64_t hash_field(const Obj& o, std::string_view key) {
  const std::string text = o.string(key);
  const auto h = parse_hash_text(text);
  if (!h) o.fail_field(key, "is " + quote(text) + "; expected 16 lowercase hexadecimal digits");
  return *h;
}

// A summary beside `values` (absent in traces of older parity versions, and of tensors small enough to keep).
std::optional<ValueSummary> summary_from_json(const Obj& parent, const std::vector<double>& values) {
  if (!parent.has("values_summary")) return std::nullopt;
  Obj o(parent.at("values_summary"), parent.where() + ": values_summary");
  ValueSummary s;
  s.numel = o.int64("numel");
  s.nan = o.int64("nan");
  s.pos_inf = o.int64("pos_inf");
  s.neg_inf = o.int64("neg_inf");
  if (s.numel < 0 || s.nan < 0 || s.pos_inf < 0 || s.neg_inf < 0 || s.nan > s.numel - s.pos_inf - s.neg_inf)
    o.fail("counts are negative, or more NaNs and infinities than elements");
  if (!values.empty()) o.fail("is given beside values: a summary stands for values that were not kept");
  s.nonfinite_at = hash_field(o, "nonfinite_at");
  s.min = o.number("min");
  s.max = o.number("max");
  s.sum = o.number("sum");
  s.abs_sum = o.number("abs_sum");
  s.sum_sq = o.number("sum_sq");
  s.checksum = o.number("checksum");
  s.bits = hash_field(o, "bits");
  return s;
}

GradObs grad_from_json(const Obj& parent) {
  Obj g(parent.at("grad"), parent.where() + ": grad");
  GradObs out;
  out.sizes = g.ints("sizes", kMaxObservedDims);
  out.strides = g.ints("strides", kMaxObservedDims);
  out.dtype = parse_dtype_field(g, "dtype");
  out.values = g.numbers("values");
  out.summary = summary_from_json(g, out.values);
  // Absent in traces of older parity versions.
  if (g.has("alias_of")) out.alias_of = g.int32("alias_of");
  if (g.has("same_as")) out.same_as = g.int32("same_as");
  if (g.has("replaced")) out.replaced = g.int32("replaced");
  if (g.has("grad_alias_of")) out.grad_alias_of = g.int32("grad_alias_of");
  if (g.has("version")) out.version = g.int64("version");
  return out;
}

TensorObs obs_from_json(const json& j, const std::string& where) {
  Obj o(j, where);
  TensorObs out;
  out.value = o.int32("value");
  out.sizes = o.ints("sizes", kMaxObservedDims);
  out.strides = o.ints("strides", kMaxObservedDims);
  out.offset = o.int64("offset");
  out.dtype = parse_dtype_field(o, "dtype");
  out.device = o.string("device");
  out.requires_grad = o.boolean("requires_grad");
  out.is_leaf = o.boolean("is_leaf");
  if (o.has("retains_grad")) out.retains_grad = o.boolean("retains_grad");  // absent in traces of older parity
  out.grad_fn = o.string("grad_fn");
  out.version = o.int64("version");
  out.alias_of = o.int32("alias_of");
  if (o.has("same_as")) out.same_as = o.int32("same_as");  // absent in traces of older parity versions
  // Absent in traces written before view identity was observed.
  if (o.has("is_view")) out.is_view = o.boolean("is_view");
  if (o.has("base")) out.base = o.int32("base");
  out.contiguous = o.boolean("contiguous");
  out.channels_last = o.boolean("channels_last");
  out.channels_last_3d = o.boolean("channels_last_3d");
  out.non_overlapping_dense = o.boolean("non_overlapping_dense");
  out.values_defined = o.boolean("values_defined");
  out.values = o.numbers("values");
  out.summary = summary_from_json(o, out.values);
  if (o.has("grad") && !o.at("grad").is_null()) out.grad = grad_from_json(o);
  return out;
}

StepObs::Status parse_status(const Obj& o) {
  std::string s = o.string("status");
  for (auto st : {StepObs::Status::Ok, StepObs::Status::Error, StepObs::Status::Skipped})
    if (to_string(st) == s) return st;
  o.fail_field("status", "is " + quote(s) + "; expected ok, error or skipped");
}

ErrorCategory parse_category(const Obj& o, std::string_view key) {
  std::string s = o.string(key);
  auto c = parse_error_category(s);
  if (!c) o.fail_field(key, "is " + quote(s) + ", which is not an error category");
  return *c;
}

}  // namespace

json to_json(const Trace& t) {
  json steps = json::array();
  for (const StepObs& s : t.steps) {
    json observed = json::array();
    for (const TensorObs& o : s.observed) observed.push_back(obs_to_json(o));
    json step = {{"status", to_string(s.status)},
                 {"category", to_string(s.category)},
                 {"message", s.message},
                 {"observed", std::move(observed)},
                 {"schema_violations", s.schema_violations}};
    if (s.exception) step["exception"] = to_string(*s.exception);
    steps.push_back(std::move(step));
  }
  return {{"backend", t.backend}, {"steps", std::move(steps)}};
}

Trace trace_from_json(const json& j) {
  Obj root(j, "trace");
  Trace t;
  t.backend = root.string("backend");
  const json& steps = root.array("steps");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Obj s(steps[i], "trace " + quote(t.backend) + " step " + std::to_string(i));
    StepObs obs;
    obs.status = parse_status(s);
    obs.category = parse_category(s, "category");
    obs.message = s.string("message");
    if (s.has("exception")) {
      const std::string name = s.string("exception");
      obs.exception = parse_exception_type(name);
      if (!obs.exception) s.fail_field("exception", "is " + quote(name) + ", which is not an exception type parity knows");
    }
    const json& observed = s.array("observed");
    for (std::size_t k = 0; k < observed.size(); ++k)
      obs.observed.push_back(obs_from_json(observed[k], s.where() + " observed " + std::to_string(k)));
    if (s.has("schema_violations")) obs.schema_violations = s.strings("schema_violations");
    t.steps.push_back(std::move(obs));
  }
  return t;
}

json to_json(const Divergence& d) {
  json j = {{"step", d.step},     {"value", d.value},   {"kind", to_string(d.kind)},
            {"impl", d.impl},     {"oracle", d.oracle}, {"severity", to_string(d.severity)}};
  if (d.impl_category) j["impl_category"] = to_string(*d.impl_category);
  if (d.oracle_category) j["oracle_category"] = to_string(*d.oracle_category);
  if (!d.signal.empty()) j["signal"] = d.signal;
  return j;
}

Divergence divergence_from_json(const json& j) {
  Obj o(j, "divergence");
  Divergence d;
  d.step = o.int32("step");
  d.value = o.int32("value");
  const std::string kind = o.string("kind");
  if (auto k = parse_divergence_kind(kind)) d.kind = *k;
  else o.fail_field("kind", "is " + quote(kind) + "; not a divergence kind");
  d.impl = o.string("impl");
  d.oracle = o.string("oracle");
  std::string sev = o.string("severity");
  if (sev == to_string(Divergence::Severity::Major)) d.severity = Divergence::Severity::Major;
  else if (sev == to_string(Divergence::Severity::Minor)) d.severity = Divergence::Severity::Minor;
  else o.fail_field("severity", "is " + quote(sev) + "; expected major or minor");
  if (o.has("impl_category")) d.impl_category = parse_category(o, "impl_category");
  if (o.has("oracle_category")) d.oracle_category = parse_category(o, "oracle_category");
  if (o.has("signal")) {  // absent in findings of older parity versions
    d.signal = o.string("signal");
    if (d.kind != DivergenceKind::Crash || !Signature::parse("program:crash:" + d.signal))
      o.fail_field("signal", "is " + quote(d.signal) + "; only a crash has one, named as <signal.h> does (SIGSEGV)");
  }
  return d;
}

}  // namespace parity::judge
