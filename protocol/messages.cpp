#include "protocol/messages.h"

#include "judge/error_category.h"
#include "judge/exception_type.h"
#include "program/content.h"
#include "program/json.h"
#include "program/json_object.h"
#include "protocol/handshake.h"

namespace parity::protocol {

using judge::Observation;
using nlohmann::json;
using program::Obj;

namespace {

json numbers(const std::vector<double>& v) {
  json out = json::array();
  for (double d : v) out.push_back(program::number_to_json(d));
  return out;
}

std::optional<std::int64_t> optional_key(const Obj& o, std::string_view key) {
  if (!o.has(key) || o.at(key).is_null()) return std::nullopt;
  return o.int64(key);
}

// The backend's own words become a ProtocolError naming the message they were in.
template <typename F>
auto reading(F f) {
  try {
    return f();
  } catch (const program::JsonError& e) {
    throw ProtocolError(e.what());
  }
}

}  // namespace

json step_request(const program::Step& step, int index, const judge::StepReads& reads, const std::string& python) {
  program::Program one;
  one.steps.push_back(step);
  json r = {{"type", "step"},         {"index", index},      {"step", program::to_json(one).at("steps").at(0)},
            {"before", reads.before}, {"read", reads.read},  {"observe", reads.observe},
            {"grad", reads.grad}};
  if (!python.empty()) r["python"] = python;
  // A leaf with seeded contents (rand): its whole storage, so that no backend reimplements parity's seeding.
  if (program::spec(step.op).py.find("{data}") != std::string_view::npos) {
    const program::Attrs& a = step.attrs;
    r["data"] = numbers(program::seeded_content(a.seed, program::storage_extent(a.sizes, a.strides, a.offset), a.dtype));
  }
  return r;
}

json live_to_json(const LiveKeys& k, bool with_grad_tensor) {
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
  json j = {{"id", k.id}, {"storage", k.storage}, {"tensor", k.tensor}, {"base", opt(k.base)},
            {"grad_storage", opt(k.grad_storage)}};
  if (with_grad_tensor) j["grad_tensor"] = opt(k.grad_tensor);
  return j;
}

LiveKeys live_from_json(const json& j, const judge::Observations& declared, const std::string& where) {
  return reading([&] {
    Obj o(j, where);
    LiveKeys k;
    k.id = o.int32("id");
    // Keys a backend does not declare stand for nothing: every value its own storage and tensor.
    k.storage = declared.has(Observation::Storage) ? o.int64("storage") : -1;
    k.tensor = declared.has(Observation::Identity) ? o.int64("tensor") : -1;
    if (declared.has(Observation::Views)) k.base = optional_key(o, "base");
    if (declared.has(Observation::Grad)) {
      k.grad_storage = optional_key(o, "grad_storage");
      k.grad_tensor = optional_key(o, "grad_tensor");
    }
    return k;
  });
}

json values_to_json(const std::vector<double>& v) { return {{"values", numbers(v)}}; }

json tensor_to_json(const judge::TensorObs& t) {
  json j = {{"sizes", t.sizes},
            {"strides", t.strides},
            {"offset", t.offset},
            {"dtype", program::to_string(t.dtype)},
            {"device", t.device},
            {"contiguous", t.contiguous},
            {"channels_last", t.channels_last},
            {"channels_last_3d", t.channels_last_3d},
            {"non_overlapping_dense", t.non_overlapping_dense},
            {"values", numbers(t.values)},
            {"requires_grad", t.requires_grad},
            {"is_leaf", t.is_leaf},
            {"retains_grad", t.retains_grad},
            {"version", t.version}};
  if (const auto raised = judge::raised_marker_category(t.grad_fn))
    j["grad_fn"] = {{"raised", std::string(judge::to_string(*raised))}};
  else
    j["grad_fn"] = t.grad_fn.empty() ? json(nullptr) : json(t.grad_fn);
  if (t.grad)
    j["grad"] = {{"sizes", t.grad->sizes}, {"strides", t.grad->strides}, {"dtype", program::to_string(t.grad->dtype)},
                 {"values", numbers(t.grad->values)}, {"version", t.grad->version}};
  else
    j["grad"] = nullptr;
  return j;
}

std::vector<double> values_from_json(const json& j, bool declared, const std::string& where) {
  return reading([&] {
    Obj o(j, where);
    if (o.has("raised")) throw std::runtime_error(o.string("raised"));
    if (!declared && !o.has("values")) return std::vector<double>{};
    return o.numbers("values");
  });
}

judge::TensorObs tensor_from_json(const json& j, const judge::Observations& declared, bool with_grad,
                                  const std::string& where) {
  return reading([&] {
    Obj o(j, where);
    if (o.has("raised")) throw std::runtime_error(o.string("raised"));
    judge::TensorObs t;
    t.sizes = o.ints("sizes", judge::kMaxObservedDims);
    t.dtype = program::parse_dtype_field(o, "dtype");
    t.device = o.string("device");
    if (declared.has(Observation::Layout)) {
      t.strides = o.ints("strides", judge::kMaxObservedDims);
      t.offset = o.int64("offset");
      t.contiguous = o.boolean("contiguous");
      t.channels_last = o.boolean("channels_last");
      t.channels_last_3d = o.boolean("channels_last_3d");
      t.non_overlapping_dense = o.boolean("non_overlapping_dense");
    }
    if (declared.has(Observation::Values)) t.values = o.numbers("values");
    if (declared.has(Observation::Autograd)) {
      t.requires_grad = o.boolean("requires_grad");
      t.is_leaf = o.boolean("is_leaf");
      t.retains_grad = o.boolean("retains_grad");
    }
    if (declared.has(Observation::Version)) t.version = o.int64("version");
    if (declared.has(Observation::GradFn)) {
      const json& g = o.at("grad_fn");
      if (g.is_object()) {
        // Reading grad_fn raised: as LibTorch's adapter records it, by category.
        Obj raised(g, where + ".grad_fn");
        const std::string message = raised.string("raised");
        const auto category = judge::parse_error_category(message);
        t.grad_fn = judge::raised_marker(category ? *category : judge::classify_torch_message(message));
      } else if (!g.is_null()) {
        t.grad_fn = o.string("grad_fn");
      }
    }
    if (with_grad && declared.has(Observation::Grad) && !o.at("grad").is_null()) {
      Obj g(o.at("grad"), where + ".grad");
      judge::GradObs go;
      go.sizes = g.ints("sizes", judge::kMaxObservedDims);
      if (declared.has(Observation::Layout)) go.strides = g.ints("strides", judge::kMaxObservedDims);
      go.dtype = program::parse_dtype_field(g, "dtype");
      if (declared.has(Observation::Values)) go.values = g.numbers("values");
      if (declared.has(Observation::Version)) go.version = g.int64("version");
      t.grad = std::move(go);
    }
    return t;
  });
}

json error_to_json(const judge::StepError& e) {
  json j = {{"message", e.what()}, {"category", std::string(judge::to_string(e.category))}};
  if (e.exception) j["exception"] = std::string(judge::to_string(*e.exception));
  return j;
}

judge::StepError error_from_json(const json& j, const std::string& where) {
  return reading([&] {
    Obj o(j, where);
    const std::string message = o.string("message");
    std::optional<judge::ExceptionType> exception;
    if (o.has("exception")) {
      const std::string name = o.string("exception");
      exception = judge::parse_exception_type(name);
      if (!exception)
        o.fail_field("exception", "is " + program::quote(name) + ", not one of the exception types parity names");
    }
    if (!o.has("category")) return judge::StepError(judge::classify_torch_message(message), message, exception);
    const std::string name = o.string("category");
    const auto category = judge::parse_error_category(name);
    if (!category) o.fail_field("category", "is " + program::quote(name) + ", not one of parity's error categories");
    return judge::StepError(*category, message, exception);
  });
}

}  // namespace parity::protocol
