#include "judge/role_combinations.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <iterator>
#include <string_view>

namespace parity::judge {

namespace {

#define PARITY_ROLE_NAME_ENTRY(name, str) str,
constexpr std::string_view kEventNames[] = {PARITY_TENSOR_EVENTS(PARITY_ROLE_NAME_ENTRY)};
constexpr std::string_view kRoleNames[] = {PARITY_TENSOR_ROLES(PARITY_ROLE_NAME_ENTRY)};
#undef PARITY_ROLE_NAME_ENTRY
constexpr std::size_t kEvents = std::size(kEventNames);
constexpr std::size_t kRoles = std::size(kRoleNames);

// Whether `event` can happen to a tensor in `role`: a write through a view is one on a view, a write on the
// tensor itself one on no view. Only what can happen is a key.
bool can_happen(std::size_t event, std::size_t role) {
  const auto e = static_cast<TensorEvent>(event);
  const bool view = role == static_cast<std::size_t>(TensorRole::View) ||
                    role == static_cast<std::size_t>(TensorRole::Sibling);
  if (e == TensorEvent::WriteViaView || e == TensorEvent::WriteViaNogradView) return view;
  if (e == TensorEvent::WriteOnTensor) return !view;
  return true;
}

// The "event@role" names, numbered: those that can come first (no sibling: it names a relation to an earlier
// event) and those that can come later. A key's index is computed from these numbers, never searched for.
struct Universe {
  static constexpr int kNone = -1;
  std::array<std::array<int, kRoles>, kEvents> first{}, later{};
  std::vector<std::string> first_names, later_names;

  Universe() {
    for (std::size_t e = 0; e < kEvents; ++e)
      for (std::size_t r = 0; r < kRoles; ++r) {
        const std::string name = std::string(kEventNames[e]) + "@" + std::string(kRoleNames[r]);
        first[e][r] = later[e][r] = kNone;
        if (!can_happen(e, r)) continue;
        later[e][r] = static_cast<int>(later_names.size());
        later_names.push_back(name);
        if (r == static_cast<std::size_t>(TensorRole::Sibling)) continue;
        first[e][r] = static_cast<int>(first_names.size());
        first_names.push_back(name);
      }
  }
  std::uint32_t first_of(const RoleEvent& e) const {
    return static_cast<std::uint32_t>(first[static_cast<std::size_t>(e.event)][static_cast<std::size_t>(e.role)]);
  }
  std::uint32_t later_of(TensorEvent event, TensorRole role) const {
    return static_cast<std::uint32_t>(later[static_cast<std::size_t>(event)][static_cast<std::size_t>(role)]);
  }
};

const Universe& universe() {
  static const Universe u;
  return u;
}

// The view a key calls `view`: the first of its events that happened to one (nullptr: none yet).
const RoleEvent* anchor_view(std::initializer_list<const RoleEvent*> events) {
  for (const RoleEvent* e : events)
    if (e->role == TensorRole::View) return e;
  return nullptr;
}

// The role `e` plays in a key whose first view is `anchor`: any other view of the storage is its sibling.
TensorRole role_in_key(const RoleEvent* anchor, const RoleEvent& e) {
  return e.role == TensorRole::View && anchor && anchor->tensor != e.tensor ? TensorRole::Sibling : e.role;
}

std::vector<std::string> names_at(std::vector<std::uint32_t> indices, const std::vector<std::string>& names) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<std::string> out;
  out.reserve(indices.size());
  for (std::uint32_t i : indices) out.push_back(names[i]);
  return out;
}

}  // namespace

const std::vector<std::string>& tensor_events() {
  static const std::vector<std::string> names(std::begin(kEventNames), std::end(kEventNames));
  return names;
}

void RoleCombinations::add(int storage, RoleEvent e) {
  const Universe& u = universe();
  auto at = std::find_if(storages_.begin(), storages_.end(), [&](const Storage& s) { return s.id == storage; });
  if (at == storages_.end()) at = storages_.insert(storages_.end(), Storage{storage, {}});
  std::vector<RoleEvent>& events = at->events;
  for (const RoleEvent& x : events)
    if (x.event == e.event && x.role == e.role && x.tensor == e.tensor) return;
  const auto later = static_cast<std::uint32_t>(u.later_names.size());
  for (std::size_t b = 0; b < events.size(); ++b) {
    const RoleEvent& second = events[b];
    pairs_.push_back(u.first_of(second) * later + u.later_of(e.event, role_in_key(anchor_view({&second}), e)));
    for (std::size_t a = 0; a < b; ++a) {
      const RoleEvent* anchor = anchor_view({&events[a], &second});
      const std::uint32_t ab = u.first_of(events[a]) * later + u.later_of(second.event, role_in_key(anchor, second));
      triples_.push_back(ab * later + u.later_of(e.event, role_in_key(anchor, e)));
    }
  }
  events.push_back(e);
}

std::vector<std::string> RoleCombinations::pairs() const { return names_at(pairs_, role_pairs()); }
std::vector<std::string> RoleCombinations::triples() const { return names_at(triples_, role_triples()); }

const std::vector<std::string>& role_pairs() {
  static const std::vector<std::string> names = [] {
    const Universe& u = universe();
    std::vector<std::string> out;
    for (const std::string& a : u.first_names)
      for (const std::string& b : u.later_names) out.push_back(a + "+" + b);
    return out;
  }();
  return names;
}

const std::vector<std::string>& role_triples() {
  static const std::vector<std::string> names = [] {
    const Universe& u = universe();
    std::vector<std::string> out;
    out.reserve(role_pairs().size() * u.later_names.size());
    for (const std::string& ab : role_pairs())
      for (const std::string& c : u.later_names) out.push_back(ab + "+" + c);
    return out;
  }();
  return names;
}

const std::vector<std::string>& role_pair_goals() {
  static const std::vector<std::string> names = {
      // retain_grad on a view, then its base written (through itself or a sibling view): the view's grad_fn is
      // regenerated, and the gradient retained must be the new node's.
      "retain_grad@view+write_on_tensor@nonleaf",
      "retain_grad@view+write_via_view@sibling",
      // retain_grad on the base, then a write through a view of it: the base's history is rebased.
      "retain_grad@nonleaf+write_via_view@view",
      // A saved tensor written through another tensor of its storage: the version counter is shared.
      "saved@view+write_on_tensor@nonleaf",
      "saved@nonleaf+write_via_view@view",
      "saved@leaf+write_via_alias@leaf",
  };
  return names;
}

// Each a retained gradient whose tensor's history a write rebased, read by the backward after it. A save then a
// write is a pair goal only: the backward after it raises, and a backward event is an ok one.
const std::vector<std::string>& role_triple_goals() {
  static const std::vector<std::string> names = {
      "retain_grad@view+write_on_tensor@nonleaf+backward@view",
      "retain_grad@view+write_via_view@sibling+backward@view",
      "retain_grad@nonleaf+write_via_view@view+backward@nonleaf",
      "retain_grad@view+write_via_view@view+backward@view",
  };
  return names;
}

}  // namespace parity::judge
