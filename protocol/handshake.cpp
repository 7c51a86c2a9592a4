#include "protocol/handshake.h"

#include <algorithm>

#include "program/json_object.h"
#include "reports/build_info.h"

namespace parity::protocol {

using nlohmann::json;
using program::Obj;

bool Capabilities::has_dtype(program::DType d) const {
  return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}
bool Capabilities::has_device(program::Device d) const {
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

Capabilities Capabilities::everything(std::string library, std::string version) {
  Capabilities c;
  c.library = std::move(library);
  c.version = std::move(version);
  c.ops.assign(program::op_table().size(), true);
  c.dtypes.assign(std::begin(program::kAllDTypes), std::end(program::kAllDTypes));
  c.devices.assign(std::begin(program::kAllDevices), std::end(program::kAllDevices));
  return c;
}

json hello_request() {
  json ops = json::array(), dtypes = json::array();
  for (const program::OpSpec& op : program::op_table()) ops.push_back(op.name);
  for (program::DType d : program::kAllDTypes) dtypes.push_back(program::to_string(d));
  return {{"type", "hello"},
          {"protocol", kProtocolVersion},
          {"parity", std::string(reports::parity_commit())},
          {"ops", ops},
          {"dtypes", dtypes}};
}

json hello_answer(const Capabilities& c) {
  json ops = json::array(), dtypes = json::array(), devices = json::array(), observations = json::array();
  for (const program::OpSpec& op : program::op_table())
    if (c.runs(op.id)) ops.push_back(op.name);
  for (program::DType d : c.dtypes) dtypes.push_back(program::to_string(d));
  for (program::Device d : c.devices) devices.push_back(program::to_string(d));
  for (std::size_t i = 0; i < judge::kObservationCount; ++i)
    if (c.observations.has(static_cast<judge::Observation>(i)))
      observations.push_back(judge::to_string(static_cast<judge::Observation>(i)));
  json features = json::array();
  if (c.python) features.push_back("python");
  return {{"type", "hello"},       {"protocol", c.protocol}, {"library", {{"name", c.library}, {"version", c.version}}},
          {"ops", ops},            {"dtypes", dtypes},        {"devices", devices},
          {"observations", observations}, {"features", features}};
}

namespace {

// Each name of `key` read by `parse`, which says nullopt for one parity does not know.
template <typename Parse>
auto names(const Obj& o, std::string_view key, std::string_view what, Parse parse) {
  std::vector<typename decltype(parse(std::string_view{}))::value_type> out;
  for (const std::string& name : o.strings(key)) {
    auto v = parse(name);
    if (!v) o.fail_field(key, "names " + std::string(what) + " " + program::quote(name) + " that parity does not know");
    if (std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  return out;
}

}  // namespace

Capabilities parse_hello_answer(const json& j) {
  try {
    Obj o(j, "the backend's hello answer");
    if (o.string("type") != "hello") o.fail_field("type", "must be \"hello\" (the answer to parity's hello)");
    Capabilities c;
    c.protocol = o.int32("protocol");
    if (c.protocol != kProtocolVersion)
      o.fail("speaks protocol " + std::to_string(c.protocol) + "; this parity speaks " +
             std::to_string(kProtocolVersion) + " (docs/backend-protocol.md)");
    Obj lib(o.at("library"), o.where() + ".library");
    c.library = lib.string("name");
    c.version = lib.string("version");
    c.ops.assign(program::op_table().size(), false);
    for (program::OpId op : names(o, "ops", "an op", [](std::string_view n) { return program::find_op(n); }))
      c.ops[static_cast<std::size_t>(op)] = true;
    if (std::none_of(program::op_table().begin(), program::op_table().end(), [&](const program::OpSpec& op) {
          return op.kind == program::OpKind::Factory && c.runs(op.id);
        }))
      o.fail_field("ops", "has no factory (rand, zeros, ...): no program could make a tensor");
    c.dtypes = names(o, "dtypes", "a dtype", [](std::string_view n) { return program::parse_dtype(n); });
    if (c.dtypes.empty()) o.fail_field("dtypes", "is empty");
    c.devices = names(o, "devices", "a device", [](std::string_view n) { return program::parse_device(n); });
    if (!c.has_device(program::Device::CPU)) o.fail_field("devices", "must include \"cpu\"");
    c.observations = judge::Observations::none();
    for (judge::Observation ob :
         names(o, "observations", "an observation", [](std::string_view n) { return judge::parse_observation(n); }))
      c.observations.add(ob);
    if (o.has("features"))
      for (const std::string& f : o.strings("features")) {
        if (f != "python") o.fail_field("features", "names " + program::quote(f) + ", which parity does not offer");
        c.python = true;
      }
    return c;
  } catch (const program::JsonError& e) {
    throw ProtocolError(e.what());
  }
}

json side_record(const Capabilities& c) {
  return {{"library", c.library}, {"version", c.version}, {"protocol", c.protocol}};
}

}  // namespace parity::protocol
