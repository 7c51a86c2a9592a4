#include "protocol/remote_backend.h"

#include <map>
#include <unordered_map>

#include "program/json_object.h"
#include "program/json_text.h"
#include "program/op_table.h"
#include "protocol/backend_process.h"
#include "protocol/messages.h"
#include "reports/repro.h"

namespace parity::protocol {

using judge::SessionLost;
using nlohmann::json;

namespace {

// A line of the backend's as a JSON object, or the ProtocolError saying what it was instead.
json parse_line(const std::string& line, const std::string& what) {
  json j;
  try {
    j = program::parse_json_text(line, what);
  } catch (const std::exception& e) {
    throw ProtocolError(what + " is not JSON: " + program::quote(line.substr(0, 200)) + " (" + e.what() + ")");
  }
  if (!j.is_object()) throw ProtocolError(what + " is not a JSON object: " + program::quote(line.substr(0, 200)));
  return j;
}

void expect_type(const json& j, std::string_view type, const std::string& what) {
  const auto it = j.find("type");
  if (it == j.end() || !it->is_string() || *it != type)
    throw ProtocolError(what + " must have \"type\": \"" + std::string(type) + "\", got " + program::describe(j));
}

// The handshake on a started process. Throws ProtocolError.
Capabilities shake_hands(BackendProcess& process, std::chrono::milliseconds start_timeout, const std::string& command) {
  if (!process.send(hello_request().dump()))
    throw ProtocolError("the backend `" + command + "` did not read its hello: it " + process.end());
  const auto line = process.receive(std::chrono::steady_clock::now() + start_timeout);
  if (!line) {
    const std::string how = process.end();
    if (how == "was killed")
      throw ProtocolError("the backend `" + command + "` did not answer parity's hello within " +
                          std::to_string(start_timeout.count()) + " ms (--backend-start-ms)");
    throw ProtocolError("the backend `" + command + "` " + how + " before answering parity's hello");
  }
  return parse_hello_answer(parse_line(*line, "the backend's first line (its hello answer)"));
}

// Opaque integer keys as the distinct addresses the run loop compares (judge::Session): interned per session,
// never null.
class Keys {
 public:
  const void* of(std::int64_t key) {
    auto [it, fresh] = index_.try_emplace(key, index_.size() + 1);
    return reinterpret_cast<const void*>(it->second * alignof(std::max_align_t));
  }
  const void* unique() { return reinterpret_cast<const void*>((++unique_ + (std::size_t{1} << 40)) * alignof(std::max_align_t)); }

 private:
  std::unordered_map<std::int64_t, std::size_t> index_;
  std::size_t unique_ = 0;
};

}  // namespace

class RemoteSession final : public judge::Session {
 public:
  explicit RemoteSession(RemoteBackend& backend) : backend_(backend) {
    json answer = exchange({{"type", "start"}}, "the answer to start");
    expect_type(answer, "started", "the answer to start");
  }

  void will_run(const program::Step& step, int index, const judge::StepReads& reads) override {
    const Capabilities& caps = backend_.capabilities_;
    if (!caps.runs(step.op))
      lost(SessionLost::Kind::Protocol, "parity was about to send op " + std::string(program::spec(step.op).name) +
                                            ", which the backend did not declare (a bug in parity)");
    step_ = StepAnswer{};
    step_.index = index;
    step_.grad = reads.grad;
    const std::string python = caps.python ? reports::python_statement(step, index) : std::string();
    const std::string what = "the answer to step " + std::to_string(index);
    json answer = exchange(step_request(step, index, reads, python), what);
    try {
      expect_type(answer, "step", what);
      program::Obj o(answer, what);
      if (!o.boolean("ok")) step_.error = error_from_json(o.at("error"), what + ".error");
      if (o.has("before"))
        for (const auto& [id, v] : o.at("before").items()) step_.before[std::stoi(id)] = v;
      read_live(o.array("live"), what + ".live", reads.grad);
      if (o.has("tensors"))
        for (const auto& [id, v] : o.at("tensors").items()) step_.tensors[std::stoi(id)] = v;
      for (int id : reads.read)
        if (has_value(id)) require(step_.tensors, id, what + ".tensors");
      for (int id : reads.observe)
        if (has_value(id)) require(step_.tensors, id, what + ".tensors");
      observed_ = reads.observe;
    } catch (const ProtocolError& e) {
      lost(SessionLost::Kind::Protocol, e.what());
    } catch (const std::logic_error& e) {  // std::stoi of a key that is no id
      lost(SessionLost::Kind::Protocol, what + " names a value that is no integer id (" + e.what() + ")");
    }
    ran_ = false;
  }

  void execute(const program::Step& step, int index) override {
    if (step_.index != index) will_run(step, index, {});
    ran_ = true;
    if (step_.error) throw *step_.error;
  }

  bool has_value(int id) const override {
    return id >= 0 && static_cast<std::size_t>(id) < live_.size() && live_[id].has_value();
  }

  judge::TensorObs observe(int id, bool with_values, bool with_grad) override {
    const bool cached = ran_ && std::find(observed_.begin(), observed_.end(), id) != observed_.end() &&
                        (!with_grad || step_.grad) && step_.tensors.count(id);
    judge::TensorObs t;
    if (cached) {
      t = decode(step_.tensors.at(id), with_grad && step_.grad, id);
    } else {
      json answer = read(id, true, with_grad);
      t = decode(answer, with_grad, id);
    }
    t.value = id;
    if (!with_values) t.values.clear();
    if (!with_grad) t.grad.reset();
    return t;
  }

  std::vector<double> values(int id) const override {
    auto& self = const_cast<RemoteSession&>(*this);  // a read may need an exchange; it changes no value
    const std::string where = "the values of value " + std::to_string(id);
    if (!ran_ && step_.before.count(id)) return self.decode_values(step_.before.at(id), where);
    if (ran_ && step_.tensors.count(id)) return self.decode_values(step_.tensors.at(id), where);
    return self.decode_values(self.read(id, false, false), where);
  }

  const void* storage_key(int id) const override { return live(id).storage; }
  const void* tensor_key(int id) const override { return live(id).tensor; }
  const void* base_key(int id) const override { return live(id).base; }
  const void* grad_storage_key(int id) const override { return live(id).grad_storage; }
  const void* grad_tensor_key(int id) override {
    if (!live(id).grad_tensor_known) {
      // Not in the step's answer (only a step that asked for .grad names its gradient tensor): ask.
      json answer = read(id, true, true);
      Live& l = live_[static_cast<std::size_t>(id)].value();
      l.grad_tensor_known = true;
      const auto it = answer.find("grad_tensor");
      if (it == answer.end())
        lost(SessionLost::Kind::Protocol, "the answer to a read of value " + std::to_string(id) +
                                              " with its gradient lacks \"grad_tensor\"");
      l.grad_tensor = it->is_null() ? nullptr : keys_.of(it->get<std::int64_t>());
    }
    return live(id).grad_tensor;
  }

 private:
  struct Live {
    const void* storage = nullptr;
    const void* tensor = nullptr;
    const void* base = nullptr;
    const void* grad_storage = nullptr;
    const void* grad_tensor = nullptr;
    bool grad_tensor_known = false;
  };
  struct StepAnswer {
    int index = -1;
    bool grad = false;
    std::optional<judge::StepError> error;
    std::map<int, json> before, tensors;
  };

  [[noreturn]] void lost(SessionLost::Kind kind, const std::string& why) {
    backend_.lose();
    throw SessionLost(kind, why);
  }

  // One request and its answer; a dead or garbling backend ends the session.
  json exchange(const json& request, const std::string& what) {
    if (!backend_.process_) lost(SessionLost::Kind::Crash, "the backend process is gone");
    BackendProcess& p = *backend_.process_;
    if (!p.send(request.dump(-1, ' ', false, json::error_handler_t::replace)))
      lost(SessionLost::Kind::Crash, "the backend process " + p.end() + " (it did not read " + what.substr(14) + ")");
    std::optional<std::chrono::steady_clock::time_point> deadline;
    if (backend_.answer_timeout_) deadline = std::chrono::steady_clock::now() + *backend_.answer_timeout_;
    const auto line = p.receive(deadline);
    if (!line) {
      const std::string how = p.end();
      if (how == "was killed")
        lost(SessionLost::Kind::Crash, "the backend process did not send " + what + " within " +
                                           std::to_string(backend_.answer_timeout_->count()) + " ms, and was killed");
      lost(SessionLost::Kind::Crash, "the backend process " + how + " before sending " + what);
    }
    try {
      return parse_line(*line, what);
    } catch (const ProtocolError& e) {
      lost(SessionLost::Kind::Protocol, e.what());
    }
  }

  json read(int id, bool autograd, bool grad) {
    const std::string what = "the answer to a read of value " + std::to_string(id);
    json answer =
        exchange({{"type", "read"}, {"ids", json::array({id})}, {"autograd", autograd}, {"grad", grad}}, what);
    try {
      expect_type(answer, "tensors", what);
      program::Obj o(answer, what);
      program::Obj tensors(o.at("tensors"), what + ".tensors");
      return tensors.at(std::to_string(id));
    } catch (const program::JsonError& e) {
      lost(SessionLost::Kind::Protocol, e.what());
    } catch (const ProtocolError& e) {
      lost(SessionLost::Kind::Protocol, e.what());
    }
  }

  judge::TensorObs decode(const json& j, bool with_grad, int id) {
    try {
      return tensor_from_json(j, backend_.capabilities_.observations, with_grad,
                              "the tensor answer for value " + std::to_string(id));
    } catch (const ProtocolError& e) {
      lost(SessionLost::Kind::Protocol, e.what());
    }
  }
  std::vector<double> decode_values(const json& j, const std::string& where) {
    try {
      return values_from_json(j, backend_.capabilities_.observations.has(judge::Observation::Values), where);
    } catch (const ProtocolError& e) {
      lost(SessionLost::Kind::Protocol, e.what());
    }
  }

  void require(const std::map<int, json>& m, int id, const std::string& where) {
    if (!m.count(id)) throw ProtocolError(where + " has no answer for value " + std::to_string(id));
  }

  // Merges the answer's `live` entries (those whose keys are new or changed) into what the session knows.
  void read_live(const json& entries, const std::string& where, bool with_grad_tensor) {
    const judge::Observations& declared = backend_.capabilities_.observations;
    std::vector<std::optional<Live>>& now = live_;
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const LiveKeys keys = live_from_json(entries[k], declared, where + "[" + std::to_string(k) + "]");
      if (keys.id < 0 || keys.id > step_.index)
        throw ProtocolError(where + " names value " + std::to_string(keys.id) + ", which step " +
                            std::to_string(step_.index) + " cannot have made");
      if (now.size() <= static_cast<std::size_t>(keys.id)) now.resize(static_cast<std::size_t>(keys.id) + 1);
      Live l;
      l.storage = declared.has(judge::Observation::Storage) ? keys_.of(keys.storage) : keys_.unique();
      l.tensor = declared.has(judge::Observation::Identity) ? keys_.of(keys.tensor) : keys_.unique();
      if (keys.base) l.base = keys_.of(*keys.base);
      if (keys.grad_storage) l.grad_storage = keys_.of(*keys.grad_storage);
      if (with_grad_tensor || !declared.has(judge::Observation::Grad)) {
        l.grad_tensor_known = true;
        if (keys.grad_tensor) l.grad_tensor = keys_.of(*keys.grad_tensor);
      } else if (const auto& before = now[static_cast<std::size_t>(keys.id)];
                 before && before->grad_tensor_known && before->grad_storage == l.grad_storage) {
        // A step that did not ask for .grad leaves the gradient tensor as it was.
        l.grad_tensor_known = true;
        l.grad_tensor = before->grad_tensor;
      }
      now[static_cast<std::size_t>(keys.id)] = l;
    }
  }

  const Live& live(int id) const {
    if (!has_value(id)) throw std::runtime_error("value " + std::to_string(id) + " does not exist on the backend");
    return *live_[static_cast<std::size_t>(id)];
  }

  RemoteBackend& backend_;
  Keys keys_;
  std::vector<std::optional<Live>> live_;
  StepAnswer step_;
  std::vector<int> observed_;
  bool ran_ = false;
};

RemoteBackend::RemoteBackend(std::string command, std::chrono::milliseconds start_timeout, const Capabilities* expected)
    : command_(std::move(command)), start_timeout_(start_timeout) {
  if (expected) expected_ = *expected;
}

RemoteBackend::~RemoteBackend() = default;

void RemoteBackend::ensure_started() {
  if (process_) return;
  process_ = std::make_unique<BackendProcess>(command_);
  try {
    capabilities_ = shake_hands(*process_, start_timeout_, command_);
  } catch (...) {
    process_.reset();
    throw;
  }
  if (expected_ && (hello_answer(capabilities_) != hello_answer(*expected_))) {
    process_.reset();
    throw ProtocolError("the backend `" + command_ + "` declared other capabilities than when the campaign began");
  }
}

const Capabilities& RemoteBackend::capabilities() {
  ensure_started();
  return capabilities_;
}

std::string RemoteBackend::name() const { return process_ ? capabilities_.library : command_; }
std::string RemoteBackend::version() const { return process_ ? capabilities_.version : "unknown"; }

std::unique_ptr<judge::Session> RemoteBackend::start() {
  ensure_started();
  return std::make_unique<RemoteSession>(*this);
}

void RemoteBackend::lose() { process_.reset(); }

Capabilities probe(const std::string& command, std::chrono::milliseconds start_timeout) {
  BackendProcess process(command);
  Capabilities c = shake_hands(process, start_timeout, command);
  process.send(json{{"type", "bye"}}.dump());
  return c;
}

}  // namespace parity::protocol
