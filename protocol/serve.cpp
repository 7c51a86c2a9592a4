#include "protocol/serve.h"

#include <algorithm>
#include <string>

#include "program/internal_assert.h"
#include "program/json.h"
#include "program/json_object.h"
#include "program/json_text.h"
#include "protocol/messages.h"

namespace parity::protocol {

using nlohmann::json;
using program::Obj;

namespace {

std::vector<int> ids(const Obj& o, std::string_view key) {
  std::vector<int> out;
  for (std::int64_t v : o.ints(key, program::kMaxSteps)) out.push_back(static_cast<int>(v));
  return out;
}

// A value's reading as an answer: what a raising read said, as the run loop would have recorded it.
template <typename F>
json answer_or_raised(F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return {{"raised", e.what()}};
  }
}

class Server {
 public:
  Server(judge::Backend& backend, const Capabilities& declared) : backend_(backend), declared_(declared) {}

  json answer(const json& request) {
    Obj o(request, "the request");
    const std::string type = o.string("type");
    if (type == "hello") return hello_answer(declared_);
    if (type == "start") {
      session_.reset();  // the previous program's values go first
      session_ = backend_.start();
      sent_.clear();
      return {{"type", "started"}};
    }
    if (!session_) o.fail("comes before any start");
    if (type == "step") return step(o);
    if (type == "read") return read(o);
    o.fail_field("type", "is " + program::quote(type) + ", not a request of protocol " + std::to_string(kProtocolVersion));
  }

 private:
  json step(const Obj& o) {
    const int index = o.int32("index");
    const program::Step step = program::step_from_json(o.at("step"), index);
    const bool grad = o.boolean("grad");
    json before = json::object();
    for (int id : ids(o, "before"))
      before[std::to_string(id)] = answer_or_raised([&] { return values_to_json(session_->values(id)); });
    json out = {{"type", "step"}, {"ok", true}};
    try {
      session_->execute(step, index);
    } catch (const judge::StepError& e) {
      out["ok"] = false;
      out["error"] = error_to_json(e);
    } catch (const program::InternalError& e) {
      out["ok"] = false;
      out["error"] = error_to_json(judge::StepError(judge::ErrorCategory::InternalAssert, e.what()));
    } catch (const std::exception& e) {
      out["ok"] = false;
      out["error"] = error_to_json(judge::StepError(judge::ErrorCategory::Unclassified, e.what()));
    }
    out["before"] = std::move(before);
    out["live"] = live(index, grad);
    json tensors = json::object();
    const std::vector<int> observe = ids(o, "observe");
    // A value also observed gets its full answer only, which holds its elements.
    for (int id : ids(o, "read"))
      if (session_->has_value(id) && std::find(observe.begin(), observe.end(), id) == observe.end())
        tensors[std::to_string(id)] = answer_or_raised([&] { return values_to_json(session_->values(id)); });
    // Observed last, as the run loop observes after reading: reading grad_fn may regenerate a view's history.
    for (int id : observe)
      if (session_->has_value(id))
        tensors[std::to_string(id)] = answer_or_raised([&] { return tensor_to_json(session_->observe(id, true, grad)); });
    out["tensors"] = std::move(tensors);
    return out;
  }

  json read(const Obj& o) {
    const bool autograd = o.boolean("autograd"), grad = o.boolean("grad");
    json tensors = json::object();
    for (int id : ids(o, "ids")) {
      if (!session_->has_value(id)) continue;
      tensors[std::to_string(id)] = answer_or_raised([&] {
        if (!autograd) return values_to_json(session_->values(id));
        json t = tensor_to_json(session_->observe(id, true, grad));
        if (grad) {
          const void* g = session_->grad_tensor_key(id);
          t["grad_tensor"] = g ? json(key(g)) : json(nullptr);
        }
        return t;
      });
    }
    return {{"type", "tensors"}, {"tensors", std::move(tensors)}};
  }

  // The values the session holds whose keys are new or changed since the last answer (the protocol allows every
  // value each time; most steps change one): the gradient tensor's key only after a step that asked for .grad
  // (naming a gradient keeps it alive, which changes whether backward later accumulates into it in place).
  json live(int index, bool grad) {
    json out = json::array();
    if (sent_.size() <= static_cast<std::size_t>(index)) sent_.resize(static_cast<std::size_t>(index) + 1);
    for (int id = 0; id <= index; ++id) {
      if (!session_->has_value(id)) continue;
      LiveKeys k;
      k.id = id;
      k.storage = key(session_->storage_key(id));
      k.tensor = key(session_->tensor_key(id));
      if (const void* b = session_->base_key(id)) k.base = key(b);
      if (const void* g = session_->grad_storage_key(id)) k.grad_storage = key(g);
      if (grad)
        if (const void* g = session_->grad_tensor_key(id)) k.grad_tensor = key(g);
      std::optional<LiveKeys>& last = sent_[static_cast<std::size_t>(id)];
      if (!grad && last) k.grad_tensor = last->grad_tensor;  // not looked at: as it was
      if (last == k) continue;
      last = k;
      out.push_back(live_to_json(k, grad));
    }
    return out;
  }

  static std::int64_t key(const void* p) { return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p)); }

  judge::Backend& backend_;
  const Capabilities& declared_;
  std::unique_ptr<judge::Session> session_;
  std::vector<std::optional<LiveKeys>> sent_;  // per id, the keys the other side holds
};

}  // namespace

int serve(judge::Backend& backend, const Capabilities& declared, std::istream& in, std::ostream& out,
          std::ostream& err) {
  Server server(backend, declared);
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    json answer;
    try {
      const json request = program::parse_json_text(line, "request " + std::to_string(n));
      if (request.is_object() && request.value("type", "") == "bye") return 0;
      answer = server.answer(request);
    } catch (const program::JsonError& e) {
      err << "parity serve: " << e.what() << "\n";
      return 2;
    }
    out << answer.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
  }
  return 0;
}

}  // namespace parity::protocol
