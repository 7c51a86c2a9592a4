#include "program/json.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "program/attr_spec.h"
#include "program/json_object.h"

namespace parity::program {

using nlohmann::json;

namespace {

// Seeds above 2^53 do not survive a trip through a double, which is how many JSON tools hold numbers.
constexpr std::uint64_t kMaxExactDouble = std::uint64_t{1} << 53;


std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<std::int64_t> checked_abs(std::int64_t a) {
  if (a == std::numeric_limits<std::int64_t>::min()) return std::nullopt;
  return a < 0 ? -a : a;
}

// Product of the positive sizes, or nullopt once it passes kMaxNumel. Zero and negative sizes are skipped: a
// negative size is a legitimate invalid step, and a zero must not hide huge neighbours from later arithmetic.
// A negative size of absurd magnitude is refused too, so no backend's size arithmetic can overflow on it.
std::optional<std::int64_t> bounded_numel(const std::vector<std::int64_t>& sizes) {
  std::int64_t n = 1;
  for (auto s : sizes) {
    if (s < -kMaxNumel) return std::nullopt;
    if (s <= 0) continue;
    auto m = checked_mul(n, s);
    if (!m || *m > kMaxNumel) return std::nullopt;
    n = *m;
  }
  return n;
}

void check_shape(const Obj& o, const std::vector<std::int64_t>& sizes) {
  if (!bounded_numel(sizes))
    o.fail("absurd shape " + render_ints(sizes) + ": more than " + std::to_string(kMaxNumel) +
           " elements, or a size below -" + std::to_string(kMaxNumel));
}

// An upper bound of the storage a strided layout reaches, |offset| + sum |(size-1)*stride| + 1, so that no
// backend's own extent arithmetic can overflow on a hostile layout.
void check_extent(const Obj& o, const Attrs& a) {
  auto bound = checked_abs(a.offset);
  for (std::size_t i = 0; bound && i < a.sizes.size(); ++i) {
    auto span = checked_add(a.sizes[i], -1);
    auto term = span ? checked_mul(*span, i < a.strides.size() ? a.strides[i] : 0) : std::nullopt;
    auto abs_term = term ? checked_abs(*term) : std::nullopt;
    bound = abs_term ? checked_add(*bound, *abs_term) : std::nullopt;
  }
  if (!bound || *bound >= kMaxNumel)
    o.fail("absurd layout: sizes " + render_ints(a.sizes) + ", strides " + render_ints(a.strides) + ", offset " +
           std::to_string(a.offset) + " reach more than " + std::to_string(kMaxNumel) + " elements of storage");
}

std::uint64_t parse_seed(const Obj& o, std::string_view key) {
  try {
    return uint64_from_json(o.at(key));
  } catch (const JsonError& e) {
    o.fail_field(key, e.what());
  }
}

}  // namespace

json uint64_to_json(std::uint64_t v) {
  if (v <= kMaxExactDouble) return v;
  return std::to_string(v);
}

std::uint64_t uint64_from_json(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    if (v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    std::uint64_t out = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (!s.empty() && ec == std::errc() && ptr == s.data() + s.size()) return out;
  }
  throw JsonError("must be an unsigned 64-bit integer (a number, or a decimal string above 2^53), got " +
                  describe(v));
}

namespace {

// A scalar object ({"kind", "value"}) at `where` in the document.
Scalar scalar_from_json(const json& j, std::string where) {
  Obj s(j, std::move(where));
  std::string kind_name = s.string("kind");
  auto kind = parse_scalar_kind(kind_name);
  if (!kind) s.fail_field("kind", "is " + quote(kind_name) + "; expected int, float or bool");
  Scalar out;
  out.kind = *kind;
  const json& v = s.at("value");
  switch (*kind) {
    case Scalar::Kind::Bool:
      if (v.is_boolean()) out.value = v.get<bool>() ? 1.0 : 0.0;
      else if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1))
        out.value = static_cast<double>(v.get<std::int64_t>());
      else s.fail_field("value", "of a bool scalar must be true, false, 0 or 1, got " + describe(v));
      break;
    case Scalar::Kind::Int: {
      std::int64_t i = s.int64("value");
      if (i > static_cast<std::int64_t>(kMaxExactDouble) || i < -static_cast<std::int64_t>(kMaxExactDouble))
        s.fail_field("value", "of an int scalar must be within +-2^53, got " + std::to_string(i));
      out.value = static_cast<double>(i);
      break;
    }
    case Scalar::Kind::Float: out.value = s.number("value"); break;
  }
  return out;
}

Scalar parse_scalar(const Obj& step, std::string_view key) {
  return scalar_from_json(step.at(key), step.where() + ": field \"" + std::string(key) + "\"");
}

// A literal list's elements: one per element of the shape in `sizes`, read before them (the op lists sizes first).
std::vector<Scalar> parse_elements(const Obj& step, std::string_view key, const std::vector<std::int64_t>& sizes) {
  // Python's nested lists have no way to write a zero size with sizes after it: [] is sizes [0], never [0, 2].
  for (std::size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || (sizes[d] == 0 && d + 1 < sizes.size()))
      step.fail("sizes " + render_ints(sizes) + " of a literal list: no size is negative and only the last can be " +
                "0 (Python writes [] for sizes [0] and [[], []] for [2, 0], and no list has sizes [0, 2])");
  const json& list = step.array(key);
  std::int64_t numel = 1;
  for (auto s : sizes) numel *= s;  // bounded by check_shape
  if (list.size() != static_cast<std::size_t>(numel))
    step.fail_field(key, "has " + std::to_string(list.size()) + " elements; a literal list of sizes " +
                             render_ints(sizes) + " has " + std::to_string(numel));
  std::vector<Scalar> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i)
    out.push_back(scalar_from_json(list[i], step.where() + ": field \"" + std::string(key) + "\"[" +
                                                std::to_string(i) + "]"));
  return out;
}

std::int64_t bounded(const Obj& o, std::string_view key, std::int64_t lo, std::int64_t hi) {
  const std::int64_t v = o.int64(key);
  if (v < lo || v > hi)
    o.fail_field(key, "is " + std::to_string(v) + "; expected " + std::to_string(lo) + " to " + std::to_string(hi));
  return v;
}

// clamp's bounds: null is Python's None.
std::optional<Scalar> parse_optional_scalar(const Obj& step, std::string_view key) {
  if (step.at(key).is_null()) return std::nullopt;
  return parse_scalar(step, key);
}

json scalar_to_json(const Scalar& s) {
  json v;
  switch (s.kind) {
    case Scalar::Kind::Bool: v = s.value != 0.0; break;
    case Scalar::Kind::Int: v = static_cast<std::int64_t>(s.value); break;
    case Scalar::Kind::Float: v = number_to_json(s.value); break;
  }
  return {{"kind", to_string(s.kind)}, {"value", v}};
}

std::string list_keys(const OpSpec& op) {
  std::string s;
  for (Attr a : op.attrs)
    for (auto k : attr_json_keys(a)) s += (s.empty() ? "" : ", ") + std::string(k);
  return s.empty() ? "none" : s;
}

void write_attr(json& out, Attr a, const Attrs& at) {
  const AttrSpec& spec = attr_spec(a);
  const std::string key(spec.name);
  switch (spec.type) {
    case AttrType::Shape:
    case AttrType::IntList: out[key] = at.*spec.ints; break;
    case AttrType::Strided:
      out["sizes"] = at.sizes;
      out["strides"] = at.strides;
      out["offset"] = at.offset;
      break;
    case AttrType::Int:
    case AttrType::Count:
    case AttrType::Memo: out[key] = at.*spec.int64; break;
    case AttrType::Bool: out[key] = at.*spec.flag; break;
    case AttrType::Scalar: out[key] = scalar_to_json(at.scalar); break;
    case AttrType::OptionalScalar: {
      const auto& v = at.*spec.bound;
      out[key] = v ? scalar_to_json(*v) : json(nullptr);
      break;
    }
    case AttrType::DType: out[key] = to_string(at.dtype); break;
    case AttrType::MemoryFormat: out[key] = to_string(at.memory_format); break;
    case AttrType::Seed: out[key] = uint64_to_json(at.seed); break;
    case AttrType::Device: out[key] = to_string(at.device); break;
    case AttrType::OptionalDevice: out[key] = at.like_device ? json(to_string(*at.like_device)) : json(nullptr); break;
    case AttrType::Elements: {
      json list = json::array();
      for (const Scalar& e : at.elements) list.push_back(scalar_to_json(e));
      out[key] = std::move(list);
      break;
    }
  }
}


Device parse_device_field(const Obj& o, std::string_view key) {
  std::string name = o.string(key);
  auto d = parse_device(name);
  if (!d) o.fail_field(key, "is " + quote(name) + "; expected cpu or cuda");
  return *d;
}

}  // namespace

bool within_numel_limit(const std::vector<std::int64_t>& sizes) { return bounded_numel(sizes).has_value(); }

bool within_dims_limit(const Step& step) {
  for (Attr a : spec(step.op).attrs) {
    const AttrSpec& as = attr_spec(a);
    switch (as.type) {
      case AttrType::Shape:
      case AttrType::IntList:
        if ((step.attrs.*as.ints).size() > kMaxDims) return false;
        break;
      case AttrType::Strided:
        if (step.attrs.sizes.size() > kMaxDims || step.attrs.strides.size() > kMaxDims) return false;
        break;
      case AttrType::Int:
      case AttrType::Count:
      case AttrType::Memo:
      case AttrType::Bool:
      case AttrType::Scalar:
      case AttrType::OptionalScalar:
      case AttrType::DType:
      case AttrType::MemoryFormat:
      case AttrType::Seed:
      case AttrType::Device:
      case AttrType::OptionalDevice:
      case AttrType::Elements: break;
    }
  }
  return true;
}

namespace {

void read_attr(const Obj& o, const OpSpec& op, Attr a, Attrs& at) {
  const AttrSpec& spec = attr_spec(a);
  const std::string_view key = spec.name;
  switch (spec.type) {
    case AttrType::Shape:
      at.*spec.ints = o.ints(key, kMaxDims);
      check_shape(o, at.*spec.ints);
      break;
    case AttrType::Strided:
      at.sizes = o.ints("sizes", kMaxDims);
      at.strides = o.ints("strides", kMaxDims);
      at.offset = o.int64("offset");
      check_shape(o, at.sizes);
      check_extent(o, at);
      break;
    case AttrType::IntList: at.*spec.ints = o.ints(key, kMaxDims); break;
    case AttrType::Int:
      at.*spec.int64 = o.int64(key);
      // A factory's end is its element count (arange).
      if (a == Attr::End && op.kind == OpKind::Factory && at.end > kMaxNumel)
        o.fail("absurd shape: " + std::string(op.name) + "(" + std::to_string(at.end) + ") has more than " +
               std::to_string(kMaxNumel) + " elements");
      break;
    // Piece counts and sizes beyond any tensor a program may hold would only make both sides allocate.
    case AttrType::Count: at.*spec.int64 = bounded(o, key, -kMaxNumel, kMaxNumel); break;
    // A memo names a variable in the repros.
    case AttrType::Memo: at.*spec.int64 = bounded(o, key, 0, std::numeric_limits<int>::max()); break;
    // Every boolean attribute defaults to false in PyTorch's signatures; programs written before one existed
    // (create_graph, allow_unused) leave it out, and mean that default.
    case AttrType::Bool: at.*spec.flag = o.has(key) && o.boolean(key); break;
    case AttrType::Scalar: at.scalar = parse_scalar(o, key); break;
    case AttrType::OptionalScalar: at.*spec.bound = parse_optional_scalar(o, key); break;
    case AttrType::DType: at.dtype = parse_dtype_field(o, key); break;
    case AttrType::MemoryFormat: {
      std::string name = o.string(key);
      auto m = parse_memory_format(name);
      if (!m)
        o.fail_field(key, "is " + quote(name) +
                              "; expected contiguous_format, channels_last, channels_last_3d or preserve_format");
      at.memory_format = *m;
      break;
    }
    case AttrType::Seed: at.seed = parse_seed(o, key); break;
    // Programs written before devices existed leave the key out: they ran on the CPU (device=None).
    case AttrType::Device:
      if (o.has(key)) at.device = parse_device_field(o, key);
      break;
    case AttrType::OptionalDevice:
      if (o.has(key) && !o.at(key).is_null()) at.like_device = parse_device_field(o, key);
      break;
    case AttrType::Elements: at.elements = parse_elements(o, key, at.sizes); break;
  }
}

Step read_step(const json& j, int index) {
  Obj s(j, "step " + std::to_string(index));
  std::string name = s.string("op");
  auto op = find_op(name);
  if (!op) s.fail("unknown op " + quote(name) + op_name_hint(name) + " (run `parity list` for the known ops)");
  const OpSpec& spec_ = spec(*op);
  s.rename("step " + std::to_string(index) + " (" + std::string(spec_.name) + ")");

  Step step;
  step.op = *op;
  const json& inputs = s.array("inputs");
  if (static_cast<int>(inputs.size()) != spec_.arity)
    s.fail_field("inputs", "has " + std::to_string(inputs.size()) + " operands; " + std::string(spec_.name) +
                               " takes " + std::to_string(spec_.arity));
  for (const json& in : inputs) {
    std::int64_t id = s.to_int64(in, "inputs");
    if (id < 0 || id >= index)
      s.fail_field("inputs", "refers to value " + std::to_string(id) + ", which is not an earlier step (" +
                                 (index == 0 ? std::string("step 0 has none") : "0.." + std::to_string(index - 1)) +
                                 ")");
    step.inputs.push_back(static_cast<int>(id));
  }
  if (s.has("grad_enabled")) step.grad_enabled = s.boolean("grad_enabled");

  if (spec_.attrs.empty() && !s.has("attrs")) return step;
  Obj attrs(s.at("attrs"), s.where() + ": attrs");
  std::set<std::string_view> known;
  for (Attr a : spec_.attrs)
    for (auto k : attr_json_keys(a)) known.insert(k);
  for (const auto& [key, value] : attrs.raw().items())
    if (!known.contains(key))
      attrs.fail("unknown attribute " + quote(key) + "; " + std::string(spec_.name) + " takes: " + list_keys(spec_));
  for (Attr a : spec_.attrs) read_attr(attrs, spec_, a, step.attrs);
  return step;
}

}  // namespace

Step step_from_json(const json& j, int index) { return read_step(j, index); }

namespace {

// Shapes are bounded one attribute at a time above; broadcasting can still multiply two bounded shapes into
// an absurd one ([N,1] + [1,N]), so results are followed through the op table's shape rules.
void check_results(const Program& p) {
  std::vector<std::optional<Meta>> metas(p.steps.size());
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const Step& step = p.steps[i];
    const OpSpec& op = spec(step.op);
    std::vector<Meta> in;
    for (int id : step.inputs) {
      if (!metas[id]) break;
      in.push_back(*metas[id]);
    }
    if (in.size() != step.inputs.size()) continue;
    auto out = op.infer(in, step.attrs);
    if (!out) continue;
    if (!bounded_numel(out->sizes))
      throw JsonError("step " + std::to_string(i) + " (" + std::string(op.name) + "): absurd shape: its result " +
                      render_ints(out->sizes) + " would have more than " + std::to_string(kMaxNumel) + " elements");
    if (!op.no_value) metas[i] = std::move(out);
  }
}

void check_schema(const Obj& root) {
  std::int64_t v = root.int64("schema_version");
  if (v > kSchemaVersion)
    root.fail("schema_version " + std::to_string(v) + " is newer than this parity supports (" +
              std::to_string(kSchemaVersion) + "); update parity");
  if (v < 1) root.fail("schema_version " + std::to_string(v) + " is not valid (expected " +
                       std::to_string(kSchemaVersion) + ")");
}

}  // namespace

json number_to_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double number_from_json(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  throw JsonError("must be a number or one of \"nan\", \"inf\", \"-inf\", got " + describe(j));
}

json to_json(const Program& p) {
  json steps = json::array();
  for (const Step& s : p.steps) {
    const OpSpec& op = spec(s.op);
    json attrs = json::object();
    for (Attr a : op.attrs) write_attr(attrs, a, s.attrs);
    steps.push_back({{"op", op.name}, {"inputs", s.inputs}, {"grad_enabled", s.grad_enabled}, {"attrs", attrs}});
  }
  return {{"schema_version", kSchemaVersion}, {"steps", std::move(steps)}};
}

Program program_from_json(const json& j) {
  Obj root(j, "program");
  check_schema(root);
  const json& steps = root.array("steps");
  if (steps.size() > kMaxSteps)
    root.fail("has " + std::to_string(steps.size()) + " steps; the limit is " + std::to_string(kMaxSteps));
  Program p;
  p.steps.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) p.steps.push_back(read_step(steps[i], static_cast<int>(i)));
  check_results(p);
  return p;
}

}  // namespace parity::program
